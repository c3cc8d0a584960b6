/**
 * govern-ai `approval`: the tenant's pending approvals, and a person's decision on one of them made
 * through govern-ai. The decision is applied here, engine-side, before the step's skill runs (the
 * skill only reports it): the step's input is the person's request, the owner key of the execution
 * is the person, and the rules are those of every other door (approver role, separation of duties).
 *
 * Applied once: the decision is recorded as `key:<owner key id> via govern-ai (<execution id>)`, so a
 * step re-run after a crash finds the approval already decided by that very actor and reports it
 * instead of deciding again.
 */
import type { AcmfService } from '../acmf/acmf-service';
import type { ApprovalRecord, RiskLevel } from '../acmf/records';
import { separationOfDuties } from '../acmf/separation-of-duties';
import { isEngineError } from '../errors';
import { factError, type FactError } from './fact-error';

/** The host's answer about API keys (keys live outside the engine, in server/src/auth). */
export interface KeyAuthority {
  /** The role of a usable key (`operator`, `approver`, `admin`), null when unknown or revoked. */
  roleOf(keyId: string): string | null;
  /** Keys that can still be used (the self-approval default depends on it). */
  activeKeys(): number;
}

/** Roles that may decide approvals (auth/roles.ts: approver and above). */
export const APPROVER_ROLES: ReadonlySet<string> = new Set(['approver', 'admin']);

export interface PendingApprovalFact {
  id: string;
  executionId: string;
  agentId: string;
  action: { kind: string; description: string };
  risk: RiskLevel;
  reasons: string[];
  requestedAt: string;
  expiresAt: string | null;
  /** Milliseconds since it was requested. */
  ageMs: number;
}

export interface DecisionFact {
  approvalId: string;
  decision: 'approve' | 'deny';
  status: 'approved' | 'denied';
  by: string;
  at: string;
  reason: string | null;
  selfApproved: boolean;
  /** The decision was already applied by this execution (a re-run step): nothing was decided twice. */
  replayed: boolean;
  agentId: string;
  executionId: string;
  risk: RiskLevel;
  actionKind: string;
}

export interface ApprovalFacts {
  action: 'approval';
  tenantId: string;
  asOf: string;
  pending: PendingApprovalFact[];
  decision: DecisionFact | FactError | null;
}

export interface ApprovalFactsDeps {
  acmf: AcmfService;
  keys?: KeyAuthority;
  /** The tenant of an execution (undefined: unknown execution). */
  executionTenant(id: string): string | undefined;
  /** The key that started an execution (null: none or unknown). */
  ownerKeyOf(id: string): string | null;
  selfApprovalSetting(): boolean | undefined;
  now(): number;
}

/** The actor a decision made through govern-ai is recorded under. */
export function viaGovernActor(ownerKeyId: string, executionId: string): string {
  return `key:${ownerKeyId} via govern-ai (${executionId})`;
}

function pendingOf(deps: ApprovalFactsDeps, tenantId: string): PendingApprovalFact[] {
  const now = deps.now();
  return deps.acmf.pendingApprovals()
    .filter((a) => deps.executionTenant(a.executionId) === tenantId)
    .map((a) => ({
      id: a.id, executionId: a.executionId, agentId: a.agentId, action: { kind: a.action.kind, description: a.action.description }, risk: a.risk,
      reasons: [...a.riskReasons], requestedAt: a.requestedAt, expiresAt: a.expiresAt ?? null, ageMs: Math.max(0, now - Date.parse(a.requestedAt)),
    }));
}

function decided(a: ApprovalRecord, replayed: boolean, decision: 'approve' | 'deny', selfApproved: boolean): DecisionFact {
  return {
    approvalId: a.id, decision, status: a.status as 'approved' | 'denied', by: a.decidedBy ?? '', at: a.decidedAt ?? '', reason: a.reason ?? null, selfApproved,
    replayed, agentId: a.agentId, executionId: a.executionId, risk: a.risk, actionKind: a.action.kind,
  };
}

