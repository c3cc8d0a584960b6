import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../../../server/src/config/load';
import { EngineError, isEngineError } from '../../../server/src/engine/errors';
import { createLanguageModel, TokenMeter } from '../../../server/src/llm';
import { AgentWorkers, type AgentWorkersOptions } from '../../../server/src/workers/agent-workers';
import { createHarness, type Harness } from '../../support/engine-harness';
import { answer, FakeProvider, hang, stream } from '../llm/fake-provider';

const ROOT = path.resolve(__dirname, '../../..');
const BUILTIN = path.join(ROOT, 'server/src/skills/builtin.ts');
const TS_WORKER: Pick<AgentWorkersOptions, 'workerFile' | 'execArgv'> = {
  workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'),
  execArgv: ['--require', require.resolve('tsx/cjs')],
};

/** A skill module that streams a completion through ctx.model and needs a model. */
const STREAMING_MODULE = `
exports.skills = [{
  agentId: 'coder-ai', action: 'generate', requiresModel: true,
  async research() { return { items: [{ source: 'test', detail: 'x', weight: 1 }], constraints: [], pathsRead: [] }; },
  propose() { return []; },
  async generate(ctx) {
    const pieces = [];
    const out = await ctx.model.complete({ messages: [{ role: 'user', content: 'say hello' }], onToken: (t) => pieces.push(t) });
    return { kind: 'x', summary: 'streamed', goalRef: ctx.request.goal.id, confidence: 0.9, data: { pieces, text: out.text, provider: ctx.model.id, usage: out.usage } };
  },
}];
`;

const REQUIREMENT = 'Admins can export the audit log as CSV so that auditors can review it.';
const STORIES = { stories: [{ role: 'admin', capability: 'export the audit log as CSV', benefit: 'auditors can review it', source: REQUIREMENT, acceptanceCriteria: [{ given: 'an admin', when: 'they export', then: 'a CSV file is downloaded' }] }] };

describe('language model from skills in worker threads', function () {
  this.timeout(60_000);
  const provider = new FakeProvider();
  let workers: AgentWorkers;
  let h: Harness;
  let meter: TokenMeter;
  let dir: string;

  before(async () => {
    await provider.start();
    dir = mkdtempSync(path.join(tmpdir(), 'cadre-llm-workers-'));
    writeFileSync(path.join(dir, 'streaming.cjs'), STREAMING_MODULE);
    workers = new AgentWorkers({ ...TS_WORKER, modules: [BUILTIN, path.join(dir, 'streaming.cjs')] });
  });
  after(async () => {
    await workers.close();
    await provider.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    provider.reset();
    h = await createHarness({ skills: await workers.allSkills() });
    meter = new TokenMeter();
    const model = createLanguageModel(parseConfig(`llm:\n  provider: openai-compatible\n  base_url: ${provider.baseUrl}\n  model: test-model\n  max_retries: 0\n`, '.cadre.yaml', {}).llm);
    h.engine.rigor.useLanguageModel({ model, meter });
  });
  afterEach(() => h.close());

  it('req-ai analyze in its worker: the completion is relayed to the main thread; output from the model, tokens in the artifact', async () => {
    provider.queue.push(answer(JSON.stringify(STORIES), { prompt: 300, completion: 200 }));
    const req = h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } });
    const r = await h.engine.rigor.runStep(req);
    assert.equal(r.passed, true, JSON.stringify(r.gates.filter((g) => g.status === 'fail')));
    assert.equal((r.artifact!.data as { llm: { used: boolean } }).llm.used, true);
    assert.equal(r.artifact!.tokens, 500);
    assert.equal(meter.totals(req.executionId).totalTokens, 500);
    assert.equal(workers.status('req-ai').state, 'warm', 'the skill ran in the worker');
    assert.match(provider.prompt(), /Admins can export the audit log/);
  });

  it('streamed tokens reach the skill in the worker, in order', async () => {
    provider.queue.push(stream(['Hel', 'lo', ' there']));
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate' }));
    const data = r.artifact!.data as { pieces: string[]; text: string; provider: string };
    assert.deepEqual(data.pieces, ['Hel', 'lo', ' there']);
    assert.equal(data.text, 'Hello there');
    assert.equal(data.provider, 'openai-compatible');
    assert.equal(r.artifact!.tokens, 23);
  });

  it('cancelling the step cancels the completion in the main thread and its HTTP request', async () => {
    provider.queue.push(hang);
    const ac = new AbortController();
    const run = h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT }, signal: ac.signal }));
    const end = Date.now() + 10_000;
    while (provider.seen.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    assert.equal(provider.seen.length, 1);
    ac.abort(new EngineError('ERR_CANCELLED', 'stopped by the test'));
    await assert.rejects(run, (e: unknown) => isEngineError(e) && e.code === 'ERR_CANCELLED');
    while (provider.closed === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    assert.equal(provider.closed, 1, 'the HTTP request was aborted');
  });

  it('without a model, a worker skill that requires one is unavailable and others get no ctx.model', async () => {
    h.engine.rigor.useLanguageModel(null);
    await assert.rejects(h.engine.rigor.runStep(h.request({ agentId: 'coder-ai', action: 'generate' })), (e: unknown) => isEngineError(e) && e.code === 'ERR_SKILL_UNAVAILABLE');
    const r = await h.engine.rigor.runStep(h.request({ agentId: 'req-ai', action: 'analyze', goal: { id: 'goal_1', prompt: REQUIREMENT } }));
    assert.equal((r.artifact!.data as { llm?: unknown }).llm, undefined);
    assert.equal(r.artifact!.tokens, 0);
    assert.equal(provider.seen.length, 0);
  });
});
