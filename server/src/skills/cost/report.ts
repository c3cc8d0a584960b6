/**
 * cost-ai `report`: where the money went, from the lines of the exports: totals of the period, and
 * breakdowns by service, by tag (each tag key, with the untagged share), by resource and by charge
 * type, and a series per day (a period up to 62 days) or per month.
 */
import type { CostLine } from './formats';

export interface Share { key: string; cost: number; share: number }

export interface ResourceCost {
  resource: string;
  service: string;
  cost: number;
  /** Where its lines are: the file and the first lines. */
  file: string;
  lines: number[];
}

export interface CostReport {
  currency: string | null;
  period: { start: string; end: string; days: number };
  total: number;
  credits: number;
  net: number;
  byService: Share[];
  byTag: Record<string, Share[]>;
  byResource: ResourceCost[];
  /** Resources past `top`, summed. */
  otherResources: { count: number; cost: number };
  /** Cost of lines with no resource id (taxes, support, data transfer without one). */
  unattributed: number;
  byChargeType: Share[];
  byPeriod: { granularity: 'day' | 'month'; totals: Array<{ period: string; cost: number }> };
  examined: { files: number; lines: number; services: number; resources: number };
}

export const round = (n: number, d = 4): number => { const f = 10 ** d; return Math.round(n * f) / f; };
export const money = (n: number, cur: string | null): string => `${cur && cur !== 'USD' ? `${cur} ` : '$'}${n.toFixed(2)}`;
/** The UTC day of a time; lines share a few distinct times, so each is formatted once per call site's run. */
const dayCache = new Map<number, string>();
const day = (t: number): string => {
  let d = dayCache.get(t);
  if (d === undefined) {
    if (dayCache.size > 100_000) dayCache.clear();
    d = new Date(t).toISOString().slice(0, 10);
    dayCache.set(t, d);
  }
  return d;
};

function shares(m: Map<string, number>, total: number): Share[] {
  return [...m].map(([key, cost]) => ({ key, cost: round(cost), share: total ? round(cost / total, 4) : 0 })).sort((a, b) => b.cost - a.cost || a.key.localeCompare(b.key));
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

/** The export's period: first usage day to last, inclusive. */
export function periodOf(lines: readonly CostLine[]): { start: string; end: string; days: number } {
  let lo = Infinity; let hi = -Infinity;
  for (const l of lines) { if (l.t < lo) lo = l.t; if (l.t > hi) hi = l.t; }
  if (!Number.isFinite(lo)) return { start: '', end: '', days: 0 };
  const start = day(lo); const end = day(hi);
  return { start, end, days: Math.round((Date.parse(end) - Date.parse(start)) / 86_400_000) + 1 };
}

/** The currency of the lines (the most frequent one; null when the export does not say). */
export function currencyOf(lines: readonly CostLine[]): string | null {
  const m = new Map<string, number>();
  for (const l of lines) if (l.currency) add(m, l.currency, 1);
  return [...m].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

export function buildReport(lines: readonly CostLine[], files: number, top = 20): CostReport {
  const period = periodOf(lines);
  const total = lines.reduce((a, l) => a + l.cost, 0);
  const credits = lines.reduce((a, l) => a + l.credits, 0);
  const byService = new Map<string, number>(); const byCharge = new Map<string, number>(); const byPeriod = new Map<string, number>();
  const tagKeys = new Set<string>();
  for (const l of lines) for (const k of Object.keys(l.tags)) tagKeys.add(k);
  const byTag = new Map<string, Map<string, number>>([...tagKeys].sort().map((k) => [k, new Map()]));
  const res = new Map<string, ResourceCost>();
  let unattributed = 0;
  const monthly = period.days > 62;
  for (const l of lines) {
    add(byService, l.service, l.cost);
    add(byCharge, l.chargeType ?? '(not given)', l.cost);
    add(byPeriod, monthly ? day(l.t).slice(0, 7) : day(l.t), l.cost);
    for (const [k, m] of byTag) add(m, l.tags[k] ?? '(untagged)', l.cost);
    if (!l.resource) { unattributed += l.cost; continue; }
    const r = res.get(l.resource) ?? { resource: l.resource, service: l.service, cost: 0, file: l.file, lines: [] };
    r.cost += l.cost;
    if (r.lines.length < 5 && r.file === l.file) r.lines.push(l.line);
    res.set(l.resource, r);
  }
  const ranked = [...res.values()].map((r) => ({ ...r, cost: round(r.cost) })).sort((a, b) => b.cost - a.cost || a.resource.localeCompare(b.resource));
  const rest = ranked.slice(top);
  return {
    currency: currencyOf(lines), period, total: round(total), credits: round(credits), net: round(total + credits),
    byService: shares(byService, total),
    byTag: Object.fromEntries([...byTag].map(([k, m]) => [k, shares(m, total)])),
    byResource: ranked.slice(0, top), otherResources: { count: rest.length, cost: round(rest.reduce((a, r) => a + r.cost, 0)) },
    unattributed: round(unattributed), byChargeType: shares(byCharge, total),
    byPeriod: { granularity: monthly ? 'month' : 'day', totals: [...byPeriod].sort((a, b) => a[0].localeCompare(b[0])).map(([period, cost]) => ({ period, cost: round(cost) })) },
    examined: { files, lines: lines.length, services: byService.size, resources: res.size },
  };
}

export function renderReport(r: CostReport): string {
  const m = (n: number) => money(n, r.currency);
  const pct = (s: number) => `${(s * 100).toFixed(1)}%`;
  const out = ['# cost-ai report', '', `Period ${r.period.start} .. ${r.period.end} (${r.period.days} day(s)): total ${m(r.total)}${r.credits ? `, credits ${m(r.credits)}, net ${m(r.net)}` : ''}; ${r.examined.lines} line(s) in ${r.examined.files} file(s), ${r.examined.services} service(s), ${r.examined.resources} resource(s).`, ''];
  out.push('## By service', '', '| service | cost | share |', '|---|---:|---:|', ...r.byService.map((s) => `| ${s.key} | ${m(s.cost)} | ${pct(s.share)} |`), '');
  for (const [k, list] of Object.entries(r.byTag)) out.push(`## By tag \`${k}\``, '', '| value | cost | share |', '|---|---:|---:|', ...list.map((s) => `| ${s.key} | ${m(s.cost)} | ${pct(s.share)} |`), '');
  out.push('## By resource', '', '| resource | service | cost | lines |', '|---|---|---:|---|', ...r.byResource.map((x) => `| ${x.resource} | ${x.service} | ${m(x.cost)} | ${x.file}:${x.lines.join(',')} |`));
  if (r.otherResources.count) out.push(`| (${r.otherResources.count} more) | | ${m(r.otherResources.cost)} | |`);
  if (r.unattributed) out.push(`| (no resource id) | | ${m(r.unattributed)} | |`);
  out.push('', `## By ${r.byPeriod.granularity}`, '', ...r.byPeriod.totals.map((p) => `- ${p.period}: ${m(p.cost)}`));
  return out.join('\n');
}
