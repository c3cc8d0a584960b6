/**
 * observe-ai's embedded skills, read-only and deterministic (no model, no network):
 *
 *  - `analyze` (the default action): ingests the metrics and logs (ingest.ts), detects spikes, dips and
 *    level shifts in every series and the SLO burn of the request logs (detect.ts), and reports each
 *    anomaly with its series, window, magnitude, method and severity. Nothing found is a completed
 *    result that says what was examined.
 *  - `alerts`: evaluates the alert rules of `input.rules` (an array, or a workspace JSON/YAML file of
 *    them) over the ingested series; each firing episode with the points that fired it.
 *
 * No data at all is not applicable (with where it looked): that is what lets a full-sdlc run finish on
 * a fresh project. Anomalies and firing alerts are findings of the data, never a failed gate of the step.
 */
import { existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import type { ProposedAction } from '../../engine/acmf/records';
import { WorkspaceFiles } from '../workspace/files';
import { evaluateRule, parseRules, type AlertRule, type RuleResult } from './alerts';
import { DEFAULT_SLO, detectSeries, errorBursts, histogramQuantiles, sloBurn, SEVERITY_RANK, type Anomaly, type Slo } from './detect';
import { ingest, LOOKED_AT, type Ingested, ingestText } from './ingest';
import { iso } from './model';
import { alertsDataSchema, analyzeDataSchema, observeInputSchema } from './schemas';
import { fetchText } from './fetch';

export interface Examined {
  files: number;
  series: number;
  /** Series with enough points (20) to be judged for spikes and shifts. */
  seriesJudged: number;
  points: number;
  timeRange: { start: string | null; end: string | null };
  logLines: number;
  logRecords: number;
  requests: number;
  /** Error-level lines of logs without an HTTP status (judged for error bursts). */
  errorLines: number;
  skippedLines: number;
}

export interface AnalyzeData {
  anomalies: Anomaly[];
  examined: Examined;
  slo: Slo;
  files: Ingested['files'];
  ignored: string[];
  origin: Ingested['origin'];
  networkIngestion: string;
}

export interface AlertsData {
  firing: number;
  resolved: number;
  rules: RuleResult[];
  examined: Examined;
  files: Ingested['files'];
  rulesFrom: string;
}

const NO_NETWORK = 'not used: no URL was named (URLs allowed by observe.urls are fetched when ACMF allows http_request)';

/** What the install's monitoring integrations say, read from `input.settings` (the engine's, without secrets). */
function integrationNotes(input: Record<string, unknown>): string[] {
  const st = input['settings'] as { cloudMonitoring?: { enabled?: boolean; region?: string | null; namespaces?: string[] }; apm?: { enabled?: boolean; site?: string | null; serviceName?: string | null } } | undefined;
  const out: string[] = [];
  const cm = st?.cloudMonitoring;
  if (cm?.enabled) out.push(`integrations.cloud_monitoring is enabled (region ${cm.region ?? '?'}${cm.namespaces?.length ? `, namespaces ${cm.namespaces.join(', ')}` : ''}): this version does not call the cloud's monitoring API; expose the metrics at a Prometheus/OpenMetrics endpoint listed in observe.urls, or export them to a file`);
  const apm = st?.apm;
  if (apm?.enabled) out.push(`integrations.apm is enabled (site ${apm.site ?? '?'}${apm.serviceName ? `, service ${apm.serviceName}` : ''}): this version does not query the APM vendor's API; export its series to a file or an endpoint listed in observe.urls`);
  return out;
}

/** Alert rules of the install (`observe.alert_rules`, handed in as `input.settings.alertRules`), when a request gives none. */
function configuredRules(input: Record<string, unknown>): unknown[] | undefined {
  const r = (input['settings'] as { alertRules?: unknown } | undefined)?.alertRules;
  return Array.isArray(r) && r.length ? r : undefined;
}

export function examinedOf(d: Ingested, seriesJudged: number, requests: number): Examined {
  let lo = Infinity; let hi = -Infinity; let points = 0;
  for (const s of d.series) for (const p of s.points) { points++; if (p.t !== null) { if (p.t < lo) lo = p.t; if (p.t > hi) hi = p.t; } }
  if (d.logs.first !== null && d.logs.first < lo) lo = d.logs.first;
  if (d.logs.last !== null && d.logs.last > hi) hi = d.logs.last;
  return {
    files: d.files.length, series: d.series.length, seriesJudged, points,
    timeRange: { start: Number.isFinite(lo) ? iso(lo) : null, end: Number.isFinite(hi) ? iso(hi) : null },
    logLines: d.files.filter((f) => f.kind === 'logs').reduce((a, f) => a + f.lines, 0),
    logRecords: d.logs.records, requests, errorLines: d.logs.errors.errors,
    skippedLines: d.files.reduce((a, f) => a + f.skippedCount, 0),
  };
}

/** `input.slo`: {availability: 0.995 or 99.5, latencyMs: 500, latencyTarget: 0.95 or 95}; the defaults otherwise. */
export function sloOf(raw: unknown): Slo | { error: string } {
  if (raw === undefined || raw === null) return DEFAULT_SLO;
  if (typeof raw !== 'object' || Array.isArray(raw)) return { error: 'input.slo must be {availability?, latencyMs?, latencyTarget?}' };
  const o = raw as Record<string, unknown>;
  const frac = (v: unknown, name: string, d: number): number | string => {
    if (v === undefined) return d;
    if (typeof v !== 'number' || !(v > 0) || v >= 100) return `input.slo.${name} must be a share (0.995) or a percent (99.5) below 100`;
    const f = v > 1 ? v / 100 : v;
    return f < 1 ? f : `input.slo.${name} must be below 100%`;
  };
  const availability = frac(o['availability'], 'availability', DEFAULT_SLO.availability);
  const latencyTarget = frac(o['latencyTarget'], 'latencyTarget', DEFAULT_SLO.latencyTarget);
  const latencyMs = o['latencyMs'] === undefined ? DEFAULT_SLO.latencyMs : o['latencyMs'];
  if (typeof availability === 'string') return { error: availability };
  if (typeof latencyTarget === 'string') return { error: latencyTarget };
  if (typeof latencyMs !== 'number' || !(latencyMs > 0)) return { error: 'input.slo.latencyMs must be a positive number of milliseconds' };
  return { availability, latencyMs, latencyTarget };
}

/**
 * Calibrated on the evidence: a deterministic analysis of fully parsed data that could be judged is
 * confident (0.9); skipped lines lower it in proportion, and data too short to judge (fewer than 20
 * points per series, fewer than 10 requests) is reported with less confidence (0.7) since nothing
 * could have been found in it.
 */
export function observeConfidence(e: Examined, judged: boolean): number {
  const records = e.points + e.logLines;
  const parsed = records ? Math.max(0, (records - e.skippedLines) / records) : 0;
  const base = judged ? 0.9 : 0.7;
  return Math.round(base * (0.5 + 0.5 * parsed) * 100) / 100;
}

export function analyzeData(d: Ingested, slo: Slo): AnalyzeData {
  const anomalies: Anomaly[] = [];
  let judged = 0;
  // Histograms are judged through their p95 over time (their buckets one by one would repeat each anomaly per `le`).
  for (const s of [...d.series, ...histogramQuantiles(d.series, 0.95)]) {
    const r = detectSeries(s);
    if (r.judged) judged++;
    anomalies.push(...r.anomalies);
  }
  const burn = sloBurn(d.logs.requests, slo);
  anomalies.push(...burn.anomalies);
  anomalies.push(...errorBursts(d.logs.errors));
  anomalies.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || (a.start ?? '').localeCompare(b.start ?? ''));
  return { anomalies, examined: examinedOf(d, judged, burn.requests), slo, files: d.files, ignored: d.ignored, origin: d.origin, networkIngestion: NO_NETWORK };
}

