/**
 * Outdated and deprecated direct npm dependencies, and the update plan in safe batches:
 *
 *  - current: the version the lock resolved, else the lowest version the range allows (no lock).
 *  - patch batch: the newest release of the current major.minor; minor batch: the newest of the
 *    current major; major batch: `dist-tags.latest` when it is a newer major. On 0.x a minor step
 *    breaks by semver's own rule (0.y is initial development), so it goes to the major batch.
 *  - prereleases and deprecated versions are never targets; a target is never above `latest`.
 *  - deprecated: the current version carries a `deprecated` message in the registry.
 * The fix rewrites the range in package.json keeping its operator (`^`, `~`, exact); other ranges are
 * left as they are and said so.
 */
import { compareSemver, parseSemver, satisfiesNpmRange, type SemVer } from '../security/semver';
import { comparableRange, lockedVersion } from './health';
import type { NpmLock, PackageJson } from './manifests';
import type { Packument } from './registry';

export type Bump = 'patch' | 'minor' | 'major';
export const BUMPS: readonly Bump[] = ['patch', 'minor', 'major'];

export interface DependencyStatus {
  name: string;
  section: string;
  range: string;
  file: string;
  line: number | null;
  current: string;
  /** Where `current` comes from. */
  currentFrom: 'lock' | 'range';
  latest: string | null;
  /** Newest version the declared range allows. */
  wanted: string | null;
  outdated: boolean;
  deprecated: string | null;
  /** Target of each batch this package is part of. */
  targets: Partial<Record<Bump, string>>;
  registry: string;
}

export interface Batch {
  bump: Bump;
  updates: Array<{ name: string; from: string; to: string; range: string; newRange: string | null; file: string; line: number | null; deprecatedNow: boolean }>;
  risk: string;
}

export interface DependencyPlan {
  dependencies: DependencyStatus[];
  batches: Batch[];
  /** Direct dependencies not judged, with why. */
  notJudged: string[];
}

function stable(v: string): SemVer | undefined {
  const s = parseSemver(v);
  return s && !s.prerelease.length ? s : undefined;
}

/** The lowest version a range admits among the published ones (what a fresh install without a lock may pick at worst). */
function lowestSatisfying(p: Packument, range: string): string | undefined {
  return [...p.versions.keys()].filter((v) => stable(v) && satisfiesNpmRange(v, range)).sort(compareSemver)[0];
}

function newest(list: string[]): string | undefined {
  return list.sort(compareSemver).at(-1);
}

/** The range rewritten to admit `to` as its floor, keeping the operator; null when the range is not a simple one. */
export function raiseRange(range: string, to: string): string | null {
  const m = /^\s*(\^|~|=|v)?\s*(\d+)(\.\d+|\.[xX*])?(\.\d+|\.[xX*])?(-[0-9A-Za-z.-]+)?\s*$/.exec(range);
  if (!m) return null;
  const op = m[1] === '^' || m[1] === '~' ? m[1] : '';
  return `${op}${to}`;
}

