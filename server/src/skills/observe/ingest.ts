/**
 * Where observe-ai's data comes from, all through WorkspaceFiles (confined to the workspace: a path
 * outside it, or a symlink leading out, is refused by name and never read):
 *
 *  - `input.metrics` / `input.logs`: a workspace-relative (or absolute, inside) file or folder, or a list.
 *  - else the conventional places: `metrics/` and `logs/` at the workspace root, `*.prom` and `*.log`
 *    anywhere (dependency and build folders skipped).
 *
 * A given file, and any file under `metrics/` or `logs/`, that cannot be read in a known format stops the
 * step (needs input, naming file and line); a `*.prom` or `*.log` found elsewhere by its name in an
 * unknown format is only noted, so one npm-debug.log or test fixture does not block an analysis.
 *
 * A URL in `input.metrics` / `input.logs` is fetched only when its prefix is listed in the install's
 * `observe.urls` (handed in by the engine as `input.settings.urls`) and ACMF allows the step's
 * `http_request`: Research only notes it (`pending`), Generate fetches it and `ingestText` reads the body
 * with the same parsers as a file. Any other URL needs input, naming the setting that would allow it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { walkFiles, WorkspaceFiles, type Refused } from '../workspace/files';
import { ErrorMinutes, RequestMinutes } from './detect';
import { LogStream } from './logs-parse';
import { parseMetrics } from './metrics-parse';
import { ObserveParseError, seriesKey, type LogRecord, type Series, type SkippedLine } from './model';

export const LOOKED_AT = 'input.metrics, input.logs, metrics/, logs/, *.prom, *.log';
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.next', '.cache', 'vendor', 'target', '.venv', 'venv', '__pycache__', 'out', '.cadre']);
/** Metric files are read whole (a series needs all its points); log files are streamed, of any size. */
const MAX_METRICS_BYTES = 256 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
/** A longer log line is cut there (and the rest of it dropped): one runaway line cannot exhaust memory. */
const MAX_LINE_BYTES = 1024 * 1024;
const MAX_FILES = 200;
const METRIC_FILE = /(?:\.(?:prom|om|openmetrics|metrics|txt|json|csv)|(?:^|\/)[^./]+)$/i;
const LOG_FILE = /(?:\.(?:log|jsonl|ndjson|txt)(?:\.\d+)?|(?:^|\/)[^./]+)$/i;

export interface FileReport {
  file: string;
  kind: 'metrics' | 'logs';
  format: string;
  /** Records (samples / log lines) examined. */
  lines: number;
  /** Series or log records read. */
  records: number;
  skipped: SkippedLine[];
  skippedCount: number;
}

/** What the logs held, without their records: counts, the time range and the requests per minute. */
export interface LogSummary {
  records: number;
  first: number | null;
  last: number | null;
  requests: RequestMinutes;
  /** Error-level records of logs without an HTTP status (syslog, application logs), per minute. */
  errors: ErrorMinutes;
}

export interface Ingested {
  series: Series[];
  logs: LogSummary;
  files: FileReport[];
  /** Files found but not read as data (a stray *.log in an unknown format), with why. */
  ignored: string[];
  /** Paths refused (outside the workspace, protected): names only. */
  refused: string[];
  /** Where the data came from: 'input' or 'conventional places'. */
  origin: { metrics: string; logs: string };
  /** Set when the request must give something else: the field and the message naming file and line. */
  problem?: { field: 'metrics' | 'logs'; message: string };
  /** Allowed URLs to fetch in Generate (once ACMF allowed http_request). */
  pending: Array<{ field: 'metrics' | 'logs'; url: string }>;
}

/** The URL prefixes the install allows (`input.settings.urls`, from the engine; a request's own value is replaced). */
export function allowedUrls(input: Record<string, unknown>): string[] {
  const s = input['settings'];
  const urls = s && typeof s === 'object' ? (s as { urls?: unknown }).urls : undefined;
  return Array.isArray(urls) ? urls.filter((u): u is string => typeof u === 'string') : [];
}

/** `url` starts with an allowed prefix, compared as parsed URLs (same origin, path under the prefix's path). */
export function urlAllowed(url: string, prefixes: readonly string[]): boolean {
  let u: URL;
  try { u = new URL(url); } catch { return false; }
  if (u.username || u.password) return false;
  return prefixes.some((p) => {
    let q: URL;
    try { q = new URL(p); } catch { return false; }
    const base = q.pathname.endsWith('/') ? q.pathname : `${q.pathname}/`;
    return u.origin === q.origin && (u.pathname === q.pathname || u.pathname.startsWith(base) || q.pathname === '/');
  });
}

interface Candidate { rel: string; kind: 'metrics' | 'logs'; strict: boolean }

function givenList(v: unknown): string[] | undefined {
  if (typeof v === 'string' && v.trim()) return [v.trim()];
  if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string' && x.trim())) return (v as string[]).map((x) => x.trim());
  return undefined;
}

