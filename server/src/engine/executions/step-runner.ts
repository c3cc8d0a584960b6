/**
 * Running one step of an execution: its input (request, plan, the facts only the engine has, install
 * settings), the RIGOR pipeline with retries under the agent fleet's admission, and the checkpoint of
 * its result, written in one durable batch with the step's audit records and ACMF counters.
 */
import type { EngineEventInput } from '../../../../protocol/events';
import type { AcmfMode } from '../catalog/enums';
import { EngineError, isEngineError, type EngineErrorCode } from '../errors';
import type { StepObserver } from '../events/service-events';
import type { AttachmentStore, Clock, CollectionStore } from '../ports';
import { runWithRetry } from '../resilience/retry';
import type { RigorPipeline, StagedStepOptions, StepResult } from '../rigor/pipeline';
import type { StepSummary } from '../rigor/skill';
import { tenantOf } from '../tenants/tenant-id';
import type { AgentFleet } from './agent-fleet';
import { boundOutput } from './bounded-output';
import type { Checkpoints } from './checkpoints';
import { allSettled } from './step-ends';
import type { Plan } from './plan';
import type { ReadinessFacts } from './readiness-facts';
import type { ExecutionRecord, StepRecord } from './records';

/** Agents whose steps get the store's metering facts as `input.usage` (they may not read the store themselves). */
const USAGE_FACT_AGENTS: ReadonlySet<string> = new Set(['billing-ai']);

/** `input.usage` of a billing-ai step: one row per execution; rows without `agents` come from summaries stored before metering (unknown). */
export interface UsageFacts {
  asOf: string;
  executions: Array<{
    id: string; kind: string; status: string; owner: string | null; createdAt: string; completedAt: string | null;
    agents?: string[]; intelligence?: string | null; capabilities?: string[]; project?: string | null; tokens?: number | null;
  }>;
}

/** What `stepFacts` is told about the step it provides facts for. */
export interface StepFactsContext {
  executionId: string;
  agentId: string;
  action: string;
  tenantId: string;
  ownerKeyId: string | null;
  /** The step's input so far (request input and planned parameters). */
  input: Readonly<Record<string, unknown>>;
}

export interface StepRunnerDeps {
  store: CollectionStore;
  rigor: RigorPipeline;
  fleet: AgentFleet;
  clock: Clock;
  checkpoints: Checkpoints;
  emit(e: EngineEventInput): void;
  /** Where a step output larger than MAX_INLINE_OUTPUT_BYTES goes; absent: outputs stay inline. */
  attachments?: AttachmentStore;
  /** Told when a step starts and when it has ended durably (the contract's webhook events, events/service-events.ts). */
  stepObserver?: StepObserver;
  /** Install settings an agent's steps get as `input.settings` (skills do not read the config). */
  settingsFor?: (agentId: string, source: string | null) => Record<string, unknown> | undefined;
  /** Facts of the engine a step gets in its input (GOVERN and EVOLVE agents), scoped to the execution's tenant. */
  stepFacts?: (step: StepFactsContext) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;
  /** deploy-ai readiness's engine facts for a tenant (readiness-service.ts). */
  readinessFacts?: (tenantId: string) => ReadinessFacts;
}

export class StepRunner {
  constructor(private readonly deps: StepRunnerDeps) {}

