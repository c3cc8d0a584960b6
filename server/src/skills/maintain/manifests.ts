/**
 * The manifests and lock files maintain-ai reads, each parsed with the line of every entry so that a
 * finding can name file and line:
 *
 *  - package.json: the direct dependencies (dependencies, devDependencies, optionalDependencies) with
 *    their ranges, `engines.node`.
 *  - package-lock.json / npm-shrinkwrap.json v1, v2, v3: the version resolved for each top-level
 *    package and (v2/v3) the copy of the root manifest npm recorded (`packages[""]`).
 *  - yarn.lock (v1 and berry): the entries by `name@range` spec.
 *  - pnpm-lock.yaml (v5 `specifiers`, v6 and v9 `importers['.']`): specifier and version per direct dependency.
 *  - requirements.txt (PEP 508 lines) and poetry.lock (`[[package]]` tables).
 *  - go.mod (`require` lines and blocks) and go.sum.
 *
 * Parsers throw ManifestError (file, line, what is wrong) on a file they cannot read: the step then
 * needs input naming them.
 */
import { isMap, isScalar, LineCounter, parseDocument, type YAMLMap } from 'yaml';

export class ManifestError extends Error {
  override name = 'ManifestError';
  constructor(readonly file: string, readonly line: number | undefined, what: string) {
    super(`${file}${line ? `:${line}` : ''}: ${what}`);
  }
}

/** 1-based line of a character offset. */
export function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** JSON.parse that reports the line of a syntax error (never quoting the text). */
export function parseJsonAt(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e instanceof Error ? e.message : '')?.[1];
    const at = pos !== undefined ? Number(pos) : jsonErrorOffset(text);
    throw new ManifestError(file, at !== undefined ? lineOf(text, at) : undefined, 'not valid JSON');
  }
}

/**
 * Offset of the first syntax error of a JSON text (undefined when it is valid). V8 gives the position
 * in some messages only ("Unexpected token '}', ... is not valid JSON" has none): this small
 * recursive-descent scan finds it for the others.
 */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++; };
  const fail = (): never => { throw i; };
  const str = () => {
    if (text[i] !== '"') fail();
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      if (text[i] === '\\') { i++; if (!'"\\/bfnrtu'.includes(text[i] ?? '')) fail(); if (text[i] === 'u') { if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail(); i += 4; } }
      i++;
    }
    if (text[i] !== '"') fail();
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; ws();
      if (text[i] === '}') { i++; return; }
      for (;;) { ws(); str(); ws(); if (text[i] !== ':') fail(); i++; value(); ws(); if (text[i] === ',') { i++; continue; } if (text[i] === '}') { i++; return; } fail(); }
    }
    if (c === '[') {
      i++; ws();
      if (text[i] === ']') { i++; return; }
      for (;;) { value(); ws(); if (text[i] === ',') { i++; continue; } if (text[i] === ']') { i++; return; } fail(); }
    }
    if (c === '"') { str(); return; }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m![0].length;
  };
  try {
    value(); ws();
    return i < text.length ? i : undefined;
  } catch (at) {
    return typeof at === 'number' ? Math.min(at, text.length) : undefined;
  }
}

/**
 * Line of `"key":` inside the JSON object that starts after `"section":` (the first match after
 * the section's key). Good enough for manifests: keys are unique within their section.
 */
