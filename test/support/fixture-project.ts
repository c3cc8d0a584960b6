/**
 * A temporary project made of fixture files (and extra files written inline), optionally committed in a
 * fresh git repository: what the agents' integration tests run on.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const FIXTURES = path.resolve(__dirname, '../fixtures');

export interface FixtureProjectOptions {
  /** Destination (project-relative) → source (relative to test/fixtures; a folder is copied whole). */
  copy?: Record<string, string>;
  /** Files written with the given text. */
  files?: Record<string, string>;
  /** Commit everything in a new repository on `main` (default true). */
  git?: boolean;
  prefix?: string;
}

/** Makes the project; `made` (when given) receives its folder for the test's cleanup. */
export function fixtureProject(opts: FixtureProjectOptions, made?: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), opts.prefix ?? 'cadre-project-'));
  made?.push(dir);
  for (const [to, from] of Object.entries(opts.copy ?? {})) {
    const dest = to === '.' ? dir : path.join(dir, to);
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(path.join(FIXTURES, from), dest, { recursive: true });
  }
  for (const [to, text] of Object.entries(opts.files ?? {})) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    writeFileSync(path.join(dir, to), text);
  }
  if (opts.git !== false) {
    const sh = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' });
    sh('init', '-q', '-b', 'main');
    sh('add', '.');
    sh('commit', '-q', '-m', 'project');
  }
  return dir;
}