  /**
   * Runs one step with retries and hands its checkpoint to the store. Resolves with the step as stored
   * (memory already holds it) and `durable`, which resolves once the checkpoint, the counters and the
   * audit records are on disk (one batch) and the step's webhook events are out, and rejects when that
   * write failed. The caller may start the next step meanwhile (execution-service.ts: its events wait).
   */
  async runStaged(id: string, index: number, plan: Plan, signal: AbortSignal, extra: { transcript?: StepSummary[]; earlierEnds?: () => Promise<void> } = {}): Promise<{ stored: StepRecord; durable: Promise<void> }> {
    const cp = this.deps.checkpoints;
    const rec = cp.get(id);
    const step = rec.steps[index]!;
    if (step.status === 'completed') return { stored: step, durable: Promise.resolve() };
    // Only the step's end is a checkpoint worth waiting for; progress marks ride the next group commit.
    // The first attempt is counted here (a retry counts its own in `attempts`): one version of the record less per step.
    cp.patchStep(id, index, { status: 'running', startedAt: cp.now(), attempts: step.attempts + 1 }, { currentAgent: step.agentId }, false);
    this.deps.emit({ type: 'step_started', execution_id: id, step: index, agent_id: step.agentId, action: step.action });
    this.deps.stepObserver?.stepStarted(rec, step);
    const previous = extra.transcript ?? summaries(cp.get(id), index);
    const input = await this.inputOf(rec, step, plan, previous);
    const { outcome, unit, durables } = await this.attempts(rec, step, index, input, previous, signal, extra.earlierEnds ? { earlierEnds: extra.earlierEnds } : {});
    let written: Promise<StepRecord>;
    try {
      const patch = outcome.ok ? fromResult(outcome.result, cp.now()) : fromError(outcome.error, cp.now());
      // A huge output goes to an attachment file (durable first); the record keeps its reference.
      if (this.deps.attachments && patch.output != null) patch.output = await boundOutput(this.deps.attachments, id, step.step, patch.output);
      // Another step of a parallel pattern may still be running: it becomes the current agent.
      const other = cp.get(id).steps.find((s, i) => i !== index && s.status === 'running');
      // One batch: the checkpoint, the counters and the audit records (the unit), committed together.
      // The agent's timing rides the same journal record (on its own it was one more write per step).
      if (outcome.ok) cp.recordTiming(step.agentId, outcome.result.durationMs, unit);
      const checkpoint = cp.patchStep(id, index, patch, { currentAgent: other?.agentId ?? null }, true, unit);
      // Settled all before it counts (a failure does not come ahead of the others' events).
      written = allSettled([checkpoint, unit?.commit(), ...durables]).then(() => checkpoint);
    } finally {
      // Never leave a unit uncommitted (its writes would never be durable), whatever failed above.
      void unit?.commit();
    }
    const stored = cp.get(id).steps[index]!;
    // Webhook events of the step (code.reviewed, security.*...) from its full artifact, once its end is durable.
    const durable = written.then((s) => this.deps.stepObserver?.stepEnded(cp.get(id), s, outcome.ok ? outcome.result : null));
    durable.catch(() => undefined); // the caller awaits it; this only keeps a failure it has not reached yet from being reported as unhandled
    return { stored, durable };
  }

  /** The step's input: the request's, the plan's parameters and mapping, then what only the engine knows. */
  private async inputOf(rec: ExecutionRecord, step: StepRecord, plan: Plan, previous: StepSummary[]): Promise<Record<string, unknown>> {
    const planned = plan.steps.find((p) => p.agentId === step.agentId && p.action === step.action);
    const input: Record<string, unknown> = { ...rec.request.input, ...(planned?.params ?? {}), ...(planned?.input ? resolveInput(planned.input, rec, previous) : {}) };
    const tenantId = tenantOf(rec);
    // billing-ai meters the store but may not read it (skills run confined): the engine hands it the facts, over anything the request said.
    if (USAGE_FACT_AGENTS.has(step.agentId)) input['usage'] = this.usageFacts(tenantId);
    // A direct deploy-ai readiness (REST, CLI) gets the engine's facts as the editor and MCP pass them.
    if (rec.kind === 'action' && step.agentId === 'deploy-ai' && step.action === 'readiness' && !('tests' in input) && !('review' in input) && !('pendingApprovals' in input) && this.deps.readinessFacts) {
      Object.assign(input, this.deps.readinessFacts(tenantId));
    }
    const facts = await this.deps.stepFacts?.({ executionId: rec.id, agentId: step.agentId, action: step.action, tenantId, ownerKeyId: rec.ownerKeyId, input });
    if (facts) Object.assign(input, facts);
    // Install settings are the install's, not the request's: a request cannot widen what a skill may fetch.
    const settings = this.deps.settingsFor?.(step.agentId, rec.request.source ?? null);
    if (settings) input['settings'] = settings; else delete input['settings'];
    return input;
  }