export function jsonKeyLine(text: string, key: string, section?: string): number | undefined {
  let from = 0;
  if (section) {
    const s = text.indexOf(`${JSON.stringify(section)}`);
    if (s === -1) return undefined;
    from = s;
  }
  const re = new RegExp(`${escapeRe(JSON.stringify(key))}\\s*:`, 'g');
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? lineOf(text, m.index) : undefined;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export const DEP_SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;
export type DepSection = (typeof DEP_SECTIONS)[number];

export interface DeclaredDep {
  name: string;
  range: string;
  section: DepSection;
  line?: number;
}

export interface PackageJson {
  file: string;
  text: string;
  name?: string;
  deps: DeclaredDep[];
  engines?: { node: string; line?: number };
}

export function parsePackageJson(file: string, text: string): PackageJson {
  const json = parseJsonAt(file, text);
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new ManifestError(file, 1, 'expected a JSON object');
  const o = json as Record<string, unknown>;
  const deps: DeclaredDep[] = [];
  for (const section of DEP_SECTIONS) {
    const s = o[section];
    if (s === undefined) continue;
    if (!s || typeof s !== 'object' || Array.isArray(s)) throw new ManifestError(file, jsonKeyLine(text, section), `${section} must be an object of name: range`);
    for (const [name, range] of Object.entries(s as Record<string, unknown>)) {
      if (typeof range !== 'string') throw new ManifestError(file, jsonKeyLine(text, name, section), `${section}.${name} must be a string range`);
      const line = jsonKeyLine(text, name, section);
      deps.push({ name, range, section, ...(line ? { line } : {}) });
    }
  }
  const engines = o['engines'];
  const node = engines && typeof engines === 'object' ? (engines as Record<string, unknown>)['node'] : undefined;
  const enginesLine = typeof node === 'string' ? jsonKeyLine(text, 'node', 'engines') : undefined;
  return {
    file, text, deps,
    ...(typeof o['name'] === 'string' ? { name: o['name'] } : {}),
    ...(typeof node === 'string' ? { engines: { node, ...(enginesLine ? { line: enginesLine } : {}) } } : {}),
  };
}

/** What a lock file says about one direct dependency. */
export interface LockedDep {
  version: string;
  line?: number;
  /** The range the lock recorded for it (pnpm specifier, package-lock root manifest), when it records one. */
  specifier?: string;
  specifierLine?: number;
}

export interface NpmLock {
  file: string;
  kind: 'package-lock' | 'yarn' | 'pnpm';
  /** lockfileVersion as the file states it. */
  version: string;
  /** Direct dependency name → what the lock resolved (yarn: by `name@range` spec, see `yarnSpecs`). */
  direct: Map<string, LockedDep>;
  /** yarn only: `name@range` spec → resolved version and line. */
  yarnSpecs?: Map<string, { version: string; line: number }>;
  /** package-lock v2/v3: the ranges npm recorded from package.json (`packages[""]`), when present. */
  rootRanges?: Map<string, { range: string; line?: number }>;
}

export function parsePackageLockRoot(file: string, text: string): NpmLock {
  const json = parseJsonAt(file, text);
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw new ManifestError(file, 1, 'expected a JSON object');
  const o = json as Record<string, unknown>;
  const lv = o['lockfileVersion'];
  if (lv !== 1 && lv !== 2 && lv !== 3) throw new ManifestError(file, jsonKeyLine(text, 'lockfileVersion') ?? 1, `unknown lockfileVersion ${JSON.stringify(lv)} (1, 2 or 3 are read)`);
  const direct = new Map<string, LockedDep>();
  const packages = o['packages'];
  if ((lv === 2 || lv === 3) && packages && typeof packages === 'object') {
    const pk = packages as Record<string, unknown>;
    for (const [key, raw] of Object.entries(pk)) {
      // Top level only: `node_modules/<name>` (scoped names keep their slash), not nested copies.
      const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
      if (!m || !raw || typeof raw !== 'object') continue;
      const v = (raw as Record<string, unknown>)['version'];
      if (typeof v !== 'string') continue;
      const line = jsonKeyLine(text, key, 'packages');
      direct.set(m[1]!, { version: v, ...(line ? { line } : {}) });
    }
    const root = pk[''];
    const rootRanges = new Map<string, { range: string; line?: number }>();
    if (root && typeof root === 'object') {
      const rootAt = text.indexOf('"": {');
      for (const section of DEP_SECTIONS) {
        const s = (root as Record<string, unknown>)[section];
        if (!s || typeof s !== 'object') continue;
        for (const [name, range] of Object.entries(s as Record<string, unknown>)) {
          if (typeof range !== 'string') continue;
          const line = rootAt === -1 ? undefined : keyLineAfter(text, name, text.indexOf(JSON.stringify(section), rootAt));
          rootRanges.set(name, { range, ...(line ? { line } : {}) });
        }
      }
    }
    return { file, kind: 'package-lock', version: String(lv), direct, rootRanges };
  }
  const deps = o['dependencies'];
  if (deps && typeof deps === 'object') {
    for (const [name, raw] of Object.entries(deps as Record<string, unknown>)) {
      const v = raw && typeof raw === 'object' ? (raw as Record<string, unknown>)['version'] : undefined;
      if (typeof v !== 'string') continue;
      const line = jsonKeyLine(text, name, 'dependencies');
      direct.set(name, { version: v, ...(line ? { line } : {}) });
    }
  }
  return { file, kind: 'package-lock', version: String(lv), direct };
}

function keyLineAfter(text: string, key: string, from: number): number | undefined {
  if (from < 0) return undefined;
  const i = text.indexOf(`${JSON.stringify(key)}:`, from);
  return i === -1 ? undefined : lineOf(text, i);
}

/** yarn.lock v1 (`version "x"`) and berry (`version: x`): every spec of every entry header. */
export function parseYarnLockSpecs(file: string, text: string): NpmLock {
  const specs = new Map<string, { version: string; line: number }>();
  const lines = text.split(/\r?\n/);
  let header: { specs: string[]; line: number } | undefined;
  let berry = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l === '' || l.startsWith('#')) continue;
    if (!/^\s/.test(l)) {
      if (l.startsWith('__metadata')) { berry = true; header = undefined; continue; }
      if (!l.endsWith(':')) throw new ManifestError(file, i + 1, 'not a yarn.lock entry header (expected `name@range:`)');
      header = { specs: l.slice(0, -1).split(',').map((s) => s.trim().replace(/^"|"$/g, '')), line: i + 1 };
      continue;
    }
    const m = /^ {2}version:?\s+"?([^"\s]+)"?\s*$/.exec(l);
    if (m && header) {
      // berry writes `name@npm:range`: the spec package.json holds is `name@range`.
      for (const s of header.specs) specs.set(s.replace(/@npm:/, '@'), { version: m[1]!, line: header.line });
      header = undefined;
    }
  }
  return { file, kind: 'yarn', version: berry ? 'berry' : '1', direct: new Map(), yarnSpecs: specs };
}

