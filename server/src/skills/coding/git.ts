/**
 * coder-ai's git: commits on a new branch made in a temporary worktree, and diffs that never touch the
 * repository. Every call goes through the hardened runner (skills/workspace/git.ts): a repository's
 * own config, hooks and attributes run nothing.
 *
 * Exactly once across crashes (see engine/executions/side-effect-ledger.ts): the branch of an
 * execution step has a deterministic name (`effectBranch`) and its commit carries the trailer
 * `Cadre-Execution: <execution id>:<step>`, so a step resumed after a crash finds the work of the
 * interrupted attempt (`findEffectBranch`) instead of committing it again on `-2`. The branch ref is
 * created last, in one `update-ref` that fails if it exists: a branch of that name is either complete
 * or absent. The worktree lives at a path chosen before the effect (`plannedWorktree`, a `cadre-wt-`
 * name recorded in the ledger's intent) and is removed in a finally block, and by `releaseWorktrees`
 * after a failure or, at start-up, after a crash.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EffectResource } from '../../engine/rigor/skill';
import { runGit, type GitResult } from '../workspace/git';

export type { GitResult } from '../workspace/git';

/** One git command through the hardened runner; a non-zero exit is a result, not an error. */
export function git(cwd: string, args: readonly string[], signal?: AbortSignal): Promise<GitResult> {
  return runGit(cwd, args, signal ? { signal } : {});
}

