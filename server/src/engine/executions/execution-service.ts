/**
 * Executions: tasks, workflow runs, RIGOR invocations and direct agent actions. This module accepts
 * them durably, reads them, controls them (cancel, resume after a restart, shutdown) and runs each in
 * its plan's pattern; the jobs of an execution live in modules named for them: planning.ts (verbs,
 * preflight, replan), step-runner.ts (one step through RIGOR with retries and its checkpoint),
 * escalation.ts (a person decides past a failed step), settlement.ts (the end and `whenSettled`),
 * callbacks.ts (signed completion callbacks), checkpoints.ts (the stored records).
 */
import type { EngineEvent, EngineEventInput } from '../../../../protocol/events';
import type { AcmfService } from '../acmf/acmf-service';
import type { AcmfMode, Capability, IntelligenceTier, Priority, Scope } from '../catalog/enums';
import type { Subscription } from '../catalog/subscription';
import type { TaskVerb } from '../catalog/verbs';
import { filesNamedIn } from '../catalog/verbs';
import { EngineError, isEngineError } from '../errors';
import type { StepObserver } from '../events/service-events';
import type { ExecutionEvents } from '../execution-events';
import type { AttachmentStore, Clock, CollectionStore, Repository } from '../ports';
import { COLLECTIONS } from '../ports';
import type { RetryPolicy } from '../resilience/retry';
import type { RigorPipeline, SideEffectLedger } from '../rigor/pipeline';
import { DEFAULT_TENANT_ID, tenantOf } from '../tenants/tenant-id';
import type { AgentFleet } from './agent-fleet';
import { Callbacks, type CallbackNotifier } from './callbacks';
import { Checkpoints, type ExecutionFilter } from './checkpoints';
import { Escalation, migrateContinued, wasContinued } from './escalation';
import { StepEnds } from './step-ends';
import type { EventLog } from './event-log';
import { planCustom, planSingle, planTask, planVerb, planWorkflow, validateCustomWorkflow, type CustomWorkflowInput, type Plan } from './plan';
import { newStep, Planning } from './planning';
import { runPattern, type PatternHost } from './patterns';
import type { ReadinessFacts } from './readiness-facts';
import { ID_PREFIX, TERMINAL_STATUSES, type ExecutionKind, type ExecutionRecord, type ExecutionRequest, type SideEffectRecord, type WorkflowDefinitionRecord } from './records';
import { Settlement, type SettleWait } from './settlement';
import { DurableSideEffectLedger, type EffectResourcesPort } from './side-effect-ledger';
import { StepRunner, type StepFactsContext } from './step-runner';
import type { LivePhase } from './views';

export type { CallbackNotifier } from './callbacks';
export { DEFAULT_STEP_ESTIMATE_MS, type ExecutionFilter } from './checkpoints';
export type { SettleWait } from './settlement';
export type { StepFactsContext, UsageFacts } from './step-runner';

