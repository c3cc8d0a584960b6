/** Missing-tests check: a changed source file with no test file of the same base name. */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { isSourceFile } from './analyze';

const TEST_DIR = /(^|\/)(__tests__|tests?|spec)\//;

export function isTestFile(file: string): boolean {
  const base = path.posix.basename(file);
  return TEST_DIR.test(file) || /\.(test|spec)\.[^.]+$/.test(base) || /^test_.+\.py$/.test(base) || /_test\.(py|go)$/.test(base)
    || /(Test|Tests|Spec)\.(java|kt|cs|scala)$/.test(base);
}

/** Files that need no test of their own: declarations, configs, fixtures, benches, scripts. */
function exempt(file: string): boolean {
  const base = path.posix.basename(file);
  return /\.d\.[mc]?ts$/.test(base) || /\.config\.[^.]+$/.test(base) || /^\./.test(base)
    || /(^|\/)(fixtures?|bench|benchmarks?|scripts?|node_modules|dist|build|vendor)\//.test(file);
}

function stem(file: string): string {
  let b = path.posix.basename(file).replace(/\.[^.]+$/, '');
  b = b.replace(/\.(test|spec)$/, '').replace(/^test_/, '').replace(/_test$/, '').replace(/(Tests?|Spec)$/, '');
  return b.toLowerCase();
}

/** Base names under which a source file's tests may be found (index files: their folder's name too). */
function sourceStems(file: string): string[] {
  const s = stem(file);
  const dir = path.posix.basename(path.posix.dirname(file));
  return s === 'index' && dir && dir !== '.' ? [s, dir.toLowerCase()] : [s];
}

/** Source files among `changed` with no changed or existing test file in `allFiles`. */
export function missingTests(changed: readonly string[], allFiles: readonly string[]): string[] {
  const testStems = new Set<string>();
  for (const f of [...allFiles, ...changed]) if (isSourceFile(f) && isTestFile(f)) testStems.add(stem(f));
  return changed.filter((f) => isSourceFile(f) && !isTestFile(f) && !exempt(f) && !sourceStems(f).some((s) => testStems.has(s)));
}

/** The files of a directory tree (outside git), bounded; skips VCS, dependency and build folders. */
export function listTree(root: string, limit = 20000): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    if (out.length >= limit) return;
    let entries;
    try {
      entries = readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (out.length >= limit) return;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!['.git', 'node_modules', 'dist', 'build', '.venv', 'venv', '__pycache__'].includes(e.name)) walk(p);
      } else if (e.isFile()) out.push(p);
    }
  };
  walk('');
  return out;
}
