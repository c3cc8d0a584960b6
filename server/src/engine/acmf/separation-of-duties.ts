/**
 * Separation of duties on ACMF approvals: the one rule every door applies (REST, MCP, the editor's
 * LSP request, govern-ai's `approval` action), so that no door can decide what another would refuse.
 *
 * The key that started an execution may not approve its own high- or critical-risk action unless
 * self-approval is allowed (`security.self_approval`; unset: only on a single-user install, where
 * nobody else could approve). Denying one's own action is always allowed.
 */
import type { ApprovalRecord } from './records';

/** Risk levels at which an execution's own key may not approve its action. */
export const SELF_APPROVAL_RISKS: ReadonlySet<string> = new Set(['high', 'critical']);

/**
 * Whether the key that started an execution may approve its high-risk actions: `security.self_approval`
 * when set; unset, only on a single-user install (one usable key), where nobody else could approve.
 */
export function selfApprovalAllowed(setting: boolean | undefined, activeKeys: number): boolean {
  return setting ?? activeKeys <= 1;
}

export interface DutiesQuestion {
  approval: Pick<ApprovalRecord, 'id' | 'risk' | 'action'>;
  /** The key that started the approval's execution (null: the editor's own run, or unknown). */
  ownerKeyId: string | null;
  /** The key deciding. */
  deciderKeyId: string;
  approved: boolean;
  /** `security.self_approval` of the configuration (undefined: unset). */
  selfApprovalSetting: boolean | undefined;
  /** Keys that can still be used on the install. */
  activeKeys: number;
}

export type DutiesVerdict =
  | { allowed: true; /** The execution's own key approved its high-risk action (allowed by the setting): to be recorded. */ selfApproved: boolean }
  | { allowed: false; reason: 'self_approval'; message: string };

/** The separation-of-duties verdict on one decision. */
export function separationOfDuties(q: DutiesQuestion): DutiesVerdict {
  const own = q.ownerKeyId !== null && q.ownerKeyId === q.deciderKeyId && SELF_APPROVAL_RISKS.has(q.approval.risk);
  if (!own || !q.approved) return { allowed: true, selfApproved: false };
  if (selfApprovalAllowed(q.selfApprovalSetting, q.activeKeys)) return { allowed: true, selfApproved: true };
  return {
    allowed: false, reason: 'self_approval',
    message: `approval ${q.approval.id} (${q.approval.risk} risk: ${q.approval.action.kind}) belongs to an execution started by this key (${q.deciderKeyId}); ` +
      'another key with the approver role must decide it (self-approval is off: security.self_approval)',
  };
}
