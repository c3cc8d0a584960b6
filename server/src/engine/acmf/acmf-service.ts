/**
 * ACMF service: the per-agent autonomy state machine (persisted), risk evaluation of proposed
 * actions, human approvals, and the quality score that drives progression.
 *
 * Pure engine code: it reaches the store, the audit trail, the bus and the clock through ports.
 * Expiry of approvals is driven from outside (`expireDue(now)` on a timer of the host) and lazily
 * whenever an approval is read through `waitForDecision` or `decideApproval`.
 */
import type { QualityScore } from '../bus';
import { qualityTopic, type MessageBus } from '../bus';
import type { AcmfMode, Scope } from '../catalog/enums';
import { EngineError } from '../errors';
import type { AuditTrail, Clock, Repository, WriteOptions } from '../ports';
import { decide, isAcmfMode, lowerMode, minMode, type AcmfDecision } from './policy';
import type { AgentAcmfState, ApprovalRecord, ApprovalStatus, ModeChange, ProposedAction, RiskLevel } from './records';
import { assessRisk, isRiskLevel } from './risk';
import { isoTime } from '../iso-time';

/** Thresholds of a progression (config `progression.to_assisted`: success_rate, min_tasks, consecutive_success). */
export interface ProgressionThresholds {
  /** Successes / tasks over the agent's history, 0..1. */
  successRate: number;
  minTasks: number;
  consecutiveSuccess: number;
}

/** The per-agent settings the service reads (from `agents.<id>` of the config, with defaults). */
export interface AcmfSettings {
  acmfMode: AcmfMode;
  approvalRequiredFor: string[];
  protectedPaths: string[];
  toAssisted: ProgressionThresholds;
  /** When absent or null, ASSISTED -> AUTONOMOUS is never proposed (a person may still setMode). */
  toAutonomous?: ProgressionThresholds | null;
}

export interface AcmfServiceDeps {
  agents: Repository<AgentAcmfState>;
  approvals: Repository<ApprovalRecord>;
  audit: AuditTrail;
  bus: MessageBus;
  clock: Clock;
  settings: (agentId: string) => AcmfSettings;
  newId: () => string;
}

/** One proposed action as Inspect sees it. */
export interface ActionEvaluation {
  action: ProposedAction;
  risk: RiskLevel;
  reasons: string[];
  decision: AcmfDecision;
}

export interface ApprovalRequest {
  executionId: string;
  agentId: string;
  action: ProposedAction;
  risk: RiskLevel;
  reasons: string[];
  /** Deadline from now; absent = waits until decided. */
  timeoutMs?: number;
}

export interface ApprovalDecision {
  approved: boolean;
  /**
   * Who decided: the authenticated principal (`key:<id>`, `editor:<user>`), never a name the client
   * typed. Required; it is the audit record's `actor` and the approval's `decidedBy`.
   */
  by: string;
  reason?: string;
  /** What the client said about who decided (e.g. `user:alice`): kept in the audit record as a note only. */
  note?: string;
  /** The execution's own key approved its action (allowed by the self-approval setting): recorded. */
  selfApproved?: boolean;
}

export interface ReviewOutcome {
  executionId: string;
  reviewPassed: boolean;
  /** Ids of the gates that failed (empty when the review passed). */
  failedGates: string[];
}

export interface OutcomeResult {
  state: AgentAcmfState;
  /** The automatic mode change this outcome caused, if any. */
  modeChange: ModeChange | null;
  /** A promotion was newly proposed to a person by this outcome. */
  promotionProposed: boolean;
  quality: QualityScore;
}

/** Cap of `qualityHistory`. */
export const QUALITY_HISTORY_CAP = 100;
/** Window of the recent-trend term of the quality score. */
export const RECENT_OUTCOMES_WINDOW = 10;

/**
 * Quality score 0..1: half the lifetime success rate (successes / tasks), half the pass rate of the
 * last {@link RECENT_OUTCOMES_WINDOW} reviews (the recent trend), rounded to 4 decimals.
 */
