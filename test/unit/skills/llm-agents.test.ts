import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../../../server/src/config/load';
import { isEngineError } from '../../../server/src/engine/errors';
import type { StepResult } from '../../../server/src/engine/rigor/pipeline';
import { applyConfigOverrides } from '../../../server/src/host/runtime';
import { createLanguageModel, RelayModel, TokenMeter, type LanguageModel } from '../../../server/src/llm';
import { generateSkill, withCodeSyntax } from '../../../server/src/skills/coding';
import { reviewChecks } from '../../../server/src/skills/review-checks';
import { explainSkill } from '../../../server/src/skills/debug';
import { planSkill } from '../../../server/src/skills/planning';
import { analyzeSkill } from '../../../server/src/skills/requirements';
import { generateTestsSkill } from '../../../server/src/skills/testing';
import { createHarness, type Harness } from '../../support/engine-harness';
import { answer, FakeProvider, hang } from '../llm/fake-provider';

const REQUIREMENT = 'Admins can export the audit log as CSV so that auditors can review it.';
const STORIES = {
  stories: [{
    role: 'admin', capability: 'export the audit log as CSV', benefit: 'auditors can review it',
    source: 'Admins can export the audit log as CSV so that auditors can review it.',
    acceptanceCriteria: [{ given: 'an admin on the audit page', when: 'they choose Export CSV', then: 'a CSV file with every audit record is downloaded' }],
  }],
};
/** Built at run time so that no secret literal sits in the source. */
const plantedKey = () => ['AK', 'IA', 'Q7RZ', '4M2X', 'P9LK', 'W3NT'].join('');

const gate = (r: StepResult, id: string) => r.gates.find((g) => g.gate === id);

