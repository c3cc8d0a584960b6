/**
 * What observe-ai reads, in one shape whatever the format: metric series (name + labels, points in
 * time) and log records (time, HTTP status, duration, level). Parsers produce these; the detectors and
 * the alert rules only read them. A parse error always names its file and 1-based line.
 */

/** One sample: time in ms since the epoch (null when the format gave none), value, and the line it was read from. */
export interface Point { t: number | null; v: number; line?: number }

/**
 * `counter` series only go up (Prometheus counters, histogram/summary `_bucket` / `_count` / `_sum`,
 * names ending `_total`): the detectors judge their per-second rate, never the raw total.
 */
export type SeriesKind = 'counter' | 'gauge' | 'unknown';

export interface Series {
  name: string;
  labels: Record<string, string>;
  kind: SeriesKind;
  /** Workspace-relative file the series was read from. */
  file: string;
  points: Point[];
}

export interface LogRecord {
  /** ms since the epoch, null when the line carries no time. */
  t: number | null;
  file: string;
  line: number;
  status?: number;
  durationMs?: number;
  /** Normalised: `error` (and worse), `warn`, `info`, `debug`. */
  level?: 'error' | 'warn' | 'info' | 'debug';
  message?: string;
}

export type MetricsFormat = 'prometheus' | 'openmetrics' | 'json-series' | 'csv';
export type LogFormat = 'json-lines' | 'logfmt' | 'access-log' | 'syslog-5424' | 'syslog-3164';

/** A line a parser could not read, kept so the result can say what was skipped. */
export interface SkippedLine { line: number; reason: string }

export interface Parsed<T> {
  format: string;
  items: T[];
  /** Non-empty lines (records) examined. */
  lines: number;
  skipped: SkippedLine[];
}

/** A file that is not in the format it was read as (or in none): names the file and the line. */
export class ObserveParseError extends Error {
  override name = 'ObserveParseError';
  constructor(readonly file: string, readonly line: number, readonly reason: string) {
    super(`${file}:${line}: ${reason}`);
  }
}

/** `name{k="v",...}` with labels sorted: the identity of a series. */
export function seriesKey(name: string, labels: Record<string, string>): string {
  const ks = Object.keys(labels).sort();
  return ks.length ? `${name}{${ks.map((k) => `${k}="${labels[k]}"`).join(',')}}` : name;
}

/**
 * A timestamp as written (ISO 8601 / RFC 3339 string, or a number of seconds, milliseconds,
 * microseconds or nanoseconds since the epoch, told apart by magnitude) in ms; undefined when unreadable.
 */
export function toMillis(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? numericMillis(raw) : undefined;
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim();
  if (!s) return undefined;
  if (/^-?\d+(?:\.\d+)?$/.test(s)) return numericMillis(Number(s));
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : undefined;
}

function numericMillis(n: number): number {
  const a = Math.abs(n);
  if (a < 1e11) return Math.round(n * 1000); // seconds (until year 5138)
  if (a < 1e14) return Math.round(n); // milliseconds
  if (a < 1e17) return Math.round(n / 1000); // microseconds
  return Math.round(n / 1e6); // nanoseconds
}

export function iso(t: number | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}

/** 1-based line of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