export interface ExecutionServiceDeps {
  store: CollectionStore;
  rigor: RigorPipeline;
  acmf: AcmfService;
  events: ExecutionEvents;
  eventLog: EventLog;
  clock: Clock;
  defaults: { intelligence: IntelligenceTier; scope: Scope };
  /**
   * The planning defaults of a request on `source` (its folder's own .cadre.yaml, multi-root); absent or
   * undefined: `defaults`. Throws ERR_CONFIG_INVALID when that folder's file is invalid: nothing runs there.
   */
  defaultsFor?: (source: string | null) => { intelligence: IntelligenceTier; scope: Scope } | undefined;
  newId(prefix: string): string;
  /** HMAC-SHA256 hex of `body` keyed with `secret` (the engine has no crypto policy of its own). */
  sign(body: string, secret: string): string;
  notifier?: CallbackNotifier;
  fleet: AgentFleet;
  /** Overrides of the callback retry policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  /** How long an escalation waits for a person before it counts as denied. */
  escalationTimeoutMs?: number;
  /** Removes what an interrupted side effect left behind (temporary worktrees); absent: nothing to release. */
  effectResources?: EffectResourcesPort;
  /** Where a step output larger than MAX_INLINE_OUTPUT_BYTES goes; absent: outputs stay inline. */
  attachments?: AttachmentStore;
  /** deploy-ai readiness's engine facts of a tenant (readiness-service.ts); absent: a direct readiness gets none. */
  readinessFacts?: (tenantId: string) => ReadinessFacts;
  /**
   * The secret that signs the callbacks of the key `keyId` (the SHA-256 hex of the key, which the
   * receiver can compute): looked up when the callback is sent, so it survives a restart.
   */
  callbackSecret?(keyId: string): string | null;
  /** Why a task's `callbackUrl` may not be posted to (the host's SSRF guard), or null; absent: any URL. */
  callbackUrlRefusal?(url: string): string | null;
  /** What a tenant has bought (products, commercial tier); default: a local install, everything. */
  subscription?: (tenantId: string) => Subscription;
  /** Refuses new work of a tenant at its quota or deleted (tenants/tenant-service.ts `admit`); absent: no quotas. */
  admitTenant?: (tenantId: string) => void;
  /** The workspace of a request that names no `source` (the editor's folder, `--workspace`). */
  defaultWorkspace?: () => string | undefined;
  /** Told when a step starts and when it has ended durably (the contract's webhook events, events/service-events.ts). */
  stepObserver?: StepObserver;
  /**
   * Settings of the install an agent's steps get as `input.settings` (skills do not read the config):
   * observe-ai's allowed URLs, alert rules and monitoring integrations. Undefined: the agent gets none.
   */
  settingsFor?: (agentId: string, source: string | null) => Record<string, unknown> | undefined;
  /**
   * Facts of the engine an agent's step gets in its input (skills run confined and may not read the
   * store): governance, feedback and tenant facts for the GOVERN and EVOLVE agents, scoped to the
   * execution's tenant. Undefined or a result of undefined: none. Merged over the request's input.
   */
  stepFacts?: (step: StepFactsContext) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;
  log(line: string): void;
}

export interface Principal {
  keyId: string | null;
  /** Tenant of the caller's key (absent: the default tenant); what it creates belongs to it. */
  tenantId?: string;
  /** Secret that signs this caller's callbacks (the SHA-256 hex of its API key). */
  callbackSecret: string | null;
  /**
   * The door's idempotency claim of this request (`Idempotency-Key`), kept on what it creates in the
   * same durable write: a retry after a crash that lost the answer finds the execution instead of
   * creating a second one (`findByIdempotency`).
   */
  idempotencyId?: string;
}

export interface TaskSubmission {
  task: string;
  capabilities: Capability[];
  intelligence?: IntelligenceTier;
  scope?: Scope;
  priority?: Priority;
  source?: string;
  callbackUrl?: string;
  /** The task verb (catalog/verbs.ts); absent: a `verb: ...` prefix of `task`, else the capabilities' workflows. */
  verb?: TaskVerb;
  /** Extra input of the steps (`files`: the files to work on; `trace`: an error to debug, ...). */
  input?: Record<string, unknown>;
}

export class ExecutionService {
  private readonly records: Checkpoints;
  private readonly executions: Repository<ExecutionRecord>;
  private readonly ledger: DurableSideEffectLedger;
  private readonly definitions: Repository<WorkflowDefinitionRecord>;
  private readonly planning: Planning;
  private readonly steps: StepRunner;
  private readonly escalation: Escalation;
  private readonly callbacks: Callbacks;
  private readonly settlement: Settlement;
  private readonly running = new Map<string, { ctrl: AbortController; done: Promise<void> }>();
  /** The phase each running execution is in, from its events (status views between checkpoints). */
  private readonly livePhases = new Map<string, LivePhase>();
  private closed = false;

