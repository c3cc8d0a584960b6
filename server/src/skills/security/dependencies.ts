/**
 * Dependency scanning (security-ai `scan`, PRO tier): npm lock files (package-lock.json v1/v2/v3,
 * yarn.lock v1 (and berry), pnpm-lock.yaml) matched against OSV advisories read from a local file,
 * and, when the step asks for it and ACMF allows it, against the npm registry's bulk advisory
 * endpoint (npm-advisories.ts; `scanDependenciesOnline`).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type YAMLMap } from 'yaml';
import { fingerprint, sortFindings, toWorkspacePath, type Finding, type RuleInfo, type Severity } from '../findings/finding';
import { matchNpmAdvisories, redactUrl, wantedVersions, type NpmAdvisoryClient, type OnlineLookupReport } from './npm-advisories';
import { compareSemver, fixInLine, rangeAffects, type OsvEvent } from './semver';
import { confinedInputFile, parseJsonQuietly } from '../workspace/files';

export interface LockedPackage {
  name: string;
  version: string;
  /** Where the lock file places it: `node_modules/a/node_modules/b`, a yarn entry spec, a pnpm key. */
  path: string;
  /** 1-based line of the entry in the lock file, when found. */
  line?: number;
}

export type LockfileKind = 'package-lock' | 'yarn' | 'pnpm';

