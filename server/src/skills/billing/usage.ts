/**
 * billing-ai's metering: counts of Cadre's own executions per agent, intelligence tier, capability,
 * project (the request's source), owner key, kind and status, with the model tokens they used.
 *
 * The facts come from the engine (input.usage, one row per execution, from the store's summaries):
 * the skill runs confined and may not read the store. A row without `agents` was summarised before
 * metering was kept: it counts in the totals and as `unknown` in every breakdown, and is said so.
 */

export interface UsageRow {
  id: string;
  kind: string;
  status: string;
  owner: string | null;
  createdAt: string;
  completedAt: string | null;
  agents?: string[];
  intelligence?: string | null;
  capabilities?: string[];
  project?: string | null;
  tokens?: number | null;
}

export interface UsageFacts { asOf: string; executions: UsageRow[] }

export interface Count { key: string; executions: number; tokens: number }

export interface Window { since: string | null; until: string | null }

export interface UsageReport {
  asOf: string;
  window: Window;
  executions: { total: number; byStatus: Count[]; byKind: Count[] };
  byAgent: Count[];
  byTier: Count[];
  byCapability: Count[];
  byProject: Count[];
  byOwner: Count[];
  tokens: { total: number; executionsWithModel: number; notReported: number };
  /** Executions summarised before metering was kept: counted in the totals, `unknown` in the breakdowns. */
  unknown: { executions: number; note: string | null };
  /** Executions left out: the one asking (it is still running), those outside the window. */
  excluded: { self: string | null; outsideWindow: number };
}

export const UNKNOWN = 'unknown';
export const UNKNOWN_NOTE = 'summarised before Cadre kept metering facts (agents, tier, capabilities, project, tokens): counted in the totals, as unknown in the breakdowns';

/** The engine's facts, checked: a wrong shape is not metered from. */
export function usageFactsOf(raw: unknown): UsageFacts | { error: string } {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { error: 'no usage facts: the engine hands billing-ai the store\'s execution summaries as input.usage, and this step got none' };
  const o = raw as { asOf?: unknown; executions?: unknown };
  if (typeof o.asOf !== 'string' || !Array.isArray(o.executions)) return { error: 'input.usage is not the engine\'s usage facts ({asOf, executions: [...]})' };
  for (const [i, r] of o.executions.entries()) {
    const row = r as Partial<UsageRow>;
    if (!row || typeof row.id !== 'string' || typeof row.createdAt !== 'string' || !Number.isFinite(Date.parse(row.createdAt)) || typeof row.status !== 'string') {
      return { error: `input.usage.executions[${i}] lacks an id, a status or a creation time` };
    }
  }
  return { asOf: o.asOf, executions: o.executions as UsageRow[] };
}

/** `since` / `until` (a day or an ISO time): until a day includes the whole day. */
export function windowOf(input: Record<string, unknown>): { window: Window; from: number; to: number } | { error: string; field: string } {
  const at = (field: 'since' | 'until'): number | null | { error: string; field: string } => {
    const v = input[field];
    if (v === undefined || v === null || v === '') return null;
    const s = String(v);
    const day = /^\d{4}-\d\d-\d\d$/.test(s);
    const t = Date.parse(day ? `${s}T00:00:00Z` : s);
    if (!Number.isFinite(t) || !/^\d{4}-\d\d-\d\d/.test(s)) return { error: `input.${field} must be a date (2026-03-01) or an ISO time`, field };
    return field === 'until' && day ? t + 86_400_000 - 1 : t;
  };
  const since = at('since'); const until = at('until');
  if (since !== null && typeof since === 'object') return since;
  if (until !== null && typeof until === 'object') return until;
  if (since !== null && until !== null && since > until) return { error: 'input.since is after input.until', field: 'since' };
  return {
    window: { since: since === null ? null : new Date(since).toISOString(), until: until === null ? null : new Date(until).toISOString() },
    from: since ?? -Infinity, to: until ?? Infinity,
  };
}

/** The rows metered: the asking execution left out, and those created outside the window. */
export function selectRows(facts: UsageFacts, self: string | null, from: number, to: number): { rows: UsageRow[]; outside: number; selfSeen: boolean } {
  let outside = 0; let selfSeen = false;
  const rows: UsageRow[] = [];
  for (const r of facts.executions) {
    if (r.id === self) { selfSeen = true; continue; }
    const t = Date.parse(r.createdAt);
    if (t < from || t > to) { outside++; continue; }
    rows.push(r);
  }
  return { rows, outside, selfSeen };
}

const tokensOf = (r: UsageRow): number => (typeof r.tokens === 'number' ? r.tokens : 0);

function tally(rows: readonly UsageRow[], keys: (r: UsageRow) => string[]): Count[] {
  const m = new Map<string, Count>();
  for (const r of rows) {
    for (const key of new Set(keys(r))) {
      const c = m.get(key) ?? { key, executions: 0, tokens: 0 };
      c.executions++;
      c.tokens += tokensOf(r);
      m.set(key, c);
    }
  }
  return [...m.values()].sort((a, b) => b.executions - a.executions || b.tokens - a.tokens || a.key.localeCompare(b.key));
}

const known = (r: UsageRow): boolean => Array.isArray(r.agents);

export function meter(facts: UsageFacts, rows: readonly UsageRow[], window: Window, excluded: UsageReport['excluded']): UsageReport {
  const unknown = rows.filter((r) => !known(r)).length;
  return {
    asOf: facts.asOf, window,
    executions: { total: rows.length, byStatus: tally(rows, (r) => [r.status]), byKind: tally(rows, (r) => [r.kind]) },
    byAgent: tally(rows, (r) => (known(r) ? (r.agents!.length ? r.agents! : ['(none planned)']) : [UNKNOWN])),
    byTier: tally(rows, (r) => [known(r) ? r.intelligence ?? UNKNOWN : UNKNOWN]),
    byCapability: tally(rows, (r) => (known(r) ? (r.capabilities?.length ? r.capabilities : ['(none: direct action or workflow)']) : [UNKNOWN])),
    byProject: tally(rows, (r) => [known(r) ? r.project ?? '(no source)' : UNKNOWN]),
    byOwner: tally(rows, (r) => [r.owner ?? '(no key)']),
    tokens: {
      total: rows.reduce((a, r) => a + tokensOf(r), 0),
      executionsWithModel: rows.filter((r) => tokensOf(r) > 0).length,
      notReported: rows.filter((r) => typeof r.tokens !== 'number').length,
    },
    unknown: { executions: unknown, note: unknown ? UNKNOWN_NOTE : null },
    excluded,
  };
}