export function qualityScore(state: Pick<AgentAcmfState, 'tasks' | 'successes' | 'recentOutcomes'>): number {
  if (state.tasks === 0) return 0;
  const lifetime = state.successes / state.tasks;
  const recent = state.recentOutcomes ?? [];
  const trend = recent.length === 0 ? lifetime : recent.filter(Boolean).length / recent.length;
  return Math.round((0.5 * lifetime + 0.5 * trend) * 10_000) / 10_000;
}

/** Whether `state` meets `t` (all three thresholds). */
export function meetsThresholds(state: Pick<AgentAcmfState, 'tasks' | 'successes' | 'consecutiveSuccess'>, t: ProgressionThresholds): boolean {
  if (state.tasks === 0) return false;
  return state.tasks >= t.minTasks && state.successes / state.tasks >= t.successRate && state.consecutiveSuccess >= t.consecutiveSuccess;
}

function describeProgress(state: Pick<AgentAcmfState, 'tasks' | 'successes' | 'consecutiveSuccess'>, t: ProgressionThresholds): string {
  const rate = state.tasks === 0 ? 0 : state.successes / state.tasks;
  return (
    `success rate ${rate.toFixed(2)} (${state.successes}/${state.tasks}) >= ${t.successRate}, ` +
    `tasks ${state.tasks} >= ${t.minTasks}, consecutive successes ${state.consecutiveSuccess} >= ${t.consecutiveSuccess}`
  );
}

/** True when a decided approval lets the action run. Pending, denied and expired do not. */
export function isApproved(record: ApprovalRecord): boolean {
  return record.status === 'approved';
}

/** Why an approval does not let its action run (for the failed step), or null when approved. */
export function denialReason(record: ApprovalRecord): string | null {
  switch (record.status) {
    case 'approved':
      return null;
    case 'denied':
      return `approval ${record.id} for ${record.action.kind} was denied by ${record.decidedBy ?? 'unknown'} at ${record.decidedAt ?? '?'}` +
        (record.reason ? `: ${record.reason}` : '');
    case 'expired':
      return `approval ${record.id} for ${record.action.kind} expired at ${record.expiresAt ?? '?'} without a decision (an expired approval counts as denied)`;
    case 'pending':
      return `approval ${record.id} for ${record.action.kind} is still pending`;
    case 'closed':
      return `approval ${record.id} for ${record.action.kind} was closed with its execution${record.reason ? `: ${record.reason}` : ''}`;
  }
}

type Waiter = (record: ApprovalRecord) => void;

/** Serialises async read-modify-write sequences per key (an agent, an approval). */
class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new EngineError('ERR_VALIDATION', `${field} is required`, { details: { field } });
  }
  return value.trim();
}

export class AcmfService {
  private readonly lock = new KeyedLock();
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(private readonly deps: AcmfServiceDeps) {}

  // -------------------------------------------------------------------------------------------
  // State
  // -------------------------------------------------------------------------------------------

  /**
   * The agent's persisted ACMF state, created on first use from the settings (initial mode from
   * `acmf_mode`, recorded as a ModeChange by `config`). When the configured `acmf_mode` differs
   * from the one last applied, the new value is applied once (by `config`).
   */
  async state(agentId: string): Promise<AgentAcmfState> {
    return this.lock.run(`agent:${agentId}`, () => this.ensureState(agentId));
  }

  /** Failed reviews since the last passed one: how much stricter the gates are for this agent. */
  strictness(agentId: string): number {
    return this.deps.agents.get(agentId)?.recentFailures ?? 0;
  }

  /**
   * Set the mode by a person's decision. Clears a pending promotion. No-op when already in `mode`.
   * `by` is the authenticated principal; `opts.note` what the client said about who it is (audited as a note).
   */
  async setMode(agentId: string, mode: AcmfMode, by: string, reason: string, opts: { note?: string } = {}): Promise<AgentAcmfState> {
    if (!isAcmfMode(mode)) throw new EngineError('ERR_VALIDATION', `unknown ACMF mode ${String(mode)}`, { details: { field: 'mode' } });
    const who = requireText(by, 'by');
    return this.lock.run(`agent:${agentId}`, async () => {
      const current = await this.ensureState(agentId);
      if (current.mode === mode) return current;
      const why = typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : `set by ${who}`;
      const { state } = await this.changeMode(withoutPromotion(current), mode, why, who, undefined, opts.note);
      return state;
    });
  }