export function lockfileKind(file: string): LockfileKind | undefined {
  const base = path.posix.basename(toWorkspacePath(file));
  if (base === 'package-lock.json' || base === 'npm-shrinkwrap.json') return 'package-lock';
  if (base === 'yarn.lock') return 'yarn';
  if (base === 'pnpm-lock.yaml') return 'pnpm';
  return undefined;
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Package name from a `node_modules/...` path (last segment, scoped names kept). */
function nameFromModulePath(p: string): string | undefined {
  const i = p.lastIndexOf('node_modules/');
  if (i === -1) return undefined;
  return p.slice(i + 'node_modules/'.length) || undefined;
}

/** package-lock.json / npm-shrinkwrap.json, lockfileVersion 1, 2 or 3. The root project is not listed. */
export function parsePackageLock(text: string): LockedPackage[] {
  const json = JSON.parse(text) as Record<string, unknown>;
  const out: LockedPackage[] = [];
  const packages = json['packages'];
  if (packages && typeof packages === 'object') {
    // v2 / v3: the `packages` map, keys `node_modules/<name>` (nested for duplicates).
    for (const [key, raw] of Object.entries(packages as Record<string, unknown>)) {
      if (!key.includes('node_modules/') || !raw || typeof raw !== 'object') continue; // root and workspace packages are local
      const entry = raw as Record<string, unknown>;
      if (entry['link'] === true) continue;
      const name = typeof entry['name'] === 'string' ? entry['name'] : nameFromModulePath(key);
      const version = entry['version'];
      if (!name || typeof version !== 'string') continue;
      const idx = text.indexOf(`${JSON.stringify(key)}:`);
      out.push({ name, version, path: key, ...(idx !== -1 ? { line: lineAt(text, idx) } : {}) });
    }
    return out;
  }
  // v1: nested `dependencies` maps.
  const walk = (deps: unknown, prefix: string, from: number) => {
    if (!deps || typeof deps !== 'object') return;
    for (const [name, raw] of Object.entries(deps as Record<string, unknown>)) {
      if (!raw || typeof raw !== 'object') continue;
      const entry = raw as Record<string, unknown>;
      const p = `${prefix}node_modules/${name}`;
      const idx = text.indexOf(`${JSON.stringify(name)}: {`, from);
      const version = entry['version'];
      if (typeof version === 'string' && !/^(file|link|git|github):/.test(version)) {
        out.push({ name, version, path: p, ...(idx !== -1 ? { line: lineAt(text, idx) } : {}) });
      }
      walk(entry['dependencies'], `${p}/`, idx === -1 ? from : idx + 1);
    }
  };
  walk(json['dependencies'], '', 0);
  return out;
}

/** Name of a `name@range` spec (scoped names keep their leading @; `npm:` protocol ignored). */
function specName(spec: string): string {
  const s = spec.trim().replace(/^"|"$/g, '');
  const at = s.indexOf('@', 1);
  return at === -1 ? s : s.slice(0, at);
}

/** yarn.lock v1 (`version "x"`) and berry (`version: x`). */
export function parseYarnLock(text: string): LockedPackage[] {
  const lines = text.split(/\r?\n/);
  const out: LockedPackage[] = [];
  let header: { spec: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l === '' || l.startsWith('#')) continue;
    if (!/^\s/.test(l)) {
      header = l.endsWith(':') && !l.startsWith('__metadata') ? { spec: l.slice(0, -1), line: i + 1 } : undefined;
      continue;
    }
    const m = /^\s+version:?\s+"?([^"\s]+)"?\s*$/.exec(l);
    if (m && header && /^\s{2}\S/.test(l)) {
      const first = header.spec.split(',')[0]!;
      out.push({ name: specName(first), version: m[1]!, path: header.spec.replace(/"/g, ''), line: header.line });
      header = undefined;
    }
  }
  return out;
}

/** Name and version from a pnpm `packages` key: `/name/1.2.3` (v5), `/name@1.2.3(peer)` (v6), `name@1.2.3` (v9). */
export function parsePnpmKey(key: string): { name: string; version: string } | undefined {
  const k = key.startsWith('/') ? key.slice(1) : key;
  const v5 = /^(@[^/@]+\/[^/@]+|[^/@]+)\/(\d[^_/(]*)(?:[_(].*)?$/.exec(k);
  if (v5) return { name: v5[1]!, version: v5[2]! };
  const bare = k.replace(/\(.*$/, '');
  const at = bare.indexOf('@', 1);
  if (at === -1) return undefined;
  return { name: bare.slice(0, at), version: bare.slice(at + 1) };
}

/** pnpm-lock.yaml: every key of `packages` (lockfile v5, v6 and v9). */
export function parsePnpmLock(text: string): LockedPackage[] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const packages = isMap(doc.contents) ? (doc.contents as YAMLMap).get('packages', true) : undefined;
  const out: LockedPackage[] = [];
  if (!isMap(packages)) return out;
  for (const pair of packages.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (!key) continue;
    const nv = parsePnpmKey(key);
    if (!nv) continue;
    const v = isMap(pair.value) ? pair.value.get('version') : undefined;
    const version = typeof v === 'string' && /^\d/.test(v) ? v : nv.version;
    const line = isScalar(pair.key) && pair.key.range ? lc.linePos(pair.key.range[0]).line : undefined;
    out.push({ name: nv.name, version, path: key, ...(line ? { line } : {}) });
  }
  return out;
}

export function parseLockfile(file: string, text: string): LockedPackage[] {
  switch (lockfileKind(file)) {
    case 'package-lock': return parsePackageLock(text);
    case 'yarn': return parseYarnLock(text);
    case 'pnpm': return parsePnpmLock(text);
    default: return [];
  }
}

// ---------------------------------------------------------------------------------------------
// OSV advisories

export interface OsvAffected {
  package?: { ecosystem?: string; name?: string };
  ranges?: Array<{ type?: string; events?: OsvEvent[] }>;
  versions?: string[];
}

export interface OsvRecord {
  id: string;
  summary?: string;
  details?: string;
  aliases?: string[];
  affected?: OsvAffected[];
  severity?: Array<{ type?: string; score?: string }>;
  database_specific?: { severity?: string; [k: string]: unknown };
  references?: Array<{ type?: string; url?: string }>;
}

/** An array of OSV records, or `{ vulns: [...] }` (OSV API shape). Records without an id are dropped. */
export function parseAdvisories(json: string): OsvRecord[] {
  const raw: unknown = parseJsonQuietly(json, 'advisories');
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Array.isArray((raw as { vulns?: unknown }).vulns) ? (raw as { vulns: unknown[] }).vulns : undefined;
  if (!list) throw new Error('advisories: expected an array of OSV records or { vulns: [...] }');
  return list.filter((r): r is OsvRecord => !!r && typeof r === 'object' && typeof (r as { id?: unknown }).id === 'string');
}

const CVSS3: Record<string, Record<string, number>> = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  UI: { N: 0.85, R: 0.62 },
  C: { H: 0.56, L: 0.22, N: 0 },
  I: { H: 0.56, L: 0.22, N: 0 },
  A: { H: 0.56, L: 0.22, N: 0 },
};

/** CVSS v3.x base score from a vector (`CVSS:3.1/AV:N/AC:L/...`); undefined when incomplete. */
export function cvss3BaseScore(vector: string): number | undefined {
  const m: Record<string, string> = {};
  for (const part of vector.split('/')) {
    const [k, v] = part.split(':');
    if (k && v) m[k] = v;
  }
  const changed = m['S'] === 'C';
  const pr = m['PR'] === 'N' ? 0.85 : m['PR'] === 'L' ? (changed ? 0.68 : 0.62) : m['PR'] === 'H' ? (changed ? 0.5 : 0.27) : undefined;
  const get = (k: string) => CVSS3[k]![m[k] ?? ''];
  const [av, ac, ui, c, i, a] = ['AV', 'AC', 'UI', 'C', 'I', 'A'].map(get);
  if (pr === undefined || av === undefined || ac === undefined || ui === undefined || c === undefined || i === undefined || a === undefined || !m['S']) return undefined;
  const iss = 1 - (1 - c) * (1 - i) * (1 - a);
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss;
  if (impact <= 0) return 0;
  const expl = 8.22 * av * ac * pr * ui;
  const roundUp = (x: number) => {
    const n = Math.round(x * 100000);
    return n % 10000 === 0 ? n / 100000 : (Math.floor(n / 10000) + 1) / 10;
  };
  return roundUp(Math.min(changed ? 1.08 * (impact + expl) : impact + expl, 10));
}

export function severityFromScore(score: number): Severity {
  return score >= 9 ? 'critical' : score >= 7 ? 'high' : score >= 4 ? 'medium' : score > 0 ? 'low' : 'info';
}

/** database_specific.severity (CRITICAL/HIGH/MODERATE/LOW), else the CVSS score in severity[], else medium. */
export function advisorySeverity(adv: OsvRecord): Severity {
  const s = adv.database_specific?.severity;
  if (typeof s === 'string') {
    const t = s.toLowerCase();
    if (t === 'critical' || t === 'high' || t === 'medium' || t === 'low') return t;
    if (t === 'moderate') return 'medium';
  }
  for (const sev of adv.severity ?? []) {
    if (typeof sev.score !== 'string') continue;
    const n = /^\d+(\.\d+)?$/.test(sev.score) ? Number(sev.score) : sev.type?.startsWith('CVSS_V3') || sev.score.startsWith('CVSS:3') ? cvss3BaseScore(sev.score) : undefined;
    if (n !== undefined) return severityFromScore(n);
  }
  return 'medium';
}

export interface AdvisoryMatch {
  affected: boolean;
  fixed?: string;
}

/** Whether an advisory affects name@version (npm ecosystem; SEMVER/ECOSYSTEM ranges and explicit versions). */
export function advisoryAffects(adv: OsvRecord, name: string, version: string): AdvisoryMatch {
  const mine = (adv.affected ?? []).filter((a) => a.package?.name === name && (!a.package.ecosystem || a.package.ecosystem.toLowerCase() === 'npm'));
  // Every fix the advisory knows for the package (one per affected line: node-fetch has 2.6.7 and 3.1.1).
  const fixes = mine.flatMap((a) => (a.ranges ?? []).flatMap((r) => r.events ?? [])).map((e) => e.fixed).filter((f): f is string => !!f);
  const advice = (interval: string | undefined): AdvisoryMatch => {
    // The interval's own fix when it is above the version; else the lowest fix of the version's major line.
    const f = interval && (() => { try { return compareSemver(interval, version) > 0; } catch { return false; } })() ? interval : fixInLine(version, fixes);
    return { affected: true, ...(f ? { fixed: f } : {}) };
  };
  for (const a of mine) {
    for (const r of a.ranges ?? []) {
      if (r.type !== 'SEMVER' && r.type !== 'ECOSYSTEM') continue;
      const m = rangeAffects(version, r.events ?? []);
      if (m.affected) return advice(m.fixed);
    }
  }
  // Listed explicitly (osv.dev lists every affected version) without a range that holds it.
  if (mine.some((a) => a.versions?.includes(version))) return advice(undefined);
  return { affected: false };
}

export const DEPENDENCY_RULE_PREFIX = 'deps/';

function majorOf(v: string): number | undefined {
  const m = /^\D*(\d+)/.exec(v);
  return m ? Number(m[1]) : undefined;
}
function sameMajor(a: string, b: string): boolean {
  return majorOf(a) !== undefined && majorOf(a) === majorOf(b);
}

export function advisoryRuleInfo(adv: OsvRecord): RuleInfo {
  const url = adv.references?.find((r) => r.type === 'ADVISORY' || r.type === 'WEB')?.url;
  return { id: `${DEPENDENCY_RULE_PREFIX}${adv.id}`, description: adv.summary ?? adv.id, severity: advisorySeverity(adv), family: 'dependencies', ...(url ? { helpUri: url } : {}) };
}

/** One finding per (package name@version, advisory) of a lock file, at the first entry's line. */
export function matchAdvisories(packages: readonly LockedPackage[], advisories: readonly OsvRecord[], file: string): Finding[] {
  file = toWorkspacePath(file);
  const byName = new Map<string, OsvRecord[]>();
  for (const adv of advisories) {
    for (const a of adv.affected ?? []) {
      const n = a.package?.name;
      if (!n) continue;
      const list = byName.get(n) ?? [];
      if (!list.includes(adv)) list.push(adv);
      byName.set(n, list);
    }
  }
  const groups = new Map<string, LockedPackage[]>();
  for (const p of packages) {
    const k = `${p.name}@${p.version}`;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  const findings: Finding[] = [];
  for (const [key, entries] of groups) {
    const { name, version } = entries[0]!;
    for (const adv of byName.get(name) ?? []) {
      const m = advisoryAffects(adv, name, version);
      if (!m.affected) continue;
      const line = entries.find((e) => e.line !== undefined)?.line ?? 1;
      const aliases = (adv.aliases ?? []).filter((a) => a !== adv.id);
      const where = entries.length > 1 ? ` (${entries.length} entries: ${entries.slice(0, 3).map((e) => e.path).join(', ')}${entries.length > 3 ? ', ...' : ''})` : '';
      findings.push({
        ruleId: `${DEPENDENCY_RULE_PREFIX}${adv.id}`,
        severity: advisorySeverity(adv),
        message: `${key} is affected by ${adv.id}${aliases.length ? ` (${aliases.join(', ')})` : ''}: ${adv.summary ?? 'no summary'}; ${m.fixed ? `fixed in ${m.fixed}, upgrade to ${m.fixed} or later${sameMajor(version, m.fixed) ? ` (same major line ${majorOf(version)}.x)` : ''}` : 'no fixed version is known'}${where}`,
        file,
        range: { startLine: line, startColumn: 1, endLine: line, endColumn: 1 },
        snippet: key,
        fingerprint: fingerprint(`${DEPENDENCY_RULE_PREFIX}${adv.id}`, file, key),
      });
    }
  }
  return sortFindings(findings);
}

export interface DependencyScanResult {
  findings: Finding[];
  rules: RuleInfo[];
  lockfiles: Array<{ file: string; packages: number; error?: string }>;
  /** The local OSV file, when one was used. */
  advisoriesFile?: string;
  /** OSV records in the local file. */
  advisories: number;
  /** The local OSV file could not be read (the online lookup, if any, still ran). */
  advisoriesError?: string;
  /** The npm registry lookup, when one was attempted. */
  online?: OnlineLookupReport;
}

export const DEFAULT_ADVISORIES_FILE = '.cadre/advisories.json';

/** Absolute path of the advisory file: `input` (absolute or workspace-relative), else `.cadre/advisories.json` if present. */
export function resolveAdvisoriesFile(root: string, input: unknown): string | undefined {
  // Already confined against the step's workspace (a `since` scan of an older tree uses today's file).
  if (input instanceof ConfinedFile) return input.real;
  // Only a file inside the workspace: an outside path throws InputFileError (path only, never content).
  if (typeof input === 'string' && input.trim()) return confinedInputFile(root, input, 'input.advisories') ?? path.resolve(root, input);
  const def = path.join(root, DEFAULT_ADVISORIES_FILE);
  return existsSync(def) ? def : undefined;
}

/** A file already resolved inside the workspace by confinedInputFile. */
export class ConfinedFile {
  constructor(readonly real: string) {}
}

export interface ParsedLockfile {
  file: string;
  packages: LockedPackage[];
  error?: string;
}

/** The lock files among `files` (workspace-relative; not under node_modules), parsed. */
export function readLockfiles(root: string, files: readonly string[]): ParsedLockfile[] {
  const out: ParsedLockfile[] = [];
  for (const f of files) {
    const file = toWorkspacePath(f);
    if (!lockfileKind(file) || /(^|\/)node_modules\//.test(file)) continue;
    try {
      out.push({ file, packages: parseLockfile(file, readFileSync(path.join(root, file), 'utf8')) });
    } catch (e) {
      out.push({ file, packages: [], error: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

function lockfileSummary(locks: readonly ParsedLockfile[]): DependencyScanResult['lockfiles'] {
  return locks.map((l) => ({ file: l.file, packages: l.packages.length, ...(l.error !== undefined ? { error: l.error } : {}) }));
}

function matchLocal(locks: readonly ParsedLockfile[], advisories: readonly OsvRecord[], result: DependencyScanResult): void {
  const ruleIds = new Set<string>();
  for (const l of locks) {
    if (l.error !== undefined) continue;
    for (const fnd of matchAdvisories(l.packages, advisories, l.file)) {
      result.findings.push(fnd);
      ruleIds.add(fnd.ruleId);
    }
  }
  result.rules.push(...advisories.filter((a) => ruleIds.has(`${DEPENDENCY_RULE_PREFIX}${a.id}`)).map(advisoryRuleInfo));
}

/** Parses the lock files among `files` (workspace-relative) and matches them against the advisory file. */
export function scanDependencies(root: string, files: readonly string[], advisoriesFile: string): DependencyScanResult {
  const advisories = parseAdvisories(readFileSync(advisoriesFile, 'utf8'));
  const locks = readLockfiles(root, files);
  const result: DependencyScanResult = { findings: [], rules: [], lockfiles: lockfileSummary(locks), advisoriesFile, advisories: advisories.length };
  matchLocal(locks, advisories, result);
  sortFindings(result.findings);
  return result;
}

/**
 * The local OSV scan (when `advisoriesFile` is given) plus the npm registry lookup (when `client`
 * is given). Registry findings for an advisory the OSV file already reported for the same lock
 * file and name@version (same id, or a GHSA alias of the OSV record) are dropped. Network problems
 * are reported in `online`, never thrown; an unreadable OSV file is reported in `advisoriesError`.
 */
export async function scanDependenciesOnline(root: string, files: readonly string[], advisoriesFile: string | undefined,
  client: NpmAdvisoryClient | undefined, signal?: AbortSignal): Promise<DependencyScanResult> {
  const locks = readLockfiles(root, files);
  const result: DependencyScanResult = { findings: [], rules: [], lockfiles: lockfileSummary(locks), advisories: 0 };
  const seen = new Set<string>();
  if (advisoriesFile) {
    result.advisoriesFile = advisoriesFile;
    let advisories: OsvRecord[] | undefined;
    try {
      advisories = parseAdvisories(readFileSync(advisoriesFile, 'utf8'));
    } catch (e) {
      result.advisoriesError = e instanceof Error ? e.message : String(e);
    }
    if (advisories) {
      result.advisories = advisories.length;
      matchLocal(locks, advisories, result);
      const byRule = new Map<string, OsvRecord>(advisories.map((a) => [`${DEPENDENCY_RULE_PREFIX}${a.id}`, a]));
      for (const f of result.findings) {
        const adv = byRule.get(f.ruleId);
        for (const id of adv ? [adv.id, ...(adv.aliases ?? [])] : []) seen.add(`${f.file}\0${f.snippet ?? ''}\0${id.toUpperCase()}`);
      }
    }
  }
  if (client) {
    const usable = locks.filter((l) => l.error === undefined);
    const wanted = wantedVersions(usable.flatMap((l) => l.packages));
    const online: OnlineLookupReport = { status: 'skipped', endpoint: redactUrl(client.endpoint), packages: wanted.size };
    if (!wanted.size) {
      online.reason = usable.length ? 'the lock files list no package' : 'no readable lock file';
    } else {
      const got = await client.lookup(wanted, signal);
      online.requests = got.requests;
      online.answered = got.answered;
      online.status = got.errors.length === 0 ? 'ran' : got.answered > 0 ? 'partial' : 'failed';
      if (got.errors.length) online.errors = got.errors;
      if (got.requests === 0 && got.errors.length === 0) online.reason = 'every locked version was already looked up in this run';
      online.advisories = [...got.advisories.values()].reduce((n, l) => n + l.length, 0);
      let findings = 0;
      let duplicates = 0;
      let unreadable = 0;
      const ruleIds = new Set(result.rules.map((r) => r.id));
      for (const l of usable) {
        const m = matchNpmAdvisories(l.packages, got.advisories, l.file, (file, key, id) => seen.has(`${file}\0${key}\0${id.toUpperCase()}`));
        result.findings.push(...m.findings);
        findings += m.findings.length;
        duplicates += m.duplicates;
        unreadable += m.unreadableRanges;
        for (const r of m.rules) if (!ruleIds.has(r.id)) (ruleIds.add(r.id), result.rules.push(r));
      }
      online.findings = findings;
      online.duplicates = duplicates;
      if (unreadable) online.unreadableRanges = unreadable;
    }
    result.online = online;
  }
  sortFindings(result.findings);
  return result;
}
