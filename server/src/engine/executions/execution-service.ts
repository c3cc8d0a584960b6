/**
 * Executions: tasks, workflow runs, RIGOR invocations and direct agent actions. Accepts them
 * durably, runs their steps through the RIGOR pipeline in the plan's pattern, checkpoints every step,
 * resumes what was in flight after a restart, and notifies callbacks.
 */
import type { EngineEvent, EngineEventInput } from '../../../../protocol/events';
import type { AcmfService } from '../acmf/acmf-service';
import type { ApprovalRecord } from '../acmf/records';
import type { AcmfMode, Capability, IntelligenceTier, Priority, Scope } from '../catalog/enums';
import { EngineError, isEngineError, type EngineErrorCode } from '../errors';
import type { ExecutionEvents } from '../execution-events';
import type { AttachmentStore, Clock, CollectionStore, Repository, WriteUnit } from '../ports';
import { boundOutput } from './bounded-output';
import { COLLECTIONS } from '../ports';
import type { RigorPipeline, SideEffectLedger, StepResult } from '../rigor/pipeline';
import type { StepSummary } from '../rigor/skill';
import type { EventLog } from './event-log';
import { planCustom, planSingle, planTask, planVerb, planWorkflow, validateCustomWorkflow, type CustomWorkflowInput, type Plan, type PlanContext, type PlannedStep } from './plan';
import { filesNamedIn, findVerb, isTaskVerb, verbPrefix, type TaskVerb } from '../catalog/verbs';
import { LOCAL_SUBSCRIPTION, type Subscription } from '../catalog/subscription';
import {
  EXECUTION_TIERING, ID_PREFIX, NO_GATES, summarizeExecution, TERMINAL_STATUSES, type ExecutionSummary, type AgentTiming, type ExecutionKind, type ExecutionRecord, type ExecutionRequest, type SideEffectRecord,
  type StepRecord, type WorkflowDefinitionRecord,
} from './records';
import { runPattern, type PatternHost } from './patterns';
import type { LivePhase } from './views';
import { retryPolicy, runWithRetry, type RetryPolicy } from '../resilience/retry';
import type { AgentFleet } from './agent-fleet';
import { DurableSideEffectLedger, isDone, type EffectResourcesPort } from './side-effect-ledger';
import type { StepObserver } from '../events/service-events';
import { READINESS_LOOKBACK, readinessFacts } from './readiness-facts';
import { DEFAULT_TENANT_ID, tenantOf } from '../tenants/tenant-id';

/** Posts a completion notification; the adapter does the HTTP. */
export interface CallbackNotifier {
  deliver(url: string, body: string, headers: Record<string, string>): Promise<{ status: number }>;
}

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

/** Fallback per step when an agent has no measured duration yet. */
export const DEFAULT_STEP_ESTIMATE_MS = 30_000;
const DEFAULT_ESCALATION_TIMEOUT_MS = 60 * 60 * 1000;
const CALLBACK_ATTEMPTS = 5;
/** Starts of one delivery (this process and the next ones) before it is given up on. */
const CALLBACK_ROUNDS = 3;
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

/** Which executions a list or count covers (all given conditions hold). */
export interface ExecutionFilter {
  kind?: ExecutionKind;
  status?: string;
  ownerKeyId?: string;
  /** Only this tenant's executions (tenants/tenant-id.ts: absent on a record means the default tenant). */
  tenantId?: string;
  /** Only executions that have not ended. */
  active?: boolean;
}

export class ExecutionService {
  private readonly executions: Repository<ExecutionRecord>;
  private readonly ledger: DurableSideEffectLedger;
  private readonly timings: Repository<AgentTiming>;
  private readonly definitions: Repository<WorkflowDefinitionRecord>;
  private readonly running = new Map<string, { ctrl: AbortController; done: Promise<void> }>();
  private readonly secrets = new Map<string, string>();
  /** The phase each running execution is in, from its events (status views between checkpoints). */
  private readonly livePhases = new Map<string, LivePhase>();
  /** Executions that asked a person in this process: only they can have approvals to close when they end. */
  private readonly askedApproval = new Set<string>();
  private closed = false;

