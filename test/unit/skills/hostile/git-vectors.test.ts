/**
 * A repository's own config, hooks and attributes must never make Cadre run a program. Each vector is
 * first shown live (plain git on the same kind of repository creates its marker), then the hardened
 * runner and the skills that touch git run on it and no marker may appear.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { hostileRepo, plainGit, plainGitStatus, touchAll, VECTORS, type Vector } from '../../../fixtures/hostile/build';
import { runGit, UnsafeRepositoryError } from '../../../../server/src/skills/workspace/git';
import { reviewSkill } from '../../../../server/src/skills/review';
import { secretsSkill } from '../../../../server/src/skills/security/skill';
import { fixSkill } from '../../../../server/src/skills/coding';
import { readinessSkill } from '../../../../server/src/skills/deploy/readiness';
import { checkoutCommit } from '../../../../server/src/skills/testing/worktree';
import { runSkill, skillContext } from '../../../support/skill-context';
import type { Finding } from '../../../../server/src/skills/findings/finding';

/** How plain git (as a user would run it) sets each vector off; absent: it needs a terminal, a network or a server. */
const LIVE: Partial<Record<Vector, (dir: string) => void>> = {
  fsmonitor: (d) => { touchAll(d); plainGitStatus(d, 'status'); },
  hooks: (d) => { plainGitStatus(d, 'commit', '--allow-empty', '-m', 'x'); },
  hooksPath: (d) => { plainGitStatus(d, 'commit', '--allow-empty', '-m', 'x'); },
  diffExternal: (d) => { touchAll(d); plainGitStatus(d, 'diff'); },
  textconv: (d) => { touchAll(d); plainGitStatus(d, 'diff'); },
  diffCommand: (d) => { touchAll(d); plainGitStatus(d, 'diff'); },
  filter: (d) => { touchAll(d); plainGitStatus(d, 'add', 'a.txt'); },
  filterProcess: (d) => { touchAll(d); plainGitStatus(d, 'add', 'b.dat'); },
  editor: (d) => { plainGitStatus(d, 'commit', '--allow-empty'); },
  gpgProgram: (d) => { plainGitStatus(d, 'commit', '--allow-empty', '-m', 'x'); },
  sshCommand: (d) => { plainGitStatus(d, 'fetch', 'origin'); },
  extProtocol: (d) => { plainGitStatus(d, 'fetch', 'evil'); },
  include: (d) => { touchAll(d); plainGitStatus(d, 'add', 'c.inc'); },
  includeIf: (d) => { touchAll(d); plainGitStatus(d, 'status'); },
};

