/**
 * What kind of address an IP literal is, for the SSRF guard (outbound webhooks and task callbacks).
 * Pure: parses the textual forms WHATWG URL and dns.lookup produce (dotted IPv4; IPv6 with `::`,
 * an embedded dotted tail, a zone id), and looks through the IPv6 forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`), so
 * `[::ffff:7f00:1]` is loopback like 127.0.0.1. Decimal/octal/hex host forms (`2130706433`,
 * `0177.0.0.1`) are normalised by URL parsing before they reach here.
 */
import { parseIPv4, parseIPv6 } from './ip';

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

interface Range { bits: bigint; prefix: number; size: 32 | 128; cls: AddressClass }

const v4 = (text: string): bigint | null => parseIPv4(text) ?? null;
const v6 = (text: string): bigint | null => parseIPv6(text) ?? null;

function range(cidr: string, cls: AddressClass): Range {
  const [addr, len] = cidr.split('/') as [string, string];
  const four = v4(addr);
  if (four !== null) return { bits: four, prefix: Number(len), size: 32, cls };
  return { bits: v6(addr)!, prefix: Number(len), size: 128, cls };
}

/** Most specific first: the metadata addresses sit inside link-local and ULA. */
const V4_RANGES: readonly Range[] = [
  range('169.254.169.254/32', 'metadata'),
  range('0.0.0.0/32', 'unspecified'),
  range('0.0.0.0/8', 'reserved'),
  range('127.0.0.0/8', 'loopback'),
  range('10.0.0.0/8', 'private'),
  range('172.16.0.0/12', 'private'),
  range('192.168.0.0/16', 'private'),
  range('100.64.0.0/10', 'cgnat'),
  range('169.254.0.0/16', 'link-local'),
  range('192.0.0.0/24', 'reserved'),
  range('198.18.0.0/15', 'reserved'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

const V6_RANGES: readonly Range[] = [
  range('fd00:ec2::254/128', 'metadata'),
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('fc00::/7', 'private'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'reserved'),
  range('ff00::/8', 'multicast'),
  range('100::/64', 'reserved'),
];

function inRange(n: bigint, r: Range): boolean {
  const shift = BigInt(r.size - r.prefix);
  return n >> shift === r.bits >> shift;
}

function classifyV4(n: bigint): AddressClass {
  return V4_RANGES.find((r) => inRange(n, r))?.cls ?? 'public';
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64), or null. */
function embeddedV4(n: bigint): bigint | null {
  const high96 = n >> 32n;
  if (high96 === 0xffffn) return n & 0xffffffffn; // ::ffff:a.b.c.d
  if (high96 === 0n && n > 1n) return n & 0xffffffffn; // ::a.b.c.d (deprecated compatible form), not :: or ::1
  if (high96 === 0x0064ff9b0000000000000000n) return n & 0xffffffffn; // 64:ff9b::a.b.c.d
  return null;
}

/** The class of an IP literal; null when `ip` is not one. */
export function classifyAddress(ip: string): AddressClass | null {
  const four = v4(ip);
  if (four !== null) return classifyV4(four);
  const six = v6(ip);
  if (six === null) return null;
  const inner = embeddedV4(six);
  if (inner !== null) return classifyV4(inner);
  return V6_RANGES.find((r) => inRange(six, r))?.cls ?? 'public';
}

/** True for an IPv4 or IPv6 literal (brackets allowed). */
export function isIpLiteral(host: string): boolean {
  return v4(host) !== null || v6(host) !== null;
}
