/**
 * maintain-ai `health`: lock-file drift and engines mismatch, each finding with file and line.
 *
 * Drift (the lock does not describe what the manifest declares, so `npm ci` fails or installs
 * something else than the manifest says):
 *  - npm: a direct dependency missing from the lock, a locked version outside the declared range,
 *    a range the lock recorded that differs from package.json's (package-lock v2/v3 root, pnpm
 *    specifier; yarn: the `name@range` spec has no entry), a dependency the lock's root still lists
 *    that package.json dropped.
 *  - Python: a requirement missing from poetry.lock or whose locked version is outside its specifier.
 *  - Go: a required module with no go.sum line (or no go.sum at all).
 * Engines: package.json `engines.node` against the running node (the one Cadre runs on; the project's
 * own may differ, said in the report) and against the version pinned by .nvmrc / .node-version.
 */
import { WorkspaceFiles } from '../workspace/files';
import { parseSemver } from '../security/semver';
import { satisfiesNpmRange } from '../security/semver';
import {
  ManifestError, parseGoMod, parseGoSum, parsePackageJson, parsePackageLockRoot, parsePnpmLockRoot, parsePoetryLock, parseRequirements,
  parseYarnLockSpecs, pyName, pySatisfies, type NpmLock, type PackageJson,
} from './manifests';

export type Severity = 'low' | 'medium' | 'high' | 'critical';
export const SEVERITY_RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3, critical: 4 };

export interface HealthFinding {
  kind: 'lock-missing' | 'lock-unsatisfied' | 'lock-stale-range' | 'lock-extraneous' | 'no-lockfile' | 'go-sum-missing' | 'engines-running' | 'engines-pinned' | 'engines-pins-disagree';
  severity: Severity;
  file: string;
  line: number | null;
  ecosystem: 'npm' | 'pip' | 'go' | 'node';
  package: string | null;
  message: string;
}

export interface Examined {
  files: string[];
  directDependencies: number;
  /** Dependencies not compared, with why (git URL, workspace protocol, tag...). */
  notCompared: string[];
}

export interface HealthReport {
  findings: HealthFinding[];
  examined: Examined;
  node: { running: string; engines: string | null; pinned: Array<{ file: string; version: string }> };
}

const MAX_MANIFEST = 32 * 1024 * 1024;

/** A range npm can compare (not a URL, path, alias, tag or workspace protocol). */
export function comparableRange(range: string): boolean {
  return !/^(?:[a-z+]+:|\.{0,2}\/|~\/|github:|git|http)/i.test(range.trim()) && /^[\s\d^~<>=.xX*|v-]*$/.test(range.replace(/-[0-9A-Za-z.]+/g, ''));
}

export function readText(ws: WorkspaceFiles, rel: string): { rel: string; text: string } | undefined {
  const r = ws.readText(rel, MAX_MANIFEST);
  return r.ok ? { rel: r.rel, text: r.text } : undefined;
}

/** The npm lock of the folder (first of package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml found). */
export function readNpmLock(ws: WorkspaceFiles, dir: string): NpmLock | undefined {
  for (const name of ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock']) {
    const f = readText(ws, dir + name);
    if (!f) continue;
    if (name === 'yarn.lock') return parseYarnLockSpecs(f.rel, f.text);
    if (name === 'pnpm-lock.yaml') return parsePnpmLockRoot(f.rel, f.text);
    return parsePackageLockRoot(f.rel, f.text);
  }
  return undefined;
}

