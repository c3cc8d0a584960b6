/**
 * Metric parsers: Prometheus text exposition (0.0.4), OpenMetrics 1.0 text, JSON series and CSV. Pure
 * functions of (text, file name); every error names the file and the 1-based line.
 *
 * Prometheus text: `# HELP` / `# TYPE` / comments, samples `name{label="value",...} value [timestamp]`
 * with the timestamp in milliseconds. OpenMetrics: the same grammar with timestamps in seconds
 * (fractions allowed), `# UNIT`, exemplars after ` # ` (ignored), counters' `_total` samples, and a
 * mandatory last line `# EOF` (nothing may follow it). `_created` samples (a creation time, not a
 * measurement) are not series. NaN and ±Inf values are counted but not kept as points.
 *
 * JSON series, three shapes: `[{metric, labels?, points:[[ts, v], ...]}]`, `{series:[...same...]}`, and
 * the Prometheus HTTP API answer (`{data:{resultType:'matrix'|'vector', result:[{metric:{__name__,...},
 * values|value}]}}`). A point is `[ts, v]` or `{t|ts|time|timestamp, v|value}`; ts is ISO 8601 or
 * epoch seconds / milliseconds; v a number or a numeric string.
 *
 * CSV with a header: wide `timestamp,<metric>[,<metric>...]` (a column may be `name{k="v"}`) or long
 * `timestamp,metric,value[,labels]` where labels are `k=v` pairs separated by `;`. The time column is
 * named timestamp, time, ts or date; quoted fields (RFC 4180) are read; an empty cell is a missing value.
 */
import { LineCounter, parseDocument, isMap, isSeq, type Node as YamlNode } from 'yaml';
import { lineOfOffset, ObserveParseError, seriesKey, toMillis, type Parsed, type Point, type Series, type SeriesKind } from './model';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'untyped', 'unknown', 'info', 'stateset']);
const MONOTONIC_SUFFIX = /_(?:total|bucket|count|sum)$/;

/** Accumulates points into series keyed by name + labels, in the order first seen. */
class SeriesSet {
  private readonly map = new Map<string, Series>();
  constructor(private readonly file: string) {}
  add(name: string, labels: Record<string, string>, kind: SeriesKind, p: Point): Series {
    const key = seriesKey(name, labels);
    let s = this.map.get(key);
    if (!s) this.map.set(key, (s = { name, labels, kind, file: this.file, points: [] }));
    s.points.push(p);
    return s;
  }
  list(): Series[] {
    for (const s of this.map.values()) if (s.points.some((p) => p.t !== null)) s.points.sort((a, b) => (a.t ?? 0) - (b.t ?? 0));
    return [...this.map.values()];
  }
}

/** Parses `{k="v",...}` starting at `s[i] === '{'`; returns the labels and the index after `}`. */
export function parseLabels(s: string, i: number): { labels: Record<string, string>; end: number } | string {
  const labels: Record<string, string> = {};
  i++;
  for (;;) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === '}') return { labels, end: i + 1 };
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i, i + 256));
    if (!m) return 'a label name was expected';
    const key = m[0];
    i += key.length;
    while (s[i] === ' ') i++;
    if (s[i] !== '=') return `"=" was expected after the label ${key}`;
    i++;
    while (s[i] === ' ') i++;
    if (s[i] !== '"') return `the value of label ${key} must be quoted`;
    i++;
    let v = '';
    for (;;) {
      const c = s[i];
      if (c === undefined) return `the value of label ${key} is not closed`;
      if (c === '\\') {
        const n = s[i + 1];
        v += n === 'n' ? '\n' : n ?? '';
        i += 2;
        continue;
      }
      if (c === '"') { i++; break; }
      v += c;
      i++;
    }
    labels[key] = v;
    while (s[i] === ' ') i++;
    if (s[i] === ',') { i++; continue; }
    if (s[i] === '}') return { labels, end: i + 1 };
    return `"," or "}" was expected after label ${key}`;
  }
}

function parseValue(raw: string): number | undefined {
  if (/^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|0x[0-9a-fA-F]+)$/.test(raw)) return Number(raw);
  if (/^[+-]?Inf$/i.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^NaN$/i.test(raw)) return NaN;
  return undefined;
}