  constructor(private readonly deps: ExecutionServiceDeps) {
    const { store, clock, log } = deps;
    this.records = new Checkpoints({ store, clock, log });
    this.executions = this.records.executions;
    this.ledger = new DurableSideEffectLedger({
      repo: store.collection<SideEffectRecord>('sideEffects'), clock, newId: deps.newId, log,
      ...(deps.effectResources ? { resources: deps.effectResources } : {}),
    });
    this.definitions = store.collection<WorkflowDefinitionRecord>(COLLECTIONS.workflows);
    const emit = (e: EngineEventInput) => this.emit(e);
    const checkpoints = this.records;
    this.planning = new Planning({
      rigor: deps.rigor, defaults: deps.defaults, ...(deps.defaultsFor ? { defaultsFor: deps.defaultsFor } : {}), ...(deps.subscription ? { subscription: deps.subscription } : {}), ...(deps.defaultWorkspace ? { defaultWorkspace: deps.defaultWorkspace } : {}),
    });
    this.steps = new StepRunner({
      store, rigor: deps.rigor, fleet: deps.fleet, clock, checkpoints, emit,
      ...(deps.attachments ? { attachments: deps.attachments } : {}), ...(deps.stepObserver ? { stepObserver: deps.stepObserver } : {}),
      ...(deps.settingsFor ? { settingsFor: deps.settingsFor } : {}), ...(deps.stepFacts ? { stepFacts: deps.stepFacts } : {}),
      ...(deps.readinessFacts ? { readinessFacts: deps.readinessFacts } : {}),
    });
    this.escalation = new Escalation({ acmf: deps.acmf, checkpoints, emit, ...(deps.escalationTimeoutMs ? { escalationTimeoutMs: deps.escalationTimeoutMs } : {}) });
    this.callbacks = new Callbacks({
      checkpoints, ledger: this.ledger, clock, sign: deps.sign, log,
      ...(deps.notifier ? { notifier: deps.notifier } : {}), ...(deps.callbackSecret ? { callbackSecret: deps.callbackSecret } : {}), ...(deps.retry ? { retry: deps.retry } : {}),
    });
    this.settlement = new Settlement({ checkpoints, acmf: deps.acmf, events: deps.events, callbacks: this.callbacks, emit, log });
  }

  /** The ledger the RIGOR pipeline uses for `ctx.once` (intent before, outcome after; see side-effect-ledger.ts). */
  get sideEffects(): SideEffectLedger {
    return this.ledger;
  }

  // ---------------------------------------------------------------------------------------------
  // Accepting work

  async submitTask(t: TaskSubmission, who: Principal): Promise<ExecutionRecord> {
    const refused = t.callbackUrl ? this.deps.callbackUrlRefusal?.(t.callbackUrl) : null;
    if (refused) throw new EngineError('ERR_VALIDATION', `callbackUrl refused: ${refused}`, { details: { errors: [{ field: 'body.callbackUrl', message: refused }] } });
    const d = this.planning.defaults(t.source);
    const intelligence = t.intelligence ?? d.intelligence;
    const verb = this.planning.verbOf(t);
    const plan = verb ? planVerb(verb.verb, this.planning.context(intelligence, who.tenantId)) : planTask(t.capabilities, this.planning.context(intelligence, who.tenantId));
    // Every file named in the instruction (or input.files) is what the agents work on.
    const files = Array.isArray(t.input?.['files']) ? (t.input!['files'] as unknown[]).filter((f): f is string => typeof f === 'string') : filesNamedIn(verb?.rest ?? t.task);
    const input = { ...(t.input ?? {}), ...(files.length > 0 ? { files } : {}) };
    return this.accept('task', plan, {
      // The agents get the instruction without its `verb:` routing prefix (debug-ai parses the prompt as the trace).
      prompt: verb ? verb.rest : t.task, capabilities: [...t.capabilities], intelligence, scope: t.scope ?? d.scope, priority: t.priority ?? 'normal',
      source: this.planning.sourceOf(t.source), callbackUrl: t.callbackUrl ?? null, workflow: plan.workflowId, agentId: null, action: null, acmfMode: null, input,
      ...(verb ? { verb: verb.verb } : {}),
    }, who);
  }

  async invokeWorkflow(w: { capability: string; workflow: string; input: { prompt: string; scope?: Scope; intelligence?: IntelligenceTier; source?: string } }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planning.defaults(w.input.source);
    const intelligence = w.input.intelligence ?? d.intelligence;
    const plan = planWorkflow(w.capability, w.workflow, this.planning.context(intelligence, who.tenantId));
    return this.accept('workflow', plan, {
      prompt: w.input.prompt, capabilities: [w.capability], intelligence, scope: w.input.scope ?? d.scope, priority: 'normal',
      source: this.planning.sourceOf(w.input.source), callbackUrl: null, workflow: plan.workflowId, agentId: null, action: null, acmfMode: null, input: { ...w.input },
    }, who);
  }

  async invokeRigor(agentId: string, r: { prompt: string; priority?: Priority; acmfMode?: AcmfMode; scope?: Scope; intelligence?: IntelligenceTier; source?: string }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planning.defaults(r.source);
    const intelligence = r.intelligence ?? d.intelligence;
    const plan = planSingle(agentId, null, this.planning.context(intelligence, who.tenantId));
    return this.accept('rigor', plan, {
      prompt: r.prompt, capabilities: [], intelligence, scope: r.scope ?? d.scope, priority: r.priority ?? 'normal', source: this.planning.sourceOf(r.source),
      callbackUrl: null, workflow: null, agentId, action: plan.steps[0]!.action, acmfMode: r.acmfMode ?? null, input: {},
    }, who);
  }

