/**
 * The files of coder-ai's local commit, read from the workspace repository with the hardened git
 * runner (read-only: diff, ls-tree, cat-file), to be pushed through the Git Data API. Text files only:
 * a binary change is refused with its path (the runner hands output over as text).
 */
import { gitOut } from '../../skills/workspace/git';
import type { LocalCommit } from '../../engine/pr-flow/ports';
import type { FileChange } from './github-api';

export async function localChanges(local: LocalCommit, workspace: string): Promise<FileChange[]> {
  const base = local.base ?? `${local.commit}^`;
  const numstat = await gitOut(workspace, ['diff', '--numstat', '-z', '--no-renames', base, local.commit]);
  const binary = numstat.split('\0').filter((l) => l.startsWith('-\t-\t')).map((l) => l.slice(4));
  if (binary.length > 0) throw new Error(`the commit ${local.commit.slice(0, 12)} changes binary files (${binary.join(', ')}); Cadre pushes text changes only`);
  const names = (await gitOut(workspace, ['diff', '--name-status', '-z', '--no-renames', base, local.commit])).split('\0').filter(Boolean);
  const out: FileChange[] = [];
  for (let i = 0; i + 1 < names.length; i += 2) {
    const status = names[i]!;
    const file = names[i + 1]!;
    if (status.startsWith('D')) {
      out.push({ path: file, content: null });
      continue;
    }
    const tree = await gitOut(workspace, ['ls-tree', local.commit, '--', file]);
    // A symlink stays a symlink (its blob is the target path, never the file it points at); a submodule is refused.
    if (tree.startsWith('160000')) throw new Error(`the commit ${local.commit.slice(0, 12)} changes a submodule (${file}); Cadre pushes file changes only`);
    const mode = tree.startsWith('120000') ? '120000' : tree.startsWith('100755') ? '100755' : '100644';
    const content = await gitOut(workspace, ['cat-file', 'blob', `${local.commit}:${file}`]);
    out.push({ path: file, mode, content: Buffer.from(content, 'utf8') });
  }
  return out;
}
