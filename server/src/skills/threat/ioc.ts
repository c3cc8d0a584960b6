/**
 * Indicators of compromise: loading (array, file or `.cadre/indicators.json`), typing, and a matcher
 * built once per hunt (Sets for exact tokens, sorted CIDR ranges, URLs grouped by host) so each log
 * line is tokenized once instead of running one regex per indicator.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { SEVERITIES, type Severity } from '../findings/finding';
import { RangeSet, domainSuffixes, normalizeDomain, normalizeUrl, parseCidr, parseIp, urlHost, urlPrefixMatch, type CidrRange } from './net';
import { confinedInputFile, parseJsonQuietly } from '../workspace/files';

export type IndicatorType = 'ip' | 'domain' | 'hash' | 'url';

export interface Indicator {
  type: IndicatorType;
  /** As given. */
  value: string;
  /** Normalized form used for matching (lower-case domain/hash, normalized URL, CIDR text). */
  key: string;
  severity: Severity;
  source?: string;
  description?: string;
}

export interface IndicatorLoad {
  indicators: Indicator[];
  /** Entries that could not be typed or parsed, with why. */
  rejected: Array<{ value: string; reason: string }>;
  /** Where they came from (input.indicators, a path, the workspace file). */
  origin?: string;
}

export interface IocHit {
  indicator: Indicator;
  /** The text on the line that matched (address, name, hash or URL). */
  matched: string;
  /** 0-based column of the match. */
  index: number;
}

const HASH_LENGTHS: Record<number, string> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };

/** Guesses the type of a bare indicator value. */
export function detectIndicatorType(value: string): IndicatorType | undefined {
  const v = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return 'url';
  if (parseCidr(v)) return 'ip';
  if (/^[0-9a-f]+$/i.test(v) && HASH_LENGTHS[v.length]) return 'hash';
  if (normalizeDomain(v.replace(/^\*\./, ''))) return 'domain';
  return undefined;
}

function asSeverity(v: unknown): Severity | undefined {
  return typeof v === 'string' && (SEVERITIES as readonly string[]).includes(v.toLowerCase()) ? (v.toLowerCase() as Severity) : undefined;
}

/** Builds typed indicators from raw entries: strings or `{ value|indicator, type?, severity?, source?, description? }`. */
export function parseIndicators(raw: unknown, origin?: string): IndicatorLoad {
  const list: unknown[] = Array.isArray(raw) ? raw
    : raw && typeof raw === 'object' && Array.isArray((raw as { indicators?: unknown }).indicators) ? (raw as { indicators: unknown[] }).indicators : [];
  const out: IndicatorLoad = { indicators: [], rejected: [], ...(origin ? { origin } : {}) };
  const seen = new Set<string>();
  for (const e of list) {
    const obj = typeof e === 'string' ? { value: e } : e && typeof e === 'object' ? (e as Record<string, unknown>) : undefined;
    const value = obj ? String(obj['value'] ?? obj['indicator'] ?? obj['ioc'] ?? '').trim() : '';
    if (!obj || !value) { out.rejected.push({ value: String(e), reason: 'no value' }); continue; }
    const given = typeof obj['type'] === 'string' ? obj['type'].toLowerCase() : undefined;
    const typeAlias: Record<string, IndicatorType> = { ip: 'ip', ipv4: 'ip', ipv6: 'ip', cidr: 'ip', 'ip-dst': 'ip', 'ip-src': 'ip', domain: 'domain', hostname: 'domain', fqdn: 'domain', hash: 'hash', md5: 'hash', sha1: 'hash', sha256: 'hash', url: 'url', uri: 'url' };
    const type = (given && typeAlias[given]) || detectIndicatorType(value);
    if (!type) { out.rejected.push({ value, reason: 'unrecognized indicator type' }); continue; }
    let key: string | undefined;
    if (type === 'ip') { const r = parseCidr(value); key = r ? `${r.family}:${r.start.toString(16)}/${r.prefix}` : undefined; }
    else if (type === 'domain') key = normalizeDomain(value.replace(/^\*\./, ''));
    else if (type === 'hash') key = /^[0-9a-f]+$/i.test(value) && HASH_LENGTHS[value.length] ? value.toLowerCase() : undefined;
    else key = normalizeUrl(value);
    if (!key) { out.rejected.push({ value, reason: `not a valid ${type}` }); continue; }
    if (seen.has(`${type}|${key}`)) continue;
    seen.add(`${type}|${key}`);
    const severity = asSeverity(obj['severity']) ?? 'high';
    const ind: Indicator = { type, value, key, severity };
    if (typeof obj['source'] === 'string') ind.source = obj['source'];
    if (typeof obj['description'] === 'string') ind.description = obj['description'];
    out.indicators.push(ind);
  }
  return out;
}

/**
 * Indicators for a hunt: input.indicators (an array, or a path to a JSON file, relative to the
 * workspace), else `<workspace>/.cadre/indicators.json`. Undefined when there are none anywhere.
 */
