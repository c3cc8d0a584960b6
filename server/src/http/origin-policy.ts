/**
 * Who may talk to the API from where.
 *
 * Host (DNS-rebinding defence): the `Host` header must be a loopback name — `127.0.0.1`,
 * `localhost` or `[::1]`, without a port or with the port the request came in on — or an entry of
 * `defaults.server.allowed_hosts` (an entry with a port matches that port only; without one, any
 * port). Anything else is refused with 403 before routing.
 *
 * CORS: off unless the request's `Origin` is listed in `defaults.server.cors_origins`; then the
 * response carries `Access-Control-Allow-Origin: <that origin>` and `Vary: Origin`, and preflights
 * (`OPTIONS` with `Access-Control-Request-Method`) are answered.
 */

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export interface OriginPolicyConfig {
  allowedHosts?: readonly string[];
  corsOrigins?: readonly string[];
}

/** Response headers browsers may read on a CORS response. */
export const CORS_EXPOSED_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location, WWW-Authenticate, Idempotent-Replayed';
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Last-Event-ID, Idempotency-Key';
export const CORS_MAX_AGE_S = 600;

export class OriginPolicy {
  private readonly exactHosts = new Set<string>();
  private readonly anyPortHosts = new Set<string>();
  private readonly corsOrigins: ReadonlySet<string>;
  /** Allowed Host values per local port, built once per port (normally one). */
  private readonly byPort = new Map<number, ReadonlySet<string>>();

  constructor(config: OriginPolicyConfig = {}) {
    for (const raw of config.allowedHosts ?? []) {
      const h = raw.trim().toLowerCase();
      if (hasPort(h)) this.exactHosts.add(h);
      else this.anyPortHosts.add(h);
    }
    this.corsOrigins = new Set(config.corsOrigins ?? []);
  }

  /** Is this `Host` header acceptable on a connection to `localPort`? */
  allowsHost(host: string | undefined, localPort: number | undefined): boolean {
    if (!host) return false;
    const allowed = this.hostsFor(localPort ?? 0);
    if (allowed.has(host)) return true;
    const lower = host.toLowerCase();
    if (lower !== host && allowed.has(lower)) return true;
    return this.anyPortHosts.size > 0 && this.anyPortHosts.has(stripPort(lower));
  }

  /** The origin to echo in `Access-Control-Allow-Origin`, or null (no CORS headers at all). */
  corsOrigin(origin: string | undefined): string | null {
    return origin !== undefined && this.corsOrigins.has(origin) ? origin : null;
  }

  get corsEnabled(): boolean {
    return this.corsOrigins.size > 0;
  }

  private hostsFor(port: number): ReadonlySet<string> {
    let set = this.byPort.get(port);
    if (!set) {
      const s = new Set<string>(this.exactHosts);
      for (const name of LOOPBACK_NAMES) {
        s.add(name);
        if (port) s.add(`${name}:${port}`);
      }
      for (const name of this.anyPortHosts) s.add(name);
      set = s;
      if (this.byPort.size < 16) this.byPort.set(port, set);
    }
    return set;
  }
}

function hasPort(host: string): boolean {
  return host.startsWith('[') ? /\]:\d+$/.test(host) : host.includes(':');
}

function stripPort(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}
