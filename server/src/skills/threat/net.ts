/**
 * Address and name primitives for indicator matching: IPv4/IPv6 parsing to bigint, CIDR ranges
 * (with a sorted-range lookup), domain label-suffix matching and URL normalization.
 */
import { parseIPv4, parseIPv6 } from '../../net/ip';

export { parseIPv4, parseIPv6 };

export type IpFamily = 4 | 6;

export interface IpAddr {
  family: IpFamily;
  value: bigint;
}

export interface CidrRange {
  family: IpFamily;
  start: bigint;
  end: bigint;
  prefix: number;
}


const V4_MAPPED_PREFIX = 0xffffn << 32n;

/** Parses either family; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is returned as IPv4. */
export function parseIp(s: string): IpAddr | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = parseIPv6(s);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === 0xffffn) return { family: 4, value: v6 - V4_MAPPED_PREFIX };
  return { family: 6, value: v6 };
}

/** `a.b.c.d/n` or `v6/n` (a bare address is a /32 or /128); host bits are masked off. */
export function parseCidr(s: string): CidrRange | undefined {
  const slash = s.indexOf('/');
  const ip = parseIp(slash >= 0 ? s.slice(0, slash) : s);
  if (!ip) return undefined;
  const bits = ip.family === 4 ? 32 : 128;
  // A mapped v6 CIDR like ::ffff:10.0.0.0/104 is expressed on the v4 space.
  let prefix = bits;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) return undefined;
    prefix = Number(p);
    if (ip.family === 4 && !/^[\d.]+$/.test(s.slice(0, slash))) prefix -= 96;
    if (prefix < 0 || prefix > bits) return undefined;
  }
  const hostBits = BigInt(bits - prefix);
  const hostMask = (1n << hostBits) - 1n;
  const start = ip.value & ~hostMask & ((1n << BigInt(bits)) - 1n);
  return { family: ip.family, start, end: start | hostMask, prefix };
}

export function cidrContains(range: CidrRange, ip: IpAddr): boolean {
  return range.family === ip.family && ip.value >= range.start && ip.value <= range.end;
}

/**
 * Ranges sorted by start with a running maximum of `end`, so a lookup is a binary search plus a
 * short walk back over the ranges that can still contain the address (nested/overlapping ranges).
 */
export class RangeSet<T> {
  private readonly byFamily = new Map<IpFamily, { ranges: Array<{ range: CidrRange; item: T }>; maxEnd: bigint[] }>();

  constructor(entries: Array<{ range: CidrRange; item: T }>) {
    for (const fam of [4, 6] as const) {
      const ranges = entries.filter((e) => e.range.family === fam).sort((a, b) => (a.range.start < b.range.start ? -1 : a.range.start > b.range.start ? 1 : 0));
      const maxEnd: bigint[] = [];
      let m = -1n;
      for (const r of ranges) { if (r.range.end > m) m = r.range.end; maxEnd.push(m); }
      this.byFamily.set(fam, { ranges, maxEnd });
    }
  }

  get size(): number {
    let n = 0;
    for (const v of this.byFamily.values()) n += v.ranges.length;
    return n;
  }

  /** Every item whose range contains the address, most specific (longest prefix) first. */
  lookup(ip: IpAddr): T[] {
    const fam = this.byFamily.get(ip.family);
    if (!fam || !fam.ranges.length) return [];
    let lo = 0, hi = fam.ranges.length - 1, idx = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (fam.ranges[mid]!.range.start <= ip.value) { idx = mid; lo = mid + 1; } else hi = mid - 1;
    }
    const out: Array<{ range: CidrRange; item: T }> = [];
    for (let i = idx; i >= 0 && fam.maxEnd[i]! >= ip.value; i--) {
      const e = fam.ranges[i]!;
      if (e.range.end >= ip.value) out.push(e);
    }
    return out.sort((a, b) => b.range.prefix - a.range.prefix).map((e) => e.item);
  }
}

/** Lower-case, trailing dot dropped; undefined when not a plausible DNS name with an alphabetic TLD. */
export function normalizeDomain(s: string): string | undefined {
  const d = s.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]$/.test(d)) return undefined;
  return d;
}

/** The name and each parent made of whole labels: a.evil.com → [a.evil.com, evil.com, com]. */
export function domainSuffixes(domain: string): string[] {
  const labels = domain.split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** Scheme and host lower-cased, default port dropped, empty path as `/`, fragment removed. */
export function normalizeUrl(s: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\s]*)([^#\s]*)/i.exec(s.trim());
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  let host = m[2]!.toLowerCase().replace(/^[^@]*@/, '');
  if ((scheme === 'http' && host.endsWith(':80')) || (scheme === 'https' && host.endsWith(':443'))) host = host.replace(/:\d+$/, '');
  if (!host) return undefined;
  let rest = m[3] ?? '';
  if (!rest.startsWith('/')) rest = '/' + rest;
  return `${scheme}://${host}${rest}`;
}

/** Host part of a normalized URL. */
export function urlHost(normalized: string): string {
  return normalized.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/[/?#].*$/, '');
}

/**
 * Prefix match on normalized URLs, at a boundary: `http://x.com/a` matches `http://x.com/a`,
 * `/a/b`, `/a?q` but not `/ab` (an indicator ending in `/` or `=` matches anything after it).
 */
export function urlPrefixMatch(indicator: string, url: string): boolean {
  if (!url.startsWith(indicator)) return false;
  if (url.length === indicator.length) return true;
  const last = indicator[indicator.length - 1]!;
  if (last === '/' || last === '=' || last === '?' || last === '&') return true;
  return /[/?#&]/.test(url[indicator.length]!);
}
