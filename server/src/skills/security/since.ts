/**
 * "New since a commit": the workspace as it was at a commit, written to a temporary directory with a
 * temporary index (`git read-tree` + `git checkout-index`), so that the same scan can run on it and
 * its fingerprints can be subtracted. The user's index, HEAD, branches and working tree are never
 * touched; git runs through the hardened runner (workspace/git.ts: no filter, hook or fsmonitor of
 * the repository runs, even while checking files out).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { validRef } from '../review/git';
import { gitOut, UnsafeRepositoryError } from '../workspace/git';

export class SinceError extends Error {}

function git(cwd: string, args: string[], indexFile?: string, signal?: AbortSignal): Promise<string> {
  return gitOut(cwd, args, { ...(indexFile ? { indexFile } : {}), ...(signal ? { signal } : {}) });
}

export interface CommitTree {
  /** The commit-ish as given. */
  ref: string;
  /** Its full commit id. */
  commit: string;
  /** The workspace's directory inside the temporary checkout. */
  dir: string;
  /** Removes the temporary checkout. */
  dispose(): void;
}

/**
 * Checks out the tree of `ref` (a commit-ish of the repository that holds `workspace`) into a
 * temporary directory. Throws SinceError when the workspace is not in a git repository or the ref
 * does not name a commit.
 */
export async function checkoutCommitTree(workspace: string, ref: string, signal?: AbortSignal): Promise<CommitTree> {
  if (!validRef(ref)) throw new SinceError(`since: "${ref}" is not a valid commit-ish`);
  let top: string;
  let prefix: string;
  try {
    top = (await git(workspace, ['rev-parse', '--show-toplevel'], undefined, signal)).trim();
    prefix = (await git(workspace, ['rev-parse', '--show-prefix'], undefined, signal)).trim();
  } catch (e) {
    if (e instanceof UnsafeRepositoryError) throw new SinceError(`since: ${e.message}`);
    throw new SinceError('since: the workspace is not in a git repository');
  }
  let commit: string;
  try {
    commit = (await git(workspace, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], undefined, signal)).trim();
  } catch {
    throw new SinceError(`since: "${ref}" does not name a commit of the workspace's repository`);
  }
  const root = mkdtempSync(path.join(tmpdir(), 'cadre-since-'));
  const dispose = () => rmSync(root, { recursive: true, force: true });
  try {
    const tree = path.join(root, 'tree');
    mkdirSync(tree);
    const index = path.join(root, 'index');
    await git(top, ['read-tree', commit], index, signal);
    await git(top, [`--work-tree=${tree}`, 'checkout-index', '--all', '--force'], index, signal);
    return { ref, commit, dir: path.join(tree, prefix), dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}