  constructor(private readonly deps: ExecutionServiceDeps) {
    // Ended executions leave memory for the store's cold segments (records.ts, EXECUTION_TIERING).
    deps.store.tier?.(COLLECTIONS.executions, EXECUTION_TIERING);
    this.executions = deps.store.collection<ExecutionRecord>(COLLECTIONS.executions);
    this.ledger = new DurableSideEffectLedger({
      repo: deps.store.collection<SideEffectRecord>('sideEffects'), clock: deps.clock, newId: deps.newId, log: deps.log,
      ...(deps.effectResources ? { resources: deps.effectResources } : {}),
    });
    this.timings = deps.store.collection<AgentTiming>('agentTimings');
    this.definitions = deps.store.collection<WorkflowDefinitionRecord>(COLLECTIONS.workflows);
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
    const d = this.planDefaults(t.source);
    const intelligence = t.intelligence ?? d.intelligence;
    const verb = this.verbOf(t);
    const plan = verb ? planVerb(verb.verb, this.planContext(intelligence, who.tenantId)) : planTask(t.capabilities, this.planContext(intelligence, who.tenantId));
    // Every file named in the instruction (or input.files) is what the agents work on.
    const files = Array.isArray(t.input?.['files']) ? (t.input!['files'] as unknown[]).filter((f): f is string => typeof f === 'string') : filesNamedIn(verb?.rest ?? t.task);
    const input = { ...(t.input ?? {}), ...(files.length > 0 ? { files } : {}) };
    return this.accept('task', plan, {
      // The agents get the instruction without its `verb:` routing prefix (debug-ai parses the prompt as the trace).
      prompt: verb ? verb.rest : t.task, capabilities: [...t.capabilities], intelligence, scope: t.scope ?? d.scope, priority: t.priority ?? 'normal',
      source: this.sourceOf(t.source), callbackUrl: t.callbackUrl ?? null, workflow: plan.workflowId, agentId: null, action: null, acmfMode: null, input,
      ...(verb ? { verb: verb.verb } : {}),
    }, who);
  }

  /** The verb of a task: explicit, or the `verb:` prefix of its text when the verb belongs to a requested capability. */
  private verbOf(t: TaskSubmission): { verb: TaskVerb; rest: string } | undefined {
    const covers = (verb: TaskVerb) => {
      const cap = findVerb(verb)!.capability;
      return t.capabilities.some((c) => c === cap || (c === 'PLATFORM' && ['BUILD', 'OPERATE', 'SECURE'].includes(cap)));
    };
    if (t.verb) {
      if (!covers(t.verb)) {
        const message = `verb ${t.verb} belongs to ${findVerb(t.verb)!.capability}, which is not among the capabilities ${t.capabilities.join(', ')}`;
        throw new EngineError('ERR_VALIDATION', message, { details: { errors: [{ field: 'verb', message }] } });
      }
      return { verb: t.verb, rest: verbPrefix(t.task)?.rest ?? t.task };
    }
    const pre = verbPrefix(t.task);
    return pre && covers(pre.verb) ? pre : undefined;
  }

  private planContext(intelligence: IntelligenceTier, tenantId: string | undefined): PlanContext {
    return { intelligence, subscription: this.deps.subscription?.(tenantId ?? DEFAULT_TENANT_ID) ?? LOCAL_SUBSCRIPTION };
  }

  private sourceOf(source: string | undefined): string | null {
    return source ?? this.deps.defaultWorkspace?.() ?? null;
  }

  /** Intelligence and scope of a request that does not set them: its folder's configuration, else the engine's. */
  private planDefaults(source: string | undefined): { intelligence: IntelligenceTier; scope: Scope } {
    return this.deps.defaultsFor?.(this.sourceOf(source)) ?? this.deps.defaults;
  }

  async invokeWorkflow(w: { capability: string; workflow: string; input: { prompt: string; scope?: Scope; intelligence?: IntelligenceTier; source?: string } }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planDefaults(w.input.source);
    const intelligence = w.input.intelligence ?? d.intelligence;
    const plan = planWorkflow(w.capability, w.workflow, this.planContext(intelligence, who.tenantId));
    return this.accept('workflow', plan, {
      prompt: w.input.prompt, capabilities: [w.capability], intelligence, scope: w.input.scope ?? d.scope, priority: 'normal',
      source: this.sourceOf(w.input.source), callbackUrl: null, workflow: plan.workflowId, agentId: null, action: null, acmfMode: null, input: { ...w.input },
    }, who);
  }

  async invokeRigor(agentId: string, r: { prompt: string; priority?: Priority; acmfMode?: AcmfMode; scope?: Scope; intelligence?: IntelligenceTier; source?: string }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planDefaults(r.source);
    const intelligence = r.intelligence ?? d.intelligence;
    const plan = planSingle(agentId, null, this.planContext(intelligence, who.tenantId));
    return this.accept('rigor', plan, {
      prompt: r.prompt, capabilities: [], intelligence, scope: r.scope ?? d.scope, priority: r.priority ?? 'normal', source: this.sourceOf(r.source),
      callbackUrl: null, workflow: null, agentId, action: plan.steps[0]!.action, acmfMode: r.acmfMode ?? null, input: {},
    }, who);
  }

  async runAction(agentId: string, action: string, payload: { prompt?: string; input?: Record<string, unknown>; scope?: Scope; intelligence?: IntelligenceTier; source?: string }, who: Principal): Promise<ExecutionRecord> {
    const d = this.planDefaults(payload.source);
    const intelligence = payload.intelligence ?? d.intelligence;
    const plan = planSingle(agentId, action, this.planContext(intelligence, who.tenantId));
    return this.accept('action', plan, {
      prompt: payload.prompt ?? `${agentId} ${action}`, capabilities: [], intelligence, scope: payload.scope ?? d.scope, priority: 'normal',
      source: this.sourceOf(payload.source), callbackUrl: null, workflow: null, agentId, action, acmfMode: null, input: payload.input ?? {},
    }, who);
  }