function examinedLine(e: Examined): string {
  const parts: string[] = [];
  if (e.series) parts.push(`${e.series} series (${e.points} points, ${e.seriesJudged} judged)`);
  if (e.logLines) parts.push(`${e.logLines} log lines (${e.requests} requests${e.errorLines ? `, ${e.errorLines} error-level lines` : ''})`);
  const range = e.timeRange.start ? `, ${e.timeRange.start} .. ${e.timeRange.end}` : '';
  return `${parts.join(' and ')} in ${e.files} file(s)${range}${e.skippedLines ? `; ${e.skippedLines} line(s) skipped` : ''}`;
}

function anomalyLine(a: Anomaly): string {
  const when = a.start ? `${a.start}${a.end && a.end !== a.start ? ` .. ${a.end}` : ''}` : `points ${a.startIndex}..${a.endIndex}`;
  const mag = a.magnitude.burnRate
    ? `burn ${a.magnitude.burnRate.long}x (${a.magnitude.burnRate.longWindow}) / ${a.magnitude.burnRate.short}x (${a.magnitude.burnRate.shortWindow}), ${a.magnitude.errors}/${a.magnitude.requests} bad${a.magnitude.p95Ms !== undefined ? `, p95 ${a.magnitude.p95Ms} ms` : ''}`
    : a.magnitude.pValue !== undefined ? `${a.value} error lines in a minute vs ${a.baseline} a minute before (p ${a.magnitude.pValue}, ${a.magnitude.errors} in the burst)`
    : a.magnitude.shiftSigma !== undefined ? `${a.baseline} -> ${a.value} (${a.magnitude.shiftSigma} sigma)` : `${a.value} vs ${a.baseline} expected (robust z ${a.magnitude.z} of the EWMA residual)`;
  return `${a.severity} ${a.kind} of ${a.series} at ${when}: ${mag}`;
}