  /** The metering facts of every execution of the tenant (from the in-memory summaries), for billing-ai. */
  private usageFacts(tenantId: string): UsageFacts {
    return {
      asOf: this.deps.checkpoints.now(),
      executions: this.deps.checkpoints.summaries({ tenantId }).map((s) => ({
        id: s.id, kind: s.kind, status: s.status, owner: s.ownerKeyId, createdAt: s.createdAt, completedAt: s.completedAt,
        ...(s.agents ? { agents: s.agents, intelligence: s.intelligence ?? null, capabilities: s.capabilities ?? [], project: s.project ?? null, tokens: s.tokens ?? null } : {}),
      })),
    };
  }

  /** The attempts of the step through the RIGOR pipeline, each admitted by the fleet; a crash is retried, a verdict of the gates is not. */
  private async attempts(rec: ExecutionRecord, step: StepRecord, index: number, input: Record<string, unknown>, previous: StepSummary[], signal: AbortSignal, staged: StagedStepOptions) {
    const { fleet, checkpoints: cp } = this.deps;
    const id = rec.id;
    let last: StepResult | null = null;
    let failure: unknown = null;
    let inflight: Promise<unknown> = Promise.resolve();
    // Each attempt's audit records and ACMF counters become durable with the checkpoint (rigor.runStepStaged):
    // with a store that groups writes they are one unit, written in one journal record (all or none after a crash).
    const durables: Array<Promise<void>> = [];
    const unit = this.deps.store.unit?.();
    const inUnit = unit ? { unit } : {};
    try {
      last = await runWithRetry(
        (attempt, attemptSignal) => (inflight = (async () => {
          if (attempt > 1) cp.patchStep(id, index, { attempts: step.attempts + attempt }, {}, false);
          const admission = await fleet.admit(step.agentId, attemptSignal);
          const t0 = this.deps.clock.now();
          let crashed = true;
          try {
            const { result: r, durable } = await this.deps.rigor.runStepStaged({
              executionId: id, step: index, agentId: step.agentId, action: step.action, attempt: step.attempts + attempt,
              goal: { id, prompt: rec.request.prompt, ...(rec.request.capabilities[0] ? { capability: rec.request.capabilities[0] } : {}), ...(rec.request.workflow ? { workflow: rec.request.workflow } : {}) },
              input, scope: rec.request.scope, tier: rec.request.intelligence, previous, signal: attemptSignal,
              ...(rec.request.source ? { workspace: rec.request.source } : {}),
              ...(rec.request.acmfMode ? { acmfModeCap: rec.request.acmfMode as AcmfMode } : {}),
            }, inUnit, staged);
            durables.push(durable);
            crashed = r.error?.retryable === true;
            last = r;
            // A crash is worth another attempt; a verdict of the gates is not.
            if (crashed) throw new EngineError(r.error!.code as EngineErrorCode, r.error!.message, { retryable: true });
            return r;
          } catch (err) {
            // A missing skill, model or input is not the agent failing: it must not open its circuit.
            if (isEngineError(err) && (err.code === 'ERR_SKILL_UNAVAILABLE' || err.code === 'ERR_NEEDS_INPUT')) crashed = false;
            throw err;
          } finally {
            admission.release(!crashed, this.deps.clock.now() - t0);
          }
        })()) as Promise<StepResult>,
        fleet.policy(step.agentId),
        { signal, clock: this.deps.clock, timeoutFactor: () => fleet.timeoutFactor(step.agentId) },
      );
    } catch (err) {
      if (isEngineError(err) && err.code === 'ERR_CANCELLED') {
        // The retry loop gives up at once; the attempt must still wind down, so no work is orphaned.
        await inflight.catch(() => undefined);
        // What the attempts wrote (their audit records) is still written, without a checkpoint of the step.
        void unit?.commit();
        throw err;
      }
      failure = err;
    }
    const result = last as StepResult | null;
    const outcome = result && (failure === null || result.error) ? { ok: true as const, result } : { ok: false as const, error: failure };
    return { outcome, unit, durables };
  }
}

