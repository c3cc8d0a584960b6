import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ReadinessCheck } from '../../../protocol/lsp';
import type { SkillContext, StepRequest } from '../../../server/src/engine/rigor/skill';
import { skills } from '../../../server/src/skills/builtin';
import { READINESS_CHECK_IDS, readinessChecks, readinessSkill, type ReadinessData } from '../../../server/src/skills/deploy/index';

const dirs: string[] = [];
function temp(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
}

/** A repository with one commit on `main`. */
function repo(): string {
  const dir = temp('cadre-ready-');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 't@example.com');
  git(dir, 'config', 'user.name', 'T');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(dir, 'index.js'), 'module.exports = 1;\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

/** A local bare `origin` the repo's main tracks (pushed). */
function withOrigin(dir: string): string {
  const bare = temp('cadre-origin-');
  git(bare, 'init', '-q', '--bare');
  git(dir, 'remote', 'add', 'origin', bare);
  git(dir, 'push', '-q', '-u', 'origin', 'main');
  return bare;
}

function commit(dir: string, file: string, text: string): void {
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-q', '-m', `change ${file}`);
}

const by = (d: ReadinessData, id: ReadinessCheck['id']) => d.checks.find((c) => c.id === id)!;

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
function plantedKey(): string {
  const alnum = 'ABCDEFGHJKLMNPQRSTUVWXYZ234567';
  let body = '';
  for (let i = 0; i < 16; i++) body += alnum[(i * 5 + 1) % alnum.length];
  return ['AK', 'IA', body].join('');
}