export function renderAnalysis(d: AnalyzeData): string {
  const out = ['# observe-ai analysis', '', `Examined: ${examinedLine(d.examined)}.`, ''];
  if (!d.anomalies.length) out.push('No anomaly found.', '');
  else {
    out.push('| severity | kind | series | window | magnitude | method | lines |', '|---|---|---|---|---|---|---|');
    for (const a of d.anomalies) {
      const when = a.start ? `${a.start} .. ${a.end}` : `points ${a.startIndex}..${a.endIndex}`;
      const mag = anomalyLine(a).split(': ').slice(1).join(': ');
      out.push(`| ${a.severity} | ${a.kind} | \`${a.series}\` | ${when} | ${mag} | ${a.method} | ${a.file}${a.lines.length ? `:${a.lines.slice(0, 3).join(',')}` : ''} |`);
    }
    out.push('');
  }
  out.push('## Files', '', ...d.files.map((f) => `- ${f.file}: ${f.kind}, ${f.format}, ${f.lines} line(s), ${f.records} ${f.kind === 'metrics' ? 'series' : 'record(s)'}${f.skippedCount ? `, ${f.skippedCount} skipped (first: line ${f.skipped.find((s) => s.line > 0)?.line}: ${f.skipped.find((s) => s.line > 0)?.reason})` : ''}`));
  if (d.ignored.length) out.push('', '## Not read', '', ...d.ignored.map((l) => `- ${l}`));
  out.push('', `SLO: availability ${d.slo.availability * 100}%, ${d.slo.latencyTarget * 100}% of requests under ${d.slo.latencyMs} ms. Network ingestion: ${d.networkIngestion}.`);
  return out.join('\n');
}

export function renderAlerts(d: AlertsData): string {
  const out = ['# observe-ai alerts', '', `${d.firing} firing, ${d.resolved} resolved over ${examinedLine(d.examined)} (rules from ${d.rulesFrom}).`, ''];
  for (const r of d.rules) {
    out.push(`## ${r.rule} (${r.severity}): ${r.condition}`, '', `${r.seriesMatched} series matched, ${r.pointsEvaluated} points evaluated.`);
    for (const e of r.episodes) out.push(`- ${e.state} on \`${e.series}\` since ${e.since}, fired at ${e.firedAt}, last ${e.until}: ${e.points.slice(0, 5).map((p) => `${p.value}${p.line ? ` (${p.file}:${p.line})` : ''}`).join(', ')}${e.pointCount > 5 ? ` and ${e.pointCount - 5} more` : ''}`);
    out.push('');
  }
  return out.join('\n');
}

