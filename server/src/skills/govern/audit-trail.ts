/**
 * govern-ai `audit-trail` [ULTRA]: the hash-chained audit trail of the caller's tenant, queried by
 * execution, agent, event kind and time, with the chain verified. The engine queries and verifies
 * (engine/governance/audit-facts.ts); this skill reports: the records (each marked verified or not:
 * a record at or after the first broken one cannot be trusted), counts by kind and agent, and the
 * verification with the first broken record named (seq, file and line, what is wrong).
 */
import type { AuditTrailFacts } from '../../engine/governance/audit-facts';
import type { Skill } from '../../engine/rigor/skill';
import { countRows, factsOf, factsPhases, round } from '../governance/facts';
import { auditTrailDataSchema, auditTrailInputSchema } from './audit-trail-schemas';

const KIND = 'audit-trail-report';
const LABEL = 'govern-ai audit-trail';

export interface AuditTrailData {
  asOf: string;
  filter: AuditTrailFacts['filter'];
  matched: number;
  returned: number;
  byKind: Array<{ key: string; count: number }>;
  byAgent: Array<{ key: string; count: number }>;
  records: Array<{ seq: number; ts: string; kind: string; executionId: string | null; agentId: string | null; actor: string; data: Record<string, unknown>; hash: string; verified: boolean }>;
  verification: {
    status: 'intact' | 'broken';
    checked: number;
    firstBroken: { seq: number | null; file: string; line: number; problem: string; reason: string; ofThisTenant: boolean | null } | null;
  };
}

/** The report of the engine's facts (pure: unit-tested without an engine). */
export function auditTrailReport(f: AuditTrailFacts): AuditTrailData {
  const b = f.verification.firstBroken;
  // A record at or after the first broken one is not covered by an intact chain; an unreadable line (no seq) taints everything.
  const verifiedUpTo = f.verification.ok ? Infinity : b && b.seq !== null ? b.seq - 1 : 0;
  return {
    asOf: f.asOf, filter: f.filter, matched: f.matched, returned: f.records.length, byKind: countRows(f.byKind), byAgent: countRows(f.byAgent),
    records: f.records.map((r) => ({
      seq: r.seq, ts: r.ts, kind: r.kind, executionId: r.executionId ?? null, agentId: r.agentId ?? null, actor: r.actor, data: r.data, hash: r.hash, verified: r.seq <= verifiedUpTo,
    })),
    verification: {
      status: f.verification.ok ? 'intact' : 'broken', checked: f.verification.checked,
      firstBroken: b ? { seq: b.seq, file: b.file, line: b.line, problem: b.reason.split(':')[0]!.trim(), reason: b.reason, ofThisTenant: b.ofThisTenant } : null,
    },
  };
}

export function renderAuditTrail(d: AuditTrailData): string {
  const v = d.verification;
  const b = v.firstBroken;
  const filter = Object.entries(d.filter).filter(([k, x]) => x !== null && k !== 'limit').map(([k, x]) => `${k} ${String(x)}`).join(', ');
  const out = [
    '# govern-ai audit trail', '',
    `${d.matched} record(s) of this tenant${filter ? ` matching ${filter}` : ''}; the newest ${d.returned} shown. As of ${d.asOf}.`, '',
    '## Verification', '',
    v.status === 'intact'
      ? `The chain is intact: ${v.checked} record(s) checked, every hash recomputes and links to the one before.`
      : `The chain is BROKEN at seq ${b?.seq ?? '(unreadable line)'} (${b?.file}:${b?.line}): ${b?.reason}. Records from there on cannot be trusted${b?.ofThisTenant === false ? ' (the broken record is not one of this tenant\'s; the chain is shared by the install)' : ''}.`,
    '', '## By kind', '', ...d.byKind.map((r) => `- ${r.key}: ${r.count}`), '', '## By agent', '', ...d.byAgent.map((r) => `- ${r.key}: ${r.count}`), '', '## Records', '',
    '| seq | time | kind | agent | execution | actor | verified |', '|---:|---|---|---|---|---|---|',
    ...d.records.map((r) => `| ${r.seq} | ${r.ts} | ${r.kind} | ${r.agentId ?? ''} | ${r.executionId ?? ''} | ${r.actor} | ${r.verified ? 'yes' : 'NO'} |`),
  ];
  return out.join('\n');
}

export const auditTrailSkill: Skill = {
  agentId: 'govern-ai',
  action: 'audit-trail',
  inputSchema: auditTrailInputSchema,
  outputSchema: auditTrailDataSchema,
  ...factsPhases<AuditTrailFacts>({
    kind: KIND, label: LABEL, facts: factsOf('audit-trail'),
    evidence: (f) => [
      { source: 'engine: audit trail query', detail: `${f.matched} record(s) of tenant ${f.tenantId} match, ${f.records.length} handed in`, weight: 0.9 },
      { source: 'engine: chain verification', detail: f.verification.ok ? `intact over ${f.verification.checked} record(s)` : `broken: ${f.verification.firstBroken?.reason ?? 'unknown'}`, weight: 0.9 },
    ],
    report(ctx, f) {
      const d = auditTrailReport(f);
      // The report is as sure as the verification is precise: an intact chain, or a break named by its seq,
      // is a firm answer; an unreadable line (no seq) is less so; showing only the newest of more matches, a little less.
      const b0 = d.verification.firstBroken;
      const confidence = round((d.verification.status === 'intact' ? 0.95 : b0 && b0.seq !== null ? 0.9 : 0.75) - (d.matched > d.returned ? 0.05 : 0), 2);
      ctx.progress(100, confidence);
      const b = d.verification.firstBroken;
      const summary = `${d.matched} audit record(s) (${d.returned} shown; ${d.byKind.slice(0, 3).map((r) => `${r.key} ${r.count}`).join(', ') || 'none'}); chain ${d.verification.status === 'intact'
        ? `intact over ${d.verification.checked} record(s)` : `BROKEN at seq ${b?.seq ?? '?'} (${b?.file}:${b?.line}): ${b?.reason}`}`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderAuditTrail(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'read', description: 'read the audit records and the chain verification the engine handed in' }];
  },
};
