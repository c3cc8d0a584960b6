/**
 * Versions and ranges through the `semver` package (npm's own implementation): comparison, npm range
 * matching (`vulnerable_versions` of the registry's bulk advisories, `engines`, dependency ranges) and
 * OSV range evaluation, which `semver` does not know (events, not a range string). The small
 * interface below is what the skills used before; it now delegates.
 */
import semver from 'semver';

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

/** npm audit's options: loose parsing (`v1.2.3`, `=1.2.3`), prereleases inside ranges. */
const RANGE_OPTS = { loose: true, includePrerelease: true } as const;

/** Parses `1.2.3`, `v1.2.3-rc.1+build`; `1` and `1.2` read as 1.0.0 and 1.2.0. Undefined when not a version. */
export function parseSemver(v: string): SemVer | undefined {
  const s = semver.parse(v.trim(), { loose: true }) ?? (/^\s*[v=]?\d+(?:\.\d+)?\s*$/.test(v) ? semver.coerce(v) : null);
  if (!s) return undefined;
  return { major: s.major, minor: s.minor, patch: s.patch, prerelease: s.prerelease.map(String) };
}

function text(v: string | SemVer): string {
  if (typeof v === 'string') {
    const p = parseSemver(v);
    if (!p) throw new Error(`not a semver version: ${v}`);
    return text(p);
  }
  return `${v.major}.${v.minor}.${v.patch}${v.prerelease.length ? `-${v.prerelease.join('.')}` : ''}`;
}

/** -1, 0 or 1 by semver precedence (build metadata ignored). Throws on an unparsable version. */
export function compareSemver(a: string | SemVer, b: string | SemVer): number {
  return semver.compare(text(a), text(b));
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

/**
 * The version to upgrade to: the lowest of `fixes` above `version` in its own major line (node-fetch
 * 2.6.1 → 2.6.7, not 3.1.1), else the lowest above it in any line. Undefined when none is above.
 */
export function fixInLine(version: string, fixes: readonly string[]): string | undefined {
  const v = parseSemver(version);
  if (!v) return undefined;
  const above = [...new Set(fixes)].filter((f) => parseSemver(f) && compareSemver(f, v) > 0).sort(compareSemver);
  return above.find((f) => parseSemver(f)!.major === v.major) ?? above[0];
}

/** A parsed npm range. */
export type NpmRange = semver.Range;

/** Parses an npm range (`<1.2.3`, `>=2.0.0 <2.1.0`, `^1.0.0 || ~2.1`, `1.2.3 - 1.4`, `*`); undefined when unreadable. */
export function parseNpmRange(range: string): NpmRange | undefined {
  // semver's loose mode skips what it cannot read (`<abc` becomes nothing): a token must be a version or a wildcard.
  const tokens = range.replace(/(~>?|\^|<=|>=|<|>|=)\s+/g, '$1').split(/\s+|\|\|/).filter((t) => t && t !== '-');
  if (!tokens.every((t) => /^(?:~>?|\^|<=|>=|<|>|=)?[v=]?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(t) || /^(?:~>?|\^|<=|>=|<|>|=)?[*xX]$/.test(t))) return undefined;
  try {
    return new semver.Range(range, RANGE_OPTS);
  } catch {
    return undefined;
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
  return r.test(text(v));
}

/**
 * The first version above `version` outside an npm vulnerable range, in the same comparator set's
 * line: the upper bound (`<2.6.7`) of the alternative that holds `version`, when no alternative holds it.
 */
export function firstOutside(version: string, range: NpmRange): string | undefined {
  const v = parseSemver(version);
  if (!v) return undefined;
  const uppers: string[] = [];
  for (const set of range.set) {
    if (!set.every((c) => c.test(text(v)))) continue;
    for (const c of set) {
      if (c.operator !== '<' || !(c.semver instanceof semver.SemVer)) continue;
      // With prereleases included, `<2.6.7` reads as `<2.6.7-0`: the release itself is the fix.
      const u = c.semver;
      uppers.push(u.prerelease.length === 1 && u.prerelease[0] === 0 ? `${u.major}.${u.minor}.${u.patch}` : u.version);
    }
  }
  const candidate = uppers.sort(compareSemver)[0];
  return candidate && range.test(candidate) === false ? candidate : undefined;
}
