/**
 * Triage as pure functions of the signals (signals.ts): the severity, the routing level, the
 * escalation path and the timeline (docs/decisions.md, "incident-ai").
 *
 * Severity: every criterion below that a signal meets lifts the incident to its level; the highest wins,
 * and every criterion met is kept as a reason (what was measured, where, against which threshold).
 *
 * | level | error rate | users affected          | SLO burn | observe-ai anomaly |
 * |-------|-----------|--------------------------|----------|--------------------|
 * | SEV1  | >= 25%    | >= 10,000 or >= 50%      | >= 14.4x | critical           |
 * | SEV2  | >= 5%     | >= 1,000 or >= 10%       | >= 6x    | high               |
 * | SEV3  | >= 1%     | >= 100 or >= 1%          | >= 2x    | medium             |
 * | SEV4  | >= 0.5%   | >= 1                     | >= 1x    | low, or an alert   |
 *
 * The burn thresholds are the SRE workbook's page (14.4x) and ticket (6x) rates; the error rate of logs
 * is that of their worst 5-minute window. A firing alert counts at its rule's severity (page/critical:
 * SEV1, high/error: SEV2, warning: SEV3, else SEV4). No criterion met: no incident.
 *
 * Routing (`input.routing`, the shape of `integrations.incident_management.routing`: {level: {severity,
 * class?}}): SEV1..SEV4 map to critical, error, warning, info; the level with that severity is chosen
 * (several: the first by name), else the nearest more severe one, else the nearest less severe one.
 */
import type { Anomaly } from '../observe/detect';
import type { Signals, TimelineEvent } from './signals';

export type Sev = 'SEV1' | 'SEV2' | 'SEV3' | 'SEV4';
export const SEVS: readonly Sev[] = ['SEV1', 'SEV2', 'SEV3', 'SEV4'];
export const ROUTING_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type RoutingSeverity = (typeof ROUTING_SEVERITIES)[number];

export const THRESHOLDS = {
  errorRate: [0.25, 0.05, 0.01, 0.005],
  users: [10_000, 1_000, 100, 1],
  usersShare: [0.5, 0.1, 0.01, 0],
  burn: [14.4, 6, 2, 1],
  anomaly: ['critical', 'high', 'medium', 'low'],
} as const;

export interface Reason { level: Sev; signal: string; measured: string; threshold: string; source: string }

export interface Routing { level: string; severity: RoutingSeverity; class: string | null; matched: 'exact' | 'more severe' | 'less severe'; from: string }

export interface EscalationStep { afterMinutes: number; who: string; action: string }

export interface Impact {
  start: string | null;
  end: string | null;
  durationMinutes: number | null;
  errorRate: number | null;
  peakErrorRate: number | null;
  requests: number | null;
  failedRequests: number | null;
  usersAffected: number | null;
  usersShare: number | null;
  sloBurn: number | null;
}

export interface Triage {
  severity: Sev | null;
  /** The severity as the incident-management routing names it (or the SEV level without routing). */
  level: string | null;
  routing: Routing | null;
  headline: string;
  reasons: Reason[];
  impact: Impact;
  escalation: EscalationStep[];
  timeline: TimelineEvent[];
}

const pct = (x: number) => `${Math.round(x * 10000) / 100}%`;
const sevAt = (i: number) => SEVS[i]!;