export function loadIndicators(input: unknown, workspace?: string): (IndicatorLoad & { pathRead?: string }) | undefined {
  if (Array.isArray(input) || (input && typeof input === 'object')) return parseIndicators(input, 'input.indicators');
  const given = typeof input === 'string' && input.trim() ? input : workspace ? path.join('.cadre', 'indicators.json') : undefined;
  if (!given || !workspace) return undefined;
  let file: string | undefined;
  // Inside the workspace only; a refusal names the path, never its content.
  try { file = confinedInputFile(workspace, given, 'input.indicators'); } catch (e) {
    return { indicators: [], rejected: [{ value: given, reason: (e as Error).message }], origin: given };
  }
  if (!file || !existsSync(file)) return undefined;
  let raw: unknown;
  try { raw = parseJsonQuietly(readFileSync(file, 'utf8'), 'input.indicators'); } catch (e) {
    return { indicators: [], rejected: [{ value: file, reason: (e as Error).message }], origin: file, pathRead: file };
  }
  return { ...parseIndicators(raw, file), pathRead: file };
}

const IPV4_RE = /(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.]*\d)/g;
const IPV6_RE = /(?<![0-9a-f:])(?:[0-9a-f]{0,4}:){2,7}(?:[0-9a-f]{1,4}|\d{1,3}(?:\.\d{1,3}){3})?(?![0-9a-f:])/gi;
const DOMAIN_RE = /(?<![a-z0-9_.-])(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9](?![a-z0-9_-])/gi;
const HASH_RE = /(?<![0-9a-z])(?:[0-9a-f]{64}|[0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-z])/gi;
const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

export class IocMatcher {
  private readonly exactIps = new Map<string, Indicator>();
  private readonly ranges: RangeSet<Indicator>;
  private readonly domains = new Map<string, Indicator>();
  private readonly hashes = new Map<string, Indicator>();
  private readonly urlsByHost = new Map<string, Indicator[]>();
  readonly count: number;

  constructor(indicators: readonly Indicator[]) {
    const ranges: Array<{ range: CidrRange; item: Indicator }> = [];
    for (const ind of indicators) {
      if (ind.type === 'ip') {
        const r = parseCidr(ind.value)!;
        if ((r.family === 4 && r.prefix === 32) || (r.family === 6 && r.prefix === 128)) this.exactIps.set(`${r.family}:${r.start}`, ind);
        else ranges.push({ range: r, item: ind });
      } else if (ind.type === 'domain') this.domains.set(ind.key, ind);
      else if (ind.type === 'hash') this.hashes.set(ind.key, ind);
      else {
        const host = urlHost(ind.key);
        const list = this.urlsByHost.get(host) ?? [];
        list.push(ind);
        this.urlsByHost.set(host, list);
      }
    }
    for (const list of this.urlsByHost.values()) list.sort((a, b) => b.key.length - a.key.length);
    this.ranges = new RangeSet(ranges);
    this.count = indicators.length;
  }

  /** Every indicator hit on one line (one per indicator and position; the most specific range wins). */
  match(line: string): IocHit[] {
    const hits: IocHit[] = [];
    const ipCheck = (text: string, index: number) => {
      const ip = parseIp(text);
      if (!ip) return;
      const exact = this.exactIps.get(`${ip.family}:${ip.value}`);
      if (exact) { hits.push({ indicator: exact, matched: text, index }); return; }
      const r = this.ranges.lookup(ip)[0];
      if (r) hits.push({ indicator: r, matched: text, index });
    };
    if (this.exactIps.size || this.ranges.size) {
      if (line.includes('.')) for (const m of line.matchAll(IPV4_RE)) ipCheck(m[0], m.index!);
      if (line.includes(':')) for (const m of line.matchAll(IPV6_RE)) if ((m[0].match(/:/g) ?? []).length >= 2) ipCheck(m[0], m.index!);
    }
    if (this.domains.size && line.includes('.')) {
      for (const m of line.matchAll(DOMAIN_RE)) {
        const d = m[0].toLowerCase();
        for (const suffix of domainSuffixes(d)) {
          const ind = this.domains.get(suffix);
          if (ind) { hits.push({ indicator: ind, matched: m[0], index: m.index! }); break; }
        }
      }
    }
    if (this.hashes.size) {
      for (const m of line.matchAll(HASH_RE)) {
        const ind = this.hashes.get(m[0].toLowerCase());
        if (ind) hits.push({ indicator: ind, matched: m[0], index: m.index! });
      }
    }
    if (this.urlsByHost.size && line.includes('://')) {
      for (const m of line.matchAll(URL_RE)) {
        const n = normalizeUrl(m[0]);
        if (!n) continue;
        const ind = this.urlsByHost.get(urlHost(n))?.find((i) => urlPrefixMatch(i.key, n));
        if (ind) hits.push({ indicator: ind, matched: m[0], index: m.index! });
      }
    }
    return hits;
  }
}
