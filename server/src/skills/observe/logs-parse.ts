/**
 * Log parsers: JSON lines, logfmt, nginx/Apache access logs (common and combined) and syslog (RFC 5424
 * and RFC 3164). Each file is read in one format, chosen from its first meaningful line; a later line
 * that does not fit is skipped and named (file:line), and a file whose first line fits no format is an
 * ObserveParseError at that line.
 *
 * What a record keeps: time, HTTP status, duration (ms) and level. Field names read in JSON lines and
 * logfmt: time / timestamp / ts / @timestamp / date; status / status_code / statusCode / http_status /
 * http.status_code / response.status / res.statusCode; duration_ms / latency_ms / response_time_ms /
 * elapsed_ms / responseTime (ms), request_time (s), duration / latency / elapsed (ms, or a string with a
 * unit: "120ms", "1.2s", "350µs"); level / severity / lvl (pino's numbers too). Access logs: a trailing bare
 * number after the combined fields is nginx's `$request_time` (seconds), `rt=` / `request_time=` too.
 * RFC 3164 has no year: the current year is assumed, or the year before when that date lies in the future.
 */
import { ObserveParseError, toMillis, type LogFormat, type LogRecord, type Parsed, type SkippedLine } from './model';

type LineParser = (line: string, file: string, n: number) => LogRecord | undefined;

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

function levelOf(raw: unknown): LogRecord['level'] {
  if (typeof raw === 'number') return raw >= 50 ? 'error' : raw >= 40 ? 'warn' : raw >= 30 ? 'info' : 'debug'; // pino / bunyan
  if (typeof raw !== 'string') return undefined;
  const s = raw.toLowerCase();
  if (/^(?:err|error|fatal|crit|critical|alert|emerg|emergency|panic|severe)/.test(s)) return 'error';
  if (/^warn/.test(s)) return 'warn';
  if (/^(?:info|notice|information)/.test(s)) return 'info';
  if (/^(?:debug|trace|verbose)/.test(s)) return 'debug';
  return undefined;
}

/** A duration in ms: a number (in `unitMs` units) or a string with a unit. */
function durationMs(raw: unknown, unitMs: number): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? raw * unitMs : undefined;
  if (typeof raw !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ns|µs|us|ms|s|m)?\s*$/.exec(raw);
  if (!m) return undefined;
  const v = Number(m[1]);
  const u = m[2];
  return u === 'ns' ? v / 1e6 : u === 'µs' || u === 'us' ? v / 1000 : u === 'ms' ? v : u === 's' ? v * 1000 : u === 'm' ? v * 60000 : v * unitMs;
}

