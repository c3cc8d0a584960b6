/**
 * The ACMF-gated pull-request flow (contract, "Source-hosting app integration"):
 *
 *   agent.<host>.pr.create ─▶ ACMF approval handler ─▶ branch ─▶ PR ─▶ pipeline.review.request
 *     ─▶ review-ai on the PR diff ─▶ pipeline.review.passed ─▶ pipeline.deploy.staging (deploy-ai)
 *                                  └▶ failed: the author agent is told on the PR and a fix is requested
 *
 * The agent's mode decides (acmf/policy.ts prBehaviour/decidePr): OBSERVE logs the proposed change
 * only; LEARNING files an approval before anything is created; ASSISTED creates at once unless the
 * change is significant (risk high or above by the ACMF risk rules, or more than
 * SIGNIFICANT_LINES changed lines / SIGNIFICANT_FILES files), which needs an approval first;
 * AUTONOMOUS creates. Incident PRs are governed by LEARNING at most and need a person's approving
 * review, CI passing and 90% coverage before merge. Cadre never approves or merges a PR.
 *
 * Exactly once: one record per `<execution>:<step>:<integration>` (a second request is a no-op),
 * and every external step goes through the side-effect ledger with a reconcile that looks on the
 * host first (branch by name, PR by head branch): a retry or a restart between "branch created"
 * and "PR opened" never makes a second branch or PR.
 */
import type { MessageBus, PipelineMessage } from '../bus';
import { prCreateTopic } from '../bus';
import type { AcmfMode } from '../catalog/enums';
import { coverageThresholdFor } from '../catalog/gates';
import type { ApprovalRecord, ProposedAction } from '../acmf/records';
import { decidePr, prBehaviour } from '../acmf/policy';
import { assessRisk, riskRank, type RiskContext } from '../acmf/risk';
import type { AuditTrail, Clock, Repository } from '../ports';
import type { EffectInfo, OnceOptions } from '../rigor/skill';
import { prBody, prLabels, prTitle } from './pr-body';
import type { HostPull, LocalCommit, PrEvidence, PrRecord, PullReviewer, SourceHostPort, StagingDeployer } from './ports';

export const SIGNIFICANT_LINES = 300;
export const SIGNIFICANT_FILES = 20;

/** The payload of `agent.<host>.pr.create` (the contract leaves it open; documented in docs/integrations.md). */
export interface PrCreateRequest extends PipelineMessage {
  executionId: string;
  agentId: string;
  step: number;
  local: LocalCommit;
  files: Array<{ path: string; additions: number; deletions: number; deleted?: boolean }>;
  evidence: PrEvidence;
  /** The incident this PR fixes (incident chain). */
  incident?: string | null;
}

export interface PrFlowDeps {
  bus: MessageBus;
  acmf: {
    state(agentId: string): Promise<{ mode: AcmfMode }>;
    requestApproval(req: { executionId: string; agentId: string; action: ProposedAction; risk: ApprovalRecord['risk']; reasons: string[] }): Promise<ApprovalRecord>;
    waitForDecision(id: string, signal?: AbortSignal): Promise<ApprovalRecord>;
  };
  audit: AuditTrail;
  host: SourceHostPort;
  records: Repository<PrRecord>;
  once<T>(executionId: string, step: number, attempt: number, key: string, effect: (info: EffectInfo) => Promise<T>, opts?: OnceOptions<T>): Promise<T>;
  riskContext(agentId: string): RiskContext;
  /** The tenant of an execution (only its tenant's integrations take its changes); absent: every integration. */
  tenantOfExecution?(executionId: string): string | undefined;
  reviewer?: PullReviewer;
  deployer?: StagingDeployer;
  clock: Clock;
  log(line: string): void;
}

export function prBranch(agentId: string, executionId: string): string {
  return `cadre/${agentId}/${executionId}`;
}

