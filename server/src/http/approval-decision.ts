/**
 * An ACMF approval decided by an API key, with the separation-of-duties rule, for every door that
 * authenticates with a key (REST `POST /v1/approvals/{id}/decision`, the MCP tool
 * `cadre_decide_approval`): one function, so an MCP client can never decide what REST would refuse.
 */
import type { ApiKeyRecord } from '../auth/api-keys';
import { separationOfDuties } from '../engine/acmf/separation-of-duties';
import type { ApprovalRecord } from '../engine/acmf/records';
import type { Engine } from '../engine/index';
import { tenantOf } from '../engine/tenants/tenant-id';
import { HttpProblem, problemFor } from './problem';

export interface KeyDecision {
  approved: boolean;
  /** What the client said about who decides: kept as a note beside the authenticated actor. */
  by?: string | undefined;
  reason?: string | undefined;
}

/** The key that started an execution (null for the editor's own runs or an unknown execution). */
function ownerKeyOf(ex: Engine['executions'], executionId: string): string | null {
  try {
    return ex.get(executionId).ownerKeyId ?? null;
  } catch {
    return null;
  }
}

/**
 * Decides `approvalId` as `principal` (the caller must already hold the approver role), recorded in
 * the audit trail under `actor`. The key that started the execution may not approve its own high- or
 * critical-risk action unless self-approval is allowed (`security.self_approval`, on by default
 * with one usable key); denying one's own action is always allowed.
 */
export async function decideApprovalAsKey(
  engine: Engine, activeKeys: number, approvalId: string, principal: ApiKeyRecord, actor: string, d: KeyDecision,
): Promise<ApprovalRecord> {
  // An approval of another tenant's execution is not found for this key.
  const approval = engine.approvals.get(tenantOf(principal), approvalId);
  const verdict = separationOfDuties({
    approval, ownerKeyId: ownerKeyOf(engine.executions, approval.executionId), deciderKeyId: principal.id, approved: d.approved,
    selfApprovalSetting: engine.config.security?.self_approval, activeKeys,
  });
  if (!verdict.allowed) throw new HttpProblem(problemFor('ERR_FORBIDDEN', verdict.message, { reason: verdict.reason }));
  return engine.acmf.decideApproval(approvalId, {
    approved: d.approved, by: actor, ...(d.by !== undefined ? { note: d.by } : {}), ...(d.reason ? { reason: d.reason } : {}),
    ...(verdict.selfApproved ? { selfApproved: true } : {}),
  });
}