/** pnpm-lock.yaml: the direct dependencies of the root importer with specifier, version and lines. */
export function parsePnpmLockRoot(file: string, text: string): NpmLock {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new ManifestError(file, e.linePos?.[0]?.line, 'not valid YAML');
  }
  if (!isMap(doc.contents)) throw new ManifestError(file, 1, 'expected a YAML mapping');
  const top = doc.contents as YAMLMap;
  const lockVersion = String(top.get('lockfileVersion') ?? '');
  if (!lockVersion) throw new ManifestError(file, 1, 'no lockfileVersion: not a pnpm lock file');
  const lineOfNode = (n: unknown) => (isScalar(n) && n.range ? lc.linePos(n.range[0]).line : undefined);
  const direct = new Map<string, LockedDep>();
  const importers = top.get('importers', true);
  const root = isMap(importers) ? importers.get('.', true) : top; // v5 without workspaces: sections at the top
  const specifiers = isMap(root) ? (root as YAMLMap).get('specifiers', true) : undefined;
  for (const section of DEP_SECTIONS) {
    const s = isMap(root) ? (root as YAMLMap).get(section, true) : undefined;
    if (!isMap(s)) continue;
    for (const pair of s.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (!name) continue;
      let version: string | undefined;
      let specifier: string | undefined;
      let specifierLine: number | undefined;
      if (isScalar(pair.value)) version = String(pair.value.value); // v5: name: version
      else if (isMap(pair.value)) {
        const v = pair.value.get('version'); const sp = pair.value.get('specifier', true);
        version = typeof v === 'string' ? v : undefined;
        if (isScalar(sp)) { specifier = String(sp.value); specifierLine = lineOfNode(sp); }
      }
      if (!specifier && isMap(specifiers)) {
        const sp = specifiers.get(name, true);
        if (isScalar(sp)) { specifier = String(sp.value); specifierLine = lineOfNode(sp); }
      }
      if (!version) continue;
      const line = lineOfNode(pair.key);
      // `1.2.3(react@18.2.0)` (peer suffix) and v5's `1.2.3_react@18.2.0`.
      direct.set(name, { version: version.replace(/[(_].*$/, ''), ...(line ? { line } : {}), ...(specifier !== undefined ? { specifier } : {}), ...(specifierLine ? { specifierLine } : {}) });
    }
  }
  return { file, kind: 'pnpm', version: lockVersion, direct };
}

// ---------------------------------------------------------------------------------------------
// Python

/** PEP 503 normalised name: lowercase, runs of `-_.` as one `-`. */
export function pyName(n: string): string {
  return n.toLowerCase().replace(/[-_.]+/g, '-');
}

export interface Requirement {
  name: string;
  /** `>=1.0,<2` (empty: any version). */
  specifier: string;
  line: number;
}

/** requirements.txt: one PEP 508 requirement a line; options (-r, -e, --hash...), URLs and comments skipped. */
export function parseRequirements(file: string, text: string): { requirements: Requirement[]; skipped: Array<{ line: number; why: string }> } {
  const requirements: Requirement[] = [];
  const skipped: Array<{ line: number; why: string }> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/(^|\s)#.*$/, '').trim();
    if (!raw) continue;
    if (raw.startsWith('-')) { skipped.push({ line: i + 1, why: `option ${raw.split(/\s/)[0]} not followed` }); continue; }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) || raw.includes(' @ ')) { skipped.push({ line: i + 1, why: 'a URL requirement has no version to compare' }); continue; }
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)(;.*)?$/.exec(raw);
    if (!m) throw new ManifestError(file, i + 1, 'not a requirement (PEP 508: name[extras] specifier ; marker)');
    const spec = m[3]!.replace(/\s+/g, '').replace(/\\$/, '');
    if (spec && !/^((===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!-]+)(,(===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!-]+)*$/.test(spec)) throw new ManifestError(file, i + 1, `unreadable version specifier ${JSON.stringify(spec)}`);
    requirements.push({ name: m[1]!, specifier: spec, line: i + 1 });
  }
  return { requirements, skipped };
}