describe('generative agents with a language model (in process, loopback OpenAI-compatible server)', function () {
  this.timeout(30_000);
  const provider = new FakeProvider();
  let h: Harness;
  let meter: TokenMeter;
  let model: LanguageModel;

  before(() => provider.start());
  after(() => provider.stop());
  beforeEach(async () => {
    provider.reset();
    h = await createHarness({ skills: [analyzeSkill, planSkill, explainSkill, generateSkill, generateTestsSkill] });
    meter = new TokenMeter();
    model = createLanguageModel(parseConfig(`llm:\n  provider: openai-compatible\n  base_url: ${provider.baseUrl}\n  model: test-model\n  max_retries: 0\n`, '.cadre.yaml', {}).llm);
    h.engine.rigor.useLanguageModel({ model, meter });
  });
  afterEach(() => h.close());

  it('req-ai analyze: the stories come from the model, with the Research evidence in the prompt; tokens land in the artifact', async () => {
    provider.queue.push(answer(JSON.stringify(STORIES), { prompt: 900, completion: 334 }));
    const req = h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } });
    const r = await h.engine.rigor.runStep(req);
    assert.equal(r.passed, true, JSON.stringify(r.gates.filter((g) => g.status === 'fail')));
    const data = r.artifact!.data as { stories: Array<{ text: string; source: string }>; llm: { used: boolean; model: string } };
    assert.equal(data.llm.used, true);
    assert.equal(data.llm.model, 'test-model-0125');
    assert.equal(data.stories[0]!.text, 'As an admin, I want to export the audit log as CSV, so that auditors can review it.');
    assert.equal(data.stories[0]!.source, STORIES.stories[0]!.source);
    assert.equal(r.artifact!.tokens, 1234);
    assert.equal(meter.totals(req.executionId).totalTokens, 1234);
    assert.equal(gate(r, 'cost-budget')!.status, 'pass');
    assert.equal(gate(r, 'cost-budget')!.value, 1234);
    assert.equal(provider.seen.length, 1);
    assert.match(provider.prompt(), /Requirement text:/);
    assert.match(provider.prompt(), /Evidence gathered in Research:\n- \[goal prompt\] Admins can export/);
  });

  it('the cost-budget gate fails when the model used more tokens than the budget', async () => {
    provider.queue.push(answer(JSON.stringify(STORIES), { prompt: 150_000, completion: 100_000 }));
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.equal(r.passed, false);
    assert.equal(r.artifact!.tokens, 250_000);
    assert.equal(gate(r, 'cost-budget')!.status, 'fail');
    assert.match(gate(r, 'cost-budget')!.reason, /250000 tokens exceeds the limit of 200000/);
  });

  it('a model answer with a planted secret fails the secrets gate', async () => {
    const story = { ...STORIES.stories[0]!, capability: `export the audit log with key ${plantedKey()}` };
    provider.queue.push(answer(JSON.stringify({ stories: [story] })));
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.equal(r.passed, false);
    assert.equal(gate(r, 'secrets-clean')!.status, 'fail');
    assert.match(gate(r, 'secrets-clean')!.reason, /aws-access-key-id/);
  });

  it('an unparsable answer falls back on the embedded stories and says so', async () => {
    provider.queue.push(answer('Sure! Here are some user stories: the admin exports things.'));
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.equal(r.passed, true, JSON.stringify(r.gates.filter((g) => g.status === 'fail')));
    const data = r.artifact!.data as { stories: Array<{ source: string }>; llm: { used: boolean; fallback: string } };
    assert.equal(data.llm.used, false);
    assert.match(data.llm.fallback, /not JSON/);
    assert.match(r.artifact!.summary, /embedded: the language model answer was not usable/);
    assert.match(r.artifact!.text!, /not used: the model answer is not JSON; this is the embedded result/);
    assert.equal(data.stories.length, 1, 'the deterministic stories');
    assert.equal(r.artifact!.tokens, 17, 'the tokens spent on the unusable answer still count');
  });

  it('an answer of the wrong shape falls back too (zod)', async () => {
    provider.queue.push(answer(JSON.stringify({ stories: [{ role: 'admin' }] })));
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    const data = r.artifact!.data as { llm: { used: boolean; fallback: string } };
    assert.equal(data.llm.used, false);
    assert.match(data.llm.fallback, /expected shape: stories\.0\.capability/);
  });

  it('cancelling the step aborts the HTTP request', async () => {
    provider.queue.push(hang);
    const ac = new AbortController();
    const run = h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT }, signal: ac.signal }));
    const end = Date.now() + 5000;
    while (provider.seen.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    assert.equal(provider.seen.length, 1, 'the request reached the server');
    ac.abort(new Error('stop'));
    await assert.rejects(run, (err: unknown) => isEngineError(err) && err.code === 'ERR_CANCELLED');
    while (provider.closed === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    assert.equal(provider.closed, 1, 'the connection was closed before an answer');
  });

  it('planner-ai plan: a plan from the model; a cyclic answer falls back on the embedded plan', async () => {
    const tasks = [{ id: 'T1', title: 'Design the CSV export', dependsOn: [] }, { id: 'T2', title: 'Build the export endpoint', dependsOn: ['T1'], estimate: { optimistic: 1, likely: 2, pessimistic: 4 } }];
    provider.queue.push(answer(JSON.stringify({ tasks })));
    const goal = { id: 'goal_1', prompt: 'Ship the export:\n- design the CSV export\n- build the export endpoint' };
    let r = await h.engine.rigor.runStep(h.request({ agentId: 'planner-ai', action: 'plan', goal }));
    assert.equal(r.passed, true, JSON.stringify(r.gates.filter((g) => g.status === 'fail')));
    let data = r.artifact!.data as { source: string; criticalPath: string[]; llm: { used: boolean; fallback?: string } };
    assert.equal(data.source, 'model');
    assert.deepEqual(data.criticalPath, ['T1', 'T2']);
    assert.match(provider.prompt(), /Tasks found \(prompt\)/);

    provider.queue.push(answer(JSON.stringify({ tasks: [{ id: 'A', title: 'a', dependsOn: ['B'] }, { id: 'B', title: 'b', dependsOn: ['A'] }] })));
    r = await h.engine.rigor.runStep(h.request({ agentId: 'planner-ai', action: 'plan', goal }));
    data = r.artifact!.data as typeof data;
    assert.equal(data.source, 'prompt', 'the embedded plan from the prompt bullets');
    assert.equal(data.llm.used, false);
    assert.match(data.llm.fallback!, /not a valid task graph/);
  });

  it('debug-ai explain: a fix proposal from the model; a location outside the trace is rejected', async () => {
    const ws = h.dir;
    mkdirSync(path.join(ws, 'src'), { recursive: true });
    writeFileSync(path.join(ws, 'src/user-service.js'), 'function name(user) {\n  return user.profile.name;\n}\nmodule.exports = { name };\n');
    const trace = `TypeError: Cannot read properties of undefined (reading 'name')\n    at name (${path.join(ws, 'src/user-service.js')}:2:23)\n    at Object.<anonymous> (${path.join(ws, 'src/main.js')}:5:1)`;
    provider.queue.push(answer(JSON.stringify({ cause: 'user.profile is undefined for users without a profile', fix: { description: 'Return null when the profile is missing', file: 'src/user-service.js', line: 2, code: 'if (!user.profile) return null;' } })));
    let r = await h.engine.rigor.runStep(h.request({ agentId: 'debug-ai', action: 'explain', input: { trace } }));
    let data = r.artifact!.data as { modelFix?: { fix: { file: string } }; llm: { used: boolean; fallback?: string }; classification?: unknown };
    assert.equal(data.llm.used, true);
    assert.equal(data.modelFix!.fix.file, 'src/user-service.js');
    assert.ok(data.classification, 'the embedded analysis stays in the report');
    assert.match(r.artifact!.text!, /Proposed fix \(language model openai-compatible, test-model-0125\)/);
    assert.match(provider.prompt(), /src\/user-service\.js/);

    provider.queue.push(answer(JSON.stringify({ cause: 'x', fix: { description: 'edit the config', file: 'config/invented.js', line: 1 } })));
    r = await h.engine.rigor.runStep(h.request({ agentId: 'debug-ai', action: 'explain', input: { trace } }));
    data = r.artifact!.data as typeof data;
    assert.equal(data.llm.used, false);
    assert.match(data.llm.fallback!, /not a workspace frame/);
    assert.equal(data.modelFix, undefined);
  });

  it('coder-ai generate: code from the model is syntax-checked; broken code is refused, never delivered', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-gen-'));
    try {
      const good = { files: [{ path: 'src/health.ts', content: 'export function health(): { ok: boolean } {\n  return { ok: true };\n}\n' }], explanation: 'A health function.' };
      provider.queue.push(answer(JSON.stringify(good)));
      let r = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'add a health function' } }));
      // The skill delivered; Review judges it like any change (the harness's checks have no TS parser; the host adds one).
      assert.notEqual(r.error?.code, 'ERR_SKILL_FAILED', JSON.stringify(r.error));
      assert.equal(gate(r, 'secrets-clean')!.status, 'pass');
      assert.deepEqual(withCodeSyntax(reviewChecks).syntax('src/health.ts', r.artifact!.changes![0]!.content!), { ok: true, reason: 'valid TypeScript' });
      assert.equal(r.artifact!.changes![0]!.path, 'src/health.ts');
      assert.equal(r.artifact!.changes![0]!.kind, 'create');
      assert.match(r.artifact!.text!, /export function health/);
      assert.equal((r.artifact!.data as { mode: string }).mode, 'proposal');
      // A proposal wrote nothing: rollback-ready has nothing to hold it to.
      assert.equal(r.artifact!.changes![0]!.applied, false);
      assert.equal(gate(r, 'rollback-ready')!.status, 'not_applicable', gate(r, 'rollback-ready')!.reason);

      provider.queue.push(answer(JSON.stringify({ files: [{ path: 'src/health.ts', content: 'export function health( {\n  return { ok: true ;\n' }] })));
      r = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'add a health function' } }));
      assert.equal(r.passed, false);
      assert.equal(r.error!.code, 'ERR_SKILL_FAILED');
      assert.match(r.error!.message, /generated code was rejected: src\/health\.ts:\d+:\d+: .* syntax errors?\)/);
      assert.equal(r.artifact!.changes, undefined);

      provider.queue.push(answer(JSON.stringify({ files: [{ path: '../outside.ts', content: 'export const x = 1;\n' }] })));
      r = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'x' } }));
      assert.match(r.error!.message, /outside the workspace/);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('coder-ai generate commits on a new branch when ACMF allows it', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-gen-git-'));
    const sh = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
    try {
      sh('init', '-q', '-b', 'main');
      sh('config', 'user.email', 't@example.com');
      sh('config', 'user.name', 'T');
      writeFileSync(path.join(ws, 'README.md'), '# x\n');
      sh('add', '.');
      sh('commit', '-q', '-m', 'init');
      const head = sh('rev-parse', 'HEAD');
      await h.close();
      h = await createHarness({ skills: [generateSkill], yaml: 'agents:\n  coder-ai:\n    acmf_mode: AUTONOMOUS\n    approval_required_for: []\n' });
      h.engine.rigor.useLanguageModel({ model, meter });
      provider.queue.push(answer(JSON.stringify({ files: [{ path: 'src/health.js', content: 'exports.health = () => ({ ok: true });\n' }] })));
      const r = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate', workspace: ws, goal: { id: 'goal_1', prompt: 'add a health function' } }));
      const data = r.artifact!.data as { mode: string; branch: string };
      assert.equal(data.mode, 'branch', JSON.stringify(r.decisions.map((d) => [d.action.kind, d.decision])));
      assert.match(sh('show', `${data.branch}:src/health.js`), /exports\.health/);
      assert.equal(sh('rev-parse', 'HEAD'), head, 'the current branch is untouched');
      assert.deepEqual(r.artifact!.rollback, { kind: 'branch', ref: data.branch });
      assert.equal(r.artifact!.changes![0]!.applied, true);
      assert.equal(gate(r, 'rollback-ready')!.status, 'pass', gate(r, 'rollback-ready')!.reason);
      assert.equal(gate(r, 'rollback-ready')!.value, data.branch);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('tester-ai generate-tests: the model fills the skeletons that parse', async () => {
    const ws = h.dir;
    mkdirSync(path.join(ws, 'src'), { recursive: true });
    writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'x', scripts: { test: 'mocha' }, devDependencies: { mocha: '*' } }));
    writeFileSync(path.join(ws, 'src/sum.js'), 'function sum(a, b) { return a + b; }\nmodule.exports = { sum };\n');
    // The first answer: a body for the skeleton; we do not know its path yet, so echo it back from the prompt.
    provider.queue.push((_req, res, body) => {
      const prompt = (body['messages'] as Array<{ content: string }>).map((m) => m.content).join('\n');
      const p = /--- (\S+\.test\.js)/.exec(prompt)![1]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify({ files: [{ path: p, content: "const assert = require('assert');\nconst { sum } = require('../src/sum');\ndescribe('sum', () => { it('adds', () => assert.equal(sum(1, 2), 3)); });\n" }] }) }, finish_reason: 'stop' }], usage: { prompt_tokens: 40, completion_tokens: 60, total_tokens: 100 } }));
    });
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'tester-ai', action: 'generate-tests' }));
    const data = r.artifact!.data as { filled: string[]; llm: { used: boolean } };
    assert.equal(data.llm.used, true);
    assert.equal(data.filled.length, 1);
    assert.match(r.artifact!.changes![0]!.content!, /assert\.equal\(sum\(1, 2\), 3\)/);
    assert.equal(r.artifact!.tokens, 100);
  });
});

