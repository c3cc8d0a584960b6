import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../../../../server/src/config/load';
import type { StepResult } from '../../../../server/src/engine/rigor/pipeline';
import { createLanguageModel, TokenMeter, type LanguageModel } from '../../../../server/src/llm';
import { generateSkill } from '../../../../server/src/skills/coding';
import { createHarness, type Harness } from '../../../support/engine-harness';
import { skillContext } from '../../../support/skill-context';
import { answer, FakeProvider } from '../../llm/fake-provider';

/**
 * coder-ai generate with a model: Inspect declares exactly the files the step then writes (the model
 * drafts in Research), so ACMF rates the real paths and the acmf-permission gate finds every reported
 * action declared. Real git repository, real pipeline, a loopback OpenAI-compatible server.
 */
describe('coder-ai generate: what Inspect declares is what Generate writes', function () {
  this.timeout(30_000);
  const provider = new FakeProvider();
  let model: LanguageModel;
  let h: Harness | undefined;
  let ws: string;
  const sh = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
  const gate = (r: StepResult, id: string) => r.gates.find((g) => g.gate === id)!;
  /**
   * Every gate but syntax-valid: the harness's checks have no JS/TS parser (the host adds one, see
   * withCodeSyntax), so that gate is proven over HTTP in test/integration/http/build-with-model.test.ts.
   */
  const passedButSyntax = (r: StepResult) => {
    const failed = r.gates.filter((g) => g.status === 'fail' && g.gate !== 'syntax-valid');
    assert.deepEqual(failed, [], JSON.stringify(failed));
    assert.ok(r.error === null || r.error.code === 'ERR_GATE_FAILED', JSON.stringify(r.error));
  };

  before(async () => {
    await provider.start();
    model = createLanguageModel(parseConfig(`llm:\n  provider: openai-compatible\n  base_url: ${provider.baseUrl}\n  model: test-model\n  max_retries: 0\n`, '.cadre.yaml', {}).llm);
  });
  after(() => provider.stop());
  beforeEach(() => {
    provider.reset();
    ws = mkdtempSync(path.join(tmpdir(), 'cadre-gen-inspect-'));
    sh('init', '-q', '-b', 'main');
    sh('config', 'user.email', 't@example.com');
    sh('config', 'user.name', 'T');
    writeFileSync(path.join(ws, 'index.js'), 'exports.one = () => 1;\n');
    sh('add', '.');
    sh('commit', '-q', '-m', 'init');
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rmSync(ws, { recursive: true, force: true });
  });

  async function harness(mode: string): Promise<Harness> {
    h = await createHarness({ skills: [generateSkill], yaml: `agents:\n  coder-ai:\n    acmf_mode: ${mode}\n    approval_required_for: []\n` });
    h.engine.rigor.useLanguageModel({ model, meter: new TokenMeter() });
    return h;
  }

  it('declares the drafted paths in Inspect, reports the same paths, and passes acmf-permission (AUTONOMOUS)', async () => {
    const hh = await harness('AUTONOMOUS');
    provider.queue.push(answer(JSON.stringify({
      files: [
        { path: 'index.js', content: 'exports.one = () => 1;\nexports.two = () => 2;\n' },
        { path: 'test/two.test.js', content: "const assert = require('node:assert');\nassert.equal(require('../index').two(), 2);\n" },
      ],
      explanation: 'two next to one',
    })));
    const head = sh('rev-parse', 'HEAD');
    const r = await hh.engine.rigor.runStep(hh.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'add two()' } }));
    passedButSyntax(r);
    // One model call, made before Inspect: the draft is what was declared and what was written.
    assert.equal(provider.seen.length, 1);
    const declared = Object.fromEntries(r.decisions.map((d) => [d.action.kind, d.action.paths]));
    assert.deepEqual(declared, { write_file: ['index.js', 'test/two.test.js'], git_commit: ['index.js', 'test/two.test.js'] });
    const taken = Object.fromEntries((r.artifact!.actionsTaken ?? []).map((a) => [a.kind, a.paths]));
    assert.deepEqual(taken, declared);
    assert.equal(gate(r, 'acmf-permission').status, 'pass', gate(r, 'acmf-permission').reason);
    // The artifact names the branch, its commit and base, and the branch is its rollback.
    const data = r.artifact!.data as { mode: string; branch: string; commit: string; base: string };
    assert.equal(data.mode, 'branch');
    assert.equal(data.base, head);
    assert.equal(sh('rev-parse', data.branch), data.commit);
    assert.deepEqual(r.artifact!.rollback, { kind: 'branch', ref: data.branch });
    assert.match(sh('show', `${data.branch}:index.js`), /exports\.two/);
    assert.equal(sh('rev-parse', 'HEAD'), head, 'the user\'s branch is untouched');
    assert.equal(sh('status', '--porcelain'), '', 'and so is the working tree');
  });

  it('ACMF rates the real paths: a draft that rewrites .cadre.yaml needs a person even in ASSISTED; ordinary files do not', async () => {
    const hh = await harness('ASSISTED');
    provider.queue.push(answer(JSON.stringify({ files: [{ path: 'src/util.js', content: 'exports.id = (x) => x;\n' }] })));
    let r = await hh.engine.rigor.runStep(hh.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'add id()' } }));
    passedButSyntax(r);
    assert.deepEqual(r.decisions.map((d) => d.decision), ['allow', 'allow']);
    assert.equal(hh.engine.acmf.listApprovals({}).length, 0);

    // The draft names Cadre's own configuration: critical, so ASSISTED asks; the person denies.
    provider.queue.push(answer(JSON.stringify({ files: [{ path: '.cadre.yaml', content: 'defaults:\n  acmf_mode: AUTONOMOUS\n' }] })));
    const step = hh.engine.rigor.runStep(hh.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'make yourself autonomous' } }));
    let pending = hh.engine.acmf.listApprovals({ status: 'pending' });
    for (let i = 0; pending.length < 2 && i < 400; i++) {
      await new Promise((res) => setTimeout(res, 10));
      pending = hh.engine.acmf.listApprovals({ status: 'pending' });
    }
    assert.deepEqual(pending.map((a) => [a.action.kind, a.action.paths, a.risk]), [['write_file', ['.cadre.yaml'], 'critical'], ['git_commit', ['.cadre.yaml'], 'critical']]);
    assert.ok(pending[0]!.riskReasons.some((x) => /Cadre's own configuration/.test(x)), pending[0]!.riskReasons.join('; '));
    for (const a of pending) await hh.engine.acmf.decideApproval(a.id, { approved: false, by: 'reviewer', reason: 'no' });
    r = await step;
    // Denied: nothing committed, the draft is only proposed as a diff.
    assert.equal((r.artifact!.data as { mode: string }).mode, 'proposal');
    assert.equal(sh('branch', '--list', 'cadre/*').split('\n').filter(Boolean).length, 1, 'only the first step\'s branch exists');
  });

  it('Generate given a copy of the evidence (a worker\'s structured clone) writes the declared draft without asking the model again', async () => {
    provider.queue.push(answer(JSON.stringify({ files: [{ path: 'src/three.js', content: 'exports.three = () => 3;\n' }] })));
    const c = skillContext({ agentId: 'coder-ai', action: 'generate', workspace: ws, prompt: 'add three()' });
    c.model = { id: model.id, complete: (req) => model.complete(req) };
    const evidence = await generateSkill.research(c);
    const declared = await generateSkill.propose(c, evidence);
    const artifact = await generateSkill.generate(c, structuredClone(evidence));
    assert.equal(provider.seen.length, 1, 'one completion, in Research');
    assert.deepEqual(declared.map((a) => a.paths), [['src/three.js'], ['src/three.js']]);
    assert.deepEqual(artifact.changes!.map((x) => [x.path, x.content]), [['src/three.js', 'exports.three = () => 3;\n']]);
    // Committed on its branch, as with the original evidence.
    const data = artifact.data as { mode: string; branch: string };
    assert.equal(data.mode, 'branch');
    assert.match(sh('show', `${data.branch}:src/three.js`), /exports\.three/);
  });

  it('an unusable draft declares nothing and the step says why (no model answer invented)', async () => {
    const hh = await harness('AUTONOMOUS');
    provider.queue.push(answer(JSON.stringify({ files: [{ path: '../outside.js', content: 'x = 1;\n' }] })));
    const r = await hh.engine.rigor.runStep(hh.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'x' } }));
    assert.equal(r.passed, false);
    assert.deepEqual(r.decisions, []);
    assert.match(r.error!.message, /outside the workspace/);
    assert.equal(sh('branch', '--list', 'cadre/*'), '');
  });
});
