/**
 * govern-ai `audit-trail`: the engine queries the hash-chained trail for the caller's tenant and
 * verifies the whole chain; the skill only formats what it is handed (skills may not read the trail).
 */
import type { AuditQueryFilter, AuditRecord, AuditTrail } from '../ports';
import { auditTenantOf } from './audit-tenant';
import { factError, type FactError } from './fact-error';

export const AUDIT_DEFAULT_LIMIT = 200;
export const AUDIT_MAX_LIMIT = 1000;

/** What the request asked for, normalised (null: not asked). */
export interface AuditFilterFacts {
  executionId: string | null;
  agentId: string | null;
  kind: string | null;
  since: string | null;
  until: string | null;
  limit: number;
}

export interface AuditTrailFacts {
  action: 'audit-trail';
  tenantId: string;
  asOf: string;
  filter: AuditFilterFacts;
  /** Records of the tenant matching the filter: the newest `limit`, oldest first. */
  records: AuditRecord[];
  /** Every match (not only the returned ones), and its counts. */
  matched: number;
  byKind: Record<string, number>;
  byAgent: Record<string, number>;
  verification: {
    ok: boolean;
    checked: number;
    /** The first broken record: its seq (null when unreadable), where it is and what is wrong. */
    firstBroken: { seq: number | null; file: string; line: number; reason: string; /** The broken record is one of this tenant's (null: unknown). */ ofThisTenant: boolean | null } | null;
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The request's filter, or the field that is wrong. */
export function auditFilterOf(input: Readonly<Record<string, unknown>>): AuditFilterFacts | FactError {
  const time = (field: 'since' | 'until'): string | null | FactError => {
    const v = input[field];
    if (v === undefined || v === null || v === '') return null;
    const t = typeof v === 'number' ? v : Date.parse(String(v));
    if (!Number.isFinite(t)) return factError('invalid', `${field} is not a time (ISO 8601 or epoch milliseconds): ${String(v)}`, field);
    return new Date(t).toISOString();
  };
  const since = time('since');
  if (since && typeof since === 'object') return since;
  const until = time('until');
  if (until && typeof until === 'object') return until;
  const rawLimit = input['limit'];
  const limit = rawLimit === undefined || rawLimit === '' ? AUDIT_DEFAULT_LIMIT : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) return factError('invalid', `limit must be a whole number from 1 to ${AUDIT_MAX_LIMIT}`, 'limit');
  if (since && until && since > until) return factError('invalid', `since (${since}) is after until (${until})`, 'since');
  return { executionId: text(input['executionId']), agentId: text(input['agentId']), kind: text(input['kind']) ?? text(input['event']), since, until, limit };
}

/** Queries and verifies for `tenantId`; `executionTenant` resolves the tenant of records without one. */
export async function auditTrailFacts(audit: AuditTrail, tenantId: string, input: Readonly<Record<string, unknown>>, executionTenant: (id: string) => string | undefined, asOf: string): Promise<AuditTrailFacts | FactError> {
  const filter = auditFilterOf(input);
  if ('error' in filter) return filter;
  const byKind: Record<string, number> = {};
  const byAgent: Record<string, number> = {};
  let matched = 0;
  const mine = (r: AuditRecord): boolean => auditTenantOf(r, executionTenant) === tenantId;
  const query: AuditQueryFilter = {
    limit: filter.limit,
    // Applied after the other conditions: counts every match of the tenant, not only the returned ones.
    match: (r) => {
      if (!mine(r)) return false;
      matched++;
      byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
      const agent = r.agentId ?? '(none)';
      byAgent[agent] = (byAgent[agent] ?? 0) + 1;
      return true;
    },
    ...(filter.executionId ? { executionId: filter.executionId } : {}),
    ...(filter.agentId ? { agentId: filter.agentId } : {}),
    ...(filter.kind ? { kind: filter.kind } : {}),
    ...(filter.since ? { since: filter.since } : {}),
    ...(filter.until ? { until: filter.until } : {}),
  };
  const records = await audit.query(query);
  // The chain is one for the install: a break anywhere breaks what every tenant can trust.
  const v = await audit.verify();
  let firstBroken: AuditTrailFacts['verification']['firstBroken'] = null;
  if (!v.ok && v.firstBroken) {
    const b = v.firstBroken;
    let ofThisTenant: boolean | null = null;
    if (b.seq !== null) {
      const [rec] = await audit.query({ match: (r) => r.seq === b.seq, limit: 1 });
      ofThisTenant = rec ? mine(rec) : null;
    }
    firstBroken = { seq: b.seq, file: b.file, line: b.line, reason: b.reason, ofThisTenant };
  }
  return { action: 'audit-trail', tenantId, asOf, filter, records, matched, byKind, byAgent, verification: { ok: v.ok, checked: v.checked, firstBroken } };
}

/** What govern-ai `compliance` reads as audit evidence (skills/govern/compliance-schemas.ts `audit`). */
export interface ComplianceAuditFacts {
  /** Audit records of the tenant. */
  records: number;
  /** The install's chain verifies end to end. */
  chainVerified: boolean;
  /** The first broken record, when it does not (`seq 17: tampered: ...`). */
  tampered?: string;
  /** Approvals of the tenant that ended with a decision or an expiry, and those a person decided. */
  approvals: { decided: number; byPerson: number };
}

/**
 * The audit evidence of a compliance check, for `tenantId`: its records, the chain's verification and
 * who decided its approvals (a person: a key, the editor; not the engine's expiry or close). Handed to
 * govern-ai compliance steps as `input.audit`, replacing the request's own (step-facts.ts).
 */
export async function complianceAuditFacts(
  audit: AuditTrail, tenantId: string, executionTenant: (id: string) => string | undefined,
  approvals: ReadonlyArray<{ executionId: string; status: string; decidedBy?: string | undefined }>,
): Promise<ComplianceAuditFacts> {
  let records = 0;
  await audit.query({ limit: 1, match: (r) => (auditTenantOf(r, executionTenant) === tenantId ? (records++, true) : false) });
  const v = await audit.verify();
  const mine = approvals.filter((a) => executionTenant(a.executionId) === tenantId && (a.status === 'approved' || a.status === 'denied' || a.status === 'expired'));
  const byPerson = mine.filter((a) => (a.status === 'approved' || a.status === 'denied') && a.decidedBy !== undefined && a.decidedBy !== 'engine').length;
  const b = v.firstBroken;
  return {
    records, chainVerified: v.ok, approvals: { decided: mine.length, byPerson },
    ...(!v.ok && b ? { tampered: `seq ${b.seq ?? '?'} (${b.file}:${b.line}): ${b.reason}` } : {}),
  };
}