/** Files of a folder inside the workspace (workspace-relative), or the file itself. */
function expand(ws: WorkspaceFiles, rel: string, pattern: RegExp): string[] {
  const r = ws.resolve(rel);
  if (!r.ok) return [];
  // A folder outside the workspace that the configuration allows (security.read_paths) is named by its absolute path.
  const inside = r.rel !== '' || r.real === ws.root;
  if (ws.isFile(rel)) return [inside ? r.rel : r.real];
  const prefix = inside ? (r.rel ? `${r.rel}/` : '') : `${r.real}/`;
  return walkFiles(r.real, { skipDirs: SKIP_DIRS, limit: MAX_FILES }).filter((f) => pattern.test(f)).sort().map((f) => prefix + f);
}

/** `signal`: a cancelled step stops between files and between 4 MB chunks of a log (throws its reason). */
export function ingest(workspace: string, input: Record<string, unknown>, signal?: AbortSignal): Ingested {
  const ws = new WorkspaceFiles(workspace);
  const out: Ingested = { series: [], logs: { records: 0, first: null, last: null, requests: new RequestMinutes(), errors: new ErrorMinutes() }, files: [], ignored: [], refused: [], origin: { metrics: 'conventional places', logs: 'conventional places' }, pending: [] };
  const allowed = allowedUrls(input);
  const candidates: Candidate[] = [];
  for (const field of ['metrics', 'logs'] as const) {
    const raw = input[field];
    if (raw === undefined || raw === null || raw === '') continue;
    const given = givenList(raw);
    if (!given) { out.problem = { field, message: `input.${field} must be a workspace-relative file or folder (or a list of them)` }; return out; }
    out.origin[field] = `input.${field}`;
    for (const g of given) {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(g)) {
        if (!urlAllowed(g, allowed)) {
          out.problem = { field, message: `input.${field}: ${g} is a URL this install does not allow: list its prefix in observe.urls of $CADRE_HOME/config.yaml, or export the data to a file in the workspace and name it` };
          return out;
        }
        out.pending.push({ field, url: g });
        continue;
      }
      const r = ws.resolve(g);
      if (!r.ok) {
        out.problem = { field, message: r.reason === 'not found' ? `input.${field}: ${g} does not exist in the workspace` : `input.${field}: ${g} is ${r.reason}; not read` };
        out.refused.push(...ws.refusalLines());
        return out;
      }
      const files = expand(ws, g, /./); // a named folder: every file in it
      if (!files.length) { out.problem = { field, message: `input.${field}: ${g} holds no file` }; return out; }
      for (const f of files) candidates.push({ rel: f, kind: field, strict: true });
    }
  }
  const seen = new Set(candidates.map((c) => c.rel));
  const add = (c: Candidate) => { if (!seen.has(c.rel) && candidates.length < MAX_FILES) { seen.add(c.rel); candidates.push(c); } };
  if (out.origin.metrics !== 'input.metrics' || out.origin.logs !== 'input.logs') {
    const all = walkFiles(ws.root, { skipDirs: SKIP_DIRS, limit: 20000, onSkip: (rel, why) => { if (why === 'outside the workspace' || why.startsWith('protected')) out.refused.push(`${rel}: ${why}, not read`); } });
    if (out.origin.metrics !== 'input.metrics') {
      for (const f of all) if (f.startsWith('metrics/') && METRIC_FILE.test(f)) add({ rel: f, kind: 'metrics', strict: true });
      for (const f of all) if (/\.prom$/i.test(f)) add({ rel: f, kind: 'metrics', strict: false });
    }
    if (out.origin.logs !== 'input.logs') {
      for (const f of all) if (f.startsWith('logs/') && LOG_FILE.test(f)) add({ rel: f, kind: 'logs', strict: true });
      for (const f of all) if (/\.log$/i.test(f)) add({ rel: f, kind: 'logs', strict: false });
    }
  }
  const byKey = new Map<string, Series>();
  const onRecord = logRecorder(out.logs);
  for (const c of candidates) {
    signal?.throwIfAborted();
    try {
      if (c.kind === 'metrics') {
        const r = ws.readText(c.rel, MAX_METRICS_BYTES);
        if (!r.ok) {
          if (c.strict) { out.problem = { field: c.kind, message: `${c.rel}: ${r.reason}; not read` }; out.refused.push(...ws.refusalLines()); return out; }
          out.ignored.push(`${c.rel}: ${r.reason}`);
          continue;
        }
        readMetrics(out, byKey, r.rel, r.text);
      } else {
        // Records go to the aggregate only once the file is known to be readable: a file that fails
        // at its first line has handed nothing over.
        const stream = new LogStream(c.rel, onRecord);
        const r = readLines(ws, c.rel, (line, n) => stream.push(line, n), { ...(signal ? { signal } : {}) });
        if (!r.ok) {
          if (c.strict) { out.problem = { field: c.kind, message: `${c.rel}: ${r.reason}; not read` }; out.refused.push(...ws.refusalLines()); return out; }
          out.ignored.push(`${c.rel}: ${r.reason}`);
          continue;
        }
        if (!stream.records && stream.skippedCount) throw new ObserveParseError(c.rel, stream.skipped[0]!.line, `no line could be read (${stream.format})`);
        out.files.push(report(r.rel, 'logs', stream.format, stream.lines, stream.records, stream.skipped, stream.skippedCount));
      }
    } catch (e) {
      if (!(e instanceof ObserveParseError)) throw e;
      if (c.strict) { out.problem = { field: c.kind, message: e.message }; return out; }
      out.ignored.push(`${e.message} (not read as ${c.kind})`);
    }
  }
  out.series = [...byKey.values()];
  out.refused.push(...ws.refusalLines());
  out.refused = [...new Set(out.refused)];
  return out;
}

