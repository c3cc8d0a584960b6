/**
 * The incident chain on the SSE stream: every topic of the chain (incident.resolution.completed →
 * pipeline.fix.request → pipeline.fix.completed → agent.<host>.pr.create → pipeline.review.request →
 * pipeline.review.passed → pipeline.deploy.staging) that names an incident becomes a `pipeline_event`
 * on its tenant's service stream (`GET /api/admin/events/stream` without `execution_id`).
 *
 * Why a tenant stream and not the execution's: the chain spans several executions (the incident has
 * none, the fix is one, review-ai and deploy-ai run their own) and most of its topics are published
 * after the fix execution's terminal event, which ends that execution's stream (docs/decisions.md,
 * "The incident chain on the SSE stream").
 *
 * - Once: a topic already on the stream for an incident is not added again (the bus may carry it twice:
 *   a redelivered resolution). The stored events are the memory of that, so it holds across restarts
 *   for the retained window.
 * - In order: the event is numbered when the bus delivers it (synchronously, in publication order),
 *   then stored; the stores of one stream are chained so they land in that order too.
 * - Tenancy: the event goes to the tenant the message names (`tenantId`), else the tenant of the
 *   execution it names, else the tenant an earlier event of the same incident went to, else the default
 *   tenant. A tenant's stream holds only its events; nothing else reads them.
 * - Resumable: `seq` counts per tenant from 1 without gaps and is the SSE id, so Last-Event-ID replays
 *   exactly what a client missed, from memory (the last `retain` events of each tenant are kept, in the
 *   store and in memory; older ones are dropped oldest first).
 */
import type { PipelineEvent, PipelineTopic } from '../../../../protocol/events';
import type { MessageBus, PipelineMessage, TopicPattern } from '../bus';
import type { ExecutionRecord } from '../executions/records';
import type { Clock, Repository } from '../ports';
import { DEFAULT_TENANT_ID } from '../tenants/tenant-id';

export const PIPELINE_EVENTS_COLLECTION = 'pipelineEvents';
/** Events kept per tenant for replays (and for the once-per-incident memory). */
export const PIPELINE_EVENTS_RETAINED = 2_000;

export interface PipelineEventRecord {
  /** `<tenantId>:<seq, 12 digits>`. */
  id: string;
  tenantId: string;
  event: PipelineEvent;
}

export interface PipelineEventsDeps {
  bus: MessageBus;
  records: Repository<PipelineEventRecord>;
  executions: { find(id: string): Pick<ExecutionRecord, 'tenantId'> | undefined };
  clock: Clock;
  log(line: string): void;
  /** Events kept per tenant (default PIPELINE_EVENTS_RETAINED). */
  retain?: number;
}

/** The bus patterns of the chain (the PR-create topic of any host). */
const SUBSCRIBED: readonly TopicPattern[] = [
  'incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.*.pr.create',
  'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging',
];

interface TenantStream {
  events: PipelineEvent[];
  lastSeq: number;
  listeners: Set<(e: PipelineEvent) => void>;
  /** The previous store of this stream: the next one waits for it (stored in seq order). */
  writing: Promise<void>;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** The incident a chain message is about: the same reading as the triggers' (the resolution may name it `incident_id` or `id`). */
export function incidentOf(topic: string, m: PipelineMessage): string | null {
  if (topic === 'incident.resolution.completed') return str(m['incidentId']) ?? str(m['incident_id']) ?? str(m['id']) ?? str(m.executionId);
  return str(m['incidentId']);
}

export class PipelineEvents {
  private readonly streams = new Map<string, TenantStream>();
  /** `<incident>\n<topic>` of every event on a stream (once per incident). */
  private readonly seen = new Set<string>();
  /** The tenant an incident's events went to. */
  private readonly incidentTenant = new Map<string, string>();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly retain: number;