async function must(cwd: string, args: readonly string[], signal?: AbortSignal): Promise<string> {
  const r = await git(cwd, args, signal);
  if (r.code !== 0) throw new Error(`git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
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

/** Execution ids are `<kind>_<24 hex>`: 12 characters keep names short and collisions negligible. */
export function shortId(executionId: string): string {
  return executionId.replace(/[^A-Za-z0-9]/g, '').slice(0, 12).toLowerCase() || 'exec';
}

/** The branch of one execution step: the same name on every attempt, so a resumed step can find it. */
export function effectBranch(executionId: string, step: number, action: string): string {
  return `cadre/${shortId(executionId)}-s${step}-${action}`;
}

/** The trailer value that marks a commit as the work of one execution step. */
export function effectTrailer(executionId: string, step: number): string {
  return `${executionId}:${step}`;
}

export const TRAILER_KEY = 'Cadre-Execution';

/** A fresh `cadre-wt-` worktree path (not created): recorded in the ledger's intent before the effect makes it. */
export function plannedWorktree(): string {
  return path.join(tmpdir(), `cadre-wt-${randomBytes(6).toString('hex')}`);
}

export interface BranchCommit {
  branch: string;
  commit: string;
  diff: string;
  base: string;
  /** Found in the repository (an earlier attempt made it), not committed by this call. */
  adopted?: boolean;
}

/**
 * The commit of an earlier attempt of the same execution step: a branch named `branch` (or a
 * `branch-N` a foreign branch of that name pushed it to) whose tip carries the step's trailer.
 */
export async function findEffectBranch(top: string, branch: string, trailer: string, signal?: AbortSignal): Promise<BranchCommit | undefined> {
  const r = await git(top, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(parent)%00%(contents)%1e', `refs/heads/${branch}`, `refs/heads/${branch}-*`], signal);
  if (r.code !== 0) return undefined;
  const line = `${TRAILER_KEY}: ${trailer}`;
  for (const entry of r.stdout.split('\x1e')) {
    const [ref, commit, parent, message] = entry.replace(/^\n/, '').split('\0');
    if (!ref || !commit || !parent || parent.includes(' ')) continue;
    if (!(message ?? '').split('\n').some((l) => l.trim() === line)) continue;
    const diff = await must(top, ['-c', 'core.quotepath=false', 'diff', '--no-color', parent, commit], signal);
    return { branch: ref.replace(/^refs\/heads\//, ''), commit, diff, base: parent, adopted: true };
  }
  return undefined;
}

export interface CommitRequest {
  /** The deterministic name (`effectBranch`); `-2`... only when a foreign branch already has it. */
  branch: string;
  /** `effectTrailer(executionId, step)`: written into the commit message. */
  trailer: string;
  files: ReadonlyArray<{ repoPath: string; content: string }>;
  message: string;
  /** Where the temporary worktree goes (`plannedWorktree`, recorded in the ledger before). */
  worktree: string;
  signal?: AbortSignal;
}

/**
 * Commits `files` on a new branch from HEAD, in a temporary detached worktree; the user's checkout,
 * index and HEAD are never touched. Idempotent per execution step: when the step's commit already
 * exists (an interrupted earlier attempt), it is adopted and nothing is committed.
 */
export async function commitOnNewBranch(top: string, req: CommitRequest): Promise<BranchCommit> {
  const { signal } = req;
  const earlier = await findEffectBranch(top, req.branch, req.trailer, signal);
  if (earlier) return earlier;
  const branch = await freeBranchName(top, req.branch);
  const base = (await must(top, ['rev-parse', 'HEAD'], signal)).trim();
  const wt = req.worktree;
  try {
    await must(top, ['worktree', 'add', '-q', '--detach', wt, base], signal);
    for (const f of req.files) {
      const abs = path.join(wt, f.repoPath);
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, f.content);
    }
    await must(wt, ['add', '--', ...req.files.map((f) => f.repoPath)], signal);
    const identity = (await git(top, ['config', 'user.email'])).code === 0 ? [] : ['-c', 'user.name=Cadre', '-c', 'user.email=cadre@localhost'];
    const message = `${req.message.trimEnd()}\n\n${TRAILER_KEY}: ${req.trailer}\n`;
    await must(wt, [...identity, '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', message], signal);
    const commit = (await must(wt, ['rev-parse', 'HEAD'], signal)).trim();
    const diff = await must(wt, ['-c', 'core.quotepath=false', 'diff', '--no-color', 'HEAD~1'], signal);
    // Last, in one step that fails if the ref exists: the branch appears complete or not at all.
    await must(top, ['update-ref', `refs/heads/${branch}`, commit, ''], signal);
    return { branch, commit, diff, base };
  } finally {
    await removeWorktree(top, wt);
    await git(top, ['worktree', 'prune']).catch(() => undefined);
  }
}

/** Removes one temporary worktree, whatever state an interrupted `worktree add` left it in (locked, half-written). */
async function removeWorktree(top: string, wt: string): Promise<void> {
  await git(top, ['worktree', 'unlock', wt]).catch(() => undefined);
  await git(top, ['worktree', 'remove', '--force', '--force', wt]).catch(() => undefined);
  await rm(wt, { recursive: true, force: true });
  // An entry `worktree add` was killed while writing is one git itself cannot read (nor remove, nor
  // prune): its admin folder goes as prune would remove it.
  for (const e of await registeredWorktrees(top)) {
    if (e.path === wt || (path.basename(wt).startsWith('cadre-wt-') && path.basename(e.admin) === path.basename(wt))) await rm(e.admin, { recursive: true, force: true });
  }
}

/**
 * The linked worktrees of a repository as its admin folders record them (`<common dir>/worktrees/<name>/gitdir`
 * names `<worktree>/.git`), read as files: `git worktree list` fails on an entry a killed `worktree add` left
 * half-written. `path` is '' when the entry does not say.
 */
async function registeredWorktrees(top: string): Promise<Array<{ admin: string; path: string }>> {
  const common = await git(top, ['rev-parse', '--git-common-dir']).catch(() => undefined);
  if (!common || common.code !== 0) return [];
  const dir = path.resolve(top, common.stdout.trim(), 'worktrees');
  let names: string[];
  try { names = await readdir(dir); } catch { return []; }
  const out: Array<{ admin: string; path: string }> = [];
  for (const name of names) {
    const admin = path.join(dir, name);
    const gitdir = (await readFile(path.join(admin, 'gitdir'), 'utf8').catch(() => '')).trim();
    out.push({ admin, path: gitdir ? path.dirname(gitdir) : '' });
  }
  return out;
}

/**
 * Releases the worktrees of interrupted effects (the ledger's resources): each is removed and its
 * repository pruned, so `git worktree list` no longer shows it. Only `cadre-wt-` paths are touched.
 */
export async function releaseWorktrees(resources: readonly EffectResource[]): Promise<void> {
  const repos = new Set<string>();
  for (const r of resources) {
    if (r.kind !== 'worktree' || !path.basename(r.path).startsWith('cadre-wt-')) continue;
    await removeWorktree(r.repo, r.path);
    repos.add(r.repo);
  }
  for (const repo of repos) await git(repo, ['worktree', 'prune']).catch(() => undefined);
}

/**
 * Start-up sweep (nothing of this process runs yet): in the repository of each workspace, every
 * registered worktree in a `cadre-wt-` folder (coder-ai's commits; tester-ai's checkouts, a `wt` inside
 * a `cadre-wt-test-` folder) is removed, then the repository is pruned. Returns how many were removed.
 */
export async function sweepWorktrees(workspaces: readonly string[]): Promise<number> {
  let removed = 0;
  const tops = new Set<string>();
  for (const ws of workspaces) {
    const top = await git(ws, ['rev-parse', '--show-toplevel']).catch(() => undefined);
    if (top?.code === 0) tops.add(top.stdout.trim());
  }
  for (const top of tops) {
    for (const { admin, path: wt } of await registeredWorktrees(top)) {
      if (!wt) {
        // Half-written by a killed `worktree add`: ours when named like our folders.
        if (path.basename(admin).startsWith('cadre-wt-')) { await rm(admin, { recursive: true, force: true }); removed++; }
        continue;
      }
      // coder-ai's worktree is the `cadre-wt-` folder; tester-ai's is `wt` inside a `cadre-wt-test-` one.
      const own = path.basename(wt).startsWith('cadre-wt-') ? wt : path.basename(path.dirname(wt)).startsWith('cadre-wt-') ? path.dirname(wt) : undefined;
      if (!own) continue;
      await removeWorktree(top, wt);
      await rm(own, { recursive: true, force: true });
      removed++;
    }
    await git(top, ['worktree', 'prune']).catch(() => undefined);
  }
  return removed;
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
      const r = await git(tmp, ['-c', 'core.quotepath=false', 'diff', '--no-index', '--no-color', '--src-prefix=', '--dst-prefix=', `a/${f.repoPath}`, `b/${f.repoPath}`]);
      if (r.code > 1) throw new Error(`git diff --no-index failed: ${r.stderr.trim()}`);
      out += r.stdout;
    }
    return out;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