/** The read actions the step takes: the metric files (read_metrics) and the log files (read). */
function proposeObserve(d: Ingested | undefined): ProposedAction[] {
  if (!d) return [];
  const metrics = d.files.filter((f) => f.kind === 'metrics').map((f) => f.file);
  const logs = d.files.filter((f) => f.kind === 'logs').map((f) => f.file);
  return [
    ...(metrics.length ? [{ kind: 'read_metrics', description: 'read the metric series', paths: metrics }] : []),
    ...(logs.length ? [{ kind: 'read', description: 'read the log files', paths: logs }] : []),
    ...d.pending.map((u) => ({ kind: 'http_request', description: `GET ${u.url} (${u.field}, allowed by observe.urls; read-only)` })),
  ];
}

/** Alert rules: input.rules as an array (or {rules}), or a workspace JSON/YAML file holding them. */
export function rulesOf(ws: string, raw: unknown): { rules: AlertRule[]; from: string; path?: string } | { error: string } | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') {
    const files = new WorkspaceFiles(ws);
    const r = files.readText(raw, 4 * 1024 * 1024);
    if (!r.ok) return { error: r.reason === 'not found' ? `input.rules: ${raw} does not exist in the workspace` : `input.rules: ${raw} is ${r.reason}; not read` };
    let doc: unknown;
    try { doc = parseYaml(r.text); } catch (e) {
      const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
      return { error: `${r.rel}${line ? `:${line}` : ''}: not valid JSON or YAML` };
    }
    const p = parseRules(doc);
    return 'error' in p ? { error: `${r.rel}: ${p.error}` } : { rules: p.rules, from: r.rel, path: r.rel };
  }
  const p = parseRules(raw);
  return 'error' in p ? { error: `input.${p.error}` } : { rules: p.rules, from: 'input.rules' };
}

/** A rule's free-form severity on the findings scale (4 critical .. 1 low): page/critical, high/error, warning/ticket, info. */
export function ruleSeverityRank(s: string): number {
  const v = s.toLowerCase();
  return /crit|page|emerg/.test(v) ? 4 : /high|err|major/.test(v) ? 3 : /low|info|minor/.test(v) ? 1 : 2;
}

