/**
 * Where capacity-ai's series come from, all through WorkspaceFiles (a path outside the workspace is
 * refused by name and never read):
 *
 *  - `input.series`: `[[ts, v], ...]` (ts ISO 8601 or epoch seconds / ms) or `[v, ...]` (no times); as a
 *    string (the GET form's query): that JSON, or values separated by commas.
 *  - `input.metrics`: a workspace file or folder in a format observe-ai parses (Prometheus text,
 *    OpenMetrics, JSON series, CSV), read with observe-ai's parsers; `input.metric` picks series by name or
 *    `name{labels}` key.
 *  - else `metrics/` at the workspace root and `*.prom` files (dependency and build folders skipped).
 *
 * Counters are forecast on their per-second rate (observe-ai's `judgedPoints`), never on the raw total.
 */
import { judgedPoints } from '../observe/detect';
import { parseMetrics } from '../observe/metrics-parse';
import { ObserveParseError, seriesKey, toMillis, type Series } from '../observe/model';
import { walkFiles, WorkspaceFiles } from '../workspace/files';

export const LOOKED_AT = 'input.series, input.metrics, metrics/, *.prom';
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.next', '.cache', 'vendor', 'target', '.venv', 'venv', '__pycache__', 'out', '.cadre']);
const MAX_BYTES = 64 * 1024 * 1024;
export const MAX_SERIES = 20;

export interface LoadedSeries {
  key: string;
  /** Workspace-relative file, or `input.series`. */
  source: string;
  /** ms since the epoch per point, or null when the data gave no time. */
  times: Array<number | null>;
  values: number[];
  /** Source line of each point (files only). */
  lines: Array<number | undefined>;
  rate: boolean;
}

export type Loaded =
  | { ok: true; series: LoadedSeries[]; files: string[]; origin: string; notes: string[] }
  | { ok: false; field: string; message: string }
  | { ok: false; notApplicable: string };

function fromInputSeries(given: unknown): LoadedSeries | string {
  let raw = given;
  // The GET form of a direct action gives strings: JSON text, or bare values separated by commas.
  if (typeof given === 'string') {
    const t = given.trim();
    if (t.startsWith('[')) { try { raw = JSON.parse(t); } catch { return 'input.series is not valid JSON: give [[timestamp, value], ...] or values separated by commas'; } }
    else raw = t.split(',').map((x) => (x.trim() && Number.isFinite(Number(x)) ? Number(x) : x));
  }
  if (!Array.isArray(raw) || !raw.length) return 'input.series must be a non-empty array of [timestamp, value] pairs (or of numbers)';
  const times: Array<number | null> = []; const values: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const p = raw[i] as unknown;
    if (typeof p === 'number' && Number.isFinite(p)) { times.push(null); values.push(p); continue; }
    if (Array.isArray(p) && p.length === 2) {
      const t = toMillis(p[0]);
      const v = typeof p[1] === 'number' ? p[1] : typeof p[1] === 'string' && p[1].trim() ? Number(p[1]) : NaN;
      if (t !== undefined && Number.isFinite(v)) { times.push(t); values.push(v); continue; }
    }
    return `input.series[${i}] is not a [timestamp, value] pair with a readable time and a number`;
  }
  if (times.some((t) => t === null) && times.some((t) => t !== null)) return 'input.series mixes bare values and [timestamp, value] pairs';
  const order = values.map((_, i) => i);
  if (times[0] !== null) order.sort((a, b) => times[a]! - times[b]!);
  return { key: 'input.series', source: 'input.series', times: order.map((i) => times[i]!), values: order.map((i) => values[i]!), lines: order.map(() => undefined), rate: false };
}

function fromSeries(s: Series): LoadedSeries {
  const j = judgedPoints(s);
  const pts = j.points.filter((p) => Number.isFinite(p.v));
  return { key: j.rate ? `rate(${seriesKey(s.name, s.labels)})` : seriesKey(s.name, s.labels), source: s.file, times: pts.map((p) => p.t), values: pts.map((p) => p.v), lines: pts.map((p) => p.line), rate: j.rate };
}