/** Every kind of git call the skills make, through the hardened runner. */
async function everyHardenedCall(dir: string): Promise<void> {
  touchAll(dir);
  const ok = async (args: string[]) => {
    const r = await runGit(dir, args);
    assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await ok(['rev-parse', '--show-toplevel']);
  await ok(['status', '--porcelain', '--untracked-files=all']);
  await ok(['diff', '--name-only', 'HEAD']);
  await ok(['diff', '-U0', '--no-color', 'HEAD', '--', 'a.txt', 'src/app.ts']);
  await ok(['log', '-p', '-1']);
  await ok(['show', 'HEAD:a.txt']);
  await ok(['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  await ok(['add', '--', 'a.txt', 'b.dat', 'c.inc']);
  await ok(['-c', 'user.name=Cadre', '-c', 'user.email=cadre@localhost', 'commit', '-q', '--no-verify', '-m', 'hardened']);
  const wt = mkdtempSync(path.join(tmpdir(), 'cadre-hostile-wt-'));
  rmSync(wt, { recursive: true });
  await ok(['worktree', 'add', '-q', wt, '-b', 'cadre/hostile', 'HEAD']);
  await ok(['worktree', 'remove', '--force', wt]);
  await ok(['worktree', 'prune']);
  // A fetch could reach an ext:: or ssh remote: it is not a command skills may run at all.
  await assert.rejects(runGit(dir, ['fetch', 'evil']), UnsafeRepositoryError);
  await assert.rejects(runGit(dir, ['-c', 'core.fsmonitor=true', 'status']), UnsafeRepositoryError);
}

describe('hostile repositories: git execution vectors', function () {
  this.timeout(60_000);
  const roots: string[] = [];
  const make = (v?: readonly Vector[]) => { const r = hostileRepo(v); roots.push(path.dirname(r.dir)); return r; };
  after(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }); });

  for (const v of VECTORS) {
    const live = LIVE[v];
    it(`${v}: ${live ? 'plain git runs it; ' : ''}the hardened runner does not`, async () => {
      if (live) {
        const shown = make([v]);
        live(shown.dir);
        assert.deepEqual(shown.fired(), [v], `plain git should set off ${v} (the fixture is live)`);
      }
      const r = make([v]);
      await everyHardenedCall(r.dir);
      assert.deepEqual(r.fired(), []);
    });
  }

  it('every vector at once: the hardened calls run and nothing of the repository does', async () => {
    const r = make();
    await everyHardenedCall(r.dir);
    assert.deepEqual(r.fired(), []);
  });

  it('GIT_* of the server process do not reach git (GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS, GIT_DIR)', async () => {
    const r = make([]);
    const other = make([]);
    const saved = { ...process.env };
    try {
      process.env['GIT_EXTERNAL_DIFF'] = path.join(r.markers, '..', 'scripts', 'env.sh');
      plainGit(r.dir, 'config', '--file', path.join(r.markers, '..', 'env.gitconfig'), 'x.y', 'z');
      process.env['GIT_CONFIG_PARAMETERS'] = `'core.fsmonitor'='touch ${path.join(r.markers, 'env')}; false'`;
      process.env['GIT_DIR'] = path.join(other.dir, '.git');
      touchAll(r.dir);
      const top = await runGit(r.dir, ['rev-parse', '--show-toplevel']);
      assert.equal(top.stdout.trim(), r.dir, 'GIT_DIR of the server is ignored');
      assert.equal((await runGit(r.dir, ['status', '--porcelain'])).code, 0);
      assert.equal((await runGit(r.dir, ['diff', 'HEAD'])).code, 0);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
    assert.deepEqual(r.fired(), []);
  });

  it('a filter driver added to the config between two calls is neutralised too (no stale driver list)', async () => {
    const r = make([]);
    assert.equal((await runGit(r.dir, ['status', '--porcelain'])).code, 0);
    const s = path.join(r.markers, '..', 'late.sh');
    writeFileSync(s, `#!/bin/sh\ntouch '${path.join(r.markers, 'late')}'\ncat\n`, { mode: 0o755 });
    plainGit(r.dir, 'config', 'filter.evil.clean', s);
    plainGit(r.dir, 'config', 'filter.evil.required', 'true');
    touchAll(r.dir);
    assert.equal((await runGit(r.dir, ['add', 'a.txt'])).code, 0);
    assert.deepEqual(r.fired(), []);
  });

  it('a decoy empty .git folder does not hide the repository git really uses (its drivers are neutralised)', async () => {
    const r = make(['filter', 'fsmonitor']);
    const sub = path.join(r.dir, 'sub');
    mkdirSync(path.join(sub, '.git'), { recursive: true });
    touchAll(r.dir);
    const top = await runGit(sub, ['rev-parse', '--show-toplevel']);
    assert.equal(top.stdout.trim(), r.dir, 'git passes over the decoy');
    assert.equal((await runGit(sub, ['add', '--', '../a.txt'])).code, 0);
    assert.equal((await runGit(sub, ['status', '--porcelain'])).code, 0);
    assert.deepEqual(r.fired(), []);
  });

  it('refuses a repository whose config cannot be neutralised (a filter name -c cannot carry)', async () => {
    const r = make([]);
    plainGit(r.dir, 'config', 'filter.a=b.clean', 'touch x');
    await assert.rejects(runGit(r.dir, ['status']), (e: Error) => e instanceof UnsafeRepositoryError && /filter driver/.test(e.message));
    const q = make([]);
    plainGit(q.dir, 'config', 'include.path', '%(prefix)/etc/evil.gitconfig');
    await assert.rejects(runGit(q.dir, ['status']), (e: Error) => e instanceof UnsafeRepositoryError && /%\(prefix\)/.test(e.message));
  });

  describe('the skills that touch git, on a repository with every vector', () => {
    it('review-ai review (the git diff of the workspace)', async () => {
      const r = make();
      touchAll(r.dir);
      const run = await runSkill(reviewSkill, skillContext({ agentId: 'review-ai', action: 'review', workspace: r.dir }));
      assert.ok(!run.artifact.unable, run.artifact.unable);
      assert.ok(run.evidence.pathsRead.includes('src/app.ts'), run.evidence.pathsRead.join(','));
      assert.deepEqual(r.fired(), []);
    });

    it('review-ai review of a diff against a base ref', async () => {
      const r = make();
      const base = plainGit(r.dir, 'rev-parse', 'HEAD').trim(); // (a tag made by plain git would run the reference-transaction hook)
      touchAll(r.dir);
      const run = await runSkill(reviewSkill, skillContext({ agentId: 'review-ai', action: 'review', workspace: r.dir, input: { base } }));
      assert.ok(!run.artifact.unable, run.artifact.unable);
      assert.deepEqual(r.fired(), []);
    });

    it('security-ai secrets with input.since (a commit checked out into a temporary tree)', async () => {
      const r = make();
      touchAll(r.dir);
      const run = await runSkill(secretsSkill, skillContext({ agentId: 'security-ai', action: 'secrets', workspace: r.dir, input: { since: 'HEAD' } }));
      assert.ok(!run.artifact.unable, run.artifact.unable);
      assert.ok((run.artifact.data as { summary?: { since?: { commit: string } } }).summary?.since?.commit, `the since scan ran: ${JSON.stringify(run.artifact.data).slice(0, 300)}`);
      assert.deepEqual(r.fired(), []);
    });

    it("coder-ai fix (a worktree, a branch and a commit)", async () => {
      const r = make();
      const finding: Finding = {
        ruleId: 'code/eval', severity: 'medium', message: 'eval', file: 'src/app.ts', fingerprint: 'h1',
        range: { startLine: 1, startColumn: 18, endLine: 1, endColumn: 27 },
        fix: { description: 'no eval', edits: [{ file: 'src/app.ts', range: { startLine: 1, startColumn: 18, endLine: 1, endColumn: 27 }, newText: "Number('1')" }] },
      };
      const run = await runSkill(fixSkill, skillContext({ agentId: 'coder-ai', action: 'fix', workspace: r.dir, input: { findings: [finding] } }));
      assert.ok(!run.artifact.unable, run.artifact.unable);
      const branches = plainGit(r.dir, 'branch', '--list', 'cadre/*').trim();
      assert.ok(branches, 'coder-ai committed on a cadre/* branch');
      assert.deepEqual(r.fired(), []);
    });

    it("tester-ai's checkout of a commit to test (git worktree add --detach, then removed)", async () => {
      const r = make();
      const head = plainGit(r.dir, 'rev-parse', 'HEAD').trim();
      const co = await checkoutCommit(r.dir, head);
      try {
        assert.ok(existsSync(path.join(co.dir, 'a.txt')), 'the commit is checked out');
      } finally {
        await co.remove();
      }
      assert.deepEqual(r.fired(), []);
    });

    it('deploy-ai readiness (status, branch, upstream)', async () => {
      const r = make();
      touchAll(r.dir);
      const run = await runSkill(readinessSkill, skillContext({ agentId: 'deploy-ai', action: 'readiness', workspace: r.dir }));
      assert.ok(JSON.stringify(run.artifact.data).includes('clean-tree'));
      assert.deepEqual(r.fired(), []);
    });
  });

  it('plain git outside the runner is still dangerous on these repositories (the suite is not vacuous)', () => {
    const r = make(['fsmonitor']);
    touchAll(r.dir);
    plainGitStatus(r.dir, 'status');
    assert.ok(existsSync(path.join(r.markers, 'fsmonitor')));
  });
});