/** True when the text is OpenMetrics (ends with `# EOF`); Prometheus text otherwise. */
export function isOpenMetrics(text: string): boolean {
  return /(?:^|\n)# EOF[ \t]*(?:\r?\n)?\s*$/.test(text) || /(?:^|\n)# EOF[ \t]*\r?\n/.test(text);
}

/** Prometheus text exposition format or OpenMetrics (told apart by `# EOF`). */
export function parsePrometheus(text: string, file: string): Parsed<Series> {
  const openMetrics = isOpenMetrics(text);
  const types = new Map<string, string>();
  const out = new SeriesSet(file);
  const skipped: Parsed<Series>['skipped'] = [];
  let lines = 0;
  let eofAt = 0;
  let nonFinite = 0;
  const lineTexts = text.split('\n');
  const heads = new Map<string, { name: string; labels: Record<string, string>; end: number; series?: Series }>();
  for (let n = 0; n < lineTexts.length; n++) {
    const lineNo = n + 1;
    const line = lineTexts[n]!.replace(/\r$/, '');
    if (!line.trim()) continue;
    if (eofAt) throw new ObserveParseError(file, lineNo, `content after "# EOF" (line ${eofAt}): OpenMetrics ends at # EOF`);
    lines++;
    if (line.startsWith('#')) {
      const meta = /^#\s+(HELP|TYPE|UNIT)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (meta?.[1] === 'TYPE') {
        const t = (meta[3] ?? '').trim().toLowerCase();
        if (!TYPES.has(t)) throw new ObserveParseError(file, lineNo, `unknown metric type "${t.slice(0, 40)}" in # TYPE (counter, gauge, histogram, summary, untyped...)`);
        types.set(meta[2]!, t);
      } else if (/^#\s*EOF\s*$/.test(line)) eofAt = lineNo;
      continue;
    }
    // The same `name{labels}` text starts every sample of a series: its parse (and series) is looked up
    // by that text before parsing it again. The text up to the first "}" is a key only when the parse
    // ended exactly there (a "}" inside a quoted value makes it no key).
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    const headEnd = brace !== -1 && (space === -1 || brace < space) ? line.indexOf('}', brace) + 1 : space;
    const headText = headEnd > 0 ? line.slice(0, headEnd) : '';
    let head = headText ? heads.get(headText) : undefined;
    if (!head) {
      const name = NAME.exec(line)?.[0];
      if (!name) { skipped.push({ line: lineNo, reason: 'not a sample: a metric name was expected' }); continue; }
      let end = name.length;
      let labels: Record<string, string> = {};
      if (line[end] === '{') {
        const l = parseLabels(line, end);
        if (typeof l === 'string') { skipped.push({ line: lineNo, reason: l }); continue; }
        labels = l.labels;
        end = l.end;
      }
      head = { name, labels, end };
      if (end === headEnd) heads.set(headText, head);
    }
    const { name, labels } = head;
    const i = head.end;
    // Exemplars (OpenMetrics) follow " # ": not part of the sample.
    const rest = line.slice(i).split(' # ')[0]!.trim().split(/\s+/);
    if (!rest[0] || rest.length > 2) { skipped.push({ line: lineNo, reason: 'not a sample: expected `name{labels} value [timestamp]`' }); continue; }
    const v = parseValue(rest[0]);
    if (v === undefined) { skipped.push({ line: lineNo, reason: `not a number as the sample value of ${name}` }); continue; }
    let t: number | null = null;
    if (rest[1] !== undefined) {
      const ts = Number(rest[1]);
      if (!Number.isFinite(ts) || (!openMetrics && !/^-?\d+$/.test(rest[1]))) { skipped.push({ line: lineNo, reason: `not a timestamp after the value of ${name}${openMetrics ? '' : ' (Prometheus text: integer milliseconds)'}` }); continue; }
      t = openMetrics ? Math.round(ts * 1000) : ts;
    }
    if (name.endsWith('_created')) continue;
    if (!Number.isFinite(v)) { nonFinite++; continue; }
    const point = { t, v, line: lineNo };
    if (head.series) head.series.points.push(point);
    else head.series = out.add(name, labels, kindOf(name, types), point);
  }
  if (openMetrics && !eofAt) throw new ObserveParseError(file, lineTexts.length, 'OpenMetrics must end with "# EOF"');
  if (nonFinite) skipped.push({ line: 0, reason: `${nonFinite} NaN/Inf value(s) not kept as points` });
  return { format: openMetrics ? 'openmetrics' : 'prometheus', items: out.list(), lines, skipped };
}