/** Significance in ASSISTED: the ACMF risk of opening a PR on these paths is high or above, or the change is large. */
export function significance(agentId: string, files: PrCreateRequest['files'], ctx: RiskContext): { significant: boolean; reasons: string[]; risk: ApprovalRecord['risk'] } {
  const paths = files.map((f) => f.path);
  const deleted = files.filter((f) => f.deleted).map((f) => f.path);
  const action: ProposedAction = { kind: 'open_pr', description: `open a pull request for ${agentId}`, paths, external: true, ...(deleted.length ? { destructive: true } : {}) };
  const risk = assessRisk(action, ctx);
  const reasons = riskRank(risk.level) >= riskRank('high') ? [...risk.reasons] : [];
  const lines = files.reduce((n, f) => n + f.additions + f.deletions, 0);
  if (lines > SIGNIFICANT_LINES) reasons.push(`${lines} changed lines (more than ${SIGNIFICANT_LINES})`);
  if (files.length > SIGNIFICANT_FILES) reasons.push(`${files.length} files (more than ${SIGNIFICANT_FILES})`);
  const level = reasons.length > 0 && riskRank(risk.level) < riskRank('high') ? 'high' : risk.level;
  return { significant: reasons.length > 0, reasons, risk: level };
}

/** What must hold before a person merges (shown in the PR body; incident PRs: all of it). */
export function mergeRules(rec: Pick<PrRecord, 'incident' | 'mode'>): string[] {
  const rules = ['a person reviews and merges this PR (Cadre agents never approve or merge their own PRs)', 'review-ai passed on this diff', 'CI passes'];
  if (rec.incident) rules.push(`test coverage is at least ${coverageThresholdFor('production', { incidentFix: true })}% (gate 20, incident fix)`, 'a person approved it (incident PRs: LEARNING, human approval before merge)');
  return rules;
}