/** A lock file in a folder above `dir` (inside the workspace): a package of an npm / yarn / pnpm workspaces monorepo. */
export function workspaceRootLock(ws: WorkspaceFiles, dir: string): string | undefined {
  const parts = dir.split('/').filter(Boolean);
  for (let n = parts.length - 1; n >= 0; n--) {
    const up = parts.slice(0, n).map((p) => `${p}/`).join('');
    for (const name of ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock']) if (ws.isFile(up + name)) return up + name;
  }
  return undefined;
}

/** Resolved version of a direct dependency in any lock kind. */
export function lockedVersion(lock: NpmLock | undefined, name: string, range: string): { version: string; line?: number } | undefined {
  if (!lock) return undefined;
  if (lock.kind === 'yarn') return lock.yarnSpecs?.get(`${name}@${range}`);
  return lock.direct.get(name);
}

function npmDrift(pkg: PackageJson, lock: NpmLock | undefined, examined: Examined): HealthFinding[] {
  const out: HealthFinding[] = [];
  if (!pkg.deps.length) return out;
  if (!lock) {
    out.push({ kind: 'no-lockfile', severity: 'medium', file: pkg.file, line: null, ecosystem: 'npm', package: null, message: `${pkg.deps.length} dependencies declared and no lock file (package-lock.json, yarn.lock, pnpm-lock.yaml): installs are not reproducible` });
    return out;
  }
  for (const d of pkg.deps) {
    if (!comparableRange(d.range)) { examined.notCompared.push(`${d.name}@${d.range} (${pkg.file}:${d.line ?? '?'}): not a version range`); continue; }
    const locked = lockedVersion(lock, d.name, d.range);
    if (!locked) {
      const hint = lock.kind === 'yarn' ? `no entry for "${d.name}@${d.range}" in ${lock.file}` : `${d.name} is not in ${lock.file}`;
      out.push({ kind: 'lock-missing', severity: 'high', file: pkg.file, line: d.line ?? null, ecosystem: 'npm', package: d.name, message: `${d.section} ${d.name}@${d.range}: ${hint} (the lock file is out of date: install again)` });
      continue;
    }
    const ok = satisfiesNpmRange(locked.version, d.range);
    if (ok === false) {
      out.push({ kind: 'lock-unsatisfied', severity: 'high', file: lock.file, line: locked.line ?? null, ecosystem: 'npm', package: d.name, message: `${d.name} is locked at ${locked.version}, outside the range ${d.range} of ${pkg.file}:${d.line ?? '?'}` });
      continue;
    }
    const recorded = lock.kind === 'pnpm' ? (lock.direct.get(d.name)?.specifier !== undefined ? { range: lock.direct.get(d.name)!.specifier!, line: lock.direct.get(d.name)!.specifierLine } : undefined) : lock.rootRanges?.get(d.name);
    if (recorded && recorded.range !== d.range) {
      out.push({ kind: 'lock-stale-range', severity: 'medium', file: lock.file, line: recorded.line ?? locked.line ?? null, ecosystem: 'npm', package: d.name, message: `${lock.file} recorded ${d.name}@${recorded.range}, ${pkg.file}:${d.line ?? '?'} declares ${d.range} (the lock was written before the manifest changed)` });
    }
  }
  const declared = new Set(pkg.deps.map((d) => d.name));
  for (const [name, r] of lock.rootRanges ?? []) {
    if (!declared.has(name)) out.push({ kind: 'lock-extraneous', severity: 'low', file: lock.file, line: r.line ?? null, ecosystem: 'npm', package: name, message: `${lock.file} still lists ${name}@${r.range} as a direct dependency; ${pkg.file} no longer declares it` });
  }
  if (lock.kind === 'pnpm') {
    for (const [name, r] of lock.direct) if (!declared.has(name)) out.push({ kind: 'lock-extraneous', severity: 'low', file: lock.file, line: r.line ?? null, ecosystem: 'npm', package: name, message: `${lock.file} still lists ${name} as a direct dependency; ${pkg.file} no longer declares it` });
  }
  return out;
}

/** `20`, `v20.11.1`, `lts/iron`: the version a pin file names (an alias is not compared). */
function pinnedVersions(ws: WorkspaceFiles, dir: string): Array<{ file: string; version: string; line: number }> {
  const out: Array<{ file: string; version: string; line: number }> = [];
  for (const name of ['.nvmrc', '.node-version']) {
    const f = readText(ws, dir + name);
    if (!f) continue;
    const lines = f.text.split(/\r?\n/);
    const i = lines.findIndex((l) => l.replace(/#.*$/, '').trim());
    if (i !== -1) out.push({ file: f.rel, version: lines[i]!.replace(/#.*$/, '').trim(), line: i + 1 });
  }
  return out;
}

/** A pinned `20` or `20.11` stands for the newest of that line: it satisfies a range if its floor or its top does. */
function pinSatisfies(pin: string, range: string): boolean | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(pin.trim());
  if (!m) return undefined;
  if (m[3] !== undefined) return satisfiesNpmRange(`${m[1]}.${m[2]}.${m[3]}`, range);
  const floor = `${m[1]}.${m[2] ?? 0}.0`;
  const top = `${m[1]}.${m[2] ?? 999999}.999999`;
  const a = satisfiesNpmRange(floor, range);
  const b = satisfiesNpmRange(top, range);
  return a === undefined || b === undefined ? undefined : a || b;
}

function enginesCheck(pkg: PackageJson | undefined, pins: Array<{ file: string; version: string; line: number }>, running: string, examined: Examined): HealthFinding[] {
  const out: HealthFinding[] = [];
  const engines = pkg?.engines;
  if (engines) {
    if (satisfiesNpmRange(running, engines.node) === undefined) examined.notCompared.push(`engines.node ${JSON.stringify(engines.node)} (${pkg!.file}:${engines.line ?? '?'}): not a version range`);
    else if (satisfiesNpmRange(running, engines.node) === false) {
      out.push({ kind: 'engines-running', severity: 'high', file: pkg!.file, line: engines.line ?? null, ecosystem: 'node', package: 'node', message: `engines.node ${engines.node} excludes the running node ${running}` });
    }
    for (const p of pins) {
      const ok = pinSatisfies(p.version, engines.node);
      if (ok === undefined) examined.notCompared.push(`${p.file}:${p.line} ${p.version}: an alias, not a version`);
      else if (!ok) out.push({ kind: 'engines-pinned', severity: 'medium', file: p.file, line: p.line, ecosystem: 'node', package: 'node', message: `${p.file} pins node ${p.version}, outside engines.node ${engines.node} (${pkg!.file}:${engines.line ?? '?'})` });
    }
  }
  if (pins.length === 2) {
    const [a, b] = pins as [typeof pins[0], typeof pins[0]];
    const va = parseSemver(a.version); const vb = parseSemver(b.version);
    if (va && vb && va.major !== vb.major) out.push({ kind: 'engines-pins-disagree', severity: 'medium', file: b.file, line: b.line, ecosystem: 'node', package: 'node', message: `${b.file} pins node ${b.version}, ${a.file}:${a.line} pins ${a.version}` });
  }
  return out;
}

function pythonDrift(ws: WorkspaceFiles, dir: string, examined: Examined): HealthFinding[] {
  const req = readText(ws, dir + 'requirements.txt');
  const lockF = readText(ws, dir + 'poetry.lock');
  if (!req) { if (lockF) examined.files.push(lockF.rel); return []; }
  examined.files.push(req.rel);
  const { requirements, skipped } = parseRequirements(req.rel, req.text);
  examined.directDependencies += requirements.length;
  for (const s of skipped) examined.notCompared.push(`${req.rel}:${s.line}: ${s.why}`);
  if (!lockF) return [];
  examined.files.push(lockF.rel);
  const lock = parsePoetryLock(lockF.rel, lockF.text);
  const out: HealthFinding[] = [];
  for (const r of requirements) {
    const l = lock.get(pyName(r.name));
    if (!l) { out.push({ kind: 'lock-missing', severity: 'high', file: req.rel, line: r.line, ecosystem: 'pip', package: r.name, message: `${r.name}${r.specifier} is not in ${lockF.rel}` }); continue; }
    if (r.specifier && pySatisfies(l.version, r.specifier) === false) {
      out.push({ kind: 'lock-unsatisfied', severity: 'high', file: lockF.rel, line: l.line, ecosystem: 'pip', package: r.name, message: `${r.name} is locked at ${l.version}, outside ${r.specifier} of ${req.rel}:${r.line}` });
    }
  }
  return out;
}

function goDrift(ws: WorkspaceFiles, dir: string, examined: Examined): HealthFinding[] {
  const mod = readText(ws, dir + 'go.mod');
  if (!mod) return [];
  examined.files.push(mod.rel);
  const { requires } = parseGoMod(mod.rel, mod.text);
  examined.directDependencies += requires.filter((r) => !r.indirect).length;
  if (!requires.length) return [];
  const sum = readText(ws, dir + 'go.sum');
  if (!sum) return [{ kind: 'go-sum-missing', severity: 'high', file: mod.rel, line: requires[0]!.line, ecosystem: 'go', package: null, message: `${requires.length} module(s) required and no go.sum: builds cannot verify them (run go mod tidy)` }];
  examined.files.push(sum.rel);
  const have = parseGoSum(sum.text);
  const out: HealthFinding[] = [];
  for (const r of requires) {
    // go.sum always holds the go.mod hash of a required version; the tree hash only once downloaded.
    if (!have.has(`${r.module} ${r.version}/go.mod`) && !have.has(`${r.module} ${r.version}`)) {
      out.push({ kind: 'go-sum-missing', severity: 'medium', file: mod.rel, line: r.line, ecosystem: 'go', package: r.module, message: `${r.module} ${r.version} has no line in ${sum.rel}` });
    }
  }
  return out;
}

/** The folder (workspace-relative, '' or ending with '/') holding the manifests: `input.path` or the root. */
export function manifestDir(raw: unknown): string | { error: string } {
  if (raw === undefined || raw === null || raw === '' || raw === '.') return '';
  if (typeof raw !== 'string') return { error: 'input.path must be a workspace-relative folder' };
  return raw.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/?$/, '/');
}

/** Looks at the manifests of one folder. Throws ManifestError on a file that cannot be read. */
export function checkHealth(ws: WorkspaceFiles, dir: string, running = process.version): HealthReport {
  const examined: Examined = { files: [], directDependencies: 0, notCompared: [] };
  const findings: HealthFinding[] = [];
  const pkgF = readText(ws, dir + 'package.json');
  const pkg = pkgF ? parsePackageJson(pkgF.rel, pkgF.text) : undefined;
  if (pkg) {
    examined.files.push(pkg.file);
    examined.directDependencies += pkg.deps.length;
    const lock = readNpmLock(ws, dir);
    const rootLock = lock ? undefined : workspaceRootLock(ws, dir);
    if (lock) examined.files.push(lock.file);
    if (rootLock) examined.notCompared.push(`${pkg.file}: its dependencies are locked in ${rootLock} (a workspaces monorepo): run health on that folder`);
    else findings.push(...npmDrift(pkg, lock, examined));
  }
  const pins = pinnedVersions(ws, dir);
  examined.files.push(...pins.map((p) => p.file));
  findings.push(...enginesCheck(pkg, pins, running, examined));
  findings.push(...pythonDrift(ws, dir, examined));
  findings.push(...goDrift(ws, dir, examined));
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0));
  return { findings, examined, node: { running, engines: pkg?.engines?.node ?? null, pinned: pins.map((p) => ({ file: p.file, version: p.version })) } };
}

export { ManifestError };