  /** Apply the pending promotion (ASSISTED -> AUTONOMOUS) on a person's confirmation. */
  async confirmPromotion(agentId: string, by: string): Promise<AgentAcmfState> {
    const who = requireText(by, 'by');
    return this.lock.run(`agent:${agentId}`, async () => {
      const current = await this.ensureState(agentId);
      const pending = current.pendingPromotion;
      if (!pending) throw new EngineError('ERR_CONFLICT', `agent ${agentId} has no pending promotion`, { details: { agentId } });
      if (!this.deps.settings(agentId).toAutonomous) {
        await this.deps.agents.put(withoutPromotion(current));
        throw new EngineError('ERR_CONFLICT', `promotion of ${agentId} to AUTONOMOUS is not configured`, { details: { agentId } });
      }
      const { state } = await this.changeMode(
        withoutPromotion(current),
        pending.to,
        `promotion confirmed by ${who}: ${pending.reason}`,
        who,
      );
      return state;
    });
  }

  /** Drop the pending promotion on a person's refusal. It is proposed again after the next passed review that still meets the thresholds. */
  async declinePromotion(agentId: string, by: string, reason?: string): Promise<AgentAcmfState> {
    const who = requireText(by, 'by');
    return this.lock.run(`agent:${agentId}`, async () => {
      const current = await this.ensureState(agentId);
      const pending = current.pendingPromotion;
      if (!pending) throw new EngineError('ERR_CONFLICT', `agent ${agentId} has no pending promotion`, { details: { agentId } });
      const next: AgentAcmfState = withoutPromotion(current);
      await this.deps.agents.put(next);
      await this.deps.audit.append({
        kind: 'acmf.promotion_declined',
        agentId,
        actor: who,
        data: { from: current.mode, to: pending.to, reason: reason ?? null, proposedAt: pending.proposedAt },
      });
      return next;
    });
  }

  // -------------------------------------------------------------------------------------------
  // Evaluation (RIGOR Inspect)
  // -------------------------------------------------------------------------------------------