export class PrFlow {
  private readonly unsubscribe: Array<() => void> = [];
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly deps: PrFlowDeps) {}

  get host(): string {
    return this.deps.host.host;
  }

  /** Subscribes to the PR-create topic of the host and the review request/passed topics. */
  start(): void {
    this.unsubscribe.push(
      this.deps.bus.subscribe(prCreateTopic(this.host), (m) => this.request(m as PrCreateRequest).then(() => undefined)),
      this.deps.bus.subscribe('pipeline.review.request', (m) => (typeof m['prId'] === 'string' ? this.review(m['prId']) : undefined)),
      this.deps.bus.subscribe('pipeline.review.passed', (m) => (typeof m['prId'] === 'string' ? this.deployStaging(m['prId']) : undefined)),
    );
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  list(filter: (r: PrRecord) => boolean = () => true): PrRecord[] {
    return this.deps.records.list(filter).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  }

  get(id: string): PrRecord | undefined {
    return this.deps.records.get(id);
  }

  /** Every record the request leads to (one per integration listing the agent); an existing record is returned as is. */
  async request(req: PrCreateRequest): Promise<PrRecord[]> {
    // A change goes only to integrations of its execution's tenant.
    const tenant = this.deps.tenantOfExecution?.(req.executionId);
    const integrations = this.deps.host.integrationsFor(req.agentId).filter((i) => tenant === undefined || i.tenantId === tenant);
    // No integration lists the agent: nothing to do (the common case without GitHub; not worth a log line).
    if (integrations.length === 0) return [];
    const out: PrRecord[] = [];
    for (const integ of integrations) {
      const id = `${req.executionId}:${req.step}:${integ.id}`;
      const existing = this.deps.records.get(id);
      if (existing) {
        out.push(existing);
        continue;
      }
      const agentMode = (await this.deps.acmf.state(req.agentId)).mode;
      const incident = req.incident ?? null;
      const behaviour = prBehaviour(agentMode, { incident: incident !== null });
      const sig = significance(req.agentId, req.files, this.deps.riskContext(req.agentId));
      const decision = decidePr(agentMode, sig.risk, { incident: incident !== null });
      const now = this.now();
      const rec: PrRecord = {
        id, executionId: req.executionId, step: req.step, agentId: req.agentId, integrationId: integ.id, repo: integ.repo,
        branch: prBranch(req.agentId, req.executionId), mode: behaviour.mode, incident, significant: { significant: sig.significant, reasons: sig.reasons },
        status: decision === 'observe_only' ? 'observed' : decision === 'approval_required' ? 'awaiting_approval' : 'opening',
        local: req.local, files: req.files.map((f) => ({ path: f.path, additions: f.additions, deletions: f.deletions })), evidence: req.evidence,
        createdAt: now, updatedAt: now,
      };
      await this.deps.records.put(rec);
      await this.audit(rec, 'pr.requested', { mode: rec.mode, agentMode, decision, significant: rec.significant, files: rec.files, behaviour: behaviour.summary });
      if (decision === 'observe_only') {
        // OBSERVE: the proposed change is logged (audit trail) and nothing is created.
        this.deps.log(`pr-flow: ${req.agentId} is in ${rec.mode}: proposed PR on ${integ.repo} logged only (${rec.files.length} files)`);
      } else if (decision === 'approval_required') {
        const approval = await this.deps.acmf.requestApproval({
          executionId: rec.executionId, agentId: rec.agentId,
          action: { kind: 'open_pr', description: `open a pull request on ${integ.repo} from ${rec.branch} (${rec.files.length} files, +${sum(rec.files, 'additions')} −${sum(rec.files, 'deletions')})`, paths: rec.files.map((f) => f.path), external: true },
          risk: rec.incident ? 'high' : sig.significant ? sig.risk : 'medium',
          reasons: [`${rec.agentId} is in ${rec.mode}: ${behaviour.summary}`, ...(rec.incident ? [`incident ${rec.incident}: incident PRs need a person's approval`] : []), ...sig.reasons],
        });
        await this.patch(rec.id, { approvalId: approval.id });
      }
      out.push(this.deps.records.get(id)!);
      this.drive(id);
    }
    return out;
  }

  /** Start-up: records a stop left halfway go on (approvals still pending are waited on again). */
  resume(): number {
    const open = this.deps.records.list((r) => r.status === 'awaiting_approval' || r.status === 'opening');
    for (const r of open) this.drive(r.id);
    return open.length;
  }

  /** Resolves when everything in progress for this record (approval wait, creation) has settled (tests, shutdown). */
  async settled(id?: string): Promise<void> {
    const all = id ? [this.running.get(id)] : [...this.running.values()];
    await Promise.all(all.map((p) => p?.catch(() => undefined)));
  }

  private drive(id: string): void {
    if (this.running.has(id)) return;
    const p = this.advance(id)
      .catch((err: unknown) => this.deps.log(`pr-flow: ${id}: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => this.running.delete(id));
    this.running.set(id, p);
  }

  private async advance(id: string): Promise<void> {
    let rec = this.deps.records.get(id)!;
    if (rec.status === 'awaiting_approval' && rec.approvalId) {
      const decided = await this.deps.acmf.waitForDecision(rec.approvalId);
      if (decided.status !== 'approved') {
        rec = await this.patch(id, { status: 'denied' });
        await this.audit(rec, 'pr.denied', { approvalId: decided.id, status: decided.status, by: decided.decidedBy ?? null });
        return;
      }
      rec = await this.patch(id, { status: 'opening' });
    }
    if (rec.status === 'opening') await this.open(rec);
  }

  /** Branch, then PR, then labels: each a ledger effect reconciled against the host. */
  private async open(rec: PrRecord): Promise<void> {
    const { host } = this.deps;
    try {
      const pushed = await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:branch:${rec.integrationId}`, async () => {
        const r = await host.pushBranch(rec.integrationId, { branch: rec.branch, local: rec.local, message: `${prTitle(rec)}\n\nCadre-Execution: ${rec.executionId}:${rec.step}\nCadre-ACMF: ${rec.mode}` });
        return { sha: r.sha, base: r.base };
      }, {
        // The intent without outcome (a crash after the ref was created): the branch on the host is the outcome.
        reconcile: async () => {
          const sha = await host.branchHead(rec.integrationId, rec.branch);
          return sha ? { sha, base: null as string | null } : undefined;
        },
      });
      await this.audit(rec, 'pr.branch_pushed', { branch: rec.branch, sha: pushed.sha });
      const pull = await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:pr:${rec.integrationId}`, async () => {
        // Find by head branch first: a PR opened by an attempt whose outcome was never recorded is that PR.
        const found = await host.findPull(rec.integrationId, rec.branch);
        if (found) return found;
        const base = pushed.base ?? (await this.baseOf(rec));
        return host.openPull(rec.integrationId, { branch: rec.branch, base, title: prTitle(rec), body: prBody(rec, mergeRules(rec)) });
      }, { reconcile: async () => (await host.findPull(rec.integrationId, rec.branch)) ?? undefined });
      await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:labels:${rec.integrationId}`, () => host.addLabels(rec.integrationId, pull.number, prLabels(rec)).then(() => true));
      const updated = await this.patch(rec.id, { status: 'open', number: pull.number, url: pull.htmlUrl, headSha: pull.headSha });
      await this.audit(updated, 'pr.opened', { number: pull.number, url: pull.htmlUrl, branch: rec.branch, mode: rec.mode, labels: prLabels(rec) });
      // config.require_review false: no review-ai and no staging deploy; the PR waits for people.
      if (this.deps.host.integration(rec.integrationId)?.requireReview !== false) {
        this.deps.bus.publish('pipeline.review.request', { executionId: rec.executionId, agentId: 'review-ai', prId: rec.id, number: pull.number, ...(rec.incident ? { incidentId: rec.incident } : {}) });
      }
    } catch (err) {
      const e = err as { reason?: string; message?: string };
      const failed = await this.patch(rec.id, { status: 'failed', error: { reason: e.reason ?? 'error', message: String(e.message ?? err).slice(0, 1000) } });
      await this.audit(failed, 'pr.failed', { reason: e.reason ?? 'error', message: String(e.message ?? err).slice(0, 1000) });
      throw err;
    }
  }

  /** The PR's base when the branch step was reconciled (its outcome came from the host, without the base): the default branch. */
  private baseOf(rec: PrRecord): Promise<string> {
    return this.deps.host.defaultBranch(rec.integrationId);
  }

  /** review-ai on the PR's diff (a `pipeline.review.request`); passed → review.passed, failed → the author is asked for a fix. */
  async review(prId: string): Promise<void> {
    const rec = this.deps.records.get(prId);
    if (!rec || rec.status !== 'open' || rec.number === undefined || !this.deps.reviewer) return;
    const pull: HostPull = { number: rec.number, url: rec.url ?? '', htmlUrl: rec.url ?? '', headSha: rec.headSha ?? '', branch: rec.branch, state: 'open', merged: false };
    const result = await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:review:${rec.integrationId}`, () =>
      this.deps.reviewer!.review({ integrationId: rec.integrationId, pull, local: rec.local, executionId: rec.executionId, agentId: rec.agentId }));
    const updated = await this.patch(prId, { status: result.passed ? 'review_passed' : 'review_failed', review: { ...result, at: this.now() } });
    await this.audit(updated, result.passed ? 'pr.review_passed' : 'pr.review_failed', { number: rec.number, reviewExecution: result.executionId, findings: result.findings, summary: result.summary });
    await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:review-comment:${rec.integrationId}`, () => this.deps.host.comment(rec.integrationId, rec.number!,
      `**review-ai ${result.passed ? 'passed' : 'found problems'}** on this diff${result.executionId ? ` (execution \`${result.executionId}\`)` : ''}: ${result.summary}` +
      (result.passed ? '' : `\n\n@${rec.agentId}: a fix is requested (Cadre publishes pipeline.fix.request for execution \`${rec.executionId}\`).`)).then(() => true));
    if (result.passed) {
      this.deps.bus.publish('pipeline.review.passed', { executionId: rec.executionId, agentId: 'review-ai', prId, number: rec.number, ...(rec.incident ? { incidentId: rec.incident } : {}) });
    } else {
      // The author agent is notified (PR comment above, audit) and a fix requested on the bus.
      this.deps.bus.publish('pipeline.fix.request', { executionId: rec.executionId, agentId: rec.agentId, prId, reason: 'review_failed', summary: result.summary, ...(rec.incident ? { incidentId: rec.incident } : {}) });
    }
  }

  /** deploy-ai to staging after a passed review (`pipeline.deploy.staging`); deploy-ai's own ACMF mode gates the command. */
  async deployStaging(prId: string): Promise<void> {
    const rec = this.deps.records.get(prId);
    if (!rec || rec.status !== 'review_passed' || rec.number === undefined) return;
    // Recorded before it is published: the topic's listeners see the PR deploying (and a restart does not publish it twice).
    await this.patch(prId, { status: 'deploying' });
    this.deps.bus.publish('pipeline.deploy.staging', { executionId: rec.executionId, agentId: 'deploy-ai', prId, number: rec.number, ...(rec.incident ? { incidentId: rec.incident } : {}) });
    if (!this.deps.deployer) return;
    const pull: HostPull = { number: rec.number, url: rec.url ?? '', htmlUrl: rec.url ?? '', headSha: rec.headSha ?? '', branch: rec.branch, state: 'open', merged: false };
    const r = await this.deps.once(rec.executionId, rec.step, 1, `${this.host}:deploy-staging:${rec.integrationId}`, () =>
      this.deps.deployer!.deploy({ integrationId: rec.integrationId, pull, local: rec.local, executionId: rec.executionId }));
    // The host may have reported the PR merged or closed while staging ran: that state stays.
    const now = this.deps.records.get(prId)?.status;
    const updated = await this.patch(prId, { ...(now === 'merged' || now === 'closed' ? {} : { status: 'deployed' as const }), deploy: { ...r, at: this.now() } });
    await this.audit(updated, 'pr.deploy_staging', { number: rec.number, deployExecution: r.executionId, status: r.status });
  }

  /** A pull request event from the host's webhooks (review state, merged, closed). */
  async onPullEvent(ev: { integrationId: string; branch: string; action: string; merged?: boolean; headSha?: string; review?: { state: string; by: string; bot: boolean } }): Promise<PrRecord | undefined> {
    const rec = this.deps.records.list((r) => r.integrationId === ev.integrationId && r.branch === ev.branch)[0];
    if (!rec) return undefined;
    const patch: Partial<PrRecord> = {};
    if (ev.headSha) patch.headSha = ev.headSha;
    if (ev.review && ev.review.state.toLowerCase() === 'approved' && !ev.review.bot) patch.humanApproval = { by: ev.review.by, at: this.now() };
    if (ev.action === 'closed') patch.status = ev.merged ? 'merged' : 'closed';
    if (Object.keys(patch).length === 0) return rec;
    const updated = await this.patch(rec.id, patch);
    if (patch.humanApproval) await this.audit(updated, 'pr.human_approved', { number: rec.number ?? null, by: ev.review!.by });
    if (patch.status === 'merged') {
      await this.audit(updated, 'pr.merged', { number: rec.number ?? null });
      this.deps.bus.publish('service.event', { event: 'code.merged', executionId: rec.executionId, data: { repository: rec.repo, number: rec.number ?? null, url: rec.url ?? null, branch: rec.branch, agentId: rec.agentId, executionId: rec.executionId, acmfMode: rec.mode, incident: rec.incident } });
    }
    return updated;
  }

  /** Whether a person may merge it now by Cadre's rules (incident PRs: human approval, CI, coverage ≥ 90%). */
  mergeReadiness(rec: PrRecord): { ready: boolean; missing: string[]; ci: string } {
    const ci = rec.headSha ? this.deps.host.ci(rec.integrationId, rec.headSha) : { state: 'none' as const, runs: [] };
    const missing: string[] = [];
    if (rec.review?.passed !== true) missing.push('review-ai has not passed this diff');
    if (ci.state !== 'success') missing.push(`CI ${ci.state === 'none' ? 'has not reported' : ci.state}`);
    if (rec.incident) {
      const need = coverageThresholdFor('production', { incidentFix: true });
      if (rec.evidence.coverage === null || rec.evidence.coverage < need) missing.push(`coverage ${rec.evidence.coverage ?? 'not measured'}${rec.evidence.coverage === null ? '' : '%'} below ${need}% (gate 20)`);
      if (!rec.humanApproval) missing.push('no approving review by a person');
    }
    return { ready: missing.length === 0, missing, ci: ci.state };
  }

  private async patch(id: string, patch: Partial<PrRecord>): Promise<PrRecord> {
    return this.deps.records.update(id, { ...patch, updatedAt: this.now() });
  }

  private async audit(rec: PrRecord, kind: string, data: Record<string, unknown>): Promise<void> {
    await this.deps.audit.append({ kind, executionId: rec.executionId, agentId: rec.agentId, actor: 'engine', data: { prId: rec.id, repo: rec.repo, branch: rec.branch, ...data } });
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function sum(files: PrRecord['files'], k: 'additions' | 'deletions'): number {
  return files.reduce((n, f) => n + f[k], 0);
}
