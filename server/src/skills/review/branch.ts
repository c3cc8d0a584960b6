/**
 * The change a coder-ai step made, as later steps of the same execution find it: coder-ai commits on a
 * new branch in a separate worktree (data.branch, data.commit, data.base), so the user's working tree
 * never holds it. review-ai reviews that commit's diff against its base and reads the files from the
 * commit (`git cat-file`), read-only: no checkout, nothing written. Every git call goes through the
 * hardened runner (workspace/git.ts).
 */
import type { StepSummary } from '../../engine/rigor/skill';
import { runGit } from '../workspace/git';
import type { ChangedLines } from './analyze';
import { parseUnifiedZero, validRef } from './git';

/** A branch coder-ai committed in an earlier step of the execution. */
export interface CoderBranch {
  branch: string;
  /** The commit coder-ai made (what is reviewed and tested, even if the branch moved since). */
  commit: string;
  /** The commit it branched from (the diff's left side). */
  base: string;
  /** The step that made it. */
  step: number;
}

const SHA = /^[0-9a-f]{7,64}$/i;

/**
 * The branch of the latest coder-ai step before this one, when that step committed on one (data.mode
 * 'branch' with branch, commit and base); undefined when there is no coder-ai step or the latest only
 * proposed a diff (an older branch is not the code the chain is about any more).
 */
export function coderBranchOf(previous: readonly StepSummary[]): CoderBranch | undefined {
  const s = [...previous].reverse().find((x) => x.agentId === 'coder-ai');
  const d = s?.data as Record<string, unknown> | null | undefined;
  if (!s || !d || typeof d !== 'object') return undefined;
  const { branch, commit, base } = d as { branch?: unknown; commit?: unknown; base?: unknown };
  if (typeof branch === 'string' && validRef(branch) && typeof commit === 'string' && SHA.test(commit) && typeof base === 'string' && SHA.test(base)) {
    return { branch, commit, base, step: s.step };
  }
  return undefined;
}

/**
 * Why the latest coder-ai step of the execution left nothing to work on for the steps after it (it
 * only proposed a diff: ACMF did not allow the commit, or there is no repository), or undefined.
 */
export function coderProposalNote(previous: readonly StepSummary[]): string | undefined {
  const last = [...previous].reverse().find((s) => s.agentId === 'coder-ai');
  const mode = (last?.data as { mode?: unknown } | null | undefined)?.mode;
  if (!last || mode !== 'proposal') return undefined;
  return `coder-ai (step ${last.step}) only proposed its change as a diff, nothing was committed: the working tree, which does not hold that change, is what this step sees`;
}

/** A file's content as the reviewed commit holds it, or why it is not analysed. */
export interface Blob { text?: string; skipped?: string; }

export interface BranchDiff {
  /** Changed or new files of the commit (workspace-relative) with their changed lines. */
  files: Array<{ file: string; changed: ChangedLines | null }>;
  /** Every file of the commit under the workspace, for the missing-tests lookup. */
  allFiles: string[];
  /** The content of each changed file at the commit. */
  blobs: Map<string, Blob>;
}

const MAX_BLOB_BYTES = 2 * 1024 * 1024;
const split0 = (s: string) => s.split('\0').filter(Boolean);

async function out(cwd: string, args: string[], signal?: AbortSignal): Promise<string> {
  const r = await runGit(cwd, args, signal ? { signal } : {});
  if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim().split('\n').slice(-1)[0] || `exit ${r.code}`}`);
  return r.stdout;
}

/** The commit exists in the workspace's repository. */
export async function hasCommit(workspace: string, commit: string, signal?: AbortSignal): Promise<boolean> {
  return (await runGit(workspace, ['cat-file', '-e', `${commit}^{commit}`], signal ? { signal } : {})).code === 0;
}

/** A file of `commit` (workspace-relative path; `./` makes git resolve it against the workspace). */
export async function readBlob(workspace: string, commit: string, file: string, signal?: AbortSignal): Promise<Blob> {
  const spec = `${commit}:./${file}`;
  const size = await runGit(workspace, ['cat-file', '-s', spec], signal ? { signal } : {});
  if (size.code !== 0) return { skipped: 'deleted in the reviewed commit' };
  if (Number(size.stdout.trim()) > MAX_BLOB_BYTES) return { skipped: 'larger than 2 MB' };
  // `cat-file blob` refuses anything but a file (a directory, a submodule), which is then not analysed.
  const blob = await runGit(workspace, ['cat-file', 'blob', spec], signal ? { signal } : {});
  if (blob.code !== 0) return { skipped: 'not a file in the reviewed commit' };
  if (blob.stdout.slice(0, 8000).includes('\0')) return { skipped: 'binary' };
  return { text: blob.stdout };
}

/**
 * `git diff <base> <commit>` restricted to the workspace (paths relative to it), with each changed
 * file read from the commit. Only `files` when given (the whole file each), else every changed file.
 */
export async function branchDiff(workspace: string, b: CoderBranch, only: readonly string[], signal?: AbortSignal): Promise<BranchDiff> {
  const allFiles = split0(await out(workspace, ['ls-tree', '-r', '--name-only', '-z', b.commit], signal));
  const files: BranchDiff['files'] = [];
  if (only.length) {
    for (const f of only) files.push({ file: f, changed: null });
  } else {
    const names = split0(await out(workspace, ['diff', '--name-only', '-z', '--relative', '--no-renames', b.base, b.commit], signal));
    for (const f of names) {
      const diff = await out(workspace, ['diff', '-U0', '--no-color', '--relative', '--no-renames', b.base, b.commit, '--', f], signal);
      files.push({ file: f, changed: parseUnifiedZero(diff) });
    }
  }
  const blobs = new Map<string, Blob>();
  for (const t of files) blobs.set(t.file, await readBlob(workspace, b.commit, t.file, signal));
  return { files, allFiles, blobs };
}
