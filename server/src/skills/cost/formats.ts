/**
 * The billing export formats cost-ai reads, each mapped to one line model (CostLine):
 *
 *  - AWS Cost and Usage Report, legacy CUR column names (`lineItem/UsageStartDate`, `lineItem/ProductCode`,
 *    `lineItem/UnblendedCost`, `lineItem/ResourceId`, `lineItem/UsageType`, `lineItem/UsageAmount`,
 *    `pricing/unit`, `pricing/term`, `lineItem/LineItemType`, `product/instanceType`, `resourceTags/user:*`)
 *    and CUR 2.0 (`line_item_usage_start_date`, ..., `resource_tags` as a JSON map).
 *  - The GCP Cloud Billing export as CSV (`service.description`, `sku.description`, `usage_start_time`,
 *    `cost`, `usage.amount`, `usage.unit`, `labels` as the export's JSON array of {key, value},
 *    `resource.name`, `credits`, `system_labels` for the machine type).
 *  - A generic CSV with the documented header `date,service,resource,cost,usage,unit,tags` (tags as
 *    `key=value;key=value`), and the optional columns `usage_type`, `pricing_term`, `instance_type`,
 *    `utilization` (average percent busy, 0..100) and `currency`.
 *
 * The format is told by the header alone. A row that cannot be read (a cost that is not a number, a date
 * that is not one) is an error naming its line and column: a bill is not guessed at.
 */
import { CsvError, parseCsv } from './csv';

export type ExportFormat = 'aws-cur' | 'aws-cur2' | 'gcp-billing' | 'generic';

export interface CostLine {
  file: string;
  line: number;
  /** Usage start, ms since the epoch (UTC). */
  t: number;
  service: string;
  /** The resource id (instance, volume, address); null when the export has none for the line. */
  resource: string | null;
  cost: number;
  /** Credits the line carries (negative), GCP `credits`; 0 elsewhere. */
  credits: number;
  usage: number | null;
  unit: string | null;
  usageType: string | null;
  /** AWS line item type / GCP cost type (Usage, Tax, Credit, RIFee, regular, tax...). */
  chargeType: string | null;
  /** OnDemand, Reserved, Spot, Commitment... (null when the export does not say). */
  pricingTerm: string | null;
  instanceType: string | null;
  tags: Record<string, string>;
  /** Average utilisation percent (0..100) when the export gives it (generic `utilization`). */
  utilization: number | null;
  currency: string | null;
}

export const GENERIC_HEADER = 'date,service,resource,cost,usage,unit,tags';
export const FORMATS_EXPECTED = `the AWS Cost and Usage Report (lineItem/UsageStartDate, lineItem/ProductCode, lineItem/UnblendedCost, ... or CUR 2.0 line_item_* columns), the GCP billing export (service.description, usage_start_time, cost, ...) or the generic header ${GENERIC_HEADER}`;