export function loadSeries(workspace: string | undefined, input: Record<string, unknown>): Loaded {
  if (input['series'] !== undefined && input['series'] !== null) {
    const s = fromInputSeries(input['series']);
    return typeof s === 'string' ? { ok: false, field: 'series', message: s } : { ok: true, series: [s], files: [], origin: 'input.series', notes: [] };
  }
  if (!workspace) return { ok: false, field: 'series', message: 'no series given (input.series) and no workspace to read metrics from' };
  const ws = new WorkspaceFiles(workspace);
  const given = input['metrics'];
  const files: Array<{ rel: string; strict: boolean }> = [];
  let origin = 'conventional places';
  if (given !== undefined && given !== null && given !== '') {
    const list = typeof given === 'string' ? [given] : Array.isArray(given) && given.every((g) => typeof g === 'string') ? given as string[] : undefined;
    if (!list?.length) return { ok: false, field: 'metrics', message: 'input.metrics must be a workspace-relative file or folder (or a list of them)' };
    origin = 'input.metrics';
    for (const g of list) {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(g)) return { ok: false, field: 'metrics', message: `input.metrics: ${g} is a URL; the embedded skill does not fetch over the network: export the series to a file in the workspace and name it` };
      const r = ws.resolve(g);
      if (!r.ok) return { ok: false, field: 'metrics', message: r.reason === 'not found' ? `input.metrics: ${g} does not exist in the workspace` : `input.metrics: ${g} is ${r.reason}; not read` };
      if (ws.isFile(g)) files.push({ rel: g, strict: true });
      else for (const f of walkFiles(r.real, { skipDirs: SKIP_DIRS, limit: 200 }).sort()) files.push({ rel: `${r.rel ? `${r.rel}/` : ''}${f}`, strict: true });
    }
  } else {
    const all = walkFiles(ws.root, { skipDirs: SKIP_DIRS, limit: 20000 });
    for (const f of all) if (f.startsWith('metrics/')) files.push({ rel: f, strict: true });
    for (const f of all) if (/\.prom$/i.test(f) && !f.startsWith('metrics/')) files.push({ rel: f, strict: false });
  }
  if (!files.length) {
    if (origin === 'input.metrics') return { ok: false, field: 'metrics', message: 'input.metrics holds no file' };
    return { ok: false, notApplicable: `no metric series to forecast: looked for ${LOOKED_AT}` };
  }
  const series: Series[] = []; const read: string[] = []; const notes: string[] = [];
  for (const f of files) {
    const t = ws.readText(f.rel, MAX_BYTES);
    if (!t.ok) {
      if (f.strict) return { ok: false, field: 'metrics', message: `${f.rel}: ${t.reason}; not read` };
      notes.push(`${f.rel}: ${t.reason}, not read`); continue;
    }
    try {
      const p = parseMetrics(t.rel, t.text);
      if (!p.items.length && p.skipped.some((s) => s.line > 0)) {
        const s = p.skipped.find((x) => x.line > 0)!;
        throw new ObserveParseError(t.rel, s.line, `no sample could be read (${p.format}): ${s.reason}`);
      }
      series.push(...p.items); read.push(t.rel);
    } catch (e) {
      if (!(e instanceof ObserveParseError)) throw e;
      if (f.strict) return { ok: false, field: 'metrics', message: e.message };
      notes.push(`${e.message} (not read as metrics)`);
    }
  }
  let picked = series;
  const metric = input['metric'];
  if (typeof metric === 'string' && metric.trim()) {
    picked = series.filter((s) => s.name === metric || seriesKey(s.name, s.labels) === metric);
    if (!picked.length) return { ok: false, field: 'metric', message: `input.metric: no series ${metric} in ${read.join(', ')} (there: ${[...new Set(series.map((s) => s.name))].slice(0, 10).join(', ')})` };
  }
  // Histogram buckets are left to their _count and _sum, as observe-ai does.
  const loaded = picked.filter((s) => !s.name.endsWith('_bucket')).map(fromSeries).filter((s) => s.values.length > 0);
  if (!loaded.length) return { ok: false, notApplicable: `no metric series with values in ${read.join(', ')}` };
  if (loaded.length > MAX_SERIES) notes.push(`${loaded.length} series: the first ${MAX_SERIES} forecast (name one with input.metric)`);
  return { ok: true, series: loaded.slice(0, MAX_SERIES), files: read, origin, notes };
}

/** The series' step in ms (median spacing) and how irregular it is (share of spacings off the median by > 10%). */
export function spacing(times: ReadonlyArray<number | null>): { stepMs: number | null; irregular: number } {
  if (times.length < 2 || times[0] === null) return { stepMs: null, irregular: 0 };
  const d: number[] = [];
  for (let i = 1; i < times.length; i++) d.push(times[i]! - times[i - 1]!);
  const s = [...d].sort((a, b) => a - b);
  const med = s[s.length >> 1]!;
  if (!(med > 0)) return { stepMs: null, irregular: 1 };
  return { stepMs: med, irregular: d.filter((x) => Math.abs(x - med) > 0.1 * med).length / d.length };
}

/** `30d`, `12h`, `90m`, `2w`, `45s` in ms; a bare number is points (returned as {points}). */
export function parseSpan(raw: unknown): { ms: number } | { points: number } | undefined {
  if (typeof raw === 'number') return Number.isInteger(raw) && raw > 0 ? { points: raw } : undefined;
  if (typeof raw !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$/.exec(raw);
  if (!m) return undefined;
  const v = Number(m[1]);
  if (!m[2]) return Number.isInteger(v) && v > 0 ? { points: v } : undefined;
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return v > 0 ? { ms: v * unit } : undefined;
}

export function humanDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs >= 2 * 86_400_000) return `${Math.round((ms / 86_400_000) * 10) / 10} days`;
  if (abs >= 2 * 3_600_000) return `${Math.round((ms / 3_600_000) * 10) / 10} hours`;
  if (abs >= 2 * 60_000) return `${Math.round((ms / 60_000) * 10) / 10} minutes`;
  return `${Math.round(ms / 1000)} seconds`;
}
