/**
 * The signals incident-ai triages, gathered from (in this order):
 *
 *  - the steps before it: observe-ai `analyze` (its anomalies, each with series, window, magnitude,
 *    method and severity) and `alerts` (its firing and resolved episodes);
 *  - the request: `errorRate` (a share 0.05 or a percent "5%"), `usersAffected`, `totalUsers`, `sloBurn`
 *    (a burn-rate multiple), `events` ([{time, event, source?}]: deploys, pages, notes) and `logs` (a
 *    workspace file or folder of logs, read with observe-ai's parsers and judged with its SLO burn);
 *  - when neither gives anything: observe-ai's own analysis of the workspace's conventional places
 *    (metrics/, logs/, *.prom, *.log), so the `incident` verb works on a service repository.
 *
 * Nothing anywhere needs input (`signals`), except after an observe-ai step that was not applicable (it
 * looked and found no data, as in the OPERATE workflow on a fresh project): then triage is not applicable too.
 *
 * Log error rates are judged per 5-minute window (at least 10 requests and 3 errors: one stray 5xx is
 * not an incident); every file is read through WorkspaceFiles (a path outside the workspace is refused).
 */
import { existsSync } from 'node:fs';
import type { StepSummary } from '../../engine/rigor/skill';
import { DEFAULT_SLO, RequestMinutes, sloBurn, type Anomaly } from '../observe/detect';
import { readLines, ingest, LOOKED_AT as OBSERVE_LOOKED_AT } from '../observe/ingest';
import { LogStream } from '../observe/logs-parse';
import { iso, ObserveParseError, type LogRecord } from '../observe/model';
import { analyzeData, type AlertsData, type AnalyzeData } from '../observe/skill';
import { walkFiles, WorkspaceFiles } from '../workspace/files';

export const ERROR_WINDOW_MIN = 5;
export const MIN_WINDOW_REQUESTS = 10;
export const MIN_WINDOW_ERRORS = 3;
const MAX_KEPT_ERRORS = 2000;

export interface TimelineEvent {
  time: string | null;
  event: string;
  /** Where it was seen: `logs/app.jsonl:123`, `step 0 observe-ai analyze`, `input.events[1]`. */
  source: string;
  kind: 'signal-start' | 'signal-end' | 'alert' | 'log' | 'input';
}

export interface LogFacts {
  files: Array<{ file: string; format: string; lines: number; records: number; skipped: number }>;
  requests: number;
  errors: number;
  /** Records at level error (any line, request or not). */
  errorRecords: number;
  errorRate: number | null;
  /** The worst 5-minute window (>= 10 requests, >= 3 errors), or null. */
  peak: { start: string; end: string; requests: number; errors: number; rate: number; file: string; line: number } | null;
  first: string | null;
  last: string | null;
  /** The most frequent error messages, with their first line. */
  topErrors: Array<{ message: string; count: number; file: string; line: number; time: string | null }>;
  /** The last failed request or error record. */
  lastError: { time: string; file: string; line: number } | null;
}

export interface Signals {
  anomalies: Array<Anomaly & { from: string }>;
  alerts: Array<{ rule: string; severity: string; series: string; state: string; since: string | null; firedAt: string | null; until: string | null; from: string }>;
  errorRate: { value: number; from: string } | null;
  usersAffected: { value: number; share: number | null; from: string } | null;
  sloBurn: { value: number; from: string } | null;
  logs: LogFacts | null;
  events: TimelineEvent[];
  /** What was examined, in words (for "nothing found"). */
  examined: string[];
  /** Files read (workspace-relative). */
  files: string[];
  sources: string[];
}

export type Gathered =
  | { ok: true; signals: Signals }
  | { ok: false; field: string; message: string }
  | { ok: false; nothing: string }
  /** An observe-ai step before this one looked and found no data: nothing to triage, and nothing the request lacks. */
  | { ok: false; notApplicable: string };

const num = (v: unknown): number | undefined => {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() && Number.isFinite(Number(v.trim().replace(/%$/, '')))) return Number(v.trim().replace(/%$/, ''));
  return undefined;
};

/** A share: 0.05, or 5 / "5%" as a percent. */
function shareOf(v: unknown): number | undefined {
  const n = num(v);
  if (n === undefined || n < 0) return undefined;
  const pct = (typeof v === 'string' && v.trim().endsWith('%')) || n > 1;
  const s = pct ? n / 100 : n;
  return s <= 1 ? s : undefined;
}