export class ExportError extends Error {
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

export function detectFormat(header: readonly string[]): ExportFormat | undefined {
  const h = new Set(header.map((c) => c.trim()));
  if (h.has('lineItem/UnblendedCost') && h.has('lineItem/UsageStartDate')) return 'aws-cur';
  if (h.has('line_item_unblended_cost') && h.has('line_item_usage_start_date')) return 'aws-cur2';
  if (h.has('cost') && h.has('usage_start_time') && (h.has('service.description') || h.has('service_description'))) return 'gcp-billing';
  const lower = new Set([...h].map((c) => c.toLowerCase()));
  if (lower.has('date') && lower.has('service') && lower.has('cost')) return 'generic';
  return undefined;
}

export interface ParsedExport {
  format: ExportFormat;
  lines: CostLine[];
  /** Records read (the header excluded). */
  records: number;
  /** Tag keys seen (the column names of CUR, label keys of GCP). */
  tagKeys: string[];
}

/** Parses the text of one export; throws ExportError (with the line) on anything it cannot read. */
export function parseExport(file: string, text: string): ParsedExport {
  let records;
  try { records = parseCsv(text); } catch (e) {
    if (e instanceof CsvError) throw new ExportError(e.line, `not valid CSV: ${e.message.replace(/^line \d+: /, '')}`);
    throw e;
  }
  const head = records[0];
  if (!head) throw new ExportError(1, 'empty file: no header');
  const header = head.fields.map((c) => c.trim());
  const format = detectFormat(header);
  if (!format) throw new ExportError(head.line, `not a billing export: the header is none of ${FORMATS_EXPECTED}`);
  const col = (name: string): number => header.indexOf(name);
  const colCi = (name: string): number => header.findIndex((c) => c.toLowerCase() === name);
  const mapper = format === 'aws-cur' ? awsCur(col, header) : format === 'aws-cur2' ? awsCur2(col) : format === 'gcp-billing' ? gcp(col) : generic(colCi);
  const lines: CostLine[] = [];
  const tagKeys = new Set<string>();
  for (const r of records.slice(1)) {
    if (r.fields.length !== header.length) throw new ExportError(r.line, `${r.fields.length} field(s) where the header has ${header.length}`);
    const l = mapper(r.fields, r.line, file);
    for (const k of Object.keys(l.tags)) tagKeys.add(k);
    lines.push(l);
  }
  return { format, lines, records: records.length - 1, tagKeys: [...tagKeys].sort() };
}

type Mapper = (f: string[], line: number, file: string) => CostLine;

function num(f: string[], i: number, line: number, name: string, required: boolean): number | null {
  if (i < 0) return null;
  const v = (f[i] ?? '').trim();
  if (v === '') {
    if (required) throw new ExportError(line, `column ${name} is empty`);
    return null;
  }
  const n = Number(v);
  if (!Number.isFinite(n)) throw new ExportError(line, `column ${name}: "${v.slice(0, 40)}" is not a number`);
  return n;
}

/** Usage times repeat on thousands of lines (one per day or hour): each distinct text is parsed once. */
const timeCache = new Map<string, number>();

function time(f: string[], i: number, line: number, name: string): number {
  const v = (f[i] ?? '').trim();
  const hit = timeCache.get(v);
  if (hit !== undefined) return hit;
  // GCP writes "2026-03-01 00:00:00 UTC"; AWS ISO 8601; generic a date or an ISO time.
  const iso = v.replace(/ UTC$/, 'Z').replace(/^(\d{4}-\d\d-\d\d) (\d)/, '$1T$2');
  const t = /^\d{4}-\d\d-\d\d(?:T[\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?$/.test(iso) ? Date.parse(/T/.test(iso) && !/(Z|[+-]\d\d:?\d\d)$/.test(iso) ? `${iso}Z` : iso) : NaN;
  if (!Number.isFinite(t)) throw new ExportError(line, `column ${name}: "${v.slice(0, 40)}" is not a date`);
  if (timeCache.size > 100_000) timeCache.clear();
  timeCache.set(v, t);
  return t;
}

const str = (f: string[], i: number): string | null => (i < 0 ? null : (f[i] ?? '').trim() || null);

function needCols(cols: Record<string, number>): void {
  const missing = Object.entries(cols).filter(([, i]) => i < 0).map(([n]) => n);
  if (missing.length) throw new ExportError(1, `the header lacks ${missing.join(', ')}`);
}

/** The instance size of an AWS usage type (`BoxUsage:m5.2xlarge`, `USE2-BoxUsage:t3.micro`). */
function instanceOfUsageType(u: string | null): string | null {
  const m = u ? /(?:BoxUsage|InstanceUsage|NodeUsage|SpotUsage|DedicatedUsage)[^:]*:((?:db\.|cache\.)?[a-z][a-z0-9-]*\.[a-z0-9]+)/.exec(u) : null;
  return m ? m[1]! : null;
}

function awsCur(col: (n: string) => number, header: string[]): Mapper {
  const c = {
    start: col('lineItem/UsageStartDate'), product: col('lineItem/ProductCode'), cost: col('lineItem/UnblendedCost'),
  };
  needCols({ 'lineItem/ProductCode': c.product });
  const resource = col('lineItem/ResourceId'); const usageType = col('lineItem/UsageType'); const amount = col('lineItem/UsageAmount');
  const unit = col('pricing/unit'); const term = col('pricing/term'); const type = col('lineItem/LineItemType');
  const itype = col('product/instanceType'); const currency = col('lineItem/CurrencyCode');
  const tagCols = header.map((h, i) => [h, i] as const).filter(([h]) => h.startsWith('resourceTags/'));
  return (f, line, file) => {
    const ut = str(f, usageType);
    const tags: Record<string, string> = {};
    for (const [h, i] of tagCols) { const v = str(f, i); if (v) tags[h.slice('resourceTags/'.length).replace(/^user:/, '')] = v; }
    return {
      file, line, t: time(f, c.start, line, 'lineItem/UsageStartDate'), service: str(f, c.product) ?? '(no product code)', resource: str(f, resource),
      cost: num(f, c.cost, line, 'lineItem/UnblendedCost', true)!, credits: 0, usage: num(f, amount, line, 'lineItem/UsageAmount', false),
      unit: str(f, unit), usageType: ut, chargeType: str(f, type), pricingTerm: str(f, term), instanceType: str(f, itype) ?? instanceOfUsageType(ut),
      tags, utilization: null, currency: str(f, currency),
    };
  };
}

function jsonOf(v: string | null): unknown {
  if (!v) return undefined;
  try { return JSON.parse(v); } catch { return undefined; }
}

function awsCur2(col: (n: string) => number): Mapper {
  const start = col('line_item_usage_start_date'); const product = col('line_item_product_code'); const cost = col('line_item_unblended_cost');
  needCols({ line_item_product_code: product });
  const resource = col('line_item_resource_id'); const usageType = col('line_item_usage_type'); const amount = col('line_item_usage_amount');
  const unit = col('pricing_unit'); const term = col('pricing_term'); const type = col('line_item_line_item_type');
  const itype = col('product_instance_type'); const currency = col('line_item_currency_code'); const rtags = col('resource_tags');
  return (f, line, file) => {
    const ut = str(f, usageType);
    const raw = str(f, rtags);
    const parsed = jsonOf(raw);
    if (raw && (parsed === undefined || typeof parsed !== 'object' || Array.isArray(parsed))) throw new ExportError(line, 'column resource_tags is not a JSON object');
    const tags: Record<string, string> = {};
    for (const [k, v] of Object.entries((parsed ?? {}) as Record<string, unknown>)) if (v !== null && v !== '') tags[k.replace(/^user_/, '')] = String(v);
    return {
      file, line, t: time(f, start, line, 'line_item_usage_start_date'), service: str(f, product) ?? '(no product code)', resource: str(f, resource),
      cost: num(f, cost, line, 'line_item_unblended_cost', true)!, credits: 0, usage: num(f, amount, line, 'line_item_usage_amount', false),
      unit: str(f, unit), usageType: ut, chargeType: str(f, type), pricingTerm: str(f, term), instanceType: str(f, itype) ?? instanceOfUsageType(ut),
      tags, utilization: null, currency: str(f, currency),
    };
  };
}

/** GCP `labels`: the export's JSON array of {key, value} (or a plain JSON object). */
function gcpLabels(raw: string | null, line: number, name: string): Record<string, string> {
  if (!raw) return {};
  const v = jsonOf(raw);
  const out: Record<string, string> = {};
  if (Array.isArray(v)) {
    for (const e of v) if (e && typeof e === 'object' && typeof (e as { key?: unknown }).key === 'string') out[(e as { key: string }).key] = String((e as { value?: unknown }).value ?? '');
    return out;
  }
  if (v && typeof v === 'object') { for (const [k, x] of Object.entries(v)) out[k] = String(x); return out; }
  throw new ExportError(line, `column ${name} is not the export's JSON list of {key, value}`);
}

function gcp(col: (n: string) => number): Mapper {
  const pick = (...names: string[]) => names.map(col).find((i) => i >= 0) ?? -1;
  const service = pick('service.description', 'service_description'); const sku = pick('sku.description', 'sku_description');
  const start = col('usage_start_time'); const cost = col('cost'); const amount = pick('usage.amount', 'usage_amount');
  const unit = pick('usage.unit', 'usage_unit'); const labels = col('labels'); const sys = pick('system_labels');
  const resource = pick('resource.global_name', 'resource_global_name', 'resource.name', 'resource_name');
  const credits = col('credits'); const type = pick('cost_type'); const currency = col('currency'); const project = pick('project.id', 'project_id');
  return (f, line, file) => {
    const skuText = str(f, sku);
    const system = gcpLabels(str(f, sys), line, 'system_labels');
    const tags = gcpLabels(str(f, labels), line, 'labels');
    let credit = 0;
    const rawCredits = str(f, credits);
    if (rawCredits) {
      const v = jsonOf(rawCredits);
      if (!Array.isArray(v)) throw new ExportError(line, 'column credits is not the export\'s JSON list of {name, amount}');
      for (const c of v) { const a = Number((c as { amount?: unknown })?.amount); if (Number.isFinite(a)) credit += a; }
    }
    return {
      file, line, t: time(f, start, line, 'usage_start_time'), service: str(f, service) ?? '(no service)', resource: str(f, resource),
      cost: num(f, cost, line, 'cost', true)!, credits: credit, usage: num(f, amount, line, 'usage.amount', false), unit: str(f, unit),
      usageType: skuText, chargeType: str(f, type), pricingTerm: skuText ? (/^Commitment/i.test(skuText) ? 'Commitment' : /Preemptible|Spot/i.test(skuText) ? 'Spot' : 'OnDemand') : null,
      instanceType: system['compute.googleapis.com/machine_spec'] ?? null, tags: { ...(str(f, project) ? { project: str(f, project)! } : {}), ...tags },
      utilization: null, currency: str(f, currency),
    };
  };
}

/** Generic tags: `key=value;key=value` (`key:value` also accepted). */
function genericTags(raw: string | null, line: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const part of raw.split(/[;|]/)) {
    const p = part.trim();
    if (!p) continue;
    const m = /^([^=:]+)[=:](.*)$/.exec(p);
    if (!m) throw new ExportError(line, `column tags: "${p.slice(0, 40)}" is not key=value (tags are key=value;key=value)`);
    out[m[1]!.trim()] = m[2]!.trim();
  }
  return out;
}

function generic(col: (n: string) => number): Mapper {
  const c = {
    date: col('date'), service: col('service'), resource: col('resource'), cost: col('cost'), usage: col('usage'), unit: col('unit'), tags: col('tags'),
    usageType: col('usage_type'), term: col('pricing_term'), itype: col('instance_type'), util: col('utilization'), currency: col('currency'),
  };
  return (f, line, file) => {
    const util = num(f, c.util, line, 'utilization', false);
    if (util !== null && (util < 0 || util > 100)) throw new ExportError(line, `column utilization: ${util} is not a percent (0..100)`);
    const ut = str(f, c.usageType);
    return {
      file, line, t: time(f, c.date, line, 'date'), service: str(f, c.service) ?? '(no service)', resource: str(f, c.resource),
      cost: num(f, c.cost, line, 'cost', true)!, credits: 0, usage: num(f, c.usage, line, 'usage', false), unit: str(f, c.unit),
      usageType: ut, chargeType: null, pricingTerm: str(f, c.term), instanceType: str(f, c.itype) ?? instanceOfUsageType(ut),
      tags: genericTags(str(f, c.tags), line), utilization: util, currency: str(f, c.currency),
    };
  };
}