/** The request's `decide`, or the field that is wrong (null: nothing to decide). */
export function decideRequestOf(input: Readonly<Record<string, unknown>>): { approvalId: string; approved: boolean; reason: string | null } | FactError | null {
  const d = input['decide'];
  if (d === undefined || d === null) return null;
  if (typeof d !== 'object' || Array.isArray(d)) return factError('invalid', 'decide must be an object { approvalId, decision: approve|deny, reason }', 'decide');
  const r = d as Record<string, unknown>;
  const approvalId = typeof r['approvalId'] === 'string' ? r['approvalId'].trim() : '';
  if (!approvalId) return factError('invalid', 'decide.approvalId is required', 'decide.approvalId');
  const decision = r['decision'];
  if (decision !== 'approve' && decision !== 'deny') return factError('invalid', 'decide.decision must be approve or deny', 'decide.decision');
  const reason = typeof r['reason'] === 'string' && r['reason'].trim() !== '' ? r['reason'].trim().slice(0, 1000) : null;
  return { approvalId, approved: decision === 'approve', reason };
}

/** Lists the tenant's pending approvals and applies the request's decision, if any (once). */
export async function approvalFacts(deps: ApprovalFactsDeps, ctx: { executionId: string; tenantId: string; ownerKeyId: string | null; input: Readonly<Record<string, unknown>> }, asOf: string): Promise<ApprovalFacts> {
  const req = decideRequestOf(ctx.input);
  const decision = req === null || 'error' in req ? req : await decide(deps, ctx, req);
  // Listed after the decision: what is still waiting.
  return { action: 'approval', tenantId: ctx.tenantId, asOf, pending: pendingOf(deps, ctx.tenantId), decision };
}

async function decide(
  deps: ApprovalFactsDeps, ctx: { executionId: string; tenantId: string; ownerKeyId: string | null },
  req: { approvalId: string; approved: boolean; reason: string | null },
): Promise<DecisionFact | FactError> {
  const word = req.approved ? 'approve' : 'deny';
  let approval: ApprovalRecord | undefined;
  try {
    approval = deps.acmf.getApproval(req.approvalId);
  } catch {
    approval = undefined;
  }
  // Another tenant's approval answers exactly like a missing one.
  if (!approval || deps.executionTenant(approval.executionId) !== ctx.tenantId) {
    return factError('not_found', `approval ${req.approvalId} not found`, 'decide.approvalId');
  }
  if (approval.executionId === ctx.executionId) {
    return factError('refused', `approval ${approval.id} belongs to this very execution: an agent never decides an approval of its own execution`, 'decide.approvalId', 'own_execution');
  }
  if (!ctx.ownerKeyId) {
    return factError('refused', 'no API key started this execution: a decision through govern-ai is the act of a key with the approver role', 'decide', 'no_key');
  }
  const by = viaGovernActor(ctx.ownerKeyId, ctx.executionId);
  const replay = (a: ApprovalRecord): DecisionFact | null => (a.status !== 'pending' && a.decidedBy === by ? decided(a, true, word, false) : null);
  const again = replay(approval);
  if (again) return again;
  const role = deps.keys?.roleOf(ctx.ownerKeyId) ?? null;
  if (role === null || !APPROVER_ROLES.has(role)) {
    return factError('refused', `key ${ctx.ownerKeyId} ${role === null ? 'is unknown or revoked' : `has the ${role} role`}: deciding an approval needs the approver role`, 'decide', 'role');
  }
  if (approval.status !== 'pending') {
    return factError('conflict', `approval ${approval.id} is already ${approval.status}${approval.decidedBy ? ` (by ${approval.decidedBy})` : ''}`, 'decide.approvalId');
  }
  const verdict = separationOfDuties({
    approval, ownerKeyId: deps.ownerKeyOf(approval.executionId), deciderKeyId: ctx.ownerKeyId, approved: req.approved,
    selfApprovalSetting: deps.selfApprovalSetting(), activeKeys: deps.keys?.activeKeys() ?? 1,
  });
  if (!verdict.allowed) return factError('refused', verdict.message, 'decide', verdict.reason);
  try {
    const rec = await deps.acmf.decideApproval(approval.id, {
      approved: req.approved, by, note: 'via govern-ai', ...(req.reason ? { reason: req.reason } : {}), ...(verdict.selfApproved ? { selfApproved: true } : {}),
    });
    return decided(rec, false, word, verdict.selfApproved);
  } catch (err) {
    if (isEngineError(err) && err.code === 'ERR_CONFLICT') {
      // Decided meanwhile: by this execution (a concurrent re-run) is the same act; by anyone else is a conflict.
      const now = deps.acmf.getApproval(approval.id);
      return replay(now) ?? factError('conflict', err.message, 'decide.approvalId');
    }
    throw err;
  }
}
