/**
 * A small semver 2.0 comparison (x.y.z, optional -prerelease, +build ignored), OSV range
 * evaluation and npm range matching (`vulnerable_versions` of the registry's bulk advisories).
 * No dependency on the `semver` package.
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

// ---------------------------------------------------------------------------------------------
// npm ranges (node-semver syntax), evaluated like npm audit does: loose, prereleases included.

type Op = '<' | '<=' | '>' | '>=' | '=';
interface Comparator {
  op: Op;
  v: SemVer;
}

/** A partial version: `1`, `1.2`, `1.x`, `1.2.*`, `*`, with optional -prerelease. */
interface Partial {
  major?: number;
  minor?: number;
  patch?: number;
  prerelease: string[];
}

const PARTIAL_RE = /^[v=]*(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function parsePartial(s: string): Partial | undefined {
  if (s === '' || s === '*' || s === 'x' || s === 'X') return { prerelease: [] };
  const m = PARTIAL_RE.exec(s);
  if (!m) return undefined;
  const num = (x: string | undefined) => (x === undefined || /^[xX*]$/.test(x) ? undefined : Number(x));
  const major = num(m[1]);
  const minor = major === undefined ? undefined : num(m[2]);
  const patch = minor === undefined ? undefined : num(m[3]);
  return { ...(major !== undefined ? { major } : {}), ...(minor !== undefined ? { minor } : {}), ...(patch !== undefined ? { patch } : {}),
    prerelease: patch !== undefined && m[4] ? m[4].split('.') : [] };
}

const ver = (major: number, minor: number, patch: number, prerelease: string[] = []): SemVer => ({ major, minor, patch, prerelease });
/** The lowest version of all, prereleases included (`0.0.0-0`). */
const LOWEST: SemVer = ver(0, 0, 0, ['0']);

/** Lower bound of a partial (missing parts 0; a missing part admits prereleases: `-0`). */
function floorOf(p: Partial): SemVer {
  if (p.major === undefined) return LOWEST;
  if (p.minor === undefined) return ver(p.major, 0, 0, ['0']);
  if (p.patch === undefined) return ver(p.major, p.minor, 0, ['0']);
  return ver(p.major, p.minor, p.patch, p.prerelease);
}

/** Exclusive upper bound of a partial's x-range (`1.2` → `<1.3.0-0`); undefined for a full version or `*`. */
function ceilOf(p: Partial): SemVer | undefined {
  if (p.major === undefined || p.patch !== undefined) return undefined;
  if (p.minor === undefined) return ver(p.major + 1, 0, 0, ['0']);
  return ver(p.major, p.minor + 1, 0, ['0']);
}

/** Desugars one comparator token (`^1.2`, `~1.2.3`, `>=1.0`, `1.x`, `<2`) into plain comparators. */
function desugar(token: string): Comparator[] | undefined {
  const m = /^(~>?|\^|<=|>=|<|>|=)?\s*(.*)$/.exec(token);
  if (!m) return undefined;
  const op = m[1] ?? '';
  const p = parsePartial(m[2]!);
  if (!p) return undefined;
  const lo = floorOf(p);
  const hi = ceilOf(p);
  switch (op) {
    case '':
    case '=':
      if (p.major === undefined) return [{ op: '>=', v: LOWEST }];
      return hi ? [{ op: '>=', v: lo }, { op: '<', v: hi }] : [{ op: '=', v: lo }];
    case '~':
    case '~>': {
      if (p.major === undefined) return [{ op: '>=', v: LOWEST }];
      const top = p.minor === undefined ? ver(p.major + 1, 0, 0, ['0']) : ver(p.major, p.minor + 1, 0, ['0']);
      return [{ op: '>=', v: lo }, { op: '<', v: top }];
    }
    case '^': {
      if (p.major === undefined) return [{ op: '>=', v: LOWEST }];
      let top: SemVer;
      if (p.major > 0 || p.minor === undefined) top = ver(p.major + 1, 0, 0, ['0']);
      else if (p.minor > 0 || p.patch === undefined) top = ver(0, p.minor + 1, 0, ['0']);
      else top = ver(0, 0, p.patch + 1, ['0']);
      return [{ op: '>=', v: lo }, { op: '<', v: top }];
    }
    case '>=':
      return [{ op: '>=', v: lo }];
    case '<':
      // `<1.2` is below 1.2.0 and all its prereleases; `<*` matches nothing
      return p.major === undefined ? [{ op: '<', v: LOWEST }] : [{ op: '<', v: lo }];
    case '>':
      if (p.major === undefined) return [{ op: '<', v: LOWEST }]; // `>*` matches nothing
      return hi ? [{ op: '>=', v: hi }] : [{ op: '>', v: lo }];
    case '<=':
      if (p.major === undefined) return [{ op: '>=', v: LOWEST }];
      return hi ? [{ op: '<', v: hi }] : [{ op: '<=', v: lo }];
    default:
      return undefined;
  }
}

/** One `||` alternative: hyphen ranges and space-separated comparators, all of which must hold. */
function parseComparatorSet(set: string): Comparator[] | undefined {
  const s = set.trim().replace(/(~>?|\^|<=|>=|<|>|=)\s+/g, '$1');
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(s);
  if (hyphen) {
    const a = parsePartial(hyphen[1]!);
    const b = parsePartial(hyphen[2]!);
    if (!a || !b) return undefined;
    const out: Comparator[] = [{ op: '>=', v: floorOf(a) }];
    if (b.major !== undefined) {
      const hi = ceilOf(b);
      out.push(hi ? { op: '<', v: hi } : { op: '<=', v: floorOf(b) });
    }
    return out;
  }
  const out: Comparator[] = [];
  for (const token of s.split(/\s+/)) {
    const c = desugar(token);
    if (!c) return undefined;
    out.push(...c);
  }
  return out;
}

/** A parsed npm range: alternatives of comparator sets. */
export type NpmRange = Comparator[][];

/** Parses an npm range (`<1.2.3`, `>=2.0.0 <2.1.0`, `^1.0.0 || ~2.1`, `1.2.3 - 1.4`, `*`); undefined when unreadable. */
export function parseNpmRange(range: string): NpmRange | undefined {
  const out: NpmRange = [];
  for (const set of range.split('||')) {
    const c = parseComparatorSet(set);
    if (!c) return undefined;
    out.push(c);
  }
  return out;
}

function holds(v: SemVer, c: Comparator): boolean {
  const d = compareSemver(v, c.v);
  switch (c.op) {
    case '<': return d < 0;
    case '<=': return d <= 0;
    case '>': return d > 0;
    case '>=': return d >= 0;
    default: return d === 0;
  }
}

/**
 * Whether `version` satisfies the npm range, prereleases included (npm audit's `includePrerelease`
 * semantics: `<2.0.0` holds for `2.0.0-rc.1`, `^1.2.0` excludes `2.0.0-rc.1`). Undefined when the
 * range or the version cannot be read.
 */
export function satisfiesNpmRange(version: string, range: string | NpmRange): boolean | undefined {
  const v = parseSemver(version);
  const r = typeof range === 'string' ? parseNpmRange(range) : range;
  if (!v || !r) return undefined;
  return r.some((set) => set.every((c) => holds(v, c)));
}