  /** Stores a customer workflow definition and starts a run of it. */
  async runCustomWorkflow(def: CustomWorkflowInput & { input: { prompt: string; scope?: Scope; intelligence?: IntelligenceTier; source?: string } }, who: Principal): Promise<{ definition: WorkflowDefinitionRecord; execution: ExecutionRecord }> {
    const d = this.planDefaults(def.input.source);
    const intelligence = def.input.intelligence ?? d.intelligence;
    const { steps, lead } = validateCustomWorkflow(def, this.planContext(intelligence, who.tenantId));
    const definition: WorkflowDefinitionRecord = { id: this.deps.newId('cwf'), name: def.name, pattern: def.pattern, lead, steps, createdAt: this.now(), ownerKeyId: who.keyId };
    await this.definitions.put(definition);
    const execution = await this.accept('workflow', planCustom(definition), {
      prompt: def.input.prompt, capabilities: [], intelligence, scope: def.input.scope ?? d.scope, priority: 'normal',
      source: this.sourceOf(def.input.source), callbackUrl: null, workflow: def.name, agentId: null, action: null, acmfMode: null, input: { ...def.input },
    }, who, definition.id);
    return { definition, execution };
  }

  private async accept(kind: ExecutionKind, plan: Plan, request: ExecutionRequest, who: Principal, definitionId?: string): Promise<ExecutionRecord> {
    if (this.closed) throw new EngineError('ERR_CONFLICT', 'the engine is shutting down');
    this.preflight(kind, plan, request);
    this.deps.admitTenant?.(who.tenantId ?? DEFAULT_TENANT_ID);
    const now = this.now();
    const steps = plan.steps.filter((s) => !s.asNeeded).map((s, i) => this.newStep(s, i, 1));
    // Backpressure at the door: an agent whose queue is full refuses new work (503 + Retry-After).
    this.deps.fleet.checkCapacity(steps.map((s) => s.agentId));
    const rec: ExecutionRecord = {
      id: this.deps.newId(ID_PREFIX[kind]), kind, status: 'queued', request, pattern: plan.pattern, lead: plan.lead, orchestrator: plan.orchestrator,
      agents: steps.map((s) => s.agentId), steps, createdAt: now, startedAt: null, completedAt: null, updatedAt: now,
      estimatedCompletion: this.estimate(steps.map((s) => s.agentId)), currentAgent: null, output: null, error: null,
      ownerKeyId: who.keyId, tenantId: who.tenantId ?? DEFAULT_TENANT_ID, resumes: 0, ...(definitionId ? { definitionId } : {}), ...(who.idempotencyId ? { idempotencyId: who.idempotencyId } : {}),
    };
    if (who.callbackSecret) this.secrets.set(rec.id, who.callbackSecret);
    // The 202 is answered only once this write is on disk.
    await this.executions.put(rec);
    this.start(rec.id, plan);
    return rec;
  }

  /**
   * What can be known before an execution exists is answered now, not after an hour of waiting:
   * a step whose skill needs a workspace when the request has none is 422 ERR_NEEDS_INPUT naming
   * `source`; a verb, RIGOR invocation or direct action whose agent cannot run at all (no skill, or
   * no model for a skill that needs one) is 501 ERR_SKILL_UNAVAILABLE with the reason. Workflows and
   * capability tasks keep such steps: they end in error with the same reason when reached.
   */
  private preflight(kind: ExecutionKind, plan: Plan, request: ExecutionRequest): void {
    const what = plan.verb ? `${plan.verb}` : kind === 'rigor' || kind === 'action' ? `${request.agentId} ${request.action}` : `${request.workflow ?? kind}`;
    for (const s of plan.steps.filter((p) => !p.asNeeded)) {
      const r = this.deps.rigor.readiness(s.agentId, s.action);
      if (r.unavailable && (plan.verb || kind === 'rigor' || kind === 'action')) {
        throw new EngineError('ERR_SKILL_UNAVAILABLE', `${what} cannot run: ${r.unavailable}`, { details: { agentId: s.agentId, action: s.action, verb: plan.verb ?? null } });
      }
      if (r.needs.includes('workspace') && !request.source) {
        const message = `${s.agentId} ${s.action} needs a workspace: give source (a project folder) or open a folder in the editor`;
        throw new EngineError('ERR_NEEDS_INPUT', `${what} needs input: ${message}`, { details: { errors: [{ field: 'source', message }], agentId: s.agentId, action: s.action } });
      }
      // The input of a direct action or RIGOR invocation is that one skill's: checked against its schema now.
      if ((kind === 'rigor' || kind === 'action') && request.input) this.deps.rigor.checkInput(s.agentId, s.action, request.input);
    }
  }