  async runAction(agentId: string, action: string, payload: { prompt?: string; input?: Record<string, unknown>; scope?: Scope; intelligence?: IntelligenceTier; source?: string }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planning.defaults(payload.source);
    const intelligence = payload.intelligence ?? d.intelligence;
    const plan = planSingle(agentId, action, this.planning.context(intelligence, who.tenantId));
    return this.accept('action', plan, {
      prompt: payload.prompt ?? `${agentId} ${action}`, capabilities: [], intelligence, scope: payload.scope ?? d.scope, priority: 'normal',
      source: this.planning.sourceOf(payload.source), callbackUrl: null, workflow: null, agentId, action, acmfMode: null, input: payload.input ?? {},
    }, who);
  }

  /** Stores a customer workflow definition and starts a run of it. */
  async runCustomWorkflow(def: CustomWorkflowInput & { input: { prompt: string; scope?: Scope; intelligence?: IntelligenceTier; source?: string } }, who: Principal): Promise<{ definition: WorkflowDefinitionRecord; execution: ExecutionRecord }> {
    const d = this.planning.defaults(def.input.source);
    const intelligence = def.input.intelligence ?? d.intelligence;
    const { steps, lead } = validateCustomWorkflow(def, this.planning.context(intelligence, who.tenantId));
    const definition: WorkflowDefinitionRecord = { id: this.deps.newId('cwf'), name: def.name, pattern: def.pattern, lead, steps, createdAt: this.now(), ownerKeyId: who.keyId };
    await this.definitions.put(definition);
    const execution = await this.accept('workflow', planCustom(definition), {
      prompt: def.input.prompt, capabilities: [], intelligence, scope: def.input.scope ?? d.scope, priority: 'normal',
      source: this.planning.sourceOf(def.input.source), callbackUrl: null, workflow: def.name, agentId: null, action: null, acmfMode: null, input: { ...def.input },
    }, who, definition.id);
    return { definition, execution };
  }