export function planUpdates(pkg: PackageJson, lock: NpmLock | undefined, packuments: ReadonlyMap<string, Packument>): DependencyPlan {
  const dependencies: DependencyStatus[] = [];
  const notJudged: string[] = [];
  for (const d of pkg.deps) {
    const where = `${pkg.file}:${d.line ?? '?'}`;
    if (!comparableRange(d.range)) { notJudged.push(`${d.name}@${d.range} (${where}): not a version range`); continue; }
    const p = packuments.get(d.name);
    if (!p) { notJudged.push(`${d.name} (${where}): no registry metadata for it`); continue; }
    const locked = lockedVersion(lock, d.name, d.range);
    const current = locked?.version ?? lowestSatisfying(p, d.range);
    const cur = current ? parseSemver(current) : undefined;
    if (!current || !cur) { notJudged.push(`${d.name}@${d.range} (${where}): no published version satisfies the range`); continue; }
    const latest = p.latest && stable(p.latest) ? p.latest : newest([...p.versions.keys()].filter((v) => stable(v)));
    const candidates = [...p.versions.entries()].filter(([v, m]) => {
      const s = stable(v);
      return s && !m.deprecated && compareSemver(s, cur) > 0 && (!latest || compareSemver(s, latest) <= 0);
    }).map(([v]) => v);
    const patch = newest(candidates.filter((v) => { const s = parseSemver(v)!; return s.major === cur.major && s.minor === cur.minor; }));
    const sameMajor = newest(candidates.filter((v) => parseSemver(v)!.major === cur.major));
    const targets: Partial<Record<Bump, string>> = {};
    if (patch && !(cur.major === 0 && cur.minor === 0)) targets.patch = patch;
    if (sameMajor && sameMajor !== patch) {
      if (cur.major === 0) targets.major = sameMajor; else targets.minor = sameMajor;
    } else if (patch && cur.major === 0 && cur.minor === 0) targets.major = patch; // 0.0.x: every step may break
    if (latest) {
      const l = parseSemver(latest)!;
      if (l.major > cur.major && !p.versions.get(latest)?.deprecated) targets.major = latest;
    }
    const wanted = newest([...p.versions.keys()].filter((v) => stable(v) && satisfiesNpmRange(v, d.range)));
    dependencies.push({
      name: d.name, section: d.section, range: d.range, file: pkg.file, line: d.line ?? null, current, currentFrom: locked ? 'lock' : 'range',
      latest: latest ?? null, wanted: wanted ?? null, outdated: !!latest && compareSemver(latest, current) > 0,
      deprecated: p.versions.get(current)?.deprecated ?? null, targets, registry: p.source,
    });
  }
  const batches: Batch[] = [];
  for (const bump of BUMPS) {
    const members = dependencies.filter((d) => d.targets[bump]);
    if (!members.length) continue;
    const updates = members.map((d) => ({ name: d.name, from: d.current, to: d.targets[bump]!, range: d.range, newRange: raiseRange(d.range, d.targets[bump]!), file: d.file, line: d.line, deprecatedNow: !!d.deprecated }));
    batches.push({ bump, updates, risk: riskNote(bump, updates, dependencies) });
  }
  return { dependencies, batches, notJudged };
}

function riskNote(bump: Bump, updates: Batch['updates'], all: DependencyStatus[]): string {
  const dev = updates.filter((u) => all.find((d) => d.name === u.name)?.section === 'devDependencies').length;
  const deprecated = updates.filter((u) => u.deprecatedNow).map((u) => u.name);
  const tail = `${updates.length} package(s), ${dev} of them dev-only${deprecated.length ? `; replaces deprecated ${deprecated.join(', ')}` : ''}`;
  const kept = updates.filter((u) => !u.newRange).map((u) => u.name);
  const manual = kept.length ? `; range of ${kept.join(', ')} is not a simple ^/~/exact range: edit by hand` : '';
  switch (bump) {
    case 'patch': return `low: bug fixes only by the semver contract, within the same minor; run the tests and refresh the lock (${tail})${manual}`;
    case 'minor': return `medium: new features, backward compatible by the semver contract; behaviour changes and new deprecations are possible, read the release notes (${tail})${manual}`;
    default: {
      const zero = updates.filter((u) => parseSemver(u.from)?.major === 0).map((u) => u.name);
      return `high: breaking changes by the semver contract${zero.length ? ` (0.x minor steps count as breaking: ${zero.join(', ')})` : ''}; read each changelog, update one package at a time and run the full test suite (${tail})${manual}`;
    }
  }
}

/**
 * package.json with the ranges of one batch raised, edited in place (only the value on the
 * dependency's line changes, formatting kept). Returns the new text and what was left unchanged.
 */
export function applyBatch(text: string, batch: Batch): { text: string; applied: Batch['updates']; skipped: string[] } {
  const lines = text.split('\n');
  const applied: Batch['updates'] = [];
  const skipped: string[] = [];
  for (const u of batch.updates) {
    if (!u.newRange) { skipped.push(`${u.name}@${u.range}: not a simple range, edit by hand`); continue; }
    const i = (u.line ?? 0) - 1;
    const l = lines[i];
    const needle = `${JSON.stringify(u.name)}`;
    const at = l?.indexOf(needle) ?? -1;
    const old = `${JSON.stringify(u.range)}`;
    const valueAt = l && at !== -1 ? l.indexOf(old, at + needle.length) : -1;
    if (!l || valueAt === -1) { skipped.push(`${u.name}: its range is not on line ${u.line ?? '?'} of package.json`); continue; }
    lines[i] = l.slice(0, valueAt) + JSON.stringify(u.newRange) + l.slice(valueAt + old.length);
    applied.push(u);
  }
  return { text: lines.join('\n'), applied, skipped };
}