/**
 * Reads a fetched body into `out` as if it were a file named by its URL (metrics merged by series,
 * logs counted line by line). Throws ObserveParseError naming the URL and line when nothing is readable.
 */
export function ingestText(out: Ingested, kind: 'metrics' | 'logs', name: string, text: string): void {
  if (kind === 'metrics') {
    const byKey = new Map(out.series.map((x) => [seriesKey(x.name, x.labels), x]));
    readMetrics(out, byKey, name, text);
    out.series = [...byKey.values()];
    return;
  }
  const stream = new LogStream(name, logRecorder(out.logs));
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => stream.push(line, i + 1));
  if (!stream.records && stream.skippedCount) throw new ObserveParseError(name, stream.skipped[0]!.line, `no line could be read (${stream.format})`);
  out.files.push(report(name, 'logs', stream.format, stream.lines, stream.records, stream.skipped, stream.skippedCount));
}

/** Parses one metrics text (a file or a fetched body) into `byKey`, merging points of a series seen before. */
function readMetrics(out: Ingested, byKey: Map<string, Series>, name: string, text: string): void {
  const p = parseMetrics(name, text);
  if (!p.items.length && p.skipped.some((s) => s.line > 0)) {
    const s = p.skipped.find((x) => x.line > 0)!;
    throw new ObserveParseError(name, s.line, `no sample could be read (${p.format}): ${s.reason}`);
  }
  for (const s of p.items) {
    const key = seriesKey(s.name, s.labels);
    const had = byKey.get(key);
    if (had) { had.points.push(...s.points); had.points.sort((a, b) => (a.t ?? 0) - (b.t ?? 0)); } else byKey.set(key, s);
  }
  out.files.push(report(name, 'metrics', p.format, p.lines, p.items.length, p.skipped, p.skipped.filter((s) => s.line > 0).length));
}

/** Counts a log record into the summary: time range, requests and errors per minute. */
function logRecorder(l: LogSummary): (rec: LogRecord) => void {
  return (rec) => {
    l.records++;
    if (rec.t !== null) {
      if (l.first === null || rec.t < l.first) l.first = rec.t;
      if (l.last === null || rec.t > l.last) l.last = rec.t;
    }
    l.requests.add(rec);
    l.errors.add(rec);
  };
}

function report(file: string, kind: 'metrics' | 'logs', format: string, lines: number, records: number, skipped: SkippedLine[], skippedCount: number): FileReport {
  return { file, kind, format, lines, records, skipped: skipped.slice(0, 10), skippedCount };
}

/**
 * Reads a file of the workspace line by line (1-based line numbers), in chunks: the path is resolved
 * by WorkspaceFiles (outside the workspace or protected: refused, nothing read) and recorded as read.
 */
export function readLines(ws: WorkspaceFiles, rel: string, onLine: (line: string, n: number) => void, opts: { chunkBytes?: number; maxLineBytes?: number; signal?: AbortSignal } = {}): { ok: true; rel: string } | Refused {
  const maxLine = opts.maxLineBytes ?? MAX_LINE_BYTES;
  const r = ws.resolve(rel);
  if (!r.ok) return r;
  let fd: number;
  try { fd = openSync(r.real, 'r'); } catch { return { ok: false, reason: 'not found', given: rel }; }
  try {
    if (!fstatSync(fd).isFile()) return { ok: false, reason: 'not a file', given: rel };
    ws.read.add(r.real);
    const buf = Buffer.alloc(opts.chunkBytes ?? CHUNK_BYTES);
    let carry: Buffer = Buffer.alloc(0);
    let dropping = false;
    let n = 0;
    for (let pos = 0; ;) {
      opts.signal?.throwIfAborted();
      const got = readSync(fd, buf, 0, buf.length, pos);
      if (got <= 0) break;
      pos += got;
      const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, got)]) : buf.subarray(0, got);
      let start = 0;
      for (let i = chunk.indexOf(10, start); i !== -1; i = chunk.indexOf(10, start)) {
        if (dropping) dropping = false;
        else onLine(chunk.toString('utf8', start, i), ++n);
        start = i + 1;
      }
      carry = Buffer.from(chunk.subarray(start)); // a copy: buf is reused by the next read
      if (carry.length > maxLine) {
        if (!dropping) onLine(carry.toString('utf8', 0, maxLine), ++n);
        dropping = true;
        carry = Buffer.alloc(0);
      }
    }
    if (carry.length && !dropping) onLine(carry.toString('utf8'), ++n);
    return { ok: true, rel: r.rel };
  } finally {
    closeSync(fd);
  }
}