describe('deploy-ai readiness', function () {
  this.timeout(30_000);
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('is an embedded skill', () => {
    assert.ok(skills.includes(readinessSkill));
    assert.equal(readinessSkill.agentId, 'deploy-ai');
    assert.equal(readinessSkill.action, 'readiness');
  });

  it('a clean, pushed repository with passing facts is ready', async () => {
    const dir = repo();
    withOrigin(dir);
    mkdirSync(path.join(dir, 'coverage'));
    writeFileSync(path.join(dir, 'coverage', 'coverage-summary.json'), JSON.stringify({ total: { lines: { total: 100, covered: 91, pct: 91 } } }));
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'coverage');
    git(dir, 'push', '-q');
    const later = new Date(Date.now() + 60_000).toISOString();
    const d = await readinessChecks(dir, {
      tests: { executionId: 'act_t', status: 'completed', passed: 12, failed: 0, finishedAt: later },
      review: { executionId: 'act_r', status: 'completed', passed: true, finishedAt: later },
      pendingApprovals: 0,
    });
    assert.deepEqual(d.checks.map((c) => c.id), READINESS_CHECK_IDS);
    assert.deepEqual(d.checks.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.evidence}`), []);
    assert.equal(d.ready, true);
    assert.equal(d.git?.branch, 'main');
    assert.ok(d.checks.every((c) => c.fix === undefined), 'passing checks carry no fix');
    assert.match(by(d, 'coverage').evidence, /91% in coverage\/coverage-summary\.json \(threshold 80%\)/);
  });

  it('a dirty tree fails with the files and the SCM view as fix', async () => {
    const dir = repo();
    withOrigin(dir);
    writeFileSync(path.join(dir, 'index.js'), 'module.exports = 2;\n');
    writeFileSync(path.join(dir, 'new.txt'), 'x\n');
    const c = by(await readinessChecks(dir, {}), 'clean-tree');
    assert.equal(c.status, 'fail');
    assert.match(c.evidence, /1 changed, 1 untracked/);
    assert.match(c.evidence, /index\.js/);
    assert.deepEqual(c.fix, { title: 'Commit or stash the changes', command: 'workbench.view.scm' });
  });

  it('a branch without upstream, or ahead of origin, is not pushed', async () => {
    const dir = repo();
    const none = by(await readinessChecks(dir, {}), 'branch-pushed');
    assert.equal(none.status, 'fail');
    assert.match(none.evidence, /main has no upstream/);
    assert.equal(none.fix?.command, 'git.push');

    withOrigin(dir);
    assert.equal(by(await readinessChecks(dir, {}), 'branch-pushed').status, 'pass');
    commit(dir, 'b.js', 'module.exports = 3;\n');
    commit(dir, 'c.js', 'module.exports = 4;\n');
    const ahead = by(await readinessChecks(dir, {}), 'branch-pushed');
    assert.equal(ahead.status, 'fail');
    assert.match(ahead.evidence, /main is 2 commit\(s\) ahead of origin\/main/);
    assert.equal(ahead.fix?.command, 'git.push');
  });

  it('outside a git repository the git checks are unknown, never guessed', async () => {
    const dir = temp('cadre-nogit-');
    writeFileSync(path.join(dir, 'a.txt'), 'hello\n');
    const d = await readinessChecks(dir, {});
    assert.equal(by(d, 'clean-tree').status, 'unknown');
    assert.equal(by(d, 'branch-pushed').status, 'unknown');
    assert.equal(d.git, null);
    assert.equal(d.ready, false);
  });

  it('coverage: lcov against the threshold, unknown without a report', async () => {
    const dir = repo();
    assert.equal(by(await readinessChecks(dir, {}), 'coverage').status, 'unknown');
    writeFileSync(path.join(dir, 'lcov.info'), 'SF:index.js\nDA:1,1\nDA:2,0\nDA:3,1\nDA:4,1\nLF:4\nLH:3\nend_of_record\n');
    const low = by(await readinessChecks(dir, {}), 'coverage');
    assert.equal(low.status, 'fail');
    assert.match(low.evidence, /75% in lcov\.info \(threshold 80%\)/);
    assert.deepEqual(low.fix?.arguments, ['tester-ai', 'generate-tests']);
    assert.equal(by(await readinessChecks(dir, { coverageThreshold: 70 }), 'coverage').status, 'pass');
  });

  it('tests, review and approvals come from the facts the door passes in', async () => {
    const dir = repo();
    const before = new Date(Date.now() - 3_600_000 * 24).toISOString();
    const after = new Date(Date.now() + 60_000).toISOString();
    const none = await readinessChecks(dir, {});
    assert.equal(by(none, 'tests').status, 'unknown');
    assert.match(by(none, 'tests').evidence, /no tester-ai test run/);
    assert.deepEqual(by(none, 'tests').fix?.arguments, ['tester-ai', 'test']);
    assert.equal(by(none, 'tests').fix?.command, 'cadre.invokeAgent');
    assert.equal(by(none, 'review').status, 'unknown');
    assert.equal(by(none, 'approvals').status, 'unknown');

    const failing = await readinessChecks(dir, {
      tests: { executionId: 'act_1', status: 'completed', passed: 3, failed: 2, finishedAt: after },
      review: { executionId: 'act_2', status: 'completed', passed: true, finishedAt: before },
      pendingApprovals: 2,
    });
    assert.equal(by(failing, 'tests').status, 'fail');
    assert.match(by(failing, 'tests').evidence, /3 passed, 2 failed/);
    assert.equal(by(failing, 'review').status, 'fail');
    assert.match(by(failing, 'review').evidence, /before the last commit/);
    assert.equal(by(failing, 'approvals').status, 'fail');
    assert.deepEqual(by(failing, 'approvals').fix, { title: 'Open the approvals', command: 'cadre.approvals.focus' });

    const reviewFailed = await readinessChecks(dir, { review: { executionId: 'act_3', status: 'failed', passed: false, finishedAt: after } });
    assert.equal(by(reviewFailed, 'review').status, 'fail');
  });

  it('a critical secret in the workspace fails the findings check', async () => {
    const dir = repo();
    assert.equal(by(await readinessChecks(dir, {}), 'critical-findings').status, 'pass');
    writeFileSync(path.join(dir, 'config.js'), `const key = "${plantedKey()}";\n`);
    const c = by(await readinessChecks(dir, {}), 'critical-findings');
    assert.equal(c.status, 'fail');
    assert.match(c.evidence, /1 critical finding\(s\) \(aws-access-key-id config\.js:1\)/);
    assert.ok(!c.evidence.includes(plantedKey()));
    assert.equal(c.fix?.command, 'workbench.actions.view.problems');
  });

  it('runs as a skill: read-only proposals and an artifact with the checks', async () => {
    const dir = repo();
    const request: StepRequest = {
      executionId: 'e1', step: 0, agentId: 'deploy-ai', action: 'readiness', goal: { id: 'goal-1', prompt: 'ready?' },
      input: { pendingApprovals: 0 }, scope: 'mvp', tier: 'core', previous: [], workspace: dir,
    };
    const ctx: SkillContext = { request, signal: new AbortController().signal, progress() {}, allowed: () => true, once: (_k, f) => f() };
    const ev = await readinessSkill.research(ctx);
    const proposed = await readinessSkill.propose(ctx, ev);
    assert.deepEqual(proposed.map((p) => p.kind), ['git_status', 'scan']);
    const art = await readinessSkill.generate(ctx, ev);
    const data = art.data as ReadinessData;
    assert.equal(data.checks.length, 7);
    assert.equal(art.goalRef, 'goal-1');
    // clean-tree, branch-pushed (fail: no upstream), critical-findings, approvals known; tests, coverage, review unknown.
    assert.equal(art.confidence, Math.round((0.5 + (0.45 * 4) / 7) * 100) / 100);
    assert.match(art.summary, /1 failing check\(s\), 3 unknown/);
    const none = await readinessSkill.generate({ ...ctx, request: { ...request, workspace: path.join(dir, 'missing') } }, ev);
    assert.ok(none.unable);
  });
});
