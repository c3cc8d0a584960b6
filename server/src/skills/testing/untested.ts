/** Source and test files of a workspace, exported functions no test mentions, and test skeletons for them. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { FileChange } from '../../engine/rigor/skill';
import type { CoverageReport } from './parsers';
import { WorkspaceFiles } from '../workspace/files';

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'out', 'coverage', '.nyc_output', 'target', 'vendor', '__pycache__', '.venv', 'venv', '.tox', '.next', 'fixtures', '.cadre']);
const SOURCE_EXT = /\.(?:[cm]?[jt]sx?|py)$/;
const MAX_FILES = 3000;
const MAX_BYTES = 512 * 1024;

export function isTestFile(rel: string): boolean {
  const p = rel.split(path.sep).join('/');
  const base = path.posix.basename(p);
  return /\.(test|spec)\.[cm]?[jt]sx?$/.test(base) || /^test_.*\.py$/.test(base) || /_test\.(py|go)$/.test(base) || /(^|\/)(test|tests|__tests__|spec)\//.test(p);
}

/** Workspace-relative source and test files (JS/TS/Python), skipping dependencies, build output and fixtures. */
export function listFiles(workspace: string): { sources: string[]; tests: string[] } {
  const sources: string[] = [], tests: string[] = [];
  const visit = (dir: string) => {
    if (sources.length + tests.length >= MAX_FILES) return;
    let entries: import('node:fs').Dirent[];
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (e.name.startsWith('.') && e.name !== '.') continue;
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) { if (!SKIP_DIRS.has(e.name)) visit(abs); continue; }
      if (!e.isFile() || !SOURCE_EXT.test(e.name) || e.name.endsWith('.d.ts') || /\.config\.[cm]?[jt]s$/.test(e.name) || e.name === 'conftest.py' || e.name === 'setup.py') continue;
      const rel = path.relative(workspace, abs).split(path.sep).join('/');
      (isTestFile(rel) ? tests : sources).push(rel);
    }
  };
  visit(workspace);
  return { sources, tests };
}

function readSmall(abs: string): string {
  try { return statSync(abs).size > MAX_BYTES ? '' : readFileSync(abs, 'utf8'); } catch { return ''; }
}

export interface ExportedFunction { file: string; name: string; line: number; }

/** Exported functions by regex: `export function`, `export const x = (...) =>`, `module.exports.x =`, `exports.x =`; Python top-level `def`. */
export function exportedFunctions(file: string, text: string): ExportedFunction[] {
  const out: ExportedFunction[] = [];
  const seen = new Set<string>();
  const add = (name: string, line: number) => { if (!seen.has(name)) { seen.add(name); out.push({ file, name, line }); } };
  const lines = text.split('\n');
  const py = file.endsWith('.py');
  lines.forEach((l, i) => {
    let m: RegExpExecArray | null;
    if (py) {
      if ((m = /^(?:async\s+)?def\s+([A-Za-z]\w*)\s*\(/.exec(l))) add(m[1]!, i + 1);
      return;
    }
    if ((m = /^\s*export\s+(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/.exec(l))) add(m[1]!, i + 1);
    else if ((m = /^\s*export\s+const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=>)/.exec(l))) add(m[1]!, i + 1);
    else if ((m = /^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>|[A-Za-z_$][\w$]*\s*;?\s*$)/.exec(l))) add(m[1]!, i + 1);
  });
  // module.exports = { a, b: fn } — shorthand names that are functions defined in the file.
  const obj = /module\.exports\s*=\s*\{([^}]*)\}/.exec(text);
  if (obj) {
    for (const part of obj[1]!.split(',')) {
      const name = /^\s*([A-Za-z_$][\w$]*)/.exec(part)?.[1];
      if (!name) continue;
      const def = new RegExp(`^\\s*(?:async\\s+)?function\\s+${name}\\b|^\\s*(?:const|let|var)\\s+${name}\\s*=\\s*(?:async\\s+)?(?:function\\b|\\(|[A-Za-z_$][\\w$]*\\s*=>)`, 'm').exec(text);
      if (def) add(name, text.slice(0, def.index).split('\n').length + (text[def.index] === '\n' ? 1 : 0));
    }
  }
  return out;
}