export function classify(s: Signals): Reason[] {
  const out: Reason[] = [];
  const first = <T extends number>(v: number, ts: readonly T[]) => ts.findIndex((t) => v >= t);
  const peak = s.logs?.peak;
  if (s.errorRate) { const i = first(s.errorRate.value, THRESHOLDS.errorRate); if (i >= 0) out.push({ level: sevAt(i), signal: 'error rate', measured: pct(s.errorRate.value), threshold: `>= ${pct(THRESHOLDS.errorRate[i]!)}`, source: s.errorRate.from }); }
  if (peak) { const i = first(peak.rate, THRESHOLDS.errorRate); if (i >= 0) out.push({ level: sevAt(i), signal: 'error rate (worst 5 minutes of the logs)', measured: `${pct(peak.rate)} (${peak.errors}/${peak.requests}, ${peak.start} .. ${peak.end})`, threshold: `>= ${pct(THRESHOLDS.errorRate[i]!)}`, source: `${peak.file}:${peak.line}` }); }
  if (s.usersAffected) {
    const u = s.usersAffected;
    let i = first(u.value, THRESHOLDS.users);
    const j = u.share !== null && u.share > 0 ? first(u.share, THRESHOLDS.usersShare) : -1;
    const bySh = j >= 0 && (i < 0 || j < i);
    if (bySh) i = j;
    if (i >= 0) out.push({ level: sevAt(i), signal: 'users affected', measured: `${u.value}${u.share !== null ? ` (${pct(u.share)})` : ''}`, threshold: bySh ? `>= ${pct(THRESHOLDS.usersShare[i]!)} of users` : `>= ${THRESHOLDS.users[i]}`, source: u.from });
  }
  if (s.sloBurn) { const i = first(s.sloBurn.value, THRESHOLDS.burn); if (i >= 0) out.push({ level: sevAt(i), signal: 'SLO burn', measured: `${s.sloBurn.value}x`, threshold: `>= ${THRESHOLDS.burn[i]}x`, source: s.sloBurn.from }); }
  for (const a of s.anomalies) {
    const i = (THRESHOLDS.anomaly as readonly string[]).indexOf(a.severity);
    if (i >= 0) out.push({ level: sevAt(i), signal: `${a.kind} of ${a.series}`, measured: anomalyMagnitude(a), threshold: `${a.severity} anomaly (${a.method})`, source: `${a.from}${a.lines.length ? `, ${a.file}:${a.lines[0]}` : ''}` });
    const burn = a.magnitude.burnRate;
    if (burn) { const k = first(Math.min(burn.long, burn.short), THRESHOLDS.burn); if (k >= 0 && k < i) out.push({ level: sevAt(k), signal: `SLO burn (${a.name})`, measured: `${burn.long}x over ${burn.longWindow}, ${burn.short}x over ${burn.shortWindow}`, threshold: `>= ${THRESHOLDS.burn[k]}x`, source: a.from }); }
  }
  for (const e of s.alerts) {
    const v = e.severity.toLowerCase();
    const i = /crit|page|emerg/.test(v) ? 0 : /high|err|major/.test(v) ? 1 : /warn|ticket/.test(v) ? 2 : 3;
    out.push({ level: sevAt(i), signal: `alert ${e.rule} (${e.state})`, measured: `${e.series} since ${e.since}`, threshold: `rule severity ${e.severity}`, source: e.from });
  }
  return out.sort((a, b) => SEVS.indexOf(a.level) - SEVS.indexOf(b.level));
}

export function anomalyMagnitude(a: Anomaly): string {
  const m = a.magnitude;
  if (m.burnRate) return `${m.errors}/${m.requests} bad (${pct(a.value)}), burn ${m.burnRate.long}x (${m.burnRate.longWindow}) / ${m.burnRate.short}x (${m.burnRate.shortWindow})${m.p95Ms !== undefined ? `, p95 ${m.p95Ms} ms` : ''}`;
  if (m.shiftSigma !== undefined) return `${a.baseline} -> ${a.value} (${m.shiftSigma} sigma)`;
  return `${a.value} vs ${a.baseline} (z ${m.z})`;
}

export function routeOf(sev: Sev, raw: unknown): Routing | { error: string } | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) return { error: 'input.routing must be {<level>: {severity: critical|error|warning|info, class?}} (integrations.incident_management.routing)' };
  const levels: Array<{ name: string; sev: number; cls: string | null }> = [];
  for (const [name, v] of Object.entries(raw as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) {
    const o = v as Record<string, unknown> | null;
    const i = o && typeof o === 'object' ? ROUTING_SEVERITIES.indexOf(o['severity'] as RoutingSeverity) : -1;
    if (i < 0) return { error: `input.routing.${name}.severity must be one of ${ROUTING_SEVERITIES.join(', ')}` };
    levels.push({ name, sev: i, cls: typeof o!['class'] === 'string' ? o!['class'] as string : null });
  }
  if (!levels.length) return null;
  const want = SEVS.indexOf(sev);
  const exact = levels.find((l) => l.sev === want);
  // A more severe level over-pages rather than under-pages: preferred to a less severe one.
  const more = levels.filter((l) => l.sev < want).sort((a, b) => b.sev - a.sev)[0];
  const less = levels.filter((l) => l.sev > want).sort((a, b) => a.sev - b.sev)[0];
  const pick = exact ?? more ?? less!;
  return { level: pick.name, severity: ROUTING_SEVERITIES[pick.sev]!, class: pick.cls, matched: exact ? 'exact' : more ? 'more severe' : 'less severe', from: 'input.routing' };
}

