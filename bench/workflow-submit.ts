/**
 * Full-sdlc workflows submitted to an engine as a client of the API would: backpressure
 * (ERR_OVERLOADED, HTTP 503 + Retry-After at the API) is waited out and retried, counted in the time;
 * a run is done at its terminal event, which the engine emits after the execution's final record is
 * on disk. Shared by bench/langgraph.ts and bench/engine-cpu.ts (whose `--against` tree is loaded from
 * another checkout: nothing here imports the server, the engine is passed in).
 */

interface StepRef { agentId: string; action: string }

/** What of an engine the submitter uses (the shape of engine/index.ts's Engine, loosely typed). */
export interface WorkflowEngine<S> {
  bus: { subscribe(topic: 'engine.event', listener: (e: { type: string; execution_id: string }) => void): unknown };
  executions: {
    invokeWorkflow(req: { capability: string; workflow: string; input: { prompt: string } }, who: { keyId: null; callbackSecret: null }): Promise<{ id: string; steps: StepRef[] }>;
    get(id: string): { error: unknown };
  };
  skills: { get(agentId: string, action: string): unknown; add(skill: S): void };
}

export interface WorkflowSubmitter {
  /** Runs one workflow to its end; rejects when it did not complete. Resolves with its step count. */
  submit(prompt: string): Promise<{ id: string; steps: number }>;
  /** Submissions refused with ERR_OVERLOADED so far (each retried after its Retry-After). */
  refusals(): number;
}

/**
 * Makes `skill` serve every agent action the engine looks up that has no skill yet, added at its first
 * lookup. A run starts while its acceptance is written, before invokeWorkflow resolves with the plan's
 * steps: adding the skills of those steps afterwards comes too late for the first one.
 */
export function standInForEveryAction<S>(registry: WorkflowEngine<S>['skills'], skill: (agentId: string, action: string) => S): void {
  const lookup = registry.get.bind(registry);
  registry.get = (agentId, action) => {
    const found = lookup(agentId, action);
    if (found) return found;
    registry.add(skill(agentId, action));
    return lookup(agentId, action);
  };
}

export function fullSdlcSubmitter<S>(engine: WorkflowEngine<S>, skill: (agentId: string, action: string) => S): WorkflowSubmitter {
  standInForEveryAction(engine.skills, skill);
  const waiting = new Map<string, (status: string) => void>();
  const early = new Map<string, string>();
  engine.bus.subscribe('engine.event', (e) => {
    if (e.type !== 'execution_completed' && e.type !== 'execution_failed') return;
    const status = e.type === 'execution_completed' ? 'completed' : 'failed';
    const w = waiting.get(e.execution_id);
    if (w) w(status);
    else early.set(e.execution_id, status);
  });
  let refusals = 0;
  return {
    refusals: () => refusals,
    async submit(prompt) {
      let rec;
      for (;;) {
        try {
          rec = await engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt } }, { keyId: null, callbackSecret: null });
          break;
        } catch (err) {
          const e = err as { code?: string; details?: { retryAfterMs?: number } };
          if (e.code !== 'ERR_OVERLOADED') throw err;
          refusals++;
          await new Promise((r) => setTimeout(r, e.details?.retryAfterMs ?? 1000));
        }
      }
      const id = rec.id;
      const status = early.get(id) ?? (await new Promise<string>((resolve) => waiting.set(id, resolve)));
      waiting.delete(id);
      early.delete(id);
      if (status !== 'completed') throw new Error(`Cadre run ${id} ${status}: ${JSON.stringify(engine.executions.get(id).error)}`);
      return { id, steps: rec.steps.length };
    },
  };
}
