/**
 * A temporary checkout of a commit for a test run: `git worktree add --detach` in a `cadre-wt-test-`
 * folder under the temp directory, removed (with `git worktree prune`) when the run ends, whatever
 * way it ends. The user's working tree, index, HEAD and branches are never touched: coder-ai's code
 * is tested where it is (its commit), not where the user is working. Every git call goes through the
 * hardened runner (workspace/git.ts: no repository program runs, filter drivers neutralised).
 *
 * The project's installed dependencies (`node_modules` of the workspace, not tracked by git) are
 * linked into the checkout so the test command finds its runner and libraries; the link is removed
 * before the worktree, so removing the checkout never reaches into the user's node_modules.
 */
import { existsSync, lstatSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runGit } from '../workspace/git';

export interface TestCheckout {
  /** The workspace's folder inside the checkout (where the test command runs). */
  dir: string;
  /** The worktree's top folder. */
  worktree: string;
  commit: string;
  /** Folders linked from the workspace (node_modules). */
  linked: string[];
  /** Removes the worktree and its registration; never throws. */
  remove(): Promise<void>;
}

/** Untracked folders a test run needs from the workspace, linked into the checkout. */
const LINKED = ['node_modules'];

async function must(cwd: string, args: string[], signal?: AbortSignal): Promise<string> {
  const r = await runGit(cwd, args, signal ? { signal } : {});
  if (r.code !== 0) throw new Error(`git ${args[0]} ${args[1] ?? ''} failed: ${r.stderr.trim().split('\n').slice(-1)[0] || `exit ${r.code}`}`);
  return r.stdout;
}

/** Checks `commit` out in a new temporary worktree of the workspace's repository. */
export async function checkoutCommit(workspace: string, commit: string, signal?: AbortSignal): Promise<TestCheckout> {
  const top = (await must(workspace, ['rev-parse', '--show-toplevel'], signal)).trim();
  const prefix = (await must(workspace, ['rev-parse', '--show-prefix'], signal)).trim();
  const tmp = mkdtempSync(path.join(tmpdir(), 'cadre-wt-test-'));
  const worktree = path.join(tmp, 'wt');
  const linked: string[] = [];
  const remove = async (): Promise<void> => {
    for (const l of linked) { try { unlinkSync(l); } catch { /* already gone */ } }
    await runGit(top, ['worktree', 'remove', '--force', worktree]).catch(() => undefined);
    rmSync(tmp, { recursive: true, force: true });
    await runGit(top, ['worktree', 'prune']).catch(() => undefined);
  };
  try {
    await must(top, ['worktree', 'add', '--detach', '-q', worktree, commit], signal);
    const dir = path.join(worktree, prefix);
    for (const name of LINKED) {
      const from = path.join(workspace, name);
      const to = path.join(dir, name);
      if (!existsSync(from) || existsSync(to)) continue;
      if (!lstatSync(from).isDirectory()) continue;
      symlinkSync(from, to, process.platform === 'win32' ? 'junction' : 'dir');
      linked.push(to);
    }
    return { dir, worktree, commit, linked, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}
