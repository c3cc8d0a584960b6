/**
 * Escalation: a step's retries are spent and later steps need its output, so a person decides whether
 * the execution goes on past it. The decision is data on the step (`continuedBy`), asked once and
 * waited on again after a restart (`escalationId`).
 */
import type { EngineEventInput } from '../../../../protocol/events';
import type { AcmfService } from '../acmf/acmf-service';
import type { ApprovalRecord } from '../acmf/records';
import type { Checkpoints } from './checkpoints';
import type { ExecutionRecord, StepRecord } from './records';

const DEFAULT_ESCALATION_TIMEOUT_MS = 60 * 60 * 1000;

/** A person chose to go on past this failed step: its failure no longer decides the execution's outcome. */
export function wasContinued(s: StepRecord): boolean {
  return s.continuedBy !== undefined;
}

/**
 * Records written before `continuedBy` existed (commit 1164092 to f6f243f) kept the decision in the
 * step's error message: `<message> (continued by <who>)`. Migration rule: such a step gets
 * `continuedBy: <who>` and its error message back without the suffix; any other step is returned as
 * it is. Applied to an in-flight execution when it resumes (the only way an old record runs again, and
 * the resume rewrites the record); an ended execution's continued state is read by nothing.
 */
const LEGACY_CONTINUED = /^(.*) \(continued by ([^()]+)\)$/s;

export function migrateContinued(s: StepRecord): StepRecord {
  if (s.continuedBy !== undefined || !s.error) return s;
  const m = LEGACY_CONTINUED.exec(s.error.message);
  return m ? { ...s, continuedBy: m[2]!, error: { ...s.error, message: m[1]! } } : s;
}

export interface EscalationDeps {
  acmf: Pick<AcmfService, 'listApprovals' | 'requestApproval' | 'waitForDecision'>;
  checkpoints: Checkpoints;
  emit(e: EngineEventInput): void;
  /** How long an escalation waits for a person before it counts as denied. */
  escalationTimeoutMs?: number;
}

export class Escalation {
  constructor(private readonly deps: EscalationDeps) {}

  /** Asks a person (once, also across restarts) whether to go on past the failed step `index`; false = stop. */
  async escalate(id: string, index: number, reason: string, signal: AbortSignal): Promise<boolean> {
    const cp = this.deps.checkpoints;
    const rec = cp.get(id);
    const step = rec.steps[index]!;
    if (wasContinued(step)) return true; // decided before a restart
    const lead = rec.lead ?? 'orchestrator';
    // The execution waits on this step's agent: it stays the current agent until a person decides.
    await cp.executions.update(id, { status: 'awaiting_approval', currentAgent: step.agentId, updatedAt: cp.now() });
    const approval = await this.approvalOf(rec, index, reason, lead);
    const decided: ApprovalRecord = await this.deps.acmf.waitForDecision(approval.id, signal);
    this.deps.emit({ type: 'approval_decided', execution_id: id, agent_id: step.agentId, approval_id: decided.id, approved: decided.status === 'approved', by: decided.decidedBy ?? 'timeout' });
    await cp.executions.update(id, { status: 'in_progress', currentAgent: null, updatedAt: cp.now() });
    if (decided.status !== 'approved') return false;
    await cp.patchStep(id, index, { continuedBy: decided.decidedBy ?? 'unknown' });
    return true;
  }

  /** After a restart the step's earlier escalation is waited on again, never asked twice. */
  private async approvalOf(rec: ExecutionRecord, index: number, reason: string, lead: string): Promise<ApprovalRecord> {
    const step = rec.steps[index]!;
    const earlier = step.escalationId ? this.deps.acmf.listApprovals({ executionId: rec.id }).find((a) => a.id === step.escalationId) : undefined;
    if (earlier) return earlier;
    const approval = await this.deps.acmf.requestApproval({
      executionId: rec.id, agentId: step.agentId, risk: 'high', reasons: [reason, `escalated by ${lead}`],
      action: { kind: 'continue_after_failure', description: `continue ${rec.request.workflow ?? rec.kind} after ${step.agentId} ${step.action} failed: ${reason}` },
      timeoutMs: this.deps.escalationTimeoutMs ?? DEFAULT_ESCALATION_TIMEOUT_MS,
    });
    await this.deps.checkpoints.patchStep(rec.id, index, { escalationId: approval.id });
    this.deps.emit({ type: 'approval_requested', execution_id: rec.id, agent_id: step.agentId, approval_id: approval.id, action: 'continue_after_failure', risk: 'high' });
    return approval;
  }
}
