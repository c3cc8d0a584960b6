import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { commitOnNewBranch, effectBranch, effectTrailer, findEffectBranch, plannedWorktree, releaseWorktrees, sweepWorktrees } from '../../../server/src/skills/coding/git';

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
const worktrees = (repo: string) => sh(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));

function newRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-wt-test-')));
  sh(dir, 'init', '-q', '-b', 'main');
  sh(dir, 'config', 'user.name', 'Test');
  sh(dir, 'config', 'user.email', 'test@example.com');
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  sh(dir, 'add', '.');
  sh(dir, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');
  return dir;
}

describe('coder-ai branches and worktrees for exactly-once effects', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('branch names are deterministic per execution step and distinct across steps and executions', () => {
    assert.equal(effectBranch('act_0123456789abcdef01234567', 2, 'refactor'), 'cadre/act012345678-s2-refactor');
    assert.notEqual(effectBranch('act_0123456789abcdef01234567', 1, 'refactor'), effectBranch('act_0123456789abcdef01234567', 2, 'refactor'));
    assert.notEqual(effectBranch('act_0123456789abcdef01234567', 1, 'fix'), effectBranch('act_0123456799abcdef01234567', 1, 'fix'));
  });

  it('a foreign branch of the same name is neither moved nor adopted; the step commits beside it and is found there', async () => {
    const repo = newRepo();
    dirs.push(repo);
    const name = effectBranch('act_aaaaaaaaaaaaaaaaaaaaaaaa', 0, 'fix');
    sh(repo, 'branch', name);
    const foreign = sh(repo, 'rev-parse', name).trim();
    const trailer = effectTrailer('act_aaaaaaaaaaaaaaaaaaaaaaaa', 0);
    assert.equal(await findEffectBranch(repo, name, trailer), undefined, 'a branch without the trailer is not ours');
    const made = await commitOnNewBranch(repo, { branch: name, trailer, worktree: plannedWorktree(), files: [{ repoPath: 'a.txt', content: 'b\n' }], message: 'cadre: fix' });
    assert.equal(made.branch, `${name}-2`);
    assert.equal(sh(repo, 'rev-parse', name).trim(), foreign, 'the foreign branch is untouched');
    const found = await findEffectBranch(repo, name, trailer);
    assert.equal(found?.branch, `${name}-2`);
    assert.equal(found?.commit, made.commit);
    assert.match(found!.diff, /^\+b$/m);
    // Run again (a resume): adopted, nothing new.
    const again = await commitOnNewBranch(repo, { branch: name, trailer, worktree: plannedWorktree(), files: [{ repoPath: 'a.txt', content: 'b\n' }], message: 'cadre: fix' });
    assert.equal(again.adopted, true);
    assert.equal(again.commit, made.commit);
    assert.equal(sh(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/cadre/').trim().split('\n').length, 2);
  });

  it('a failed commit leaves no branch and no worktree (finally)', async () => {
    const repo = newRepo();
    dirs.push(repo);
    const wt = plannedWorktree();
    await assert.rejects(commitOnNewBranch(repo, { branch: 'cadre/x-s0-fix', trailer: 'x:0', worktree: wt, files: [{ repoPath: 'a.txt/under-a-file.txt', content: 'no\n' }], message: 'm' }));
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`]);
    assert.equal(existsSync(wt), false);
    assert.equal(sh(repo, 'for-each-ref', 'refs/heads/cadre/').trim(), '');
  });

  it('releases a worktree a crash left registered and locked (half-made by `worktree add`)', async () => {
    const repo = newRepo();
    dirs.push(repo);
    const wt = plannedWorktree();
    sh(repo, 'worktree', 'add', '-q', '--detach', '--lock', wt, 'HEAD');
    assert.equal(worktrees(repo).length, 2);
    await releaseWorktrees([{ kind: 'worktree', repo, path: wt }]);
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`]);
    assert.equal(existsSync(wt), false);
  });

  it('releases a worktree whose `worktree add` was killed while writing its commondir (git worktree list fails on it)', async () => {
    const repo = newRepo();
    dirs.push(repo);
    const wt = plannedWorktree();
    sh(repo, 'worktree', 'add', '-q', '--detach', '--lock', wt, 'HEAD');
    writeFileSync(path.join(repo, '.git', 'worktrees', path.basename(wt), 'commondir'), ''); // as git leaves it mid-write
    assert.throws(() => sh(repo, 'worktree', 'list', '--porcelain'));
    await releaseWorktrees([{ kind: 'worktree', repo, path: wt }]);
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`]);
    assert.equal(existsSync(wt), false);
  });

  it('the start-up sweep removes every cadre-wt- worktree of a workspace\'s repository (coder-ai\'s and tester-ai\'s), and nothing else', async () => {
    const repo = newRepo();
    dirs.push(repo);
    mkdirSync(path.join(repo, 'pkg'));
    const coder = plannedWorktree();
    const testerDir = realpathSync(mkdtempSync(path.join(tmpdir(), 'cadre-wt-test-')));
    const tester = path.join(testerDir, 'wt');
    const user = path.join(realpathSync(tmpdir()), `user-wt-sweep-${process.pid}`);
    dirs.push(user);
    sh(repo, 'worktree', 'add', '-q', '--detach', '--lock', coder, 'HEAD');
    sh(repo, 'worktree', 'add', '-q', '--detach', tester, 'HEAD');
    sh(repo, 'worktree', 'add', '-q', '--detach', user, 'HEAD');
    assert.equal(worktrees(repo).length, 4);
    assert.equal(await sweepWorktrees([path.join(repo, 'pkg'), repo]), 2);
    assert.deepEqual(worktrees(repo), [`worktree ${repo}`, `worktree ${user}`]);
    assert.equal(existsSync(coder), false);
    assert.equal(existsSync(testerDir), false);
    assert.equal(await sweepWorktrees(['/nonexistent/cadre-workspace']), 0, 'a workspace that is gone is skipped');
    // A half-written entry (git cannot list it) is swept too.
    const half = plannedWorktree();
    sh(repo, 'worktree', 'add', '-q', '--detach', half, 'HEAD');
    writeFileSync(path.join(repo, '.git', 'worktrees', path.basename(half), 'commondir'), '');
    assert.equal(await sweepWorktrees([repo]), 1);
    assert.equal(existsSync(half), false);
    sh(repo, 'worktree', 'remove', '--force', user);
  });

  it('never touches a worktree that is not a cadre-wt- one', async () => {
    const repo = newRepo();
    dirs.push(repo);
    const other = path.join(realpathSync(tmpdir()), `user-wt-${process.pid}`);
    dirs.push(other);
    sh(repo, 'worktree', 'add', '-q', '--detach', other, 'HEAD');
    await releaseWorktrees([{ kind: 'worktree', repo, path: other }]);
    assert.equal(worktrees(repo).length, 2);
    assert.ok(existsSync(other));
    sh(repo, 'worktree', 'remove', '--force', other);
  });
});