export interface Untested {
  /** Source files with 0 % line coverage or no entry in the coverage report ('coverage'); without a report, files no test file names ('references'). */
  basis: 'coverage' | 'references';
  files: string[];
  functions: ExportedFunction[];
}

function coverageIndex(workspace: string, cov: CoverageReport): Map<string, number> {
  const m = new Map<string, number>();
  for (const f of cov.files) {
    const rel = path.isAbsolute(f.file) ? path.relative(workspace, f.file) : f.file;
    m.set(rel.split(path.sep).join('/').replace(/^\.\//, ''), f.pct);
  }
  return m;
}

/** Untested files and exported functions whose name appears in no test file's text (word match). */
export function findUntested(workspace: string, cov?: CoverageReport, listed = listFiles(workspace)): Untested & { sources: number; testFiles: number } {
  const testText = listed.tests.map((t) => readSmall(path.join(workspace, t))).join('\n');
  const files: string[] = [];
  const covIdx = cov ? coverageIndex(workspace, cov) : undefined;
  const functions: ExportedFunction[] = [];
  for (const src of listed.sources) {
    if (covIdx) {
      const p = covIdx.get(src);
      if (p === undefined || p === 0) files.push(src);
    } else {
      const stem = path.posix.basename(src).replace(/\.[^.]+$/, '');
      if (stem !== 'index' && !new RegExp(`\\b${stem.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}\\b`).test(testText)) files.push(src);
    }
    for (const fn of exportedFunctions(src, readSmall(path.join(workspace, src)))) {
      if (!new RegExp(`\\b${fn.name.replace(/\$/g, '\\$')}\\b`).test(testText)) functions.push(fn);
    }
  }
  return { basis: covIdx ? 'coverage' : 'references', files, functions, sources: listed.sources.length, testFiles: listed.tests.length };
}

export type TestStyle = 'node-test' | 'mocha' | 'jest' | 'vitest' | 'pytest';

/** The project's test style, from the detected runner, else its test files' imports. */
export function detectStyle(runner: string | undefined, testSample: string): TestStyle {
  if (runner === 'node-test' || runner === 'mocha' || runner === 'jest' || runner === 'vitest' || runner === 'pytest') return runner;
  if (/from ['"]vitest['"]/.test(testSample)) return 'vitest';
  if (/['"]node:test['"]/.test(testSample)) return 'node-test';
  if (/\bjest\b/.test(testSample)) return 'jest';
  if (/^\s*(?:def test_|import pytest)/m.test(testSample)) return 'pytest';
  return 'mocha';
}

/** Where a skeleton for `src` goes: next to existing tests' layout (test/ dir when the project has one, else beside the source). */
export function skeletonPath(src: string, style: TestStyle, testDir: string | undefined, esm: boolean, ts: boolean): string {
  const dir = path.posix.dirname(src);
  const stem = path.posix.basename(src).replace(/\.[^.]+$/, '');
  if (style === 'pytest') return `${testDir ?? 'tests'}/test_${stem}.py`;
  const ext = ts ? (esm ? '.test.ts' : '.test.ts') : src.endsWith('.mjs') ? '.test.mjs' : src.endsWith('.cjs') ? '.test.cjs' : '.test.js';
  return testDir ? `${testDir}/${stem}${ext}` : `${dir === '.' ? '' : `${dir}/`}${stem}${ext}`;
}

/** A test skeleton importing the functions, one case each with a TODO assertion. */
export function generateSkeleton(opts: { src: string; testPath: string; names: string[]; style: TestStyle; esm: boolean }): string {
  const { src, testPath, names, style } = opts;
  if (style === 'pytest') {
    const mod = src.replace(/\.py$/, '').split('/').filter((s) => s !== 'src').join('.');
    return [`from ${mod} import ${names.join(', ')}`, '', ...names.flatMap((n) => [`def test_${n}():`, `    # TODO: call ${n} with real inputs and assert on the result`, `    assert ${n} is not None`, '', '']).slice(0, -1)].join('\n');
  }
  let rel = path.posix.relative(path.posix.dirname(testPath), src);
  if (!rel.startsWith('.')) rel = `./${rel}`;
  const isTs = /\.tsx?$/.test(src);
  const ts = /\.tsx?$/.test(testPath);
  const esm = opts.esm || ts || src.endsWith('.mjs');
  const spec = isTs ? rel.replace(/\.tsx?$/, '') : rel;
  const lines: string[] = [];
  const imp = (what: string, from: string) => (esm ? `import ${what} from '${from}';` : `const ${what.replace(/ as /g, ': ')} = require('${from}');`);
  if (style === 'node-test') {
    lines.push(esm ? `import { describe, it } from 'node:test';` : `const { describe, it } = require('node:test');`);
    lines.push(esm ? `import assert from 'node:assert/strict';` : `const assert = require('node:assert/strict');`);
  } else if (style === 'vitest') lines.push(`import { describe, it, expect } from 'vitest';`);
  else if (style === 'mocha') lines.push(esm ? `import assert from 'node:assert/strict';` : `const assert = require('node:assert/strict');`);
  lines.push(imp(`{ ${names.join(', ')} }`, spec), '');
  const jestLike = style === 'jest' || style === 'vitest';
  lines.push(`describe('${path.posix.basename(src)}', () => {`);
  names.forEach((n, i) => {
    if (i) lines.push('');
    lines.push(`  describe('${n}', () => {`);
    lines.push(`    it('works for a typical input', () => {`);
    lines.push(`      // TODO: call ${n} with real inputs and assert on the result`);
    lines.push(jestLike ? `      expect(typeof ${n}).toBe('function');` : `      assert.equal(typeof ${n}, 'function');`);
    lines.push('    });', '  });');
  });
  lines.push('});', '');
  return lines.join('\n');
}

/** File changes (kind create) with one skeleton per source file holding untested exported functions. */
export function skeletonChanges(workspace: string, fns: ExportedFunction[], style: TestStyle, existingTests: string[]): FileChange[] {
  let esm = false;
  const pkg = new WorkspaceFiles(workspace).readText('package.json');
  try { esm = pkg.ok && (JSON.parse(pkg.text) as { type?: string }).type === 'module'; } catch { /* no package.json */ }
  const topDirs = existingTests.map((t) => t.split('/')[0]!).filter((d) => ['test', 'tests', '__tests__', 'spec'].includes(d));
  const testDir = style === 'pytest' ? (topDirs[0] ?? 'tests') : topDirs[0];
  const bySrc = new Map<string, string[]>();
  for (const f of fns) bySrc.set(f.file, [...(bySrc.get(f.file) ?? []), f.name]);
  const taken = new Set(existingTests);
  const changes: FileChange[] = [];
  for (const [src, names] of bySrc) {
    if (style === 'pytest' ? !src.endsWith('.py') : src.endsWith('.py')) continue;
    const isTs = /\.tsx?$/.test(src);
    const first = skeletonPath(src, style, testDir, esm, isTs);
    let testPath = first;
    for (let k = 2; taken.has(testPath) || existsRel(workspace, testPath); k++) testPath = first.replace(/((?:\.test)?\.[^.]+)$/, `_${k}$1`);
    taken.add(testPath);
    const content = generateSkeleton({ src, testPath, names, style, esm });
    changes.push({ path: testPath, kind: 'create', content, linesAdded: content.split('\n').length - (content.endsWith('\n') ? 1 : 0), linesRemoved: 0, applied: false });
  }
  return changes;
}

function existsRel(workspace: string, rel: string): boolean {
  try { statSync(path.join(workspace, rel)); return true; } catch { return false; }
}