/** The escalation path of a level: who is engaged when, in minutes from the triage. */
export function escalationOf(sev: Sev, route: Routing | null, owner: string): EscalationStep[] {
  const page = route ? `page through the incident-management routing level ${route.level} (${route.severity}${route.class ? `, ${route.class}` : ''})` : 'page';
  const chain: EscalationStep[] = [
    { afterMinutes: 0, who: 'debug-ai', action: 'diagnose: find the cause from the timeline and the evidence (OPERATE workflow)' },
  ];
  switch (sev) {
    case 'SEV1': return [
      { afterMinutes: 0, who: `primary on-call of ${owner}`, action: `${page} now; open the incident channel` },
      { afterMinutes: 0, who: 'incident commander', action: 'takes command: one voice, roles assigned (ops, comms)' },
      ...chain,
      { afterMinutes: 5, who: `secondary on-call of ${owner}`, action: 'paged if the primary has not acknowledged' },
      { afterMinutes: 15, who: 'engineering manager and stakeholders', action: 'informed; decide on customer communication' },
      { afterMinutes: 30, who: 'communications', action: 'status page updated, then every 30 minutes until resolved' },
    ];
    case 'SEV2': return [
      { afterMinutes: 0, who: `primary on-call of ${owner}`, action: `${page} now` },
      ...chain,
      { afterMinutes: 15, who: `secondary on-call of ${owner}`, action: 'paged if the primary has not acknowledged' },
      { afterMinutes: 30, who: 'incident commander', action: 'engaged if not mitigated' },
      { afterMinutes: 60, who: 'engineering manager', action: 'informed; status update' },
    ];
    case 'SEV3': return [
      { afterMinutes: 0, who: `${owner}`, action: `${route ? `notify through routing level ${route.level} (${route.severity}); ` : ''}ticket for the next business hours` },
      ...chain,
      { afterMinutes: 24 * 60, who: `team lead of ${owner}`, action: 'escalated if the ticket is not picked up within a business day' },
    ];
    default: return [
      { afterMinutes: 0, who: `${owner}`, action: `${route ? `notify through routing level ${route.level} (${route.severity}); ` : ''}ticket in the backlog` },
      { afterMinutes: 7 * 24 * 60, who: `team lead of ${owner}`, action: 'reviewed at the next weekly triage' },
    ];
  }
}

function minutesBetween(a: string | null, b: string | null): number | null {
  if (!a || !b) return null;
  return Math.round((Date.parse(b) - Date.parse(a)) / 60_000);
}