/** The family's TYPE (a sample `x_bucket` belongs to the family `x`), else the name's suffix. */
function kindOf(name: string, types: ReadonlyMap<string, string>): SeriesKind {
  const family = types.get(name) !== undefined ? name : name.replace(/_(?:total|bucket|count|sum|created|info)$/, '');
  const t = types.get(family) ?? types.get(name);
  if (t === 'counter' || t === 'histogram' || t === 'summary') return t === 'counter' || MONOTONIC_SUFFIX.test(name) ? 'counter' : 'gauge';
  if (t === 'gauge' || t === 'gaugehistogram') return 'gauge';
  return MONOTONIC_SUFFIX.test(name) && name.endsWith('_total') ? 'counter' : 'unknown';
}

// ---------------------------------------------------------------- JSON

/** The line of a JSON path (['series', 3, 'points', 5]) in the text, found only when reporting an error. */
function jsonLine(text: string, pathParts: Array<string | number>): number {
  try {
    const lc = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lc });
    let node: unknown = doc.contents;
    let last = node;
    for (const p of pathParts) {
      if (isMap(node)) node = node.get(p, true);
      else if (isSeq(node)) node = node.items[p as number];
      else break;
      if (node) last = node;
    }
    const range = (last as YamlNode | undefined)?.range;
    return range ? lc.linePos(range[0]).line : 1;
  } catch { return 1; }
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

export function parseJsonSeries(text: string, file: string): Parsed<Series> {
  let doc: unknown;
  try { doc = JSON.parse(text); } catch (e) {
    const pos = /position (\d+)/.exec(e instanceof Error ? e.message : '')?.[1];
    throw new ObserveParseError(file, pos !== undefined ? lineOfOffset(text, Number(pos)) : 1, 'not valid JSON');
  }
  const fail = (p: Array<string | number>, why: string): never => { throw new ObserveParseError(file, jsonLine(text, p), why); };
  const out = new SeriesSet(file);
  let points = 0;
  const readPoint = (raw: unknown, at: Array<string | number>): Point => {
    let ts: unknown; let v: unknown;
    if (Array.isArray(raw) && raw.length === 2) [ts, v] = raw;
    else if (raw && typeof raw === 'object') {
      const o = raw as Record<string, unknown>;
      ts = o['t'] ?? o['ts'] ?? o['time'] ?? o['timestamp'];
      v = o['v'] ?? o['value'];
    } else fail(at, 'a point must be [timestamp, value] or {t, v}');
    const t = toMillis(ts);
    const val = num(v);
    if (t === undefined) fail(at, 'the point\'s timestamp is not ISO 8601 or epoch seconds/milliseconds');
    if (val === undefined) fail(at, 'the point\'s value is not a number');
    points++;
    return { t: t!, v: val! };
  };
  const labelsOf = (raw: unknown, at: Array<string | number>): Record<string, string> => {
    if (raw === undefined || raw === null) return {};
    if (typeof raw !== 'object' || Array.isArray(raw)) fail(at, 'labels must be an object of strings');
    return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  };
  const data = (doc as { data?: { resultType?: unknown; result?: unknown } } | null)?.data;
  if (data && typeof data === 'object' && Array.isArray(data.result)) {
    // The Prometheus HTTP API (query / query_range).
    data.result.forEach((r: unknown, i: number) => {
      const at = ['data', 'result', i];
      const o = r as { metric?: unknown; values?: unknown; value?: unknown };
      const labels = labelsOf(o?.metric, [...at, 'metric']);
      const name = labels['__name__'] ?? 'value';
      delete labels['__name__'];
      const raw = Array.isArray(o?.values) ? o.values : o?.value !== undefined ? [o.value] : fail(at, 'a result needs "values" or "value"');
      (raw as unknown[]).forEach((p, j) => { const pt = readPoint(p, [...at, 'values', j]); if (Number.isFinite(pt.v)) out.add(name, labels, kindOfName(name), pt); });
    });
    return { format: 'json-series', items: out.list(), lines: points, skipped: [] };
  }
  const list = Array.isArray(doc) ? doc : Array.isArray((doc as { series?: unknown } | null)?.series) ? (doc as { series: unknown[] }).series : fail([], 'JSON series must be [{metric, labels?, points}], {series: [...]} or a Prometheus API answer');
  const base: Array<string | number> = Array.isArray(doc) ? [] : ['series'];
  (list as unknown[]).forEach((s, i) => {
    const at = [...base, i];
    if (!s || typeof s !== 'object') fail(at, 'a series must be an object {metric, labels?, points}');
    const o = s as Record<string, unknown>;
    const name = typeof o['metric'] === 'string' ? o['metric'] : typeof o['name'] === 'string' ? o['name'] : fail(at, 'a series needs "metric" (its name)');
    if (!NAME.test(name)) fail([...at, 'metric'], 'the metric name must match [a-zA-Z_:][a-zA-Z0-9_:]*');
    if (!Array.isArray(o['points'])) fail(at, 'a series needs "points": [[timestamp, value], ...]');
    const labels = labelsOf(o['labels'], [...at, 'labels']);
    (o['points'] as unknown[]).forEach((p, j) => out.add(name, labels, kindOfName(name), readPoint(p, [...at, 'points', j])));
  });
  return { format: 'json-series', items: out.list(), lines: points, skipped: [] };
}

