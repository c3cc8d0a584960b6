/**
 * IP address text to numbers, shared by the egress guard (webhook and callback URLs) and threat-ai's
 * network checks: one parser, so both agree on what an address is (`::ffff:10.0.0.1`, zones, brackets).
 */

/** Dotted-quad IPv4 to a 32-bit bigint; undefined when not exactly four octets 0..255. */
export function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

/** IPv6 (with `::`, an embedded IPv4 tail and an optional `%zone`) to a 128-bit bigint. */
export function parseIPv6(input: string): bigint | undefined {
  let s = input.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':') || /:::/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (i === items.length - 1 && it.includes('.')) {
        const v4 = parseIPv4(it);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(it)) return undefined;
        out.push(parseInt(it, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - tail.length;
    if (fill < 1) return undefined;
    all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  } else {
    if (head.length !== 8) return undefined;
    all = head;
  }
  let v = 0n;
  for (const g of all) v = (v << 16n) | BigInt(g);
  return v;
}