function makeObserveSkill(action: 'analyze' | 'alerts'): Skill {
  const prepared = new WeakMap<Evidence, Ingested>();
  const kind = action === 'analyze' ? 'observe-analysis' : 'observe-alerts';
  const load = (ctx: SkillContext) => ingest(ctx.request.workspace!, ctx.request.input, ctx.signal);
  return {
    agentId: 'observe-ai',
    action,
    needs: ['workspace'],
    outputSchema: action === 'analyze' ? analyzeDataSchema : alertsDataSchema,
    inputSchema: observeInputSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read metrics or logs from'); return evidence; }
      const d = load(ctx);
      prepared.set(evidence, d);
      for (const f of d.files) evidence.items.push({ source: f.file, detail: `${f.kind} (${f.format}): ${f.lines} line(s), ${f.records} ${f.kind === 'metrics' ? 'series' : 'record(s)'}${f.skippedCount ? `, ${f.skippedCount} skipped` : ''}`, weight: f.skippedCount ? 0.5 : 0.8 });
      evidence.pathsRead.push(...d.files.map((f) => f.file));
      for (const u of d.pending) evidence.items.push({ source: u.url, detail: `${u.field} URL allowed by observe.urls: fetched in Generate if ACMF allows http_request`, weight: 0.6 });
      evidence.constraints.push(...d.refused, ...(d.problem ? [d.problem.message] : []), ...integrationNotes(ctx.request.input));
      ctx.progress(40, d.files.length || d.pending.length ? 0.6 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeObserve(prepared.get(evidence));
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `observe-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read metrics or logs from');
      const d = prepared.get(evidence) ?? load(ctx);
      if (d.problem) return unable(d.problem.message, d.problem.field);
      let network = NO_NETWORK;
      if (d.pending.length) {
        if (!ctx.allowed('http_request')) return unable(`fetching ${d.pending.map((u) => u.url).join(', ')} needs http_request, which ACMF did not allow in this step`, d.pending[0]!.field);
        const fetched: string[] = [];
        for (const u of d.pending.splice(0)) {
          const r = await fetchText(u.url, ctx.signal);
          if (!r.ok) return unable(`input.${u.field}: ${r.reason}`, u.field);
          try { ingestText(d, u.field, u.url, r.text); } catch (e) {
            if (e instanceof Error && e.name === 'ObserveParseError') return unable(e.message, u.field);
            throw e;
          }
          fetched.push(`${u.url} (${Buffer.byteLength(r.text)} bytes)`);
        }
        network = `fetched ${fetched.join(', ')}`;
      }
      if (!d.files.length) {
        const why = `no metrics or logs to analyze: looked for ${LOOKED_AT}`;
        return { kind, summary: `observe-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      if (action === 'analyze') {
        const slo = sloOf(ctx.request.input['slo']);
        if ('error' in slo) return unable(slo.error, 'slo');
        const data = { ...analyzeData(d, slo), networkIngestion: network };
        const judged = data.examined.seriesJudged > 0 || data.examined.requests >= 10 || d.logs.errors.last - d.logs.errors.first >= 10;
        const confidence = observeConfidence(data.examined, judged);
        ctx.progress(100, confidence);
        const n = data.anomalies.length;
        const summary = n
          ? `${n} anomal${n === 1 ? 'y' : 'ies'}: ${data.anomalies.slice(0, 3).map(anomalyLine).join('; ')}${n > 3 ? `; and ${n - 3} more` : ''} (examined ${examinedLine(data.examined)})`
          : `nothing found: examined ${examinedLine(data.examined)}${judged ? '' : ' (too little data to judge: series need 20 points, SLO windows 10 requests)'}`;
        return {
          kind, summary, goalRef, confidence, data, text: renderAnalysis(data), tokens: 0,
          findingsAfter: { count: n, maxSeverity: n ? Math.max(...data.anomalies.map((a) => SEVERITY_RANK[a.severity])) : 0 },
        };
      }
      const given = ctx.request.input['rules'];
      const fromConfig = given === undefined || given === null ? configuredRules(ctx.request.input) : undefined;
      const rules = fromConfig ? (() => { const r = rulesOf(ws, fromConfig); return r && !('error' in r) ? { ...r, from: 'observe.alert_rules (config)' } : r; })() : rulesOf(ws, given);
      if (!rules) return unable('no alert rules given: input.rules must be [{name, expr: {metric, labels?, op, threshold, for?}, severity}] or a workspace JSON/YAML file of them (or set observe.alert_rules in the config)', 'rules');
      if ('error' in rules) return unable(rules.error, 'rules');
      const results = rules.rules.map((r) => evaluateRule(r, d.series));
      const episodes = results.flatMap((r) => r.episodes);
      const data: AlertsData = {
        firing: episodes.filter((e) => e.state === 'firing').length, resolved: episodes.filter((e) => e.state === 'resolved').length,
        rules: results, examined: examinedOf(d, 0, 0), files: d.files, rulesFrom: rules.from,
      };
      const matched = results.filter((r) => r.seriesMatched > 0).length;
      const confidence = observeConfidence(data.examined, matched > 0);
      ctx.progress(100, confidence);
      const fired = results.filter((r) => r.episodes.length);
      const summary = `${data.firing} alert(s) firing, ${data.resolved} resolved, of ${results.length} rule(s)${fired.length ? `: ${fired.map((r) => `${r.rule} (${r.episodes.length} on ${[...new Set(r.episodes.map((e) => e.series))].slice(0, 2).join(', ')})`).join('; ')}` : ''}; ${matched}/${results.length} rule(s) matched a series; examined ${examinedLine(data.examined)}`;
      return {
        kind, summary, goalRef, confidence, data, text: renderAlerts(data), tokens: 0,
        findingsAfter: { count: episodes.length, maxSeverity: episodes.reduce((m, e) => Math.max(m, ruleSeverityRank(e.severity)), 0) },
      };
    },
  };
}

export const analyzeSkill: Skill = makeObserveSkill('analyze');
export const alertsSkill: Skill = makeObserveSkill('alerts');
