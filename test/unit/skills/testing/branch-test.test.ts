import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StepSummary } from '../../../../server/src/engine/rigor/skill';
import { testSkill, type TestingData } from '../../../../server/src/skills/testing/index';
import { runSkill, skillContext } from '../../../support/skill-context';

/**
 * tester-ai after coder-ai in one execution: the tests run on coder-ai's commit in a temporary
 * worktree that tester-ai creates and removes. The user's working tree holds a broken test on
 * purpose (uncommitted): a run in the wrong tree would report it failing.
 */
describe('tester-ai tests coder-ai\'s branch in a temporary worktree (BUILD chain)', function () {
  this.timeout(60_000);
  let ws: string;
  let base: string;
  let commit: string;
  const branch = 'cadre/wf123-s3-generate';
  const sh = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
  const leftovers = () => readdirSync(tmpdir()).filter((f) => f.startsWith('cadre-wt-test-'));
  const coderStep = (): StepSummary => ({ step: 3, agentId: 'coder-ai', action: 'generate', passed: true, confidence: 0.9, summary: `committed on new branch ${branch}`, data: { mode: 'branch', branch, commit, base } });

  beforeEach(() => {
    ws = mkdtempSync(path.join(tmpdir(), 'cadre-test-branch-'));
    sh('init', '-q', '-b', 'main');
    sh('config', 'user.email', 't@example.com');
    sh('config', 'user.name', 'T');
    mkdirSync(path.join(ws, 'src'));
    mkdirSync(path.join(ws, 'test'));
    writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'x', private: true, scripts: { test: 'node --test' } }));
    writeFileSync(path.join(ws, '.gitignore'), 'node_modules/\n');
    writeFileSync(path.join(ws, 'src/lib.js'), 'exports.add = (a, b) => a + b;\n');
    writeFileSync(path.join(ws, 'test/add.test.js'), "const test = require('node:test');\nconst assert = require('node:assert');\ntest('add', () => assert.equal(require('../src/lib').add(1, 2), 3));\n");
    // An installed dependency (untracked): the branch's new test needs it.
    mkdirSync(path.join(ws, 'node_modules/helper'), { recursive: true });
    writeFileSync(path.join(ws, 'node_modules/helper/index.js'), 'module.exports = (x) => x;\n');
    sh('add', '.');
    sh('commit', '-q', '-m', 'init');
    base = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', '-b', branch);
    writeFileSync(path.join(ws, 'src/lib.js'), 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n');
    writeFileSync(path.join(ws, 'test/sub.test.js'), "const test = require('node:test');\nconst assert = require('node:assert');\nconst id = require('helper');\ntest('sub', () => assert.equal(id(require('../src/lib').sub(5, 3)), 2));\n");
    sh('add', '.');
    sh('commit', '-q', '-m', 'cadre: generate code');
    commit = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', 'main');
    // The user's uncommitted, broken test.
    writeFileSync(path.join(ws, 'test/add.test.js'), "const test = require('node:test');\nconst assert = require('node:assert');\ntest('add', () => assert.equal(1, 2));\n");
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('runs the tests on coder-ai\'s commit, says which branch and commit, and removes the worktree', async () => {
    const status = sh('status', '--porcelain');
    const before = new Set(leftovers());
    const c = skillContext({ agentId: 'tester-ai', action: 'test', workspace: ws });
    c.request.previous = [coderStep()];
    const { proposed, artifact } = await runSkill(testSkill, c);
    assert.equal(artifact.unable, undefined, artifact.unable);
    // The test command is declared as before (run_command), with where it runs.
    const run = proposed.find((a) => a.kind === 'run_command')!;
    assert.match(run.description, new RegExp(`on coder-ai's branch ${branch.replace(/\//g, '\\/')} \\(commit ${commit.slice(0, 12)}\\) in a temporary worktree`));
    const d = artifact.data as TestingData & { testedOn: { branch: string; commit: string; base: string; linked: string[]; userCheckoutUntouched: boolean } };
    // Both of the branch's tests, and not the user's broken one.
    assert.equal(d.results!.passed, 2, JSON.stringify(d.results));
    assert.equal(d.results!.failed, 0);
    assert.deepEqual({ ...d.testedOn, linked: d.testedOn.linked }, { branch, commit, base, step: 3, worktree: 'temporary, removed after the run', linked: ['node_modules'], userCheckoutUntouched: true });
    assert.match(artifact.summary, new RegExp(`tested coder-ai's branch ${branch.replace(/\//g, '\\/')} at ${commit.slice(0, 12)}`));
    // Nothing left: one worktree (the user's), no temporary folder, the user's tree and dependencies as they were.
    assert.equal(sh('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
    assert.deepEqual(leftovers().filter((f) => !before.has(f)), []);
    assert.equal(sh('status', '--porcelain'), status);
    assert.equal(sh('rev-parse', '--abbrev-ref', 'HEAD'), 'main');
    assert.ok(existsSync(path.join(ws, 'node_modules/helper/index.js')), 'removing the worktree did not reach into the linked node_modules');
  });

  it('a workspace that is a folder of the repository runs the tests in that folder of the checkout', async () => {
    mkdirSync(path.join(ws, 'app/test'), { recursive: true });
    writeFileSync(path.join(ws, 'app/package.json'), JSON.stringify({ name: 'app', private: true, scripts: { test: 'node --test' } }));
    writeFileSync(path.join(ws, 'app/test/one.test.js'), "require('node:test')('one', () => {});\n");
    sh('add', 'app');
    sh('commit', '-q', '-m', 'app');
    const appBase = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', '-b', 'cadre/app');
    writeFileSync(path.join(ws, 'app/test/two.test.js'), "require('node:test')('two', () => {});\n");
    sh('add', 'app');
    sh('commit', '-q', '-m', 'cadre: generate code');
    const appCommit = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', 'main');
    const c = skillContext({ agentId: 'tester-ai', action: 'test', workspace: path.join(ws, 'app') });
    c.request.previous = [{ ...coderStep(), data: { mode: 'branch', branch: 'cadre/app', commit: appCommit, base: appBase } }];
    const { artifact } = await runSkill(testSkill, c);
    const d = artifact.data as TestingData & { testedOn: { commit: string } };
    assert.equal(d.results!.passed, 2, JSON.stringify(d.results));
    assert.equal(d.testedOn.commit, appCommit);
  });

  it('without a coder-ai branch it tests the working tree (and finds the user\'s broken test)', async () => {
    const c = skillContext({ agentId: 'tester-ai', action: 'test', workspace: ws });
    const { artifact } = await runSkill(testSkill, c);
    const d = artifact.data as TestingData & { testedOn?: unknown };
    assert.equal(d.testedOn, undefined);
    assert.equal(d.results!.failed, 1);
    assert.equal(d.results!.passed, 0);
  });

  it('when ACMF does not allow run_command, no worktree is made and the step says why', async () => {
    const before = new Set(leftovers());
    const c = skillContext({ agentId: 'tester-ai', action: 'test', workspace: ws, allowed: (k) => k !== 'run_command' });
    c.request.previous = [coderStep()];
    const { artifact } = await runSkill(testSkill, c);
    assert.match(artifact.unable ?? '', /was not allowed by ACMF/);
    assert.deepEqual(leftovers().filter((f) => !before.has(f)), []);
    assert.equal(sh('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
  });

  it('a coder-ai commit that cannot be checked out is an error naming it, and leaves nothing behind', async () => {
    const c = skillContext({ agentId: 'tester-ai', action: 'test', workspace: ws });
    c.request.previous = [{ ...coderStep(), data: { mode: 'branch', branch, commit: 'd'.repeat(40), base } }];
    await assert.rejects(runSkill(testSkill, c), /could not check out coder-ai's commit dddddddddddd \(branch cadre\/wf123-s3-generate\)/);
    assert.equal(sh('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
  });
});
