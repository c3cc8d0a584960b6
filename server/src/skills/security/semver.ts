/**
 * A small semver 2.0 comparison (x.y.z, optional -prerelease, +build ignored) and OSV range
 * evaluation. No dependency on the `semver` package.
 */

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

const SEMVER_RE = /^\s*[v=]?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\s*$/;

/** Parses `1.2.3`, `v1.2.3-rc.1+build`; missing minor/patch are 0. Undefined when not a version. */
export function parseSemver(v: string): SemVer | undefined {
  const m = SEMVER_RE.exec(v);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2] ?? 0), patch: Number(m[3] ?? 0), prerelease: m[4] ? m[4].split('.') : [] };
}

function compareIdent(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) return Math.sign(Number(a) - Number(b));
  if (an) return -1; // numeric identifiers sort before alphanumeric ones
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1, 0 or 1 by semver precedence. Throws on an unparsable version. */
export function compareSemver(a: string | SemVer, b: string | SemVer): number {
  const x = typeof a === 'string' ? parseSemver(a) : a;
  const y = typeof b === 'string' ? parseSemver(b) : b;
  if (!x || !y) throw new Error(`not a semver version: ${String(x ? b : a)}`);
  for (const k of ['major', 'minor', 'patch'] as const) if (x[k] !== y[k]) return x[k] < y[k] ? -1 : 1;
  if (!x.prerelease.length || !y.prerelease.length) return x.prerelease.length === y.prerelease.length ? 0 : x.prerelease.length ? -1 : 1;
  for (let i = 0; i < Math.max(x.prerelease.length, y.prerelease.length); i++) {
    if (i >= x.prerelease.length) return -1;
    if (i >= y.prerelease.length) return 1;
    const c = compareIdent(x.prerelease[i]!, y.prerelease[i]!);
    if (c) return c;
  }
  return 0;
}

/** One OSV range event. */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

/** The event's version; `introduced: "0"` is the lowest possible version. */
function eventVersion(e: OsvEvent): string | undefined {
  return e.introduced ?? e.fixed ?? e.last_affected ?? e.limit;
}

/**
 * Whether `version` is affected by an OSV SEMVER range: events sorted by version; introduced turns
 * "affected" on at and above it, fixed turns it off at and above it, last_affected turns it off
 * strictly above it, limit caps everything at and above it. Returns the fixed version of the
 * interval that matched when affected. Unparsable versions are never affected.
 */
export function rangeAffects(version: string, events: readonly OsvEvent[]): { affected: boolean; fixed?: string } {
  const v = parseSemver(version);
  if (!v) return { affected: false };
  const parsed = events
    .map((e) => ({ e, ver: eventVersion(e) }))
    .filter((x): x is { e: OsvEvent; ver: string } => x.ver !== undefined && (x.ver === '0' || parseSemver(x.ver) !== undefined));
  const key = (ver: string): SemVer => (ver === '0' ? { major: 0, minor: 0, patch: 0, prerelease: ['0'] } : parseSemver(ver)!);
  parsed.sort((a, b) => (a.e.introduced === '0' ? -1 : b.e.introduced === '0' ? 1 : compareSemver(key(a.ver), key(b.ver))));
  let affected = false;
  let fixed: string | undefined;
  for (let i = 0; i < parsed.length; i++) {
    const { e, ver } = parsed[i]!;
    const c = e.introduced === '0' ? 1 : compareSemver(v, key(ver));
    if (e.limit !== undefined) {
      if (c >= 0) affected = false;
      continue;
    }
    if (e.introduced !== undefined) {
      if (c >= 0) {
        affected = true;
        // the first fixed event after this introduced bounds the interval
        fixed = parsed.slice(i + 1).find((x) => x.e.fixed !== undefined)?.e.fixed;
      }
    } else if (e.fixed !== undefined) {
      if (c >= 0) affected = false;
    } else if (e.last_affected !== undefined) {
      if (c > 0) affected = false;
    }
  }
  return affected ? { affected, ...(fixed ? { fixed } : {}) } : { affected: false };
}
