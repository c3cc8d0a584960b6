/**
 * SSRF guard for the URLs Cadre posts to on someone's behalf (outbound webhooks, task callbacks):
 * refuses private, CGNAT, link-local, cloud-metadata, loopback, unspecified, multicast and reserved
 * addresses, and plain `http:`, unless the configuration allows them (webhooks.allow_private,
 * allow_loopback, allow_http; docs/configuration.md). Metadata, link-local, unspecified, multicast
 * and reserved addresses are never allowed.
 *
 * Checked twice: when the URL is registered (its literal host, or what its name resolves to now) and
 * when a connection is made, by the `lookup` of the connection itself: the address checked is the
 * address connected to, so a DNS answer that changes in between (rebinding) cannot slip through.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { classifyAddress, type AddressClass } from './address-class';

export interface EgressPolicy {
  /** 127/8, ::1 and `localhost` (an explicit development setting). */
  allowLoopback: boolean;
  /** 10/8, 172.16/12, 192.168/16, fc00::/7 and CGNAT 100.64/10. */
  allowPrivate: boolean;
  /** `http:` URLs (HTTPS is recommended). */
  allowHttp: boolean;
}

export const STRICT_EGRESS: EgressPolicy = Object.freeze({ allowLoopback: false, allowPrivate: false, allowHttp: false });

const NEVER: ReadonlySet<AddressClass> = new Set(['metadata', 'link-local', 'unspecified', 'multicast', 'reserved']);

/** Why an address may not be connected to under `policy`, or null when it may. */
export function addressRefusal(ip: string, policy: EgressPolicy): string | null {
  const cls = classifyAddress(ip);
  if (cls === null) return `${ip} is not an IP address`;
  if (cls === 'public') return null;
  if (cls === 'loopback') return policy.allowLoopback ? null : `${ip} is a loopback address (allowed only with webhooks.allow_loopback, a development setting)`;
  if (cls === 'private' || cls === 'cgnat') return policy.allowPrivate ? null : `${ip} is a ${cls === 'cgnat' ? 'carrier-grade NAT' : 'private'} address (allowed only with webhooks.allow_private)`;
  return NEVER.has(cls) ? `${ip} is a ${cls} address (never allowed)` : null;
}

function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** `[::1]` → `::1` (URL keeps the brackets of an IPv6 host). */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * What is wrong with `raw` as a destination, judged without DNS: not an absolute http(s) URL, http
 * not allowed, credentials in it, or a literal host (after URL normalisation: `2130706433`,
 * `0x7f.1` and `[::ffff:127.0.0.1]` are all 127.0.0.1) that the policy refuses. Null when fine.
 */
export function urlRefusal(raw: string, policy: EgressPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `scheme ${url.protocol.replace(/:$/, '')} is not allowed (https or, when allowed, http)`;
  if (url.protocol === 'http:' && !policy.allowHttp) return 'plain http is not allowed (use https, or set webhooks.allow_http)';
  if (url.username || url.password) return 'credentials in the URL are not allowed (the secret signs the deliveries)';
  const host = bare(url.hostname);
  if (isLocalhostName(host)) return policy.allowLoopback ? null : `${host} is a loopback name (allowed only with webhooks.allow_loopback, a development setting)`;
  if (classifyAddress(host) !== null) return addressRefusal(host, policy);
  return null;
}

type LookupAll = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;

const lookupAll: LookupAll = (hostname, options) =>
  new Promise((resolve, reject) => dnsLookup(hostname, options, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * `urlRefusal`, then the addresses the name resolves to now (registration time). A name that does
 * not resolve is not refused here (it may be set up later); the connect-time check still applies.
 */
export async function destinationRefusal(raw: string, policy: EgressPolicy, resolve: LookupAll = lookupAll): Promise<string | null> {
  const first = urlRefusal(raw, policy);
  if (first) return first;
  const host = bare(new URL(raw).hostname);
  if (classifyAddress(host) !== null || isLocalhostName(host)) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host, { all: true });
  } catch {
    return null;
  }
  for (const a of addresses) {
    const why = addressRefusal(a.address, policy);
    if (why) return `${host} resolves to ${why}`;
  }
  return null;
}

/** Raised by the guarded lookup; `code` lets the delivery log say it was the guard, not the network. */
export class EgressRefused extends Error {
  readonly code = 'ERR_EGRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefused';
  }
}

/**
 * A `lookup` for net/tls connections that drops the addresses `policy` refuses and fails when none
 * is left: the connection can only be made to an address that was checked.
 */
export function guardedLookup(policy: EgressPolicy, resolve: LookupAll = lookupAll): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    const all = (options as LookupAllOptions).all === true;
    resolve(hostname, { ...(options as object), all: true } as LookupAllOptions).then(
      (addresses) => {
        const allowed = isLocalhostName(hostname) && !policy.allowLoopback ? [] : addresses.filter((a) => addressRefusal(a.address, policy) === null);
        if (allowed.length === 0) {
          const why = addresses.map((a) => addressRefusal(a.address, policy)).find((w) => w !== null) ?? `${hostname} is a loopback name`;
          callback(new EgressRefused(`refused to connect to ${hostname}: ${why}`));
          return;
        }
        if (all) callback(null, allowed);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as LookupFunction;
}

export interface GuardedAgentOptions {
  /** Connections kept per origin (the dispatcher's concurrency per subscription is bounded above it). */
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/**
 * An undici dispatcher whose every connection resolves through `guardedLookup`. A URL with a literal
 * IP host never reaches a lookup: callers check it with `urlRefusal` before each request.
 */
export function guardedAgent(policy: EgressPolicy, opts: GuardedAgentOptions = {}): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy), timeout: opts.connectTimeoutMs ?? 10_000 },
    headersTimeout: opts.headersTimeoutMs ?? 10_000,
    bodyTimeout: opts.bodyTimeoutMs ?? 10_000,
    ...(opts.connections ? { connections: opts.connections } : {}),
  });
}