  private newStep(s: PlannedStep, index: number, round: number, addedBecause?: string): StepRecord {
    return {
      step: index, agentId: s.agentId, action: s.action, domain: s.domain, round, status: 'pending', attempts: 0, startedAt: null, completedAt: null,
      phases: [], passed: null, confidence: null, summary: null, output: null, gates: NO_GATES, error: null,
      ...(s.id ? { stepId: s.id } : {}), ...(addedBecause ? { addedBecause } : {}),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  get(id: string): ExecutionRecord {
    const rec = this.executions.get(id);
    if (!rec) throw new EngineError('ERR_NOT_FOUND', `no execution ${id}`, { details: { id } });
    return rec;
  }

  find(id: string): ExecutionRecord | undefined {
    return this.executions.get(id);
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
    const page = this.executionSummaries(filter).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    const from = filter.offset ?? 0;
    const ids = (filter.limit ? page.slice(from, from + filter.limit) : page.slice(from)).map((s) => s.id);
    return ids.flatMap((id) => this.executions.get(id) ?? []);
  }

  /** The execution a request with this idempotency claim created, if it got that far (from memory). */
  findByIdempotency(idempotencyId: string): ExecutionRecord | undefined {
    const hit = this.executionSummaries({}).find((s) => s.idempotencyId === idempotencyId);
    return hit ? this.executions.get(hit.id) : undefined;
  }

  /** What a tenant runs now and ran in the last 24 hours (its execution quotas), from the summaries in memory. */
  tenantUsage(tenantId: string): { executionsLast24h: number; activeExecutions: number } {
    const since = new Date(this.deps.clock.now() - 24 * 3600_000).toISOString();
    let last24h = 0;
    let active = 0;
    for (const s of this.executionSummaries({ tenantId })) {
      if (s.createdAt >= since) last24h++;
      if (!TERMINAL_STATUSES.has(s.status)) active++;
    }
    return { executionsLast24h: last24h, activeExecutions: active };
  }

  /** The tenant of an execution, or undefined when there is no such execution. */
  tenantOfExecution(id: string): string | undefined {
    const rec = this.executions.get(id);
    return rec ? tenantOf(rec) : undefined;
  }

  /** How many executions match (for pagination), from memory. */
  count(filter: ExecutionFilter = {}): number {
    return this.executionSummaries(filter).length;
  }

  /** The summaries that match, in no particular order (only `list` needs them sorted). */
  private executionSummaries(filter: ExecutionFilter): ExecutionSummary[] {
    const all = this.executions.summaries?.(summarizeExecution) ?? this.executions.list().map(summarizeExecution);
    return all.filter((r) => (!filter.kind || r.kind === filter.kind) && (!filter.status || r.status === filter.status)
      && (!filter.ownerKeyId || r.ownerKeyId === filter.ownerKeyId) && (!filter.tenantId || tenantOf(r) === filter.tenantId) && (!filter.active || !TERMINAL_STATUSES.has(r.status)));
  }

  /** The metering facts of every execution in the store (from the in-memory summaries), for billing-ai. */
  private usageFacts(tenantId: string): UsageFacts {
    return {
      asOf: this.now(),
      executions: this.executionSummaries({ tenantId }).map((s) => ({
        id: s.id, kind: s.kind, status: s.status, owner: s.ownerKeyId, createdAt: s.createdAt, completedAt: s.completedAt,
        ...(s.agents ? { agents: s.agents, intelligence: s.intelligence ?? null, capabilities: s.capabilities ?? [], project: s.project ?? null, tokens: s.tokens ?? null } : {}),
      })),
    };
  }

  definition(id: string): WorkflowDefinitionRecord | undefined {
    return this.definitions.get(id);
  }

  /** Follows the pipeline's events to know the running phase of each execution. */
  observe(e: EngineEventInput): void {
    if (e.type === 'approval_requested') this.askedApproval.add(e.execution_id);
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
      await this.finish(rec.id, 'cancelled', { code: 'ERR_CANCELLED', message: `cancelled by ${by}`, step: null, agentId: null });
    }
    return this.get(id);
  }

  /** After a restart: every execution that was in flight resumes from its last completed step. */
  async resumeInFlight(): Promise<string[]> {
    // Worktrees of effects a crash interrupted go first: the steps that resume reconcile with a clean repository.
    const released = await this.ledger.releaseAbandoned();
    if (released > 0) this.deps.log(`removed ${released} temporary worktree(s) left by interrupted side effects`);
    const open = this.executionSummaries({ active: true }).flatMap((r) => this.executions.get(r.id) ?? []);
    // The repositories of interrupted executions may hold temporary worktrees no intent names.
    const workspaces = [...new Set(open.map((r) => r.request.source).filter((s): s is string => !!s && !/^[a-z][a-z0-9+.-]*:\/\//i.test(s)))];
    if (workspaces.length > 0 && this.deps.effectResources?.sweep) {
      const swept = await this.deps.effectResources.sweep(workspaces).catch((err: unknown) => (this.deps.log(`worktree sweep failed: ${(err as Error).message}`), 0));
      if (swept > 0) this.deps.log(`removed ${swept} temporary worktree(s) left in the repositories of interrupted executions`);
    }
    for (const rec of open) {
      await this.deps.eventLog.lastSeq(rec.id).then((seq) => this.deps.events.resume(rec.id, seq));
      const steps = rec.steps.map((s) => (s.status === 'running' ? { ...s, status: 'pending' as const } : s));
      await this.executions.update(rec.id, { steps, resumes: rec.resumes + 1, updatedAt: this.now() });
      this.deps.log(`resuming ${rec.id} (${rec.steps.filter((s) => s.status === 'completed').length} of ${rec.steps.length} steps done)`);
      this.start(rec.id, this.replan(rec));
    }
    // Finished executions whose callback has no recorded outcome (the process died before or during the
    // delivery) send it now; one that was started before goes again with the same delivery id.
    for (const rec of this.executionSummaries({}).filter((r) => TERMINAL_STATUSES.has(r.status) && r.callback && !this.callbackDone(r.id))) {
      void this.notify(rec.id);
    }
    return open.map((r) => r.id);
  }

  private replan(rec: ExecutionRecord): Plan {
    if (rec.definitionId) {
      const def = this.definitions.get(rec.definitionId);
      if (def) return planCustom(def);
    }
    // Accepted work resumes as it was planned: the subscription was checked when it was accepted.
    const ctx: PlanContext = { intelligence: rec.request.intelligence, subscription: LOCAL_SUBSCRIPTION };
    if (rec.kind === 'task') return isTaskVerb(rec.request.verb) ? planVerb(rec.request.verb, ctx) : planTask(rec.request.capabilities as Capability[], ctx);
    if (rec.kind === 'workflow' && rec.request.workflow) return planWorkflow(rec.request.capabilities[0]!, rec.request.workflow, ctx);
    return planSingle(rec.request.agentId!, rec.request.action, ctx);
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

  private start(id: string, plan: Plan): void {
    const ctrl = new AbortController();
    const done = this.run(id, plan, ctrl.signal).catch((err: unknown) => this.deps.log(`execution ${id} crashed: ${(err as Error)?.stack ?? String(err)}`));
    this.running.set(id, { ctrl, done: done.finally(() => this.running.delete(id)) });
  }

  private async run(id: string, plan: Plan, signal: AbortSignal): Promise<void> {
    let rec = this.get(id);
    const resumed = rec.startedAt !== null;
    rec = await this.executions.update(id, { status: 'in_progress', startedAt: rec.startedAt ?? this.now(), updatedAt: this.now() });
    if (!resumed) this.emit({ type: 'execution_started', execution_id: id, kind: rec.kind === 'action' ? 'rigor' : rec.kind, agents: rec.agents });
    const host = this.patternHost(id, plan, signal);
    try {
      await runPattern(plan, host);
      const final = this.get(id);
      const failed = final.steps.filter((s) => s.status === 'failed' && !s.superseded && !this.wasContinued(s));
      if (failed.length > 0) {
        const s = failed[0]!;
        await this.finish(id, 'failed', { code: s.error?.code ?? 'ERR_SKILL_FAILED', message: s.error?.message ?? `${s.agentId} failed`, step: s.step, agentId: s.agentId });
      } else {
        await this.finish(id, 'completed', null);
      }
    } catch (err) {
      const shutdown = isEngineError(err) && err.code === 'ERR_CANCELLED' && (err.details?.['shutdown'] === true || (signal.reason as { details?: Record<string, unknown> })?.details?.['shutdown'] === true);
      if (shutdown) return; // left in flight on purpose: resumed on the next start
      const code = isEngineError(err) ? err.code : 'ERR_INTERNAL';
      const message = isEngineError(err) ? err.message : 'the orchestrator hit an unexpected error; it has been logged';
      if (!isEngineError(err)) this.deps.log(`execution ${id}: ${(err as Error)?.stack ?? String(err)}`);
      const current = this.get(id).steps.find((s) => s.status === 'running');
      await this.finish(id, code === 'ERR_CANCELLED' ? 'cancelled' : 'failed', { code, message, step: current?.step ?? null, agentId: current?.agentId ?? null });
    }
  }

  private wasContinued(s: StepRecord): boolean {
    // Records written before `continuedBy` existed kept it in the error message.
    return s.continuedBy !== undefined || (s.error?.message.includes('continued by') ?? false);
  }

  private patternHost(id: string, plan: Plan, signal: AbortSignal): PatternHost {
    return {
      signal,
      steps: () => this.get(id).steps,
      runStep: (index, extra) => this.runStep(id, index, plan, signal, extra),
      addStep: async (planned, round, addedBecause, before) => {
        const rec = this.get(id);
        const steps = [...rec.steps];
        const at = before === undefined ? steps.length : before;
        steps.splice(at, 0, this.newStep(planned, at, round, addedBecause));
        steps.forEach((s, i) => (s.step = i));
        await this.executions.update(id, { steps, agents: steps.map((s) => s.agentId).filter((a, i, all) => all.indexOf(a) === i), updatedAt: this.now() });
        return at;
      },
      escalate: (index, reason) => this.escalate(id, index, reason, signal),
      supersede: async (index) => void (await this.patchStep(id, index, { superseded: true })),
    };
  }

  /** Runs one step with retries; checkpoints its result. Returns the stored step. */
  private async runStep(id: string, index: number, plan: Plan, signal: AbortSignal, extra: { transcript?: StepSummary[] } = {}): Promise<StepRecord> {
    const rec = this.get(id);
    const step = rec.steps[index]!;
    if (step.status === 'completed') return step;
    // Only the step's end is a checkpoint worth waiting for; progress marks ride the next group commit.
    this.patchStep(id, index, { status: 'running', startedAt: this.now() }, { currentAgent: step.agentId }, false);
    this.emit({ type: 'step_started', execution_id: id, step: index, agent_id: step.agentId, action: step.action });
    this.deps.stepObserver?.stepStarted(rec, step);
    const previous = extra.transcript ?? this.summaries(this.get(id), index);
    const planned = plan.steps.find((p) => p.agentId === step.agentId && p.action === step.action);
    const input: Record<string, unknown> = { ...rec.request.input, ...(planned?.params ?? {}), ...(planned?.input ? resolveInput(planned.input, rec, previous) : {}) };
    // billing-ai meters the store but may not read it (skills run confined): the engine hands it the facts, over anything the request said.
    if (USAGE_FACT_AGENTS.has(step.agentId)) input['usage'] = this.usageFacts(tenantOf(rec));
    // A direct deploy-ai readiness (REST, CLI) gets the engine's facts as the editor and MCP pass them.
    if (rec.kind === 'action' && step.agentId === 'deploy-ai' && step.action === 'readiness' && !('tests' in input) && !('review' in input) && !('pendingApprovals' in input)) {
      const tenantId = tenantOf(rec);
      const pending = this.deps.acmf.pendingApprovals().filter((a) => tenantOf(this.executions.get(a.executionId)) === tenantId).length;
      Object.assign(input, readinessFacts(this.list({ limit: READINESS_LOOKBACK, tenantId }), pending));
    }
    const facts = await this.deps.stepFacts?.({ executionId: id, agentId: step.agentId, action: step.action, tenantId: tenantOf(rec), ownerKeyId: rec.ownerKeyId, input });
    if (facts) Object.assign(input, facts);
    // Install settings are the install's, not the request's: a request cannot widen what a skill may fetch.
    const settings = this.deps.settingsFor?.(step.agentId, rec.request.source ?? null);
    if (settings) input['settings'] = settings; else delete input['settings'];
    const fleet = this.deps.fleet;
    let last: StepResult | null = null;
    let failure: unknown = null;
    let inflight: Promise<unknown> = Promise.resolve();
    // Each attempt's audit records and ACMF counters become durable with the checkpoint below (rigor.runStepStaged):
    // with a store that groups writes they are one unit, written in one journal record (all or none after a crash).
    const durables: Array<Promise<void>> = [];
    const unit = this.deps.store.unit?.();
    const inUnit = unit ? { unit } : {};
    try {
      last = await runWithRetry(
        (attempt, attemptSignal) => (inflight = (async () => {
          this.patchStep(id, index, { attempts: step.attempts + attempt }, {}, false);
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
            }, inUnit);
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
    const outcome = last && (failure === null || (last as StepResult).error) ? { ok: true as const, result: last as StepResult } : { ok: false as const, error: failure };
    let stored: StepRecord;
    try {
      const patch = outcome.ok ? fromResult(outcome.result, this.now()) : fromError(outcome.error, this.now());
      // A huge output goes to an attachment file (durable first); the record keeps its reference.
      if (this.deps.attachments && patch.output != null) patch.output = await boundOutput(this.deps.attachments, id, step.step, patch.output);
      // Another step of a parallel pattern may still be running: it becomes the current agent.
      const other = this.get(id).steps.find((s, i) => i !== index && s.status === 'running');
      // One batch: the checkpoint, the counters and the audit records (the unit), committed together.
      // The agent's timing rides the same journal record (on its own it was one more write per step).
      if (outcome.ok) this.recordTiming(step.agentId, outcome.result.durationMs, unit);
      const checkpoint = this.patchStep(id, index, patch, { currentAgent: other?.agentId ?? null }, true, unit);
      [stored] = await Promise.all([checkpoint, unit?.commit(), ...durables]);
    } finally {
      // Never leave a unit uncommitted (its writes would never be durable), whatever failed above.
      void unit?.commit();
    }
    // Webhook events of the step (code.reviewed, security.*...) from its full artifact, once its end is durable.
    await this.deps.stepObserver?.stepEnded(this.get(id), stored, outcome.ok ? outcome.result : null);
    return stored;
  }

  /** Changes one step; with `durable` the promise waits for the write (a checkpoint). */
  private patchStep(id: string, index: number, patch: Partial<StepRecord>, top: Partial<ExecutionRecord>, durable: false): StepRecord;
  private patchStep(id: string, index: number, patch: Partial<StepRecord>, top?: Partial<ExecutionRecord>, durable?: true, unit?: WriteUnit): Promise<StepRecord>;
  private patchStep(id: string, index: number, patch: Partial<StepRecord>, top: Partial<ExecutionRecord> = {}, durable = true, unit?: WriteUnit): StepRecord | Promise<StepRecord> {
    const rec = this.get(id);
    const steps = rec.steps.map((s, i) => (i === index ? { ...s, ...patch } : s));
    const remaining = steps.filter((s) => s.status === 'pending' || s.status === 'running').map((s) => s.agentId);
    const written = this.executions.update(id, { ...top, steps, updatedAt: this.now(), estimatedCompletion: this.estimate(remaining) }, unit ? { unit } : {});
    if (!durable) {
      written.catch((err: unknown) => this.deps.log(`progress of ${id} not stored: ${(err as Error).message}`));
      return steps[index]!;
    }
    return written.then(() => steps[index]!);
  }

  /**
   * What the steps before `before` tell the next one: those that ran, and those that were not
   * applicable (their summary says why: "observe-ai found no data" is a fact later steps use).
   */
  private summaries(rec: ExecutionRecord, before: number): StepSummary[] {
    return rec.steps.slice(0, before).filter((s) => s.status === 'completed' || s.status === 'failed' || s.outcome === 'not_applicable').map((s) => ({
      step: s.step, agentId: s.agentId, action: s.action, passed: s.passed === true, confidence: s.confidence ?? 0, summary: s.summary ?? s.error?.message ?? '', data: s.output,
    }));
  }

  /** Retries are spent: a person decides whether the workflow continues past the failed step. */
  private async escalate(id: string, index: number, reason: string, signal: AbortSignal): Promise<boolean> {
    const rec = this.get(id);
    const step = rec.steps[index]!;
    if (this.wasContinued(step)) return true; // decided before a restart
    const lead = rec.lead ?? 'orchestrator';
    // The execution waits on this step's agent: it stays the current agent until a person decides.
    await this.executions.update(id, { status: 'awaiting_approval', currentAgent: step.agentId, updatedAt: this.now() });
    // After a restart the step's earlier escalation is waited on again, never asked twice.
    let approval: ApprovalRecord | undefined = step.escalationId ? this.deps.acmf.listApprovals({ executionId: id }).find((a) => a.id === step.escalationId) : undefined;
    if (!approval) {
      approval = await this.deps.acmf.requestApproval({
        executionId: id, agentId: step.agentId, risk: 'high', reasons: [reason, `escalated by ${lead}`],
        action: { kind: 'continue_after_failure', description: `continue ${rec.request.workflow ?? rec.kind} after ${step.agentId} ${step.action} failed: ${reason}` },
        timeoutMs: this.deps.escalationTimeoutMs ?? DEFAULT_ESCALATION_TIMEOUT_MS,
      });
      await this.patchStep(id, index, { escalationId: approval.id });
      this.emit({ type: 'approval_requested', execution_id: id, agent_id: step.agentId, approval_id: approval.id, action: 'continue_after_failure', risk: 'high' });
    }
    const decided: ApprovalRecord = await this.deps.acmf.waitForDecision(approval.id, signal);
    this.emit({ type: 'approval_decided', execution_id: id, agent_id: step.agentId, approval_id: decided.id, approved: decided.status === 'approved', by: decided.decidedBy ?? 'timeout' });
    await this.executions.update(id, { status: 'in_progress', currentAgent: null, updatedAt: this.now() });
    if (decided.status !== 'approved') return false;
    await this.patchStep(id, index, { continuedBy: decided.decidedBy ?? 'unknown' });
    return true;
  }

  private async finish(id: string, status: 'completed' | 'failed' | 'cancelled', error: ExecutionRecord['error']): Promise<void> {
    const rec = this.get(id);
    const steps = rec.steps.map((s) => (s.status === 'pending' || s.status === 'running' ? { ...s, status: status === 'cancelled' ? ('cancelled' as const) : ('skipped' as const) } : s));
    // Steps that reached an outcome (not those skipped because the execution stopped).
    const done = steps.filter((s) => s.outcome !== undefined || s.status === 'completed' || s.status === 'failed');
    const last = [...done].reverse().find((s) => s.status === 'completed');
    const notApplicable = done.filter((s) => s.outcome === 'not_applicable');
    const completed = done.filter((s) => s.status === 'completed');
    const output = {
      summary: status === 'completed'
        ? `${completed.length} step(s) completed${notApplicable.length ? `, ${notApplicable.length} not applicable (${notApplicable.map((s) => `${s.agentId}: ${(s.reason ?? '').replace(/^not applicable: /, '')}`).join('; ')})` : ''}${done.length - completed.length - notApplicable.length > 0 ? `, ${done.length - completed.length - notApplicable.length} continued past a failure` : ''}`
        : `${status}: ${error?.message ?? ''}`,
      // Passed: every step that ran completed and passed its Review, or had nothing to do. A step a
      // person chose to go on past is not a pass.
      passed: status === 'completed' && done.every((s) => (s.status === 'completed' && s.passed === true) || s.outcome === 'not_applicable' || s.superseded === true),
      steps: done.map((s) => ({ step: s.step, agentId: s.agentId, action: s.action, passed: s.passed, outcome: s.outcome ?? null, reason: s.reason ?? null, confidence: s.confidence, summary: s.summary })),
      result: last?.output ?? null,
    };
    const now = this.now();
    await this.executions.update(id, { status, steps, error, output, completedAt: now, updatedAt: now, currentAgent: null, estimatedCompletion: now });
    // Nobody may be asked about an execution that is over: its pending approvals close with it.
    // Only executions that asked someone (in this process, or an escalation stored before a restart) are
    // looked up, so ending an execution does not scan the approvals of the whole history.
    if (this.askedApproval.delete(id) || rec.resumes > 0 || steps.some((s) => s.escalationId)) {
      await this.deps.acmf.closeForExecution(id, `execution ${id} ${status}`).catch((err: unknown) => this.deps.log(`approvals of ${id} not closed: ${(err as Error).message}`));
    }
    if (status === 'completed') this.emit({ type: 'execution_completed', execution_id: id, status: 'completed' });
    else this.emit({ type: 'execution_failed', execution_id: id, status, error: { code: error?.code ?? 'ERR_INTERNAL', message: error?.message ?? status } });
    this.deps.events.forget(id);
    if (rec.request.callbackUrl) void this.notify(id);
  }

  private callbackDone(id: string): boolean {
    const r = this.ledger.get(id, -1, 'callback');
    return r !== undefined && isDone(r);
  }

  /**
   * POSTs the completion to `callbackUrl`, signed like webhooks, retried with backoff, through the
   * ledger: the delivery is an intent (with its delivery id) before the POST and an outcome after it.
   * Exactly once unless the process dies between the POST and the outcome record; then it is sent
   * again after the restart with the SAME delivery id (`X-Cadre-Delivery`, `Idempotency-Key`) and the
   * same body, for the receiver to dedupe. A receiver that keeps failing is given up on after
   * CALLBACK_ROUNDS starts of the delivery (each with CALLBACK_ATTEMPTS tries); a 4xx answer other than
   * 429 is final at once.
   */
  private async notify(id: string): Promise<void> {
    const rec = this.get(id);
    const url = rec.request.callbackUrl;
    if (!url || !this.deps.notifier) return;
    // The body is the same on every attempt (created_at is the completion's time), so is its signature.
    const body = JSON.stringify({ event: `${rec.kind}.${rec.status}`, created_at: rec.completedAt ?? this.now(), data: { id: rec.id, kind: rec.kind, status: rec.status, output: rec.output, error: rec.error, completedAt: rec.completedAt } });
    // The owner's key hash, also after a restart; never anything a receiver could not know.
    const secret = this.secrets.get(id) ?? (rec.ownerKeyId ? this.deps.callbackSecret?.(rec.ownerKeyId) : null) ?? null;
    try {
      const outcome = await this.ledger.once(id, -1, 1, 'callback', async ({ effectId, tries }) => {
        if (!secret) return { status: null, at: this.now(), deliveryId: effectId, notSent: 'the key that submitted the task is unknown: nothing to sign the callback with' };
        if (tries > CALLBACK_ROUNDS) return { status: null, at: this.now(), deliveryId: effectId, notSent: `given up after ${CALLBACK_ROUNDS} rounds of ${CALLBACK_ATTEMPTS} attempts` };
        const headers = {
          'content-type': 'application/json', 'x-cadre-signature': `sha256=${this.deps.sign(body, secret)}`, 'x-cadre-event': `${rec.kind}.${rec.status}`,
          'x-cadre-delivery': effectId, 'idempotency-key': effectId,
        };
        try {
          const res = await runWithRetry(async () => {
            const r = await this.deps.notifier!.deliver(url, body, headers);
            if (r.status >= 200 && r.status < 300) return r;
            throw new EngineError('ERR_SKILL_FAILED', `callback answered ${r.status}`, { retryable: r.status >= 500 || r.status === 429, details: { status: r.status } });
          }, retryPolicy({ maxAttempts: CALLBACK_ATTEMPTS, timeouts: [10_000], ...this.deps.retry }), { clock: this.deps.clock });
          return { status: res.status, at: this.now(), deliveryId: effectId };
        } catch (err) {
          // A refusal (4xx) will not change on a resend: recorded as the outcome. The rest stays an intent.
          const status = isEngineError(err) ? err.details?.['status'] : undefined;
          if (typeof status === 'number' && status < 500 && status !== 429) return { status, at: this.now(), deliveryId: effectId, notSent: `the receiver refused it (${status})` };
          throw err;
        }
      });
      if (outcome.notSent) this.deps.log(`callback for ${id} to ${url} not delivered: ${outcome.notSent}`);
    } catch (err) {
      this.deps.log(`callback for ${id} to ${url} failed (sent again at the next start, same delivery id): ${(err as Error).message}`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Estimates

  private estimate(agents: string[]): string {
    const ms = agents.reduce((sum, a) => sum + (this.timings.get(a)?.meanMs ?? DEFAULT_STEP_ESTIMATE_MS), 0);
    return new Date(this.deps.clock.now() + ms).toISOString();
  }

  private recordTiming(agentId: string, ms: number, unit?: WriteUnit): void {
    const t = this.timings.get(agentId);
    // An exponentially weighted mean follows an agent that gets faster or slower.
    const meanMs = t ? Math.round(t.meanMs * 0.8 + ms * 0.2) : ms;
    void this.timings.put({ id: agentId, samples: (t?.samples ?? 0) + 1, meanMs }, unit ? { unit } : {});
  }

  private emit(e: EngineEventInput): void {
    this.observe(e);
    this.deps.events.emit(e);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
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
