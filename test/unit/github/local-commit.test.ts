import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { localChanges } from '../../../server/src/integrations/github/local-commit';

/**
 * What the PR flow pushes of coder-ai's commit through the Git Data API: files by mode. A symlink in
 * the commit is pushed as a symlink (its target path), never as the content of the file it points at
 * outside the repository.
 */
describe('github: the files of a local commit', () => {
  it('keeps modes: a symlink stays a link to its target path, an executable stays executable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-local-commit-'));
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'commit.gpgsign=false', ...a], { cwd: dir, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    const base = git('rev-parse', 'HEAD');
    symlinkSync('/etc/passwd', path.join(dir, 'leak'));
    writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(path.join(dir, 'run.sh'), 0o755);
    writeFileSync(path.join(dir, 'a.txt'), 'b\n');
    git('add', '.');
    git('commit', '-q', '-m', 'change');
    const commit = git('rev-parse', 'HEAD');
    const changes = await localChanges({ source: dir, branch: 'cadre/coder-ai/x', commit, base }, dir);
    const by = Object.fromEntries(changes.map((c) => [c.path, c]));
    assert.deepEqual(Object.keys(by).sort(), ['a.txt', 'leak', 'run.sh']);
    assert.equal(by['leak']!.mode, '120000');
    assert.equal(by['leak']!.content!.toString('utf8'), '/etc/passwd', 'the link target, not the linked file');
    assert.equal(by['run.sh']!.mode, '100755');
    assert.equal(by['a.txt']!.mode, '100644');
  });
});
