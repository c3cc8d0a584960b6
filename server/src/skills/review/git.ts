/** The workspace's git diff through the hardened git runner (workspace/git.ts: no repository program runs). */
import { gitOut, UnsafeRepositoryError } from '../workspace/git';
import type { ChangedLines } from './analyze';

function git(cwd: string, args: string[], signal?: AbortSignal): Promise<string> {
  return gitOut(cwd, args, signal ? { signal } : {});
}

export async function isGitRepo(cwd: string, signal?: AbortSignal): Promise<boolean> {
  try {
    return (await git(cwd, ['rev-parse', '--is-inside-work-tree'], signal)).trim() === 'true';
  } catch (e) {
    // A repository git must not run on is said so, not taken for "no repository".
    if (e instanceof UnsafeRepositoryError) throw e;
    return false;
  }
}

async function hasRef(cwd: string, ref: string, signal?: AbortSignal): Promise<boolean> {
  try {
    await git(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], signal);
    return true;
  } catch {
    return false;
  }
}

const split0 = (s: string) => s.split('\0').filter(Boolean);

/** A base ref is a plain ref name (never an option). */
export function validRef(ref: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9_./~^@{}-]*$/.test(ref) && !ref.includes('..');
}

/** Hunks of `git diff -U0`: new-side lines added, and where lines were only removed. */
export function parseUnifiedZero(diff: string): ChangedLines {
  const added = new Set<number>();
  const deletedAt = new Set<number>();
  const re = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm;
  let m: RegExpExecArray | null;
  while ((m = re.exec(diff))) {
    const start = Number(m[1]);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    if (count === 0) deletedAt.add(Math.max(1, start));
    for (let l = start; l < start + count; l++) added.add(l);
  }
  return { added, deletedAt };
}

export interface WorkspaceDiff {
  base: string;
  /** Changed or new files (workspace-relative) with their changed lines; null = the whole file is new. */
  files: Array<{ file: string; changed: ChangedLines | null }>;
  /** Every tracked and untracked (not ignored) file, for the missing-tests lookup. */
  allFiles: string[];
}

/** The diff of the working tree (staged and unstaged) against `base`, plus untracked files. */
export async function workspaceDiff(cwd: string, base = 'HEAD', signal?: AbortSignal): Promise<WorkspaceDiff> {
  const allFiles = split0(await git(cwd, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], signal));
  const untracked = split0(await git(cwd, ['ls-files', '-z', '--others', '--exclude-standard'], signal));
  const files: WorkspaceDiff['files'] = [];
  if (!(await hasRef(cwd, base, signal))) {
    // No commit yet: everything is new.
    for (const f of allFiles) files.push({ file: f, changed: null });
    return { base, files, allFiles };
  }
  const names = split0(await git(cwd, ['diff', '--name-only', '-z', '--relative', '--no-renames', base], signal));
  for (const f of names) {
    const diff = await git(cwd, ['diff', '-U0', '--no-color', '--no-ext-diff', '--relative', '--no-renames', base, '--', f], signal);
    files.push({ file: f, changed: parseUnifiedZero(diff) });
  }
  for (const f of untracked) if (!names.includes(f)) files.push({ file: f, changed: null });
  return { base, files, allFiles: [...new Set([...allFiles, ...names])] };
}