  /** Risk and decision for each proposed action, in order, under the agent's current mode. */
  /** `modeCap` lowers the mode for one execution (a request's acmfMode); it never raises it. */
  /** `settingsNow`: the agent's settings for this execution (its folder's .cadre.yaml); default the engine's. */
  async evaluate(agentId: string, actions: ProposedAction[], scope?: Scope, modeCap?: AcmfMode, settingsNow?: AcmfSettings): Promise<ActionEvaluation[]> {
    const st = await this.state(agentId);
    const mode = modeCap === undefined ? st.mode : minMode(st.mode, modeCap);
    const settings = settingsNow ?? this.deps.settings(agentId);
    const ctx = { protectedPaths: settings.protectedPaths, approvalRequiredFor: settings.approvalRequiredFor, scope };
    return actions.map((action) => {
      const { level, reasons } = assessRisk(action, ctx);
      return { action, risk: level, reasons, decision: decide(mode, level) };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Outcomes: regression, progression, quality
  // -------------------------------------------------------------------------------------------

  /**
   * Records a finished step's review. A failed review regresses the mode one level and increments
   * `recentFailures`; a passed one resets it and may progress LEARNING -> ASSISTED (automatic) or
   * propose ASSISTED -> AUTONOMOUS (a person confirms). Publishes the quality score.
   */
  async recordOutcome(agentId: string, outcome: ReviewOutcome): Promise<OutcomeResult> {
    const { result, durable } = await this.recordOutcomeStaged(agentId, outcome);
    await durable;
    return result;
  }

  /**
   * recordOutcome without waiting for the counters' store write: the state in memory, the bus and any
   * mode change are done when it resolves; `durable` resolves when the counters are on disk. A RIGOR step
   * uses it so its counters ride the same group commit as its checkpoint (one store fsync per step).
   */
  async recordOutcomeStaged(agentId: string, outcome: ReviewOutcome, opts: WriteOptions = {}): Promise<{ result: OutcomeResult; durable: Promise<void> }> {
    const executionId = requireText(outcome.executionId, 'executionId');
    // Memory changes inside the lock; the plain counter write is awaited outside it, so concurrent
    // steps of one agent share a group commit instead of queueing one durable write each.
    let durable: Promise<void> = Promise.resolve();
    const result = await this.lock.run(`agent:${agentId}`, async () => {
      const current = await this.ensureState(agentId);
      const settings = this.deps.settings(agentId);
      const at = this.isoNow();
      const passed = outcome.reviewPassed === true;
      const recentOutcomes = [...(current.recentOutcomes ?? []), passed].slice(-RECENT_OUTCOMES_WINDOW);
      let next: AgentAcmfState = {
        ...current,
        tasks: current.tasks + 1,
        successes: current.successes + (passed ? 1 : 0),
        consecutiveSuccess: passed ? current.consecutiveSuccess + 1 : 0,
        recentFailures: passed ? 0 : current.recentFailures + 1,
        recentOutcomes,
      };
      const score = qualityScore(next);
      next.qualityHistory = [...current.qualityHistory, { at, score }].slice(-QUALITY_HISTORY_CAP);

      let modeChange: ModeChange | null = null;
      let promotionProposed = false;
      if (!passed) {
        // A failed review also voids a promotion proposal made on the earlier record.
        next = withoutPromotion(next);
        const gates = outcome.failedGates.length > 0 ? outcome.failedGates.join(', ') : 'unspecified';
        if (next.mode !== 'OBSERVE') {
          const to = lowerMode(next.mode);
          ({ state: next, change: modeChange } = await this.changeMode(
            next,
            to,
            `review failed in ${executionId} (failed gates: ${gates}): regressed from ${next.mode} to ${to}`,
            'engine',
            executionId,
          ));
        } else {
          durable = this.deps.agents.put(next, opts);
        }
      } else if (next.mode === 'LEARNING' && meetsThresholds(next, settings.toAssisted)) {
        ({ state: next, change: modeChange } = await this.changeMode(
          next,
          'ASSISTED',
          `progression.to_assisted met after ${executionId}: ${describeProgress(next, settings.toAssisted)}`,
          'engine',
          executionId,
        ));
      } else if (next.mode === 'ASSISTED' && !next.pendingPromotion && settings.toAutonomous && meetsThresholds(next, settings.toAutonomous)) {
        const reason = `promotion to AUTONOMOUS thresholds met after ${executionId}: ${describeProgress(next, settings.toAutonomous)}`;
        next = { ...next, pendingPromotion: { to: 'AUTONOMOUS', reason, proposedAt: at } };
        promotionProposed = true;
        await this.deps.agents.put(next);
        await this.deps.audit.append({
          kind: 'acmf.promotion_proposed',
          agentId,
          executionId,
          actor: 'engine',
          data: { from: 'ASSISTED', to: 'AUTONOMOUS', reason },
        });
      } else {
        durable = this.deps.agents.put(next, opts);
      }

      const quality: QualityScore = {
        agentId,
        score,
        successRate: next.successes / next.tasks,
        tasks: next.tasks,
        consecutiveSuccess: next.consecutiveSuccess,
        lastReviewPassed: passed,
      };
      // The bus isolates subscribers (a throwing one is reported to its onError), so this cannot fail the outcome.
      this.deps.bus.publish(qualityTopic(agentId), quality);
      return { state: next, modeChange, promotionProposed, quality };
    });
    // Handled by the caller; this keeps a write failing before it looks from being reported as unhandled.
    durable.catch(() => undefined);
    return { result, durable };
  }

  // -------------------------------------------------------------------------------------------
  // Approvals
  // -------------------------------------------------------------------------------------------

  /** Persists a pending approval (durably) and audits `approval.requested`. */
  async requestApproval(req: ApprovalRequest): Promise<ApprovalRecord> {
    const executionId = requireText(req.executionId, 'executionId');
    const agentId = requireText(req.agentId, 'agentId');
    if (!req.action || typeof req.action.kind !== 'string') {
      throw new EngineError('ERR_VALIDATION', 'action is required', { details: { field: 'action' } });
    }
    if (!isRiskLevel(req.risk)) throw new EngineError('ERR_VALIDATION', `unknown risk level ${String(req.risk)}`, { details: { field: 'risk' } });
    if (req.timeoutMs !== undefined && !(Number.isFinite(req.timeoutMs) && req.timeoutMs > 0)) {
      throw new EngineError('ERR_VALIDATION', 'timeoutMs must be a positive number', { details: { field: 'timeoutMs' } });
    }
    const now = this.deps.clock.now();
    const record: ApprovalRecord = {
      id: this.deps.newId(),
      executionId,
      agentId,
      action: req.action,
      risk: req.risk,
      riskReasons: [...req.reasons],
      status: 'pending',
      requestedAt: new Date(now).toISOString(),
    };
    if (req.timeoutMs !== undefined) record.expiresAt = new Date(now + req.timeoutMs).toISOString();
    await this.deps.approvals.put(record);
    await this.deps.audit.append({
      kind: 'approval.requested',
      executionId,
      agentId,
      actor: agentId,
      data: {
        approvalId: record.id,
        action: record.action,
        risk: record.risk,
        reasons: record.riskReasons,
        requestedAt: record.requestedAt,
        expiresAt: record.expiresAt ?? null,
      },
    });
    this.deps.bus.publish('acmf.approval', { change: 'requested', approval: record });
    return record;
  }

  /**
   * Resolves with the approval once decided (at once when it already is, also after a restart,
   * since the state is in the store). A pending approval past its deadline is expired first.
   * Rejects with ERR_NOT_FOUND for an unknown id and ERR_CANCELLED when `signal` aborts.
   */
  async waitForDecision(approvalId: string, signal?: AbortSignal): Promise<ApprovalRecord> {
    if (signal?.aborted) throw cancelled(approvalId);
    let record = this.getApproval(approvalId);
    if (record.status === 'pending' && this.isPastDeadline(record, this.deps.clock.now())) {
      record = await this.lock.run(`approval:${approvalId}`, () => this.expireOne(approvalId));
    }
    if (record.status !== 'pending') return record;
    if (signal?.aborted) throw cancelled(approvalId);
    return new Promise<ApprovalRecord>((resolve, reject) => {
      let set = this.waiters.get(approvalId);
      if (!set) this.waiters.set(approvalId, (set = new Set()));
      const onAbort = (): void => {
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(approvalId) === set) this.waiters.delete(approvalId);
        reject(cancelled(approvalId));
      };
      const waiter: Waiter = (r) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      set.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * A person's decision on a pending approval. ERR_VALIDATION without `by`, ERR_NOT_FOUND for an
   * unknown id, ERR_CONFLICT when it is not pending (already decided, or expired — a pending one
   * past its deadline is expired here first). Audits `approval.decided` with who and when.
   */
  async decideApproval(approvalId: string, decision: ApprovalDecision): Promise<ApprovalRecord> {
    const by = requireText(decision?.by, 'by');
    if (typeof decision.approved !== 'boolean') {
      throw new EngineError('ERR_VALIDATION', 'approved must be true or false', { details: { field: 'approved' } });
    }
    return this.lock.run(`approval:${approvalId}`, async () => {
      let record = this.getApproval(approvalId);
      const now = this.deps.clock.now();
      if (record.status === 'pending' && this.isPastDeadline(record, now)) record = await this.expireOne(approvalId);
      if (record.status !== 'pending') {
        throw new EngineError('ERR_CONFLICT', `approval ${approvalId} is already ${record.status}`, {
          details: { approvalId, status: record.status, decidedBy: record.decidedBy ?? null, decidedAt: record.decidedAt ?? null },
        });
      }
      const status: ApprovalStatus = decision.approved ? 'approved' : 'denied';
      const patch: Partial<ApprovalRecord> = { status, decidedAt: new Date(now).toISOString(), decidedBy: by };
      if (decision.reason !== undefined && decision.reason.trim() !== '') patch.reason = decision.reason.trim();
      const updated = await this.deps.approvals.update(approvalId, patch);
      await this.deps.audit.append({
        kind: 'approval.decided',
        executionId: updated.executionId,
        agentId: updated.agentId,
        actor: by,
        data: {
          approvalId,
          approved: decision.approved,
          status,
          decidedBy: by,
          decidedAt: updated.decidedAt,
          reason: updated.reason ?? null,
          action: updated.action.kind,
          risk: updated.risk,
          ...(decision.note !== undefined ? { note: decision.note } : {}),
          ...(decision.selfApproved ? { selfApproved: true } : {}),
        },
      });
      this.settle(updated);
      this.deps.bus.publish('acmf.approval', { change: 'decided', approval: updated });
      return updated;
    });
  }

  /**
   * Marks pending approvals whose deadline is at or before `now` as `expired` (an expired approval
   * counts as denied), audits `approval.expired` for each and wakes their waiters. Returns them.
   */
  async expireDue(now: number = this.deps.clock.now()): Promise<ApprovalRecord[]> {
    const due = this.deps.approvals.list((r) => r.status === 'pending' && this.isPastDeadline(r, now));
    const expired: ApprovalRecord[] = [];
    for (const r of due) {
      const after = await this.lock.run(`approval:${r.id}`, async () => {
        const fresh = this.deps.approvals.get(r.id);
        return fresh && fresh.status === 'pending' ? this.expireOne(r.id) : null;
      });
      if (after && after.status === 'expired') expired.push(after);
    }
    return expired;
  }

  /** Pending approvals, oldest first (optionally of one execution or agent). */
  pendingApprovals(filter: { executionId?: string; agentId?: string } = {}): ApprovalRecord[] {
    return this.listApprovals({ ...filter, status: 'pending' });
  }

  /** Approvals matching the filter, oldest first (the approval-recorded gate reads these). */
  listApprovals(filter: { executionId?: string; agentId?: string; status?: ApprovalStatus } = {}): ApprovalRecord[] {
    return this.deps.approvals
      .list(
        (r) =>
          (filter.executionId === undefined || r.executionId === filter.executionId) &&
          (filter.agentId === undefined || r.agentId === filter.agentId) &&
          (filter.status === undefined || r.status === filter.status),
      )
      .sort((a, b) => (a.requestedAt < b.requestedAt ? -1 : a.requestedAt > b.requestedAt ? 1 : 0));
  }

  /** One approval; ERR_NOT_FOUND when unknown. */
  getApproval(approvalId: string): ApprovalRecord {
    const record = this.deps.approvals.get(approvalId);
    if (!record) throw new EngineError('ERR_NOT_FOUND', `approval ${approvalId} not found`, { details: { approvalId } });
    return record;
  }

  // -------------------------------------------------------------------------------------------
  // Internals
  // -------------------------------------------------------------------------------------------

  private isoNow(): string {
    return isoTime(this.deps.clock.now());
  }

  private isPastDeadline(record: ApprovalRecord, now: number): boolean {
    return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now;
  }

  /** Caller holds the approval's lock and has checked it is pending. */
  private async expireOne(approvalId: string): Promise<ApprovalRecord> {
    const at = this.isoNow();
    const updated = await this.deps.approvals.update(approvalId, { status: 'expired', decidedAt: at, decidedBy: 'engine' });
    await this.deps.audit.append({
      kind: 'approval.expired',
      executionId: updated.executionId,
      agentId: updated.agentId,
      actor: 'engine',
      data: { approvalId, expiresAt: updated.expiresAt ?? null, expiredAt: at, outcome: 'denied', action: updated.action.kind, risk: updated.risk },
    });
    this.settle(updated);
    this.deps.bus.publish('acmf.approval', { change: 'expired', approval: updated });
    return updated;
  }

  /**
   * Closes the pending approvals of an execution that ended (`closed`, with why), audits
   * `approval.closed` for each and wakes their waiters; deciding one later answers ERR_CONFLICT.
   */
  async closeForExecution(executionId: string, why: string): Promise<ApprovalRecord[]> {
    const pending = this.listApprovals({ executionId, status: 'pending' });
    const closed: ApprovalRecord[] = [];
    for (const p of pending) {
      const r = await this.lock.run(`approval:${p.id}`, async () => {
        const current = this.getApproval(p.id);
        if (current.status !== 'pending') return null;
        const updated = await this.deps.approvals.update(p.id, { status: 'closed', decidedAt: this.isoNow(), reason: why });
        await this.deps.audit.append({ kind: 'approval.closed', executionId, agentId: updated.agentId, actor: 'engine', data: { approvalId: p.id, reason: why, action: updated.action.kind } });
        this.settle(updated);
        this.deps.bus.publish('acmf.approval', { change: 'closed', approval: updated });
        return updated;
      });
      if (r) closed.push(r);
    }
    return closed;
  }

  private settle(record: ApprovalRecord): void {
    const set = this.waiters.get(record.id);
    if (!set) return;
    this.waiters.delete(record.id);
    for (const waiter of set) waiter(record);
  }

  /** Caller holds the agent's lock. */
  private async ensureState(agentId: string): Promise<AgentAcmfState> {
    const existing = this.deps.agents.get(agentId);
    const configured = this.deps.settings(agentId).acmfMode;
    if (!isAcmfMode(configured)) {
      throw new EngineError('ERR_CONFIG_INVALID', `agents.${agentId}.acmf_mode is not an ACMF mode: ${String(configured)}`, {
        details: { agentId, field: 'acmf_mode' },
      });
    }
    if (!existing) {
      const at = this.isoNow();
      const initial: ModeChange = { at, from: configured, to: configured, reason: `initial mode from configuration (acmf_mode ${configured})`, by: 'config' };
      const created: AgentAcmfState = {
        id: agentId,
        mode: configured,
        tasks: 0,
        successes: 0,
        consecutiveSuccess: 0,
        recentFailures: 0,
        qualityHistory: [],
        history: [initial],
        configuredMode: configured,
        recentOutcomes: [],
      };
      await this.deps.agents.put(created);
      await this.auditModeChange(agentId, initial, { initial: true });
      return created;
    }
    if (existing.configuredMode !== undefined && existing.configuredMode !== configured) {
      const reason = `acmf_mode changed in configuration from ${existing.configuredMode} to ${configured}`;
      const { state } = await this.changeMode({ ...withoutPromotion(existing), configuredMode: configured }, configured, reason, 'config');
      return state;
    }
    if (existing.configuredMode === undefined) {
      // A record written before configuredMode existed: adopt the current value without a change.
      const adopted = { ...existing, configuredMode: configured };
      await this.deps.agents.put(adopted);
      return adopted;
    }
    return existing;
  }

  /**
   * Persists `base` with its mode set to `to` and the change appended to its history, and audits
   * `acmf.mode_changed`. When `to` equals the current mode only `base` is persisted.
   */
  private async changeMode(
    base: AgentAcmfState,
    to: AcmfMode,
    reason: string,
    by: string,
    executionId?: string,
    note?: string,
  ): Promise<{ state: AgentAcmfState; change: ModeChange | null }> {
    if (base.mode === to) {
      await this.deps.agents.put(base);
      return { state: base, change: null };
    }
    const change: ModeChange = { at: this.isoNow(), from: base.mode, to, reason, by };
    const state: AgentAcmfState = { ...base, mode: to, history: [...base.history, change] };
    await this.deps.agents.put(state);
    await this.auditModeChange(base.id, change, { ...(executionId === undefined ? {} : { executionId }), ...(note === undefined ? {} : { note }) });
    return { state, change };
  }

  private async auditModeChange(agentId: string, change: ModeChange, extra: { initial?: boolean; executionId?: string; note?: string }): Promise<void> {
    await this.deps.audit.append({
      kind: 'acmf.mode_changed',
      agentId,
      ...(extra.executionId === undefined ? {} : { executionId: extra.executionId }),
      // Engine and config changes are the engine's doing; a person's change is theirs.
      actor: change.by === 'engine' || change.by === 'config' ? 'engine' : change.by,
      data: { from: change.from, to: change.to, reason: change.reason, by: change.by, at: change.at, initial: extra.initial === true, ...(extra.note === undefined ? {} : { note: extra.note }) },
    });
  }
}

function withoutPromotion(state: AgentAcmfState): AgentAcmfState {
  const copy = { ...state };
  delete copy.pendingPromotion;
  return copy;
}

function cancelled(approvalId: string): EngineError {
  return new EngineError('ERR_CANCELLED', `waiting for approval ${approvalId} was cancelled`, { details: { approvalId } });
}
