/**
 * The stored execution records and their step checkpoints: reads by id and through the in-memory
 * summaries, and the writes every job of an execution makes (a step patched, the estimated completion
 * kept current, the agents' measured step durations). One instance is shared by the modules of an
 * execution's jobs (planning, step running, escalation, settlement, callbacks).
 */
import { EngineError } from '../errors';
import { isoTime } from '../iso-time';
import type { Clock, CollectionStore, Repository, WriteUnit } from '../ports';
import { COLLECTIONS } from '../ports';
import { tenantOf } from '../tenants/tenant-id';
import { observedRepository, TenantUsageIndex } from './tenant-usage';
import { EXECUTION_TIERING, summarizeExecution, TERMINAL_STATUSES, type AgentTiming, type ExecutionKind, type ExecutionRecord, type ExecutionSummary, type StepRecord } from './records';

/** Fallback per step when an agent has no measured duration yet. */
export const DEFAULT_STEP_ESTIMATE_MS = 30_000;

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

export interface CheckpointsDeps {
  store: CollectionStore;
  clock: Clock;
  log(line: string): void;
}

export class Checkpoints {
  readonly executions: Repository<ExecutionRecord>;
  /** Per-tenant active executions and executions of the last 24 hours, kept current on each write. */
  readonly usage: TenantUsageIndex;
  private readonly timings: Repository<AgentTiming>;

  constructor(private readonly deps: CheckpointsDeps) {
    // Ended executions leave memory for the store's cold segments (records.ts, EXECUTION_TIERING).
    deps.store.tier?.(COLLECTIONS.executions, EXECUTION_TIERING);
    const raw = deps.store.collection<ExecutionRecord>(COLLECTIONS.executions);
    // Tenant quotas are checked on every accepted request: counted as records are written, not by a walk.
    this.usage = new TenantUsageIndex(() => deps.clock.now(), raw.summaries?.(summarizeExecution) ?? raw.list().map(summarizeExecution));
    this.executions = observedRepository(raw, this.usage);
    this.timings = deps.store.collection<AgentTiming>('agentTimings');
  }

  now(): string {
    return isoTime(this.deps.clock.now());
  }

  get(id: string): ExecutionRecord {
    const rec = this.executions.get(id);
    if (!rec) throw new EngineError('ERR_NOT_FOUND', `no execution ${id}`, { details: { id } });
    return rec;
  }

  find(id: string): ExecutionRecord | undefined {
    return this.executions.get(id);
  }

  /** The summaries that match, in no particular order (only `list` needs them sorted). */
  summaries(filter: ExecutionFilter): ExecutionSummary[] {
    const all = this.executions.summaries?.(summarizeExecution) ?? this.executions.list().map(summarizeExecution);
    return all.filter((r) => (!filter.kind || r.kind === filter.kind) && (!filter.status || r.status === filter.status)
      && (!filter.ownerKeyId || r.ownerKeyId === filter.ownerKeyId) && (!filter.tenantId || tenantOf(r) === filter.tenantId) && (!filter.active || !TERMINAL_STATUSES.has(r.status)));
  }

  /** Newest first. Filters and sorts summaries (in memory), then reads only the records returned. */
  list(filter: ExecutionFilter & { limit?: number; offset?: number } = {}): ExecutionRecord[] {
    const page = this.summaries(filter).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    const from = filter.offset ?? 0;
    const ids = (filter.limit ? page.slice(from, from + filter.limit) : page.slice(from)).map((s) => s.id);
    return ids.flatMap((id) => this.executions.get(id) ?? []);
  }

  /** Changes one step; with `durable` the promise waits for the write (a checkpoint). */
  patchStep(id: string, index: number, patch: Partial<StepRecord>, top: Partial<ExecutionRecord>, durable: false): StepRecord;
  patchStep(id: string, index: number, patch: Partial<StepRecord>, top?: Partial<ExecutionRecord>, durable?: true, unit?: WriteUnit): Promise<StepRecord>;
  patchStep(id: string, index: number, patch: Partial<StepRecord>, top: Partial<ExecutionRecord> = {}, durable = true, unit?: WriteUnit): StepRecord | Promise<StepRecord> {
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

  estimate(agents: string[]): string {
    const ms = agents.reduce((sum, a) => sum + (this.timings.get(a)?.meanMs ?? DEFAULT_STEP_ESTIMATE_MS), 0);
    return new Date(this.deps.clock.now() + ms).toISOString();
  }

  recordTiming(agentId: string, ms: number, unit?: WriteUnit): void {
    const t = this.timings.get(agentId);
    // An exponentially weighted mean follows an agent that gets faster or slower.
    const meanMs = t ? Math.round(t.meanMs * 0.8 + ms * 0.2) : ms;
    void this.timings.put({ id: agentId, samples: (t?.samples ?? 0) + 1, meanMs }, unit ? { unit } : {});
  }
}