function fromPrevious(previous: readonly StepSummary[], s: Signals): void {
  for (const p of previous) {
    if (p.agentId !== 'observe-ai' || !p.data || typeof p.data !== 'object') continue;
    const from = `step ${p.step} observe-ai ${p.action}`;
    const d = p.data as Partial<AnalyzeData & AlertsData>;
    if (Array.isArray(d.anomalies)) {
      s.anomalies.push(...(d.anomalies as Anomaly[]).map((a) => ({ ...a, from })));
      s.sources.push(from);
      if (d.examined) s.examined.push(`${from}: ${d.examined.series} series, ${d.examined.points} points, ${d.examined.logLines} log lines, ${d.anomalies.length} anomalies`);
    }
    if (Array.isArray(d.rules)) {
      for (const r of d.rules) for (const e of r.episodes) s.alerts.push({ rule: e.rule, severity: e.severity, series: e.series, state: e.state, since: e.since, firedAt: e.firedAt, until: e.until, from });
      s.sources.push(from);
      s.examined.push(`${from}: ${d.rules.length} rule(s), ${d.firing ?? 0} firing, ${d.resolved ?? 0} resolved`);
    }
  }
}

interface ErrorKey { count: number; file: string; line: number; t: number | null; sample: string }

/** Reads the log files through observe-ai's line parsers, keeping per-minute requests and the error records. */
export function readLogFacts(ws: WorkspaceFiles, files: readonly string[]): { facts: LogFacts; minutes: RequestMinutes } | { field: string; message: string } {
  const minutes = new RequestMinutes();
  const facts: LogFacts = { files: [], requests: 0, errors: 0, errorRecords: 0, errorRate: null, peak: null, first: null, last: null, topErrors: [], lastError: null };
  let lastBad: { t: number; file: string; line: number } | undefined;
  const messages = new Map<string, ErrorKey>();
  let lo = Infinity; let hi = -Infinity;
  const onRecord = (r: LogRecord) => {
    minutes.add(r);
    if (r.t !== null) { if (r.t < lo) lo = r.t; if (r.t > hi) hi = r.t; }
    const bad = r.level === 'error' || (r.status !== undefined && r.status >= 500);
    if (r.level === 'error') facts.errorRecords++;
    if (!bad) return;
    if (r.t !== null && (!lastBad || r.t >= lastBad.t)) lastBad = { t: r.t, file: r.file, line: r.line };
    const text = (r.message ?? (r.status !== undefined ? `HTTP ${r.status}` : 'error')).slice(0, 200);
    // Numbers and ids vary between lines of the same error: folded so that the messages group.
    const msg = text.replace(/\b[0-9a-f]{8,}\b/gi, '<id>').replace(/\d+/g, '<n>');
    const k = messages.get(msg);
    if (k) { k.count++; if (r.t !== null && (k.t === null || r.t < k.t)) { k.t = r.t; k.file = r.file; k.line = r.line; k.sample = text; } } else if (messages.size < MAX_KEPT_ERRORS) messages.set(msg, { count: 1, file: r.file, line: r.line, t: r.t, sample: text });
  };
  for (const f of files) {
    const stream = new LogStream(f, onRecord);
    try {
      const r = readLines(ws, f, (line, n) => stream.push(line, n));
      if (!r.ok) return { field: 'logs', message: r.reason === 'not found' ? `input.logs: ${f} does not exist in the workspace` : `input.logs: ${f} is ${r.reason}; not read` };
    } catch (e) {
      if (e instanceof ObserveParseError) return { field: 'logs', message: e.message };
      throw e;
    }
    if (!stream.records && stream.skippedCount) return { field: 'logs', message: `${f}:${stream.skipped[0]!.line}: no line could be read (${stream.format})` };
    facts.files.push({ file: f, format: stream.format, lines: stream.lines, records: stream.records, skipped: stream.skippedCount });
  }
  facts.requests = minutes.requests;
  let worst: LogFacts['peak'] = null;
  const keys = [...minutes.minutes.keys()].sort((a, b) => a - b);
  for (const [, m] of minutes.minutes) facts.errors += m.errors;
  for (const k of keys) {
    let req = 0; let err = 0; let first: { file: string; line: number } | undefined;
    for (let j = k; j < k + ERROR_WINDOW_MIN; j++) {
      const m = minutes.minutes.get(j);
      if (!m) continue;
      req += m.total; err += m.errors;
      if (m.errors && !first) first = { file: m.file, line: m.line };
    }
    if (req < MIN_WINDOW_REQUESTS || err < MIN_WINDOW_ERRORS) continue;
    const rate = err / req;
    if (!worst || rate > worst.rate) worst = { start: iso(k * 60_000)!, end: iso((k + ERROR_WINDOW_MIN) * 60_000)!, requests: req, errors: err, rate: Math.round(rate * 10000) / 10000, file: first!.file, line: first!.line };
  }
  facts.peak = worst;
  facts.errorRate = facts.requests ? Math.round((facts.errors / facts.requests) * 10000) / 10000 : null;
  facts.first = Number.isFinite(lo) ? iso(lo) : null;
  facts.last = Number.isFinite(hi) ? iso(hi) : null;
  facts.topErrors = [...messages.entries()].sort((a, b) => b[1].count - a[1].count).slice(0, 5).map(([, k]) => ({ message: k.sample, count: k.count, file: k.file, line: k.line, time: iso(k.t) }));
  facts.lastError = lastBad ? { time: iso(lastBad.t)!, file: lastBad.file, line: lastBad.line } : null;
  return { facts, minutes };
}