/**
 * What the steps before `before` tell the next one: those that ran, and those that were not
 * applicable (their summary says why: "observe-ai found no data" is a fact later steps use).
 */
function summaries(rec: ExecutionRecord, before: number): StepSummary[] {
  return rec.steps.slice(0, before).filter((s) => s.status === 'completed' || s.status === 'failed' || s.outcome === 'not_applicable').map((s) => ({
    step: s.step, agentId: s.agentId, action: s.action, passed: s.passed === true, confidence: s.confidence ?? 0, summary: s.summary ?? s.error?.message ?? '', data: s.output,
  }));
}

function fromResult(r: StepResult, now: string): Partial<StepRecord> {
  const a = r.artifact;
  return {
    ...(a ? { tokens: a.tokens ?? 0 } : {}),
    status: r.outcome === 'completed' ? 'completed' : r.outcome === 'not_applicable' ? 'skipped' : 'failed', outcome: r.outcome, reason: r.reason,
    completedAt: now, passed: r.passed, confidence: r.confidence, summary: a?.summary ?? (r.outcome === 'not_applicable' ? r.reason : null), output: a?.data ?? null,
    ...(r.acmfMode ? { acmfMode: r.acmfMode } : {}),
    gates: {
      passed: r.gates.filter((g) => g.status === 'pass').length,
      failed: r.gates.filter((g) => g.status === 'fail').length,
      notApplicable: r.gates.filter((g) => g.status === 'not_applicable').length,
      failures: r.gates.filter((g) => g.status === 'fail'),
      ...(r.gates.length > 0 ? { results: r.gates } : {}),
    },
    error: r.error ? { code: r.error.code, message: r.error.message } : null, phases: r.phases.map((p) => ({ phase: p.phase, status: p.status, durationMs: p.durationMs })),
  };
}

function fromError(err: unknown, now: string): Partial<StepRecord> {
  const code = isEngineError(err) ? err.code : 'ERR_SKILL_FAILED';
  if (code === 'ERR_CANCELLED') throw err;
  const message = (err as Error)?.message ?? String(err);
  return { status: 'failed', outcome: code === 'ERR_NEEDS_INPUT' ? 'needs_input' : 'error', reason: message, completedAt: now, passed: false, error: { code, message } };
}

/** Customer workflow input mapping: `$goal.prompt`, `$steps.<id>.summary`, `$steps.<id>.output.<path>`, or a literal. */
function resolveInput(mapping: Record<string, unknown>, rec: ExecutionRecord, previous: StepSummary[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(mapping)) {
    if (typeof value !== 'string' || !value.startsWith('$')) {
      out[key] = value;
      continue;
    }
    if (value === '$goal.prompt') {
      out[key] = rec.request.prompt;
      continue;
    }
    const m = /^\$steps\.([^.]+)\.(summary|output)(?:\.(.+))?$/.exec(value);
    const source = m ? rec.steps.find((s) => s.stepId === m[1]) : undefined;
    const prev = source ? previous.find((p) => p.step === source.step) : undefined;
    if (!m || !prev) {
      out[key] = null;
      continue;
    }
    out[key] = m[2] === 'summary' ? prev.summary : (m[3] ?? '').split('.').filter(Boolean).reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), prev.data) ?? null;
  }
  return out;
}
