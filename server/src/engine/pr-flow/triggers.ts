/**
 * What starts the PR flow, and the incident chain around it.
 *
 *  - A completed execution whose step of a PR-capable agent committed code on its own branch (coder-ai's
 *    `data.mode: 'branch'`) and passed Review publishes `agent.<host>.pr.create` with the change and the
 *    RIGOR evidence (the Review's gate table from the audit trail).
 *  - The incident chain (contract, "Message-bus topics"): incident.resolution.completed →
 *    pipeline.fix.request → (coder-ai fixes, through RIGOR) → pipeline.fix.completed →
 *    agent.<host>.pr.create → pipeline.review.request → pipeline.review.passed → pipeline.deploy.staging.
 *    Each topic is published once per incident: the chain record lists what was published, durably,
 *    before it is published (a restart never repeats a topic; the flow's own records dedupe the rest).
 */
import type { MessageBus, PipelineMessage } from '../bus';
import { prCreateTopic } from '../bus';
import { AGENTS } from '../catalog/agents';
import type { ExecutionRecord, StepRecord } from '../executions/records';
import type { AuditTrail, Clock, Repository } from '../ports';
import type { PrEvidence } from './ports';
import type { PrCreateRequest } from './pr-flow';

export const PR_CAPABLE_AGENTS: readonly string[] = AGENTS.filter((a) => a.prCapable).map((a) => a.id);

/** Starts coder-ai on an incident's fix (the host runs it as an execution); resolves with the execution id. */
export interface IncidentFixer {
  fix(req: { incidentId: string; summary: string; source: string | null; requestedBy: string }): Promise<{ executionId: string }>;
}

export const CHAIN_TOPICS = [
  'incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.*.pr.create',
  'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging',
] as const;

export interface IncidentChainRecord {
  /** The incident id. */
  id: string;
  fixExecutionId: string | null;
  source: string | null;
  summary: string;
  /** Topics published for this incident, in order (the PR-create topic as `agent.<host>.pr.create`). */
  published: string[];
  status: 'fixing' | 'fix_failed' | 'pr_requested' | 'reviewing' | 'review_passed' | 'review_failed' | 'deploying';
  createdAt: string;
  updatedAt: string;
}

export const INCIDENT_CHAIN_COLLECTION = 'incidentChains';

export interface TriggerDeps {
  bus: MessageBus;
  audit: AuditTrail;
  host: string;
  executions: { find(id: string): ExecutionRecord | undefined };
  chains: Repository<IncidentChainRecord>;
  fixer?: IncidentFixer;
  clock: Clock;
  log(line: string): void;
}

const SHA = /^[0-9a-f]{7,64}$/i;

/** The step's change when it is one the PR flow can carry: a commit on the agent's own branch. */
function branchChange(step: StepRecord): { branch: string; commit: string; base: string | null; diff: string } | null {
  const d = step.output as Record<string, unknown> | null;
  if (!d || typeof d !== 'object' || d['mode'] !== 'branch') return null;
  const { branch, commit, base, diff } = d as { branch?: unknown; commit?: unknown; base?: unknown; diff?: unknown };
  if (typeof branch !== 'string' || typeof commit !== 'string' || !SHA.test(commit)) return null;
  return { branch, commit, base: typeof base === 'string' && SHA.test(base) ? base : null, diff: typeof diff === 'string' ? diff : '' };
}

/** Files with added and removed line counts, from a unified diff (`diff --git a/x b/x` sections). */
export function diffFiles(diff: string): PrCreateRequest['files'] {
  const files: PrCreateRequest['files'] = [];
  let cur: PrCreateRequest['files'][number] | null = null;
  for (const line of diff.split('\n')) {
    const head = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (head) {
      cur = { path: head[2]!, additions: 0, deletions: 0 };
      files.push(cur);
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('deleted file mode')) cur.deleted = true;
    else if (line.startsWith('+++') || line.startsWith('---')) continue;
    else if (line.startsWith('+')) cur.additions++;
    else if (line.startsWith('-')) cur.deletions++;
  }
  return files;
}