function kindOfName(name: string): SeriesKind {
  return name.endsWith('_total') ? 'counter' : 'unknown';
}

// ---------------------------------------------------------------- CSV

/** One CSV record (RFC 4180 quoting, on one line). */
export function splitCsv(line: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let cell = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        if (line[i] === '"') {
          if (line[i + 1] === '"') { cell += '"'; i += 2; continue; }
          i++;
          break;
        }
        cell += line[i++];
      }
      if (i < line.length && line[i] !== ',') return undefined;
    } else {
      const j = line.indexOf(',', i);
      cell = j === -1 ? line.slice(i) : line.slice(i, j);
      i = j === -1 ? line.length : j;
    }
    out.push(cell.trim());
    if (i >= line.length) return out;
    i++; // the comma
  }
}

const TIME_COLUMNS = new Set(['timestamp', 'time', 'ts', 'date', 'datetime']);

function columnSeries(col: string): { name: string; labels: Record<string, string> } | undefined {
  const name = NAME.exec(col)?.[0];
  if (!name) return undefined;
  if (name.length === col.length) return { name, labels: {} };
  if (col[name.length] !== '{') return undefined;
  const l = parseLabels(col, name.length);
  return typeof l === 'string' || l.end !== col.length ? undefined : { name, labels: l.labels };
}

function parseLabelCell(cell: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const part of cell.split(';')) {
    if (!part.trim()) continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    labels[part.slice(0, eq).trim()] = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return labels;
}