describe('language model: editor relay, provider none and overrides', function () {
  this.timeout(30_000);
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness({ skills: [analyzeSkill, generateSkill] });
  });
  afterEach(() => h.close());

  it('provider editor: completions go through the relay function', async () => {
    const asked: string[] = [];
    const model = createLanguageModel({ provider: 'editor', timeout_ms: 1000, max_retries: 0 }, {
      relay: async (req) => {
        asked.push(req.messages.map((m) => m.content).join('\n'));
        return { text: JSON.stringify(STORIES), model: 'copilot-gpt', finishReason: 'stop' };
      },
    });
    h.engine.rigor.useLanguageModel({ model, available: () => !(model instanceof RelayModel) || model.connected });
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    const data = r.artifact!.data as { llm: { used: boolean; provider: string; model: string } };
    assert.deepEqual(data.llm, { provider: 'editor', used: true, model: 'copilot-gpt' });
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /Admins can export the audit log/);
    assert.ok(r.artifact!.tokens! > 0, 'usage estimated at chars/4');
  });

  it('an editor relay not connected yet counts as no model: the embedded result, generate unavailable', async () => {
    const model = new RelayModel(undefined, 'editor');
    h.engine.rigor.useLanguageModel({ model, available: () => model.connected });
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.equal((r.artifact!.data as { llm?: unknown }).llm, undefined);
    await assert.rejects(h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate' })), (e: unknown) => isEngineError(e) && e.code === 'ERR_SKILL_UNAVAILABLE');
  });

  it('provider none: no ctx.model, the same artifact as without a model, coder-ai generate unavailable', async () => {
    const before = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    h.engine.rigor.useLanguageModel({ model: createLanguageModel({ provider: 'none', timeout_ms: 1, max_retries: 0 }) });
    const after = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.deepEqual(after.artifact, before.artifact);
    assert.equal(after.artifact!.tokens, 0);
    await assert.rejects(h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate' })), (e: unknown) => isEngineError(e) && e.code === 'ERR_SKILL_UNAVAILABLE' && /needs a language model/.test(e.message));
  });

  it('configOverrides apply over the YAML: intelligence, provider, base URL, model and the key from apiKeyEnv', () => {
    const config = parseConfig('defaults:\n  intelligence: core\nllm:\n  provider: none\n  timeout_ms: 5000\n', '.cadre.yaml', {});
    const logs: string[] = [];
    const out = applyConfigOverrides(config, { intelligence: 'ultra', llm: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKeyEnv: 'MY_KEY' } }, { MY_KEY: 'sk-abc' }, (l) => logs.push(l));
    assert.equal(out.defaults.intelligence, 'ultra');
    assert.deepEqual(out.llm, { provider: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', model: 'm', api_key: 'sk-abc', timeout_ms: 5000, max_retries: 2 });
    assert.equal(config.defaults.intelligence, 'core', 'the loaded config is not changed');
    const bad = applyConfigOverrides(config, { llm: { provider: 'openai-compatible' } }, {}, (l) => logs.push(l));
    assert.equal(bad.llm.provider, 'none', 'an invalid override is ignored');
    assert.match(logs.join('\n'), /llm settings ignored \(base_url: is required/);
    assert.equal(applyConfigOverrides(config, undefined, {}), config);
  });
});