  private async accept(kind: ExecutionKind, plan: Plan, request: ExecutionRequest, who: Principal, definitionId?: string): Promise<ExecutionRecord> {
    if (this.closed) throw new EngineError('ERR_CONFLICT', 'the engine is shutting down');
    this.planning.preflight(kind, plan, request);
    this.deps.admitTenant?.(who.tenantId ?? DEFAULT_TENANT_ID);
    const now = this.now();
    const steps = plan.steps.filter((s) => !s.asNeeded).map((s, i) => newStep(s, i, 1));
    // Backpressure at the door: an agent whose queue is full refuses new work (503 + Retry-After).
    this.deps.fleet.checkCapacity(steps.map((s) => s.agentId));
    const rec: ExecutionRecord = {
      id: this.deps.newId(ID_PREFIX[kind]), kind, status: 'queued', request, pattern: plan.pattern, lead: plan.lead, orchestrator: plan.orchestrator,
      agents: steps.map((s) => s.agentId), steps, createdAt: now, startedAt: null, completedAt: null, updatedAt: now,
      estimatedCompletion: this.records.estimate(steps.map((s) => s.agentId)), currentAgent: null, output: null, error: null,
      ownerKeyId: who.keyId, tenantId: who.tenantId ?? DEFAULT_TENANT_ID, resumes: 0, ...(definitionId ? { definitionId } : {}), ...(who.idempotencyId ? { idempotencyId: who.idempotencyId } : {}),
    };
    if (who.callbackSecret) this.callbacks.remember(rec.id, who.callbackSecret);
    // The 202 is answered only once this write is on disk; the run starts while it is written, as a step
    // starts while the previous one's end is (step-ends.ts): its events and effects wait for this write,
    // and its own writes follow it in the journal. A write that fails stops the run as a shutdown would.
    const accepted = this.executions.put(rec);
    this.start(rec.id, plan, accepted);
    await accepted;
    return rec;
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  get(id: string): ExecutionRecord {
    return this.records.get(id);
  }

  find(id: string): ExecutionRecord | undefined {
    return this.records.find(id);
  }

  /**
   * The execution as `tenantId` may see it: another tenant's is ERR_NOT_FOUND with the same message
   * as a missing one, so a key learns nothing of what it does not own.
   */
  getFor(tenantId: string, id: string): ExecutionRecord {
    const rec = this.executions.get(id);
    if (!rec || tenantOf(rec) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no execution ${id}`, { details: { id } });
    return rec;
  }

  /** Newest first. Filters and sorts summaries (in memory), then reads only the records returned. */
  list(filter: ExecutionFilter & { limit?: number; offset?: number } = {}): ExecutionRecord[] {
    return this.records.list(filter);
  }

  /**
   * The execution a request with this idempotency claim created, if it got that far: an index of the last
   * 24 hours' claims (a claim lives a day at the door), not a walk over every summary.
   */
  findByIdempotency(idempotencyId: string): ExecutionRecord | undefined {
    const id = this.records.usage.byClaim(idempotencyId);
    return id === undefined ? undefined : this.executions.get(id);
  }

  /** What a tenant runs now and ran in the last 24 hours (its execution quotas): counters kept on each write (tenant-usage.ts). */
  tenantUsage(tenantId: string): { executionsLast24h: number; activeExecutions: number } {
    return this.records.usage.usage(tenantId);
  }

  /** The tenant of an execution, or undefined when there is no such execution. */
  tenantOfExecution(id: string): string | undefined {
    const rec = this.executions.get(id);
    return rec ? tenantOf(rec) : undefined;
  }

  /** How many executions match (for pagination), from memory. */
  count(filter: ExecutionFilter = {}): number {
    return this.records.summaries(filter).length;
  }

  definition(id: string): WorkflowDefinitionRecord | undefined {
    return this.definitions.get(id);
  }

  /**
   * Resolves with the record once the execution has ended, at once when it already has: the one wait
   * of every door (a GET action's 30 s, readiness, MCP tools). ERR_TIMEOUT after `timeoutMs`, the
   * signal's reason when it aborts, ERR_NOT_FOUND for an unknown id.
   */
  whenSettled(id: string, wait: SettleWait = {}): Promise<ExecutionRecord> {
    return this.settlement.whenSettled(id, wait);
  }

  /** Follows the pipeline's events to know the running phase of each execution. */
  observe(e: EngineEventInput): void {
    if (e.type === 'approval_requested') this.settlement.asked(e.execution_id);
    if (e.type === 'step_started') this.livePhases.set(e.execution_id, { step: e.step, phase: 'Research', completed: false });
    else if (e.type === 'phase_started' || e.type === 'phase_completed') {
      const live = this.livePhases.get(e.execution_id);
      if (live) this.livePhases.set(e.execution_id, { step: live.step, phase: e.phase, completed: e.type === 'phase_completed' });
    } else if (e.type === 'execution_completed' || e.type === 'execution_failed') this.livePhases.delete(e.execution_id);
    else if (e.type === 'approval_requested' || e.type === 'approval_decided') {
      // A step waiting in Inspect for a person makes the whole execution wait.
      const rec = this.executions.get(e.execution_id);
      if (rec && !TERMINAL_STATUSES.has(rec.status)) {
        const status = e.type === 'approval_requested' ? 'awaiting_approval' : 'in_progress';
        this.executions.update(rec.id, { status, updatedAt: this.now() }).catch((err: unknown) => this.deps.log(`status of ${rec.id} not stored: ${(err as Error).message}`));
      }
    }
  }

  live(id: string): LivePhase | undefined {
    return this.livePhases.get(id);
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** Resolves when the execution's run in this process has returned (at once when none runs): after its end is settled. */
  async ran(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  /** The event source of an execution for SSE: replay from the stored log, then live events. */
  eventSource(id: string): { replay(afterSeq: number): Promise<EngineEvent[]>; pages?(afterSeq: number): AsyncIterable<EngineEvent[]>; subscribe(listener: (e: EngineEvent) => void): () => void; isFinished(): boolean } {
    this.get(id);
    const log = this.deps.eventLog;
    return {
      replay: (afterSeq) => log.read(id, afterSeq),
      ...(log.pages ? { pages: (afterSeq: number) => log.pages!(id, afterSeq) } : {}),
      subscribe: (listener) => this.deps.events.subscribe(id, listener),
      isFinished: () => TERMINAL_STATUSES.has(this.get(id).status),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Control

  async cancel(id: string, by: string): Promise<ExecutionRecord> {
    const rec = this.get(id);
    if (TERMINAL_STATUSES.has(rec.status)) throw new EngineError('ERR_CONFLICT', `execution ${id} is already ${rec.status}`, { details: { id, status: rec.status } });
    const run = this.running.get(id);
    if (run) {
      run.ctrl.abort(new EngineError('ERR_CANCELLED', `cancelled by ${by}`));
      await run.done;
    } else {
      await this.settlement.finish(rec.id, 'cancelled', { code: 'ERR_CANCELLED', message: `cancelled by ${by}`, step: null, agentId: null });
    }
    return this.get(id);
  }

  /** After a restart: every execution that was in flight resumes from its last completed step. */
  async resumeInFlight(): Promise<string[]> {
    // Worktrees of effects a crash interrupted go first: the steps that resume reconcile with a clean repository.
    const released = await this.ledger.releaseAbandoned();
    if (released > 0) this.deps.log(`removed ${released} temporary worktree(s) left by interrupted side effects`);
    const open = this.records.summaries({ active: true }).flatMap((r) => this.executions.get(r.id) ?? []);
    // The repositories of interrupted executions may hold temporary worktrees no intent names.
    const workspaces = [...new Set(open.map((r) => r.request.source).filter((s): s is string => !!s && !/^[a-z][a-z0-9+.-]*:\/\//i.test(s)))];
    if (workspaces.length > 0 && this.deps.effectResources?.sweep) {
      const swept = await this.deps.effectResources.sweep(workspaces).catch((err: unknown) => (this.deps.log(`worktree sweep failed: ${(err as Error).message}`), 0));
      if (swept > 0) this.deps.log(`removed ${swept} temporary worktree(s) left in the repositories of interrupted executions`);
    }
    for (const rec of open) {
      await this.deps.eventLog.lastSeq(rec.id).then((seq) => this.deps.events.resume(rec.id, seq));
      // A running step starts again; a step of an old record gets its continued state as data (escalation.ts).
      const steps = rec.steps.map((s) => migrateContinued(s.status === 'running' ? { ...s, status: 'pending' as const } : s));
      await this.executions.update(rec.id, { steps, resumes: rec.resumes + 1, updatedAt: this.now() });
      this.deps.log(`resuming ${rec.id} (${rec.steps.filter((s) => s.status === 'completed').length} of ${rec.steps.length} steps done)`);
      this.start(rec.id, this.planning.replan(rec, (d) => this.definitions.get(d)));
    }
    // Finished executions whose callback has no recorded outcome (the process died before or during the
    // delivery) send it now; one that was started before goes again with the same delivery id.
    for (const rec of this.records.summaries({}).filter((r) => TERMINAL_STATUSES.has(r.status) && r.callback && !this.callbacks.isDone(r.id))) {
      void this.callbacks.notify(rec.id);
    }
    return open.map((r) => r.id);
  }

  /** Stops accepting work and aborts running executions without marking them: they resume on the next start. */
  async close(): Promise<void> {
    this.closed = true;
    const runs = [...this.running.values()];
    for (const r of runs) r.ctrl.abort(new EngineError('ERR_CANCELLED', 'shutdown', { details: { shutdown: true } }));
    await Promise.allSettled(runs.map((r) => r.done));
  }

  // ---------------------------------------------------------------------------------------------
  // Running

  /** Runs the execution; `accepted` is its acceptance write when that is still in flight (accept). */
  private start(id: string, plan: Plan, accepted?: Promise<void>): void {
    const ctrl = new AbortController();
    accepted?.catch(() => ctrl.abort(new EngineError('ERR_CANCELLED', 'the execution could not be accepted', { details: { shutdown: true } })));
    const done = this.run(id, plan, ctrl.signal, accepted).catch((err: unknown) => this.deps.log(`execution ${id} crashed: ${(err as Error)?.stack ?? String(err)}`));
    this.running.set(id, { ctrl, done: done.finally(() => this.running.delete(id)) });
  }

  private async run(id: string, plan: Plan, signal: AbortSignal, accepted?: Promise<void>): Promise<void> {
    const rec = this.get(id);
    // Nothing of a run is streamed before its acceptance is on disk (delivered in order once it is).
    if (accepted) void this.deps.events.hold(id, [], accepted);
    // Started before a restart: its start mark is stored, or its events reached the event log (resumeInFlight
    // continues their sequence), even when the mark itself had not (it rides the first step's checkpoint).
    const resumed = rec.startedAt !== null || this.deps.events.seqOf(id) > 0;
    // A progress mark, not a checkpoint: it goes out with the first step's durable batch instead of
    // costing a durable write of its own before the first step may start.
    this.executions.update(id, { status: 'in_progress', startedAt: rec.startedAt ?? this.now(), updatedAt: this.now() })
      .catch((err: unknown) => this.deps.log(`start mark of ${id} not stored: ${(err as Error).message}`));
    if (!resumed) this.emit({ type: 'execution_started', execution_id: id, kind: rec.kind === 'action' ? 'rigor' : rec.kind, agents: rec.agents });
    const ends = new StepEnds(this.deps.events, id, accepted);
    try {
      await runPattern(plan, this.patternHost(id, plan, signal, ends));
      // The last step's end may still be in flight (memory holds it): the final record joins its journal
      // write, and the execution's end is announced once both are durable (settlement.ts).
      const failed = this.get(id).steps.filter((s) => s.status === 'failed' && !s.superseded && !wasContinued(s));
      if (failed.length > 0) {
        const s = failed[0]!;
        await this.settlement.finish(id, 'failed', { code: s.error?.code ?? 'ERR_SKILL_FAILED', message: s.error?.message ?? `${s.agentId} failed`, step: s.step, agentId: s.agentId }, ends.settle());
      } else {
        await this.settlement.finish(id, 'completed', null, ends.settle());
      }
    } catch (err) {
      // The ends still being written come first (their step_completed before the execution's end).
      await ends.settle().catch(() => undefined);
      // A run stopped from outside (a cancel, a shutdown, its acceptance failing) ends for that reason, whatever
      // its steps hit meanwhile (an end in flight fails with the write the acceptance failed on).
      await this.stopped(id, signal.aborted && isEngineError(signal.reason) ? signal.reason : err, signal);
    }
  }

  /** A run that threw: cancelled or failed, except at shutdown (left in flight on purpose: resumed on the next start). */
  private async stopped(id: string, err: unknown, signal: AbortSignal): Promise<void> {
    const shutdown = isEngineError(err) && err.code === 'ERR_CANCELLED' && (err.details?.['shutdown'] === true || (signal.reason as { details?: Record<string, unknown> })?.details?.['shutdown'] === true);
    if (shutdown) return;
    const code = isEngineError(err) ? err.code : 'ERR_INTERNAL';
    const message = isEngineError(err) ? err.message : 'the orchestrator hit an unexpected error; it has been logged';
    if (!isEngineError(err)) this.deps.log(`execution ${id}: ${(err as Error)?.stack ?? String(err)}`);
    const current = this.get(id).steps.find((s) => s.status === 'running');
    await this.settlement.finish(id, code === 'ERR_CANCELLED' ? 'cancelled' : 'failed', { code, message, step: current?.step ?? null, agentId: current?.agentId ?? null });
  }

  private patternHost(id: string, plan: Plan, signal: AbortSignal, ends: StepEnds): PatternHost {
    return {
      signal,
      steps: () => this.get(id).steps,
      // The next step may start while this one's end is written (step-ends.ts); the rest waits for it.
      runStep: (index, extra) => ends.run(index, (earlierEnds) => this.steps.runStaged(id, index, plan, signal, { ...extra, earlierEnds })),
      addStep: async (planned, round, addedBecause, before) => {
        await ends.settle();
        const current = [...this.get(id).steps];
        const at = before === undefined ? current.length : before;
        current.splice(at, 0, newStep(planned, at, round, addedBecause));
        // Renumbered as new objects: a stored step is never changed in place (the store shares it between
        // versions and journals an update as what changed against the previous version, record-delta.ts).
        const steps = current.map((s, i) => (s.step === i ? s : { ...s, step: i }));
        await this.executions.update(id, { steps, agents: steps.map((s) => s.agentId).filter((a, i, all) => all.indexOf(a) === i), updatedAt: this.now() });
        return at;
      },
      escalate: async (index, reason) => {
        await ends.settle();
        return this.escalation.escalate(id, index, reason, signal);
      },
      supersede: async (index) => {
        await ends.settle();
        await this.records.patchStep(id, index, { superseded: true });
      },
    };
  }

  private emit(e: EngineEventInput): void {
    this.observe(e);
    this.deps.events.emit(e);
  }

  private now(): string {
    return this.records.now();
  }
}