export function parseCsvSeries(text: string, file: string): Parsed<Series> {
  const rows = text.split('\n');
  let h = 0;
  while (h < rows.length && (!rows[h]!.trim() || rows[h]!.trim().startsWith('#'))) h++;
  if (h >= rows.length) throw new ObserveParseError(file, 1, 'an empty CSV file (a header row was expected)');
  const header = splitCsv(rows[h]!.replace(/\r$/, ''))?.map((c) => c.trim());
  const hdrLine = h + 1;
  if (!header) throw new ObserveParseError(file, hdrLine, 'the CSV header has an unclosed quote');
  const lower = header.map((c) => c.toLowerCase());
  const tcol = lower.findIndex((c) => TIME_COLUMNS.has(c));
  if (tcol === -1) throw new ObserveParseError(file, hdrLine, 'the CSV header needs a time column (timestamp, time, ts or date)');
  const long = lower.includes('metric') && lower.includes('value');
  const mcol = lower.indexOf('metric');
  const vcol = lower.indexOf('value');
  const lcol = lower.indexOf('labels');
  const wide = long ? [] : header.map((c, i) => ({ i, s: i === tcol ? undefined : columnSeries(c) }));
  if (!long) {
    const bad = wide.find((w) => w.i !== tcol && !w.s);
    if (bad) throw new ObserveParseError(file, hdrLine, `column ${bad.i + 1} of the header is not a metric name (wide CSV: timestamp,<metric>[,<metric>...]; long CSV: timestamp,metric,value[,labels])`);
    if (wide.length < 2) throw new ObserveParseError(file, hdrLine, 'the CSV header names no metric column');
  }
  const out = new SeriesSet(file);
  const skipped: Parsed<Series>['skipped'] = [];
  let lines = 0;
  for (let n = h + 1; n < rows.length; n++) {
    const raw = rows[n]!.replace(/\r$/, '');
    if (!raw.trim() || raw.trim().startsWith('#')) continue;
    lines++;
    const lineNo = n + 1;
    const cells = splitCsv(raw);
    if (!cells) { skipped.push({ line: lineNo, reason: 'an unclosed quote' }); continue; }
    if (cells.length !== header.length && !(long && lcol !== -1 && cells.length === header.length - 1)) { skipped.push({ line: lineNo, reason: `${cells.length} field(s), the header has ${header.length}` }); continue; }
    const t = toMillis(cells[tcol]);
    if (t === undefined) { skipped.push({ line: lineNo, reason: 'the time is not ISO 8601 or epoch seconds/milliseconds' }); continue; }
    if (long) {
      const name = cells[mcol]!;
      if (!NAME.test(name) || NAME.exec(name)![0] !== name) { skipped.push({ line: lineNo, reason: 'the metric is not a metric name' }); continue; }
      const v = num(cells[vcol]);
      if (v === undefined) { if (cells[vcol] !== '') skipped.push({ line: lineNo, reason: 'the value is not a number' }); continue; }
      const labels = lcol !== -1 && cells[lcol] ? parseLabelCell(cells[lcol]!) : {};
      if (!labels) { skipped.push({ line: lineNo, reason: 'labels must be k=v pairs separated by ";"' }); continue; }
      out.add(name, labels, kindOfName(name), { t, v, line: lineNo });
    } else {
      for (const w of wide) {
        if (!w.s) continue;
        const cell = cells[w.i]!;
        if (cell === '') continue;
        const v = num(cell);
        if (v === undefined) { skipped.push({ line: lineNo, reason: `column ${header[w.i]} is not a number` }); continue; }
        out.add(w.s.name, w.s.labels, kindOfName(w.s.name), { t, v, line: lineNo });
      }
    }
  }
  return { format: 'csv', items: out.list(), lines, skipped };
}

/** The format of a metrics file, from its name, then from its first meaningful line; undefined when none fits. */
export function sniffMetricsFormat(file: string, text: string): 'prometheus' | 'json-series' | 'csv' | undefined {
  const lower = file.toLowerCase();
  if (/\.(?:prom|om|openmetrics|metrics)$/.test(lower)) return 'prometheus';
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json-series';
  const first = text.split('\n').map((l) => l.trim()).find((l) => l !== '');
  if (!first) return undefined;
  if (first.startsWith('{') || first.startsWith('[')) return 'json-series';
  if (/^#\s+(?:HELP|TYPE|UNIT)\s/.test(first) || /^[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?\s+\S+(?:\s+\S+)?$/.test(first)) return 'prometheus';
  if (/^"?(?:timestamp|time|ts|date|datetime)"?\s*,/i.test(first)) return 'csv';
  return undefined;
}

export function parseMetrics(file: string, text: string): Parsed<Series> {
  const f = sniffMetricsFormat(file, text);
  if (f === 'prometheus') return parsePrometheus(text, file);
  if (f === 'json-series') return parseJsonSeries(text, file);
  if (f === 'csv') return parseCsvSeries(text, file);
  const idx = text.split('\n').findIndex((l) => l.trim() !== '');
  throw new ObserveParseError(file, idx === -1 ? 1 : idx + 1, 'unknown metrics format (Prometheus text / OpenMetrics, JSON series or CSV with a header were expected)');
}