function logFiles(ws: WorkspaceFiles, raw: unknown): string[] | { field: string; message: string } {
  const list = typeof raw === 'string' && raw.trim() ? [raw.trim()] : Array.isArray(raw) && raw.length && raw.every((x) => typeof x === 'string') ? raw as string[] : undefined;
  if (!list) return { field: 'logs', message: 'input.logs must be a workspace-relative file or folder (or a list of them)' };
  const out: string[] = [];
  for (const g of list) {
    const r = ws.resolve(g);
    if (!r.ok) return { field: 'logs', message: r.reason === 'not found' ? `input.logs: ${g} does not exist in the workspace` : `input.logs: ${g} is ${r.reason}; not read` };
    if (ws.isFile(g)) out.push(r.rel || g);
    else out.push(...walkFiles(r.real, { limit: 200 }).sort().map((f) => `${r.rel ? `${r.rel}/` : ''}${f}`));
  }
  return out.length ? out : { field: 'logs', message: 'input.logs holds no file' };
}

function eventsOf(raw: unknown): TimelineEvent[] | string {
  if (!Array.isArray(raw)) return 'input.events must be a list of {time, event, source?}';
  const out: TimelineEvent[] = [];
  for (let i = 0; i < raw.length; i++) {
    const e = raw[i] as Record<string, unknown> | null;
    const text = e && typeof e === 'object' ? e['event'] ?? e['description'] ?? e['what'] : undefined;
    if (typeof text !== 'string' || !text.trim()) return `input.events[${i}] needs an event (text)`;
    const t = e!['time'] ?? e!['at'] ?? e!['timestamp'];
    const ms = typeof t === 'string' || typeof t === 'number' ? Date.parse(typeof t === 'number' ? new Date(t < 1e11 ? t * 1000 : t).toISOString() : t) : NaN;
    if (t !== undefined && !Number.isFinite(ms)) return `input.events[${i}].time is not a readable time`;
    out.push({ time: Number.isFinite(ms) ? new Date(ms).toISOString() : null, event: text.trim(), source: typeof e!['source'] === 'string' ? e!['source'] as string : `input.events[${i}]`, kind: 'input' });
  }
  return out;
}

/**
 * The GET form of a direct action gives every input as a string: a list or an object in JSON text
 * (`events`, `routing`, `triage`) is read as JSON; anything else is left as given (and judged as such).
 */
