import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StepSummary } from '../../../../server/src/engine/rigor/skill';
import { coderBranchOf, reviewSkill, verifySkill, type ReviewData } from '../../../../server/src/skills/review/index';
import { runSkill, skillContext } from '../../../support/skill-context';

/**
 * review-ai after coder-ai in one execution: it reviews the diff of coder-ai's branch against the
 * commit the branch started from, reading the files from git objects, and leaves the user's checkout
 * as it was. The user's working tree holds different (dirty) code on purpose: a review of the wrong
 * tree would report its findings instead.
 */
describe('review-ai reviews coder-ai\'s branch (BUILD chain)', function () {
  this.timeout(30_000);
  let ws: string;
  const sh = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();

  /** coder-ai's step as later steps see it: data.mode 'branch' with branch, commit and base. */
  function coderStep(branch: string, commit: string, base: string, action = 'generate'): StepSummary {
    return { step: 3, agentId: 'coder-ai', action, passed: true, confidence: 0.9, summary: `committed on new branch ${branch}`, data: { mode: 'branch', branch, commit, base, files: [{ path: 'src/math.js', parsed: true }] } };
  }

  let base: string;
  let commit: string;
  const branch = 'cadre/wf123-s3-generate';

  beforeEach(() => {
    ws = mkdtempSync(path.join(tmpdir(), 'cadre-review-branch-'));
    sh('init', '-q', '-b', 'main');
    sh('config', 'user.email', 't@example.com');
    sh('config', 'user.name', 'T');
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src/math.js'), 'function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n');
    writeFileSync(path.join(ws, 'src/other.js'), 'module.exports = 1;\n');
    sh('add', '.');
    sh('commit', '-q', '-m', 'init');
    base = sh('rev-parse', 'HEAD');
    // coder-ai's commit, on its own branch (the user stays on main).
    sh('checkout', '-q', '-b', branch);
    writeFileSync(path.join(ws, 'src/math.js'), 'function add(a, b) {\n  return a + b;\n}\nfunction calc(expr) {\n  return eval(expr);\n}\nmodule.exports = { add, calc };\n');
    sh('commit', '-q', '-am', 'cadre: generate code');
    commit = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', 'main');
    // The user's own uncommitted work: a debug statement in another file.
    writeFileSync(path.join(ws, 'src/other.js'), 'console.log("debugging");\nmodule.exports = 1;\n');
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('finds the latest coder-ai branch among the previous steps, and nothing when coder-ai only proposed', () => {
    const prev = [coderStep('cadre/a', 'a'.repeat(40), 'b'.repeat(40)), { ...coderStep(branch, commit, base), step: 5 }];
    assert.deepEqual(coderBranchOf(prev), { branch, commit, base, step: 5 });
    assert.equal(coderBranchOf([{ ...coderStep(branch, commit, base), data: { mode: 'proposal', branch: null, commit: null, base } }]), undefined);
    assert.equal(coderBranchOf([{ ...coderStep(branch, commit, base), agentId: 'tester-ai' }]), undefined);
    // The latest coder-ai step only proposed: an older branch is not what the chain is about.
    assert.equal(coderBranchOf([coderStep(branch, commit, base), { ...coderStep(branch, commit, base), step: 6, data: { mode: 'proposal', branch: null, commit: null, base } }]), undefined);
    // A branch name that is an option or a range is not a ref to run git with.
    assert.equal(coderBranchOf([coderStep('--output=/tmp/x', commit, base)]), undefined);
  });

  it('reviews the branch\'s diff against its base, names the branch and commit, and leaves the checkout alone', async () => {
    const status = sh('status', '--porcelain');
    const c = skillContext({ agentId: 'review-ai', action: 'review', workspace: ws, prompt: 'add calc' });
    c.request.previous = [coderStep(branch, commit, base)];
    const { evidence, artifact } = await runSkill(reviewSkill, c);
    const d = artifact.data as ReviewData;
    assert.equal(artifact.unable, undefined, artifact.unable);
    assert.equal(d.branch, branch);
    assert.equal(d.commit, commit);
    assert.equal(d.base, base);
    assert.deepEqual(d.files.map((f) => f.file), ['src/math.js']);
    // The branch's eval is found on its added lines; the user's dirty console.log is not reviewed.
    assert.deepEqual(d.findings.filter((f) => f.ruleId !== 'review/missing-tests').map((f) => [f.ruleId, f.file, f.range.startLine]), [['review/eval', 'src/math.js', 5]]);
    assert.ok(!d.findings.some((f) => f.file === 'src/other.js'));
    assert.match(artifact.summary, new RegExp(`on branch ${branch.replace(/\//g, '\\/')} \\(commit ${commit.slice(0, 12)}, diff against ${base.slice(0, 12)}\\)`));
    assert.match(artifact.text!, new RegExp(`branch ${branch.replace(/\//g, '\\/')} at ${commit.slice(0, 12)}`));
    assert.ok(evidence.items.some((i) => i.source.startsWith(`coder-ai branch ${branch}`)), JSON.stringify(evidence.items));
    assert.equal(sh('rev-parse', '--abbrev-ref', 'HEAD'), 'main');
    assert.equal(sh('status', '--porcelain'), status);
    assert.match(readFileSync(path.join(ws, 'src/math.js'), 'utf8'), /^function add/);
    assert.ok(!readFileSync(path.join(ws, 'src/math.js'), 'utf8').includes('eval'), 'the branch was never checked out into the user\'s tree');
  });

  it('without a coder-ai branch it reviews the working tree as before', async () => {
    const c = skillContext({ agentId: 'review-ai', action: 'review', workspace: ws });
    const { artifact } = await runSkill(reviewSkill, c);
    const d = artifact.data as ReviewData;
    assert.equal(d.branch, undefined);
    assert.deepEqual(d.files.map((f) => f.file), ['src/other.js']);
    assert.ok(d.findings.some((f) => f.ruleId === 'review/debug-statement'));
  });

  it('when coder-ai only proposed its change, the review of the working tree says that it does not hold it', async () => {
    const c = skillContext({ agentId: 'review-ai', action: 'review', workspace: ws });
    c.request.previous = [{ ...coderStep(branch, commit, base), data: { mode: 'proposal', branch: null, commit: null, base } }];
    const { evidence, artifact } = await runSkill(reviewSkill, c);
    assert.equal((artifact.data as ReviewData).branch, undefined);
    assert.ok(evidence.constraints.some((x) => /coder-ai \(step 3\) only proposed its change as a diff/.test(x)), JSON.stringify(evidence.constraints));
  });

  it('verify (OPERATE) checks the files coder-ai changed as the branch holds them', async () => {
    const c = skillContext({ agentId: 'review-ai', action: 'verify', workspace: ws });
    c.request.previous = [coderStep(branch, commit, base, 'fix')];
    const { artifact } = await runSkill(verifySkill, c);
    const d = artifact.data as ReviewData;
    assert.equal(d.branch, branch);
    assert.equal(d.mode, 'files');
    assert.ok(d.findings.some((f) => f.ruleId === 'review/eval' && f.file === 'src/math.js'), JSON.stringify(d.findings));
  });

  it('a workspace that is a folder of the repository: paths relative to it, changes outside it left out', async () => {
    mkdirSync(path.join(ws, 'app/src'), { recursive: true });
    writeFileSync(path.join(ws, 'app/src/x.js'), 'exports.x = 1;\n');
    sh('add', '.');
    sh('commit', '-q', '-m', 'app');
    const appBase = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', '-b', 'cadre/app');
    writeFileSync(path.join(ws, 'app/src/x.js'), 'exports.x = 1;\nexports.run = (s) => eval(s);\n');
    writeFileSync(path.join(ws, 'src/outside.js'), 'exports.y = (s) => eval(s);\n');
    sh('add', '.');
    sh('commit', '-q', '-m', 'cadre: generate code');
    const appCommit = sh('rev-parse', 'HEAD');
    sh('checkout', '-q', 'main');
    const c = skillContext({ agentId: 'review-ai', action: 'review', workspace: path.join(ws, 'app') });
    c.request.previous = [coderStep('cadre/app', appCommit, appBase)];
    const { artifact } = await runSkill(reviewSkill, c);
    const d = artifact.data as ReviewData;
    assert.deepEqual(d.files.map((f) => f.file), ['src/x.js']);
    assert.deepEqual(d.findings.filter((f) => f.ruleId === 'review/eval').map((f) => [f.file, f.range.startLine]), [['src/x.js', 2]]);
  });

  it('a coder-ai commit that is not in the workspace\'s repository: unable, saying so', async () => {
    const c = skillContext({ agentId: 'review-ai', action: 'review', workspace: ws });
    c.request.previous = [coderStep(branch, 'c'.repeat(40), base)];
    const { artifact } = await runSkill(reviewSkill, c);
    assert.match(artifact.unable ?? '', /coder-ai's commit cccccccccccc \(branch cadre\/wf123-s3-generate\) is not in the workspace's repository/);
  });
});