function statusOf(raw: unknown): number | undefined {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{3}$/.test(raw.trim()) ? Number(raw) : undefined;
  return n !== undefined && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

function get(o: Record<string, unknown>, dotted: string): unknown {
  if (dotted in o) return o[dotted];
  let cur: unknown = o;
  for (const k of dotted.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

const TIME_KEYS = ['time', 'timestamp', 'ts', '@timestamp', 'date', 'datetime', 't'];
const STATUS_KEYS = ['status', 'status_code', 'statusCode', 'http_status', 'http.status_code', 'http.status', 'response.status', 'res.statusCode', 'response.status_code'];
const MS_KEYS = ['duration_ms', 'latency_ms', 'response_time_ms', 'elapsed_ms', 'responseTime', 'response_time', 'took_ms'];
const LEVEL_KEYS = ['level', 'severity', 'lvl', 'log.level'];

/** A record from a flat or nested key/value object (JSON lines, logfmt). */
function fromFields(o: Record<string, unknown>, file: string, line: number): LogRecord {
  const rec: LogRecord = { t: null, file, line };
  for (const k of TIME_KEYS) { const t = toMillis(get(o, k)); if (t !== undefined) { rec.t = t; break; } }
  for (const k of STATUS_KEYS) { const s = statusOf(get(o, k)); if (s !== undefined) { rec.status = s; break; } }
  for (const k of MS_KEYS) { const d = durationMs(get(o, k), 1); if (d !== undefined) { rec.durationMs = d; break; } }
  if (rec.durationMs === undefined) {
    const rt = durationMs(get(o, 'request_time'), 1000);
    const d = rt ?? durationMs(get(o, 'duration'), 1) ?? durationMs(get(o, 'latency'), 1) ?? durationMs(get(o, 'elapsed'), 1);
    if (d !== undefined) rec.durationMs = d;
  }
  for (const k of LEVEL_KEYS) { const l = levelOf(get(o, k)); if (l) { rec.level = l; break; } }
  const msg = get(o, 'msg') ?? get(o, 'message');
  if (typeof msg === 'string') rec.message = msg.slice(0, 500);
  return rec;
}

export const parseJsonLine: LineParser = (line, file, n) => {
  const s = line.trim();
  if (!s.startsWith('{')) return undefined;
  let o: unknown;
  try { o = JSON.parse(s); } catch { return undefined; }
  return o && typeof o === 'object' && !Array.isArray(o) ? fromFields(o as Record<string, unknown>, file, n) : undefined;
};

/** logfmt: `key=value key="quoted value" flag`; at least two `key=value` pairs. */
export function parseLogfmtPairs(line: string): Record<string, string> | undefined {
  const o: Record<string, string> = {};
  let pairs = 0;
  let i = 0;
  const s = line.trim();
  while (i < s.length) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    const km = /^[^\s="]+/.exec(s.slice(i, i + 200));
    if (!km) return undefined;
    const key = km[0];
    i += key.length;
    if (s[i] !== '=') { o[key] = 'true'; if (s[i] !== undefined && s[i] !== ' ' && s[i] !== '\t') return undefined; continue; }
    i++;
    let v = '';
    if (s[i] === '"') {
      i++;
      for (;;) {
        if (i >= s.length) return undefined;
        if (s[i] === '\\') { v += s[i + 1] ?? ''; i += 2; continue; }
        if (s[i] === '"') { i++; break; }
        v += s[i++];
      }
      if (i < s.length && s[i] !== ' ' && s[i] !== '\t') return undefined;
    } else {
      const m = /^[^\s]*/.exec(s.slice(i))![0];
      if (m.includes('"')) return undefined;
      v = m;
      i += m.length;
    }
    o[key] = v;
    pairs++;
  }
  return pairs >= 2 ? o : undefined;
}

export const parseLogfmtLine: LineParser = (line, file, n) => {
  const o = parseLogfmtPairs(line);
  return o ? fromFields(o, file, n) : undefined;
};

// Unrolled ("normal* (special normal*)*"): far fewer backtracking steps per character than (?:a|b)*.
const QUOTED = '"([^"\\\\]*(?:\\\\.[^"\\\\]*)*)"';
const ACCESS = new RegExp(`^(\\S+) (\\S+) (\\S+) \\[([^\\]]+)\\] ${QUOTED} (\\d{3}) (\\d+|-)(?: ${QUOTED} ${QUOTED})?(.*)$`);

/** `10/Oct/2000:13:55:36 -0700` in ms. */
export function parseClfTime(s: string): number | undefined {
  const m = /^(\d{2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))? ([+-])(\d{2})(\d{2})$/.exec(s);
  const mon = m ? MONTHS[m[2]!.toLowerCase()] : undefined;
  if (!m || mon === undefined) return undefined;
  const utc = Date.UTC(Number(m[3]), mon, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]), m[7] ? Number(`0.${m[7]}`) * 1000 : 0);
  const off = (Number(m[9]) * 60 + Number(m[10])) * 60000 * (m[8] === '-' ? -1 : 1);
  return utc - off;
}

/** The last access-log time read: the lines of one second share it, so most lines skip the date parse. */
let lastClf = { text: '', ms: 0 as number | undefined };

export const parseAccessLine: LineParser = (line, file, n) => {
  const m = ACCESS.exec(line.trim());
  if (!m) return undefined;
  if (m[4] !== lastClf.text) lastClf = { text: m[4]!, ms: parseClfTime(m[4]!) };
  const t = lastClf.ms;
  if (t === undefined) return undefined;
  const rec: LogRecord = { t, file, line: n, status: Number(m[6]), message: m[5]!.slice(0, 300) };
  rec.level = rec.status! >= 500 ? 'error' : rec.status! >= 400 ? 'warn' : 'info';
  const tail = (m[10] ?? '').trim();
  const rt = /^(\d+(?:\.\d+)?)(?:\s|$)/.exec(tail)?.[1] ?? /\b(?:rt|request_time)=(\d+(?:\.\d+)?)/.exec(tail)?.[1];
  if (rt !== undefined) rec.durationMs = Number(rt) * 1000;
  return rec;
};

const SD = '(-|(?:\\[(?:[^\\]"\\\\]|\\\\.|"(?:[^"\\\\]|\\\\.)*")*\\])+)';
const RFC5424 = new RegExp(`^<(\\d{1,3})>1 (\\S+) (\\S+) (\\S+) (\\S+) (\\S+) ${SD}(?: (.*))?$`);
const SEVERITY: Array<LogRecord['level']> = ['error', 'error', 'error', 'error', 'warn', 'info', 'info', 'debug'];

export const parseSyslog5424: LineParser = (line, file, n) => {
  const m = RFC5424.exec(line.trim());
  if (!m || Number(m[1]) > 191) return undefined;
  const t = m[2] === '-' ? null : toMillis(m[2]);
  if (t === undefined) return undefined;
  const rec: LogRecord = { t, file, line: n, level: SEVERITY[Number(m[1]) & 7] };
  const msg = (m[8] ?? '').replace(/^\uFEFF/, '');
  if (msg) rec.message = msg.slice(0, 500);
  return rec;
};

const RFC3164 = /^(?:<(\d{1,3})>)?([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\S+) (.*)$/;

/** RFC 3164 (BSD syslog, also /var/log/syslog without the PRI). `now` fixes the assumed year. */
export function parseSyslog3164(line: string, file: string, n: number, now = Date.now()): LogRecord | undefined {
  const m = RFC3164.exec(line.trim());
  const mon = m ? MONTHS[m[2]!.toLowerCase()] : undefined;
  if (!m || mon === undefined || (m[1] !== undefined && Number(m[1]) > 191)) return undefined;
  const year = new Date(now).getUTCFullYear();
  let t = Date.UTC(year, mon, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (t > now + 86_400_000) t = Date.UTC(year - 1, mon, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const rec: LogRecord = { t, file, line: n, message: m[8]!.slice(0, 500) };
  rec.level = m[1] !== undefined ? SEVERITY[Number(m[1]) & 7] : levelOf(/\b(error|err|crit|fatal|warn(?:ing)?)\b/i.exec(m[8]!)?.[1]) ?? 'info';
  return rec;
}

const PARSERS: Array<[LogFormat, LineParser]> = [
  ['json-lines', parseJsonLine],
  ['syslog-5424', parseSyslog5424],
  ['syslog-3164', (l, f, n) => parseSyslog3164(l, f, n)],
  ['access-log', parseAccessLine],
  ['logfmt', parseLogfmtLine],
];

const UNKNOWN_FORMAT = 'unknown log format (JSON lines, logfmt, nginx/Apache access log or syslog RFC 5424/3164 were expected)';

/**
 * A log file read line by line (any size: nothing but the counters is kept here): the format is chosen
 * from the first meaningful line (an ObserveParseError there when none fits), each later line is parsed
 * in it and handed to `onRecord`, or counted as skipped (the first `keepSkipped` named by line).
 */
export class LogStream {
  format: LogFormat | 'empty' = 'empty';
  lines = 0;
  records = 0;
  skippedCount = 0;
  readonly skipped: SkippedLine[] = [];
  private parse: LineParser | undefined;

  constructor(readonly file: string, private readonly onRecord: (r: LogRecord) => void, private readonly keepSkipped = 10) {}

  push(raw: string, n: number): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.trim()) return;
    if (!this.parse) {
      const found = PARSERS.find(([, p]) => p(line, this.file, n) !== undefined);
      if (!found) throw new ObserveParseError(this.file, n, UNKNOWN_FORMAT);
      [this.format, this.parse] = found;
    }
    this.lines++;
    const r = this.parse(line, this.file, n);
    if (r) { this.records++; this.onRecord(r); return; }
    this.skippedCount++;
    if (this.skipped.length < this.keepSkipped) this.skipped.push({ line: n, reason: `not a ${this.format} line` });
  }
}

/** Parses a whole log text in the format its first meaningful line is in (every record kept). */
export function parseLogs(file: string, text: string): Parsed<LogRecord> {
  const items: LogRecord[] = [];
  const s = new LogStream(file, (r) => items.push(r), Infinity);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) s.push(lines[i]!, i + 1);
  return { format: s.format, items, lines: s.lines, skipped: s.skipped };
}