  constructor(private readonly deps: PipelineEventsDeps) {
    this.retain = deps.retain ?? PIPELINE_EVENTS_RETAINED;
    const stored = deps.records.list().sort((a, b) => (a.tenantId === b.tenantId ? a.event.seq - b.event.seq : a.tenantId < b.tenantId ? -1 : 1));
    for (const r of stored) {
      const s = this.stream(r.tenantId);
      s.events.push(r.event);
      s.lastSeq = Math.max(s.lastSeq, r.event.seq);
      this.remember(r.tenantId, r.event);
    }
  }

  start(): void {
    for (const pattern of SUBSCRIBED) {
      this.unsubscribe.push(this.deps.bus.subscribe(pattern, (m, topic) => this.onTopic(topic, m as PipelineMessage)));
    }
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** The tenant's stream for SSE: replay from memory after a seq, then the live events; it never finishes. */
  source(tenantId: string): { replay(afterSeq: number): PipelineEvent[]; subscribe(listener: (e: PipelineEvent) => void): () => void; isFinished(): boolean } {
    return {
      replay: (afterSeq) => (this.streams.get(tenantId)?.events ?? []).filter((e) => e.seq > afterSeq),
      subscribe: (listener) => {
        const s = this.stream(tenantId);
        s.listeners.add(listener);
        return () => void s.listeners.delete(listener);
      },
      isFinished: () => false,
    };
  }

  /** The tenant's retained events after `afterSeq` (tests, the CLI). */
  list(tenantId: string, afterSeq = 0): PipelineEvent[] {
    return this.source(tenantId).replay(afterSeq);
  }

  /** Resolves once every event seen so far is stored. */
  async flush(): Promise<void> {
    await Promise.all([...this.streams.values()].map((s) => s.writing));
  }

  private onTopic(topic: string, m: PipelineMessage): void {
    const incidentId = incidentOf(topic, m);
    if (!incidentId || this.seen.has(`${incidentId}\n${topic}`)) return;
    const executionId = str(m.executionId);
    const execution = executionId ? this.deps.executions.find(executionId) : undefined;
    const tenantId = str(m['tenantId']) ?? (execution ? execution.tenantId ?? DEFAULT_TENANT_ID : null) ?? this.incidentTenant.get(incidentId) ?? DEFAULT_TENANT_ID;
    const s = this.stream(tenantId);
    const prNumber = m['number'];
    const event: PipelineEvent = {
      type: 'pipeline_event', seq: ++s.lastSeq, ts: new Date(this.deps.clock.now()).toISOString(),
      topic: topic as PipelineTopic, incident_id: incidentId,
      // The resolution's executionId is the incident's own id, not an execution.
      execution_id: execution ? executionId : null,
      agent_id: str(m.agentId), pr_id: str(m['prId']), pr_number: typeof prNumber === 'number' ? prNumber : null,
    };
    s.events.push(event);
    this.remember(tenantId, event);
    const dropped = s.events.length > this.retain ? s.events.splice(0, s.events.length - this.retain) : [];
    s.writing = s.writing.then(async () => {
      await this.deps.records.put({ id: recordId(tenantId, event.seq), tenantId, event });
      for (const old of dropped) await this.deps.records.delete(recordId(tenantId, old.seq));
    }).catch((err: unknown) => this.deps.log(`pipeline event ${topic} of ${incidentId} not stored: ${(err as Error)?.message ?? String(err)}`));
    for (const l of [...s.listeners]) {
      try {
        l(event);
      } catch (err) {
        this.deps.log(`pipeline event listener failed: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }

  private remember(tenantId: string, e: PipelineEvent): void {
    this.seen.add(`${e.incident_id}\n${e.topic}`);
    this.incidentTenant.set(e.incident_id, tenantId);
  }

  private stream(tenantId: string): TenantStream {
    let s = this.streams.get(tenantId);
    if (!s) this.streams.set(tenantId, (s = { events: [], lastSeq: 0, listeners: new Set(), writing: Promise.resolve() }));
    return s;
  }
}

function recordId(tenantId: string, seq: number): string {
  return `${tenantId}:${String(seq).padStart(12, '0')}`;
}
