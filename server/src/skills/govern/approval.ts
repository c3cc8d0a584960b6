/**
 * govern-ai `approval` [ULTRA]: the caller's tenant's pending ACMF approvals (agent, action, risk and
 * its reasons, age), and a decision on one of them. The decision is a person's act: the engine
 * applies it before this skill runs (engine/governance/approval-facts.ts: approver role of the key
 * that started the execution, separation of duties, never an approval of this very execution, once),
 * recorded as `key:<key id> via govern-ai (<execution id>)`; this skill reports it. A refused or
 * unknown decision ends the step unable, saying why (an unknown or another tenant's id: needs_input).
 */
import type { ApprovalFacts, DecisionFact } from '../../engine/governance/approval-facts';
import type { Skill } from '../../engine/rigor/skill';
import { countRows, factsOf, factsPhases, humanAge, isFactError } from '../governance/facts';
import { approvalDataSchema, approvalInputSchema } from './approval-schemas';

const KIND = 'approval-report';
const LABEL = 'govern-ai approval';

export interface ApprovalData {
  asOf: string;
  pending: Array<ApprovalFacts['pending'][number] & { age: string }>;
  byRisk: Array<{ key: string; count: number }>;
  oldest: { id: string; age: string } | null;
  decision: DecisionFact | null;
}

const RISK_ORDER = ['critical', 'high', 'medium', 'low', 'none'];

export function approvalReport(f: ApprovalFacts & { decision: DecisionFact | null }): ApprovalData {
  // Riskiest first, then the longest waiting: what a person should look at first.
  const pending = f.pending.map((p) => ({ ...p, age: humanAge(p.ageMs) }))
    .sort((a, b) => RISK_ORDER.indexOf(a.risk) - RISK_ORDER.indexOf(b.risk) || b.ageMs - a.ageMs);
  const byRisk: Record<string, number> = {};
  for (const p of pending) byRisk[p.risk] = (byRisk[p.risk] ?? 0) + 1;
  const oldest = pending.reduce<typeof pending[number] | null>((m, p) => (m === null || p.ageMs > m.ageMs ? p : m), null);
  return { asOf: f.asOf, pending, byRisk: countRows(byRisk), oldest: oldest ? { id: oldest.id, age: oldest.age } : null, decision: f.decision };
}

export function renderApprovals(d: ApprovalData): string {
  const out = ['# govern-ai approvals', ''];
  if (d.decision) {
    const x = d.decision;
    out.push('## Decision', '', `${x.status === 'approved' ? 'Approved' : 'Denied'} ${x.approvalId} (${x.risk} risk: ${x.actionKind} by ${x.agentId} in ${x.executionId}) by ${x.by} at ${x.at}${x.reason ? `: ${x.reason}` : ''}${x.selfApproved ? ' (self-approved, allowed by security.self_approval)' : ''}${x.replayed ? ' (already applied by this execution; not decided twice)' : ''}.`, '');
  }
  out.push(`## Pending (${d.pending.length})`, '');
  if (!d.pending.length) out.push('Nothing waits for a decision.');
  else out.push('| approval | agent | action | risk | reasons | waiting | execution |', '|---|---|---|---|---|---|---|',
    ...d.pending.map((p) => `| ${p.id} | ${p.agentId} | ${p.action.kind}: ${p.action.description.replace(/\|/g, '/')} | ${p.risk} | ${p.reasons.join('; ').replace(/\|/g, '/')} | ${p.age} | ${p.executionId} |`));
  return out.join('\n');
}

export const approvalSkill: Skill = {
  agentId: 'govern-ai',
  action: 'approval',
  inputSchema: approvalInputSchema,
  outputSchema: approvalDataSchema,
  ...factsPhases<ApprovalFacts>({
    kind: KIND, label: LABEL, facts: factsOf('approval'),
    evidence: (f) => [
      { source: 'engine: ACMF approvals', detail: `${f.pending.length} pending approval(s) of tenant ${f.tenantId}`, weight: 0.9 },
      ...(f.decision && !isFactError(f.decision) ? [{ source: 'engine: decision applied', detail: `${f.decision.status} ${f.decision.approvalId} by ${f.decision.by}`, weight: 0.9 }] : []),
    ],
    failed: (f) => (isFactError(f.decision) ? f.decision : undefined),
    report(ctx, f) {
      const d = approvalReport({ ...f, decision: f.decision as DecisionFact | null });
      // Every fact comes from the store; what is less certain is an approval past its deadline that the expiry timer has not closed yet.
      const stale = d.pending.filter((p) => p.expiresAt !== null && p.expiresAt <= d.asOf).length;
      const confidence = Math.round((0.95 - 0.25 * (d.pending.length ? stale / d.pending.length : 0)) * 100) / 100;
      ctx.progress(100, confidence);
      const x = d.decision;
      const summary = `${x ? `${x.status} ${x.approvalId} (${x.risk}: ${x.actionKind}) as ${x.by}${x.replayed ? ', already applied' : ''}; ` : ''}${d.pending.length} pending approval(s)` +
        (d.pending.length ? ` (${d.byRisk.map((r) => `${r.key} ${r.count}`).join(', ')}; oldest ${d.oldest!.id}, waiting ${d.oldest!.age})` : '');
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderApprovals(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'read', description: 'read the pending approvals and the decision the engine applied' }];
  },
};