export function timelineOf(s: Signals): TimelineEvent[] {
  const ev: TimelineEvent[] = [...s.events];
  for (const a of s.anomalies) {
    const where = `${a.from}${a.lines.length ? ` (${a.file}:${a.lines[0]})` : ''}`;
    ev.push({ time: a.start, event: `${a.severity} ${a.kind} of ${a.series} begins: ${anomalyMagnitude(a)} [${a.method}]`, source: where, kind: 'signal-start' });
    if (a.end && a.end !== a.start) ev.push({ time: a.end, event: `${a.kind} of ${a.series} ends`, source: a.from, kind: 'signal-end' });
  }
  for (const e of s.alerts) {
    if (e.firedAt) ev.push({ time: e.firedAt, event: `alert ${e.rule} (${e.severity}) fires on ${e.series}`, source: e.from, kind: 'alert' });
    if (e.state === 'resolved' && e.until) ev.push({ time: e.until, event: `alert ${e.rule} resolves`, source: e.from, kind: 'alert' });
  }
  const l = s.logs;
  if (l) {
    if (l.peak) ev.push({ time: l.peak.start, event: `worst 5 minutes of errors begin: ${l.peak.errors}/${l.peak.requests} requests failed (${pct(l.peak.rate)})`, source: `${l.peak.file}:${l.peak.line}`, kind: 'log' });
    for (const e of l.topErrors) ev.push({ time: e.time, event: `first "${e.message}" (${e.count} like it in all)`, source: `${e.file}:${e.line}`, kind: 'log' });
    if (l.lastError && l.errors + l.errorRecords > 1) ev.push({ time: l.lastError.time, event: 'last failed request or error record', source: `${l.lastError.file}:${l.lastError.line}`, kind: 'log' });
  }
  // Ordered by time (the untimed last, in the order found); equal times keep their order.
  return ev.map((e, i) => ({ e, i })).sort((x, y) => (x.e.time === null ? 1 : 0) - (y.e.time === null ? 1 : 0) || (x.e.time ?? '').localeCompare(y.e.time ?? '') || x.i - y.i).map((x) => x.e);
}

/**
 * The incident's window: the windows of the signals that set its severity (the anomalies at that
 * level, the logs' worst 5 minutes when they count at it), so an unrelated milder anomaly days earlier
 * does not stretch it; the windows of all signals when none of those has one.
 */
export function impactOf(s: Signals, top: Sev | null = null): Impact {
  const sevOf = (a: Anomaly) => SEVS[(THRESHOLDS.anomaly as readonly string[]).indexOf(a.severity)];
  const peakSev = s.logs?.peak ? SEVS[THRESHOLDS.errorRate.findIndex((t) => s.logs!.peak!.rate >= t)] : undefined;
  const windows = (all: boolean) => [
    ...s.anomalies.filter((a) => all || sevOf(a) === top).map((a) => [a.start, a.end] as const),
    ...(s.logs?.peak && (all || peakSev === top) ? [[s.logs.peak.start, s.logs.peak.end] as const] : []),
  ].filter((w) => w[0]);
  const w = top && windows(false).length ? windows(false) : windows(true);
  const starts = w.map((x) => x[0]).filter((x): x is string => !!x).sort();
  const ends = w.map((x) => x[1]).filter((x): x is string => !!x).sort();
  const start = starts[0] ?? null; const end = ends[ends.length - 1] ?? null;
  const burns = s.anomalies.flatMap((a) => (a.magnitude.burnRate ? [Math.max(a.magnitude.burnRate.long, a.magnitude.burnRate.short)] : []));
  return {
    start, end, durationMinutes: minutesBetween(start, end),
    errorRate: s.errorRate?.value ?? s.logs?.errorRate ?? null,
    peakErrorRate: s.logs?.peak?.rate ?? null,
    requests: s.logs?.requests ?? null,
    failedRequests: s.logs?.errors ?? null,
    usersAffected: s.usersAffected?.value ?? null,
    usersShare: s.usersAffected?.share ?? null,
    sloBurn: s.sloBurn?.value ?? (burns.length ? Math.max(...burns) : null),
  };
}

export function triage(s: Signals, opts: { routing?: unknown; owner?: string }): Triage | { error: string } {
  const reasons = classify(s);
  const severity = reasons[0]?.level ?? null;
  const impact = impactOf(s, severity);
  const timeline = timelineOf(s);
  if (!severity) {
    return { severity: null, level: null, routing: null, headline: 'no incident: no signal meets a severity criterion', reasons, impact, escalation: [], timeline };
  }
  const route = routeOf(severity, opts.routing);
  if (route && 'error' in route) return route;
  const top = reasons.filter((r) => r.level === severity);
  const headline = `${severity}${route ? ` (routing level ${route.level})` : ''}: ${top.slice(0, 3).map((r) => `${r.signal} ${r.measured}`).join('; ')}`;
  return { severity, level: route?.level ?? severity, routing: route, headline, reasons, impact, escalation: escalationOf(severity, route, opts.owner ?? 'the owning team'), timeline };
}