export function jsonish(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!/^[[{]/.test(t)) return v;
  try { return JSON.parse(t); } catch { return v; }
}

/** Everything there is to triage; `nothing` when no source gave a signal. */
export function gatherSignals(workspace: string | undefined, input: Record<string, unknown>, previous: readonly StepSummary[]): Gathered {
  const s: Signals = { anomalies: [], alerts: [], errorRate: null, usersAffected: null, sloBurn: null, logs: null, events: [], examined: [], files: [], sources: [] };
  fromPrevious(previous, s);
  if (input['errorRate'] !== undefined) {
    const v = shareOf(input['errorRate']);
    if (v === undefined) return { ok: false, field: 'errorRate', message: 'input.errorRate must be a share (0.05) or a percent (5, "5%")' };
    s.errorRate = { value: v, from: 'input.errorRate' }; s.sources.push('input.errorRate');
  }
  if (input['usersAffected'] !== undefined) {
    const v = num(input['usersAffected']);
    if (v === undefined || v < 0 || !Number.isInteger(v)) return { ok: false, field: 'usersAffected', message: 'input.usersAffected must be a whole number of users' };
    const total = input['totalUsers'] === undefined ? undefined : num(input['totalUsers']);
    if (input['totalUsers'] !== undefined && !(total && total > 0)) return { ok: false, field: 'totalUsers', message: 'input.totalUsers must be a positive number' };
    s.usersAffected = { value: v, share: total ? Math.round((v / total) * 10000) / 10000 : null, from: 'input.usersAffected' }; s.sources.push('input.usersAffected');
  }
  if (input['sloBurn'] !== undefined) {
    const v = num(input['sloBurn']);
    if (v === undefined || v < 0) return { ok: false, field: 'sloBurn', message: 'input.sloBurn must be a burn-rate multiple (14.4 = the budget burning 14.4 times as fast as it accrues)' };
    s.sloBurn = { value: v, from: 'input.sloBurn' }; s.sources.push('input.sloBurn');
  }
  if (input['events'] !== undefined) {
    const e = eventsOf(jsonish(input['events']));
    if (typeof e === 'string') return { ok: false, field: 'events', message: e };
    s.events.push(...e); if (e.length) s.sources.push('input.events');
  }
  const ws = workspace && existsSync(workspace) ? new WorkspaceFiles(workspace) : undefined;
  if (input['logs'] !== undefined && input['logs'] !== null && input['logs'] !== '') {
    if (!ws) return { ok: false, field: 'logs', message: 'input.logs names a file but no workspace was given to read it from' };
    const files = logFiles(ws, input['logs']);
    if (!Array.isArray(files)) return { ok: false, ...files };
    const read = readLogFacts(ws, files);
    if ('field' in read) return { ok: false, ...read };
    const { facts, minutes } = read;
    s.logs = facts; s.files.push(...facts.files.map((f) => f.file)); s.sources.push('input.logs');
    // observe-ai's SLO burn over the same requests: its windows become anomalies like a previous step's.
    for (const a of sloBurn(minutes, DEFAULT_SLO).anomalies) s.anomalies.push({ ...a, from: 'input.logs (observe-ai SLO burn)' });
    s.examined.push(`input.logs: ${facts.files.map((f) => `${f.file} (${f.format}, ${f.lines} lines)`).join(', ')}; ${facts.requests} requests, ${facts.errors} 5xx, ${facts.errorRecords} error-level records`);
  }
  if (!s.sources.length && ws) {
    // Nothing given and no observe-ai step before: observe-ai's analysis of the workspace itself.
    const d = ingest(workspace!, {});
    if (d.problem) return { ok: false, field: d.problem.field, message: d.problem.message };
    if (d.files.length) {
      const a = analyzeData(d, DEFAULT_SLO);
      const from = 'observe-ai analysis of the workspace';
      s.anomalies.push(...a.anomalies.map((x) => ({ ...x, from })));
      s.files.push(...d.files.map((f) => f.file)); s.sources.push(from);
      s.examined.push(`${from}: ${d.files.map((f) => f.file).join(', ')}; ${a.examined.series} series, ${a.examined.points} points, ${a.examined.logLines} log lines (${a.examined.requests} requests)`);
    }
  }
  const looked = previous.find((p) => p.agentId === 'observe-ai' && p.data === null && /not applicable/.test(p.summary));
  if (!s.sources.length && looked) {
    return { ok: false, notApplicable: `nothing to triage: observe-ai (step ${looked.step}) found no data (${looked.summary.replace(/^.*?not applicable: /, '')}) and the request gives no signal` };
  }
  if (!s.sources.length) {
    return { ok: false, nothing: `nothing to triage: no signal in the request (errorRate, usersAffected, sloBurn, logs, events), no observe-ai step before this one, and no metrics or logs in the workspace (looked for ${OBSERVE_LOOKED_AT})` };
  }
  return { ok: true, signals: s };
}
