/** The `git` CLI through execFile: worktree-based commits on a new branch, and diffs without touching the repository. */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface GitResult { code: number; stdout: string; stderr: string; }

export function git(cwd: string, args: readonly string[], signal?: AbortSignal): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile('git', [...args], {
      cwd, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', ...(signal ? { signal } : {}),
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
    }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 128) : 0;
      resolve({ code, stdout: String(stdout ?? ''), stderr: String(stderr ?? (err ? err.message : '')) });
    });
  });
}

async function must(cwd: string, args: readonly string[], signal?: AbortSignal): Promise<string> {
  const r = await git(cwd, args, signal);
  if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout;
}

export interface RepoInfo {
  /** Repository top level (absolute). */
  top: string;
  /** The workspace's path inside the repository, '' or ending with '/'. */
  prefix: string;
  /** HEAD commit, undefined on an unborn branch. */
  head?: string;
}

export async function repoInfo(workspace: string): Promise<RepoInfo | undefined> {
  const top = await git(workspace, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) return undefined;
  const prefix = (await git(workspace, ['rev-parse', '--show-prefix'])).stdout.trim();
  const head = await git(workspace, ['rev-parse', '--verify', '-q', 'HEAD']);
  return { top: top.stdout.trim(), prefix, ...(head.code === 0 ? { head: head.stdout.trim() } : {}) };
}

/** The state of the user's checkout that a skill must leave as it found it. */
export interface CheckoutState { head: string; ref: string; status: string; }

export async function checkoutState(top: string): Promise<CheckoutState> {
  const head = (await git(top, ['rev-parse', '--verify', '-q', 'HEAD'])).stdout.trim();
  const ref = (await git(top, ['symbolic-ref', '-q', 'HEAD'])).stdout.trim() || '(detached)';
  const status = (await git(top, ['status', '--porcelain', '--untracked-files=all'])).stdout;
  return { head, ref, status };
}

/** The file as committed at HEAD, or undefined when HEAD has no such file. */
export async function showHead(top: string, repoPath: string): Promise<string | undefined> {
  const r = await git(top, ['show', `HEAD:${repoPath}`]);
  return r.code === 0 ? r.stdout : undefined;
}

export async function branchExists(top: string, branch: string): Promise<boolean> {
  return (await git(top, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).code === 0;
}

/** `base`, or `base-2`, `base-3`... when a branch of that name exists. */
export async function freeBranchName(top: string, base: string): Promise<string> {
  let name = base;
  for (let i = 2; await branchExists(top, name); i++) name = `${base}-${i}`;
  return name;
}

export interface BranchCommit { branch: string; commit: string; diff: string; base: string; }

/**
 * Creates `branch` from HEAD in a temporary worktree (`git worktree add <tmp> -b <branch>`), writes the
 * files there, commits and removes the worktree. The user's checkout, index and HEAD are never touched.
 */
export async function commitOnNewBranch(top: string, branch: string, files: ReadonlyArray<{ repoPath: string; content: string }>, message: string, signal?: AbortSignal): Promise<BranchCommit> {
  const base = (await must(top, ['rev-parse', 'HEAD'])).trim();
  const tmp = await mkdtemp(path.join(tmpdir(), 'cadre-wt-'));
  const wt = path.join(tmp, 'wt');
  let committed = false;
  try {
    await must(top, ['worktree', 'add', '-q', wt, '-b', branch, base], signal);
    for (const f of files) {
      const abs = path.join(wt, f.repoPath);
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, f.content);
    }
    await must(wt, ['add', '--', ...files.map((f) => f.repoPath)], signal);
    const identity = (await git(top, ['config', 'user.email'])).code === 0 ? [] : ['-c', 'user.name=Cadre', '-c', 'user.email=cadre@localhost'];
    await must(wt, [...identity, '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', message], signal);
    committed = true;
    const commit = (await must(wt, ['rev-parse', 'HEAD'])).trim();
    const diff = await must(wt, ['-c', 'core.quotepath=false', 'diff', '--no-color', '--no-ext-diff', 'HEAD~1']);
    return { branch, commit, diff, base };
  } finally {
    await git(top, ['worktree', 'remove', '--force', wt]);
    await rm(tmp, { recursive: true, force: true });
    await git(top, ['worktree', 'prune']);
    if (!committed) await git(top, ['branch', '-D', branch]);
  }
}

/** A unified diff of before/after contents (repo-relative paths) made in a scratch folder, outside the repository. */
export async function proposalDiff(files: ReadonlyArray<{ repoPath: string; before: string; after: string }>): Promise<string> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'cadre-diff-'));
  try {
    let out = '';
    for (const f of files) {
      const a = path.join(tmp, 'a', f.repoPath);
      const b = path.join(tmp, 'b', f.repoPath);
      await mkdir(path.dirname(a), { recursive: true });
      await mkdir(path.dirname(b), { recursive: true });
      await writeFile(a, f.before);
      await writeFile(b, f.after);
      const r = await git(tmp, ['-c', 'core.quotepath=false', 'diff', '--no-index', '--no-color', '--no-ext-diff', '--src-prefix=', '--dst-prefix=', `a/${f.repoPath}`, `b/${f.repoPath}`]);
      if (r.code > 1) throw new Error(`git diff --no-index failed: ${r.stderr.trim()}`);
      out += r.stdout;
    }
    return out;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