/** poetry.lock: `[[package]]` tables with name and version (TOML read line by line: the keys are flat strings). */
export function parsePoetryLock(file: string, text: string): Map<string, { version: string; line: number }> {
  const out = new Map<string, { version: string; line: number }>();
  const lines = text.split(/\r?\n/);
  let cur: { name?: string; version?: string; line: number } | undefined;
  const flush = () => { if (cur?.name && cur.version) out.set(pyName(cur.name), { version: cur.version, line: cur.line }); };
  let tables = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (l === '[[package]]') { flush(); cur = { line: i + 1 }; tables++; continue; }
    if (l.startsWith('[')) { flush(); cur = undefined; continue; }
    if (!cur) continue;
    const m = /^(name|version)\s*=\s*"([^"]*)"\s*$/.exec(l);
    if (m) cur[m[1] as 'name' | 'version'] = m[2]!;
  }
  flush();
  if (!tables && text.trim()) throw new ManifestError(file, 1, 'no [[package]] table: not a poetry.lock');
  return out;
}

/** A PEP 440 release as numbers (epoch, pre/post/dev dropped: compared on the release segment). */
function pyRelease(v: string): number[] | undefined {
  const m = /^\s*v?(?:\d+!)?(\d+(?:\.\d+)*)/.exec(v);
  return m ? m[1]!.split('.').map(Number) : undefined;
}

function cmpRelease(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return Math.sign(d);
  }
  return 0;
}

/** Whether a version satisfies a PEP 440 specifier set (release segments; `==1.2.*` prefixes; `~=` compatible release). */
export function pySatisfies(version: string, specifier: string): boolean | undefined {
  const v = pyRelease(version);
  if (!v) return undefined;
  for (const clause of specifier.split(',').filter(Boolean)) {
    const m = /^(===|==|!=|~=|>=|<=|>|<)(.+)$/.exec(clause);
    if (!m) return undefined;
    const [, op, target] = m;
    if (op === '===') { if (version.trim() !== target) return false; continue; }
    if ((op === '==' || op === '!=') && target!.endsWith('.*')) {
      const prefix = pyRelease(target!.slice(0, -2));
      if (!prefix) return undefined;
      const same = prefix.every((n, i) => (v[i] ?? 0) === n);
      if ((op === '==') !== same) return false;
      continue;
    }
    const t = pyRelease(target!);
    if (!t) return undefined;
    const c = cmpRelease(v, t);
    const ok = op === '==' ? c === 0 : op === '!=' ? c !== 0 : op === '>=' ? c >= 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : op === '<' ? c < 0
      // ~=1.4.5 means >=1.4.5, ==1.4.*
      : c >= 0 && t.length >= 2 && t.slice(0, -1).every((n, i) => (v[i] ?? 0) === n);
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Go

export interface GoRequire {
  module: string;
  version: string;
  line: number;
  indirect: boolean;
}

/** go.mod's `require` directives (single lines and blocks). */
export function parseGoMod(file: string, text: string): { module?: string; requires: GoRequire[] } {
  const requires: GoRequire[] = [];
  let module: string | undefined;
  let inBlock = false;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const full = lines[i]!;
    const l = full.replace(/\/\/.*$/, '').trim();
    const indirect = /\/\/\s*indirect/.test(full);
    if (!l) continue;
    if (inBlock) {
      if (l === ')') { inBlock = false; continue; }
      const m = /^(\S+)\s+(\S+)$/.exec(l);
      if (!m) throw new ManifestError(file, i + 1, 'not a `module version` require line');
      requires.push({ module: m[1]!, version: m[2]!, line: i + 1, indirect });
      continue;
    }
    const mod = /^module\s+(\S+)/.exec(l);
    if (mod) { module = mod[1]!.replace(/^"|"$/g, ''); continue; }
    if (/^require\s*\($/.test(l)) { inBlock = true; continue; }
    const one = /^require\s+(\S+)\s+(\S+)$/.exec(l);
    if (one) requires.push({ module: one[1]!, version: one[2]!, line: i + 1, indirect });
    else if (/^require\b/.test(l)) throw new ManifestError(file, i + 1, 'not a `require module version` line');
  }
  if (inBlock) throw new ManifestError(file, lines.length, 'require block not closed');
  return { ...(module ? { module } : {}), requires };
}

/** go.sum: the set of `module version` (the module's tree hash) and `module version/go.mod` lines. */
export function parseGoSum(text: string): Set<string> {
  const out = new Set<string>();
  for (const l of text.split(/\r?\n/)) {
    const m = /^(\S+)\s+(\S+)\s+h1:/.exec(l.trim());
    if (m) out.add(`${m[1]} ${m[2]}`);
  }
  return out;
}