export class PrTriggers {
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly deps: TriggerDeps) {}

  start(): void {
    const { bus } = this.deps;
    this.unsubscribe.push(
      bus.subscribe('engine.event', (e) => (e.type === 'execution_completed' || e.type === 'execution_failed' ? this.onExecutionEnded(e.execution_id) : undefined)),
      bus.subscribe('incident.resolution.completed', (m) => this.onIncidentResolved(m)),
      bus.subscribe('pipeline.fix.request', (m) => this.onFixRequest(m)),
      // The rest of the chain is published by the PR flow; the chain record notes it (once per incident).
      bus.subscribe('pipeline.review.request', (m) => this.note(m, 'pipeline.review.request', 'reviewing')),
      bus.subscribe('pipeline.review.passed', (m) => this.note(m, 'pipeline.review.passed', 'review_passed')),
      bus.subscribe('pipeline.deploy.staging', (m) => this.note(m, 'pipeline.deploy.staging', 'deploying')),
    );
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** The PR requests of a completed execution (one per qualifying step). */
  async requestsFor(ex: ExecutionRecord, incident: string | null): Promise<PrCreateRequest[]> {
    const out: PrCreateRequest[] = [];
    for (const step of ex.steps) {
      if (step.status !== 'completed' || step.passed !== true || !PR_CAPABLE_AGENTS.includes(step.agentId)) continue;
      const change = branchChange(step);
      if (!change) continue;
      out.push({
        executionId: ex.id, agentId: step.agentId, step: step.step,
        local: { source: ex.request.source, branch: change.branch, commit: change.commit, base: change.base },
        files: diffFiles(change.diff), evidence: await this.evidence(ex, step), incident, ...(incident ? { incidentId: incident } : {}),
      });
    }
    return out;
  }

  private async onExecutionEnded(executionId: string): Promise<void> {
    const ex = this.deps.executions.find(executionId);
    if (!ex) return;
    const chain = this.deps.chains.list((c) => c.fixExecutionId === executionId)[0];
    if (ex.status !== 'completed') {
      if (chain && chain.status === 'fixing') {
        await this.deps.chains.update(chain.id, { status: 'fix_failed', updatedAt: this.now() });
        await this.deps.audit.append({ kind: 'incident.fix_failed', executionId, actor: 'engine', data: { incidentId: chain.id, status: ex.status } });
      }
      return;
    }
    const requests = await this.requestsFor(ex, chain?.id ?? null);
    if (chain) {
      await this.publishOnce(chain.id, 'pipeline.fix.completed', { executionId, agentId: 'coder-ai', incidentId: chain.id, prRequests: requests.length });
      if (requests.length === 0) this.deps.log(`incident ${chain.id}: the fix execution ${executionId} committed no branch; no pull request`);
    }
    for (const req of requests) {
      if (chain) await this.publishOnce(chain.id, prCreateTopic(this.deps.host), req, 'pr_requested');
      else this.deps.bus.publish(prCreateTopic(this.deps.host), req);
    }
  }

  private async onIncidentResolved(m: PipelineMessage): Promise<void> {
    const incidentId = String(m['incidentId'] ?? m['incident_id'] ?? m['id'] ?? m.executionId ?? '');
    if (!incidentId) return;
    if (!this.deps.chains.get(incidentId)) {
      const now = this.now();
      await this.deps.chains.put({
        id: incidentId, fixExecutionId: null, source: typeof m['source'] === 'string' ? m['source'] : null,
        summary: String(m['summary'] ?? m['title'] ?? `incident ${incidentId}`), published: ['incident.resolution.completed'], status: 'fixing', createdAt: now, updatedAt: now,
      });
    }
    await this.publishOnce(incidentId, 'pipeline.fix.request', { executionId: m.executionId ?? incidentId, agentId: 'coder-ai', incidentId, summary: this.deps.chains.get(incidentId)!.summary });
  }

  /** An incident's fix request: coder-ai runs (once per incident; a review-failed re-request without an incident goes to the log). */
  private async onFixRequest(m: PipelineMessage): Promise<void> {
    const incidentId = typeof m['incidentId'] === 'string' ? m['incidentId'] : null;
    if (!incidentId || !this.deps.fixer) {
      if (m['reason'] === 'review_failed') this.deps.log(`pr-flow: review-ai failed PR ${String(m['prId'])}; ${m.agentId ?? 'the author'} is asked for a fix (execution ${m.executionId})`);
      return;
    }
    const chain = this.deps.chains.get(incidentId);
    if (!chain || chain.fixExecutionId || chain.status === 'fix_failed') return;
    let executionId: string;
    try {
      ({ executionId } = await this.deps.fixer.fix({ incidentId, summary: chain.summary, source: chain.source, requestedBy: 'incident-ai' }));
    } catch (err) {
      // The fix could not even start (no language model for coder-ai, a refused plan): the chain ends here and
      // says why, instead of staying `fixing` with the reason only in a log line.
      const reason = (err as Error)?.message ?? String(err);
      await this.deps.chains.update(incidentId, { status: 'fix_failed', updatedAt: this.now() });
      await this.deps.audit.append({ kind: 'incident.fix_failed', agentId: 'coder-ai', actor: 'engine', data: { incidentId, status: 'not_started', reason } });
      this.deps.log(`incident ${incidentId}: coder-ai's fix could not start: ${reason}`);
      return;
    }
    await this.deps.chains.update(incidentId, { fixExecutionId: executionId, updatedAt: this.now() });
    await this.deps.audit.append({ kind: 'incident.fix_started', executionId, agentId: 'coder-ai', actor: 'engine', data: { incidentId } });
  }

  private async note(m: PipelineMessage, topic: string, status: IncidentChainRecord['status']): Promise<void> {
    const incidentId = typeof m['incidentId'] === 'string' ? m['incidentId'] : null;
    const chain = incidentId ? this.deps.chains.get(incidentId) : undefined;
    if (!chain || chain.published.includes(topic)) return;
    await this.deps.chains.update(chain.id, { published: [...chain.published, topic], status, updatedAt: this.now() });
    await this.deps.audit.append({ kind: 'incident.chain', executionId: m.executionId, actor: 'engine', data: { incidentId: chain.id, topic, prId: m['prId'] ?? null } });
  }

  /** Records the topic for the incident (durably), then publishes it; a topic already recorded is not published again. */
  private async publishOnce(incidentId: string, topic: 'pipeline.fix.request' | 'pipeline.fix.completed' | `agent.${string}.pr.create`, payload: PipelineMessage, status?: IncidentChainRecord['status']): Promise<void> {
    const chain = this.deps.chains.get(incidentId);
    if (!chain || chain.published.includes(topic)) return;
    await this.deps.chains.update(incidentId, { published: [...chain.published, topic], ...(status ? { status } : {}), updatedAt: this.now() });
    await this.deps.audit.append({ kind: 'incident.chain', executionId: payload.executionId, actor: 'engine', data: { incidentId, topic } });
    this.deps.bus.publish(topic, payload as never);
  }

  /** The Review's gate table, the confidence and coverage, and what the step says it fixed. */
  private async evidence(ex: ExecutionRecord, step: StepRecord): Promise<PrEvidence> {
    const records = await this.deps.audit.query({ executionId: ex.id, agentId: step.agentId, kind: 'phase.completed' }).catch(() => []);
    const review = records.filter((r) => r.data['phase'] === 'Review').at(-1);
    const gates = Array.isArray(review?.data['gates']) ? (review!.data['gates'] as Array<{ number: number; gate: string; status: string; value: unknown; threshold: number | null }>) : [];
    const cov = gates.find((g) => g.gate === 'coverage');
    const d = (step.output ?? {}) as Record<string, unknown>;
    const fixed = Array.isArray(d['fixes']) ? d['fixes'] : Array.isArray(d['fixed']) ? d['fixed'] : Array.isArray(d['findings']) ? d['findings'] : [];
    return {
      confidence: step.confidence,
      gates: gates.map((g) => ({ number: g.number, gate: g.gate, status: g.status, value: g.value, threshold: g.threshold })),
      findingsFixed: fixed.slice(0, 50).map((f) => (typeof f === 'string' ? f : String((f as Record<string, unknown>)['message'] ?? (f as Record<string, unknown>)['rule'] ?? JSON.stringify(f)).slice(0, 200))),
      summary: step.summary,
      coverage: typeof cov?.value === 'number' ? cov.value : null,
    };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
