import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { answer, byAgent, FakeProvider } from '../../unit/llm/fake-provider';

/** A small JS project with a node --test suite, committed in a fresh git repository. */
function sampleApp(): string {
  const dir = tempDir('cadre-sample-');
  const sh = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  mkdirSync(path.join(dir, 'src'));
  mkdirSync(path.join(dir, 'test'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'sample-math', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2) + '\n');
  writeFileSync(path.join(dir, 'src/math.js'), "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n");
  writeFileSync(path.join(dir, 'test/math.test.js'), "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../src/math');\n\ntest('add', () => {\n  assert.equal(add(2, 3), 5);\n});\n");
  sh('init', '-q', '-b', 'main');
  sh('config', 'user.email', 'dev@example.com');
  sh('config', 'user.name', 'Dev');
  sh('add', '.');
  sh('commit', '-q', '-m', 'math: add');
  return dir;
}

const GOAL = 'Add a subtract(a, b) function to src/math.js, exported next to add, with a test.';

const STORIES = {
  stories: [{
    role: 'developer', capability: 'subtract two numbers with subtract(a, b)', benefit: 'callers do not write a + -b',
    source: GOAL,
    acceptanceCriteria: [{ given: 'the math module', when: 'subtract(5, 3) is called', then: 'it returns 2' }],
  }],
};
const PLAN = { tasks: [{ id: 'T1', title: 'Write subtract in src/math.js', dependsOn: [] }, { id: 'T2', title: 'Test subtract', dependsOn: ['T1'] }] };
const CODE = {
  files: [
    { path: 'src/math.js', content: "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nfunction subtract(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add, subtract };\n" },
    { path: 'test/subtract.test.js', content: "'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\nconst { subtract } = require('../src/math');\n\ntest('subtract', () => {\n  assert.equal(subtract(5, 3), 2);\n});\n" },
  ],
  explanation: 'subtract next to add, with its own test file.',
};

const TERMINAL = ['completed', 'failed', 'cancelled'];

/** Polls a status URL every 400 ms (the key's plan allows ~2.8 requests a second) until `done`. */
async function poll(a: ReturnType<typeof api>, url: string, done: (b: Json) => boolean = (b) => TERMINAL.includes(b['status'] as string), timeoutMs = 150_000): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await a.get(url);
    assert.equal(r.status, 200, r.text);
    if (done(r.body)) return r.body;
    if (Date.now() > end) throw new Error(`${url} still ${String(r.body['status'])} after ${timeoutMs} ms: ${r.text.slice(0, 2000)}`);
    await new Promise((res) => setTimeout(res, 400));
  }
}

/**
 * Issue 10, item 7: BUILD and full-sdlc with a language model, end to end over HTTP. A real server
 * (dist/server.js, its agent workers and embedded skills) talks to a loopback OpenAI-compatible server
 * that answers req-ai, planner-ai and coder-ai with valid content for a small node --test project in a
 * fresh git repository. coder-ai commits on its own branch; review-ai must review that branch's diff
 * and tester-ai must run the tests on that commit, never on the user's working tree.
 */
describe('BUILD with a language model (real server over HTTP, loopback OpenAI-compatible model)', function () {
  this.timeout(180_000);
  const provider = new FakeProvider();
  let server: ServerProcess & { url: string };
  let a: ReturnType<typeof api>;
  let repo: string;
  let cfg: string;
  let dataDir: string;

  before(async () => {
    ensureBuilt();
    await provider.start();
    provider.fallback = byAgent({
      'req-ai': answer(JSON.stringify(STORIES)),
      'planner-ai': answer(JSON.stringify(PLAN)),
      'coder-ai': answer(JSON.stringify(CODE)),
    });
    cfg = tempDir('cadre-cfg-');
    dataDir = tempDir();
    const agents = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai', 'security-ai', 'deploy-ai', 'observe-ai'];
    writeFileSync(path.join(cfg, '.cadre.yaml'), [
      'defaults:', '  intelligence: ultra', '  acmf_mode: AUTONOMOUS',
      'agents:', ...agents.flatMap((id) => [`  ${id}:`, '    acmf_mode: AUTONOMOUS']),
      'llm:', '  provider: openai-compatible', `  base_url: ${provider.baseUrl}`, '  model: test-model', '  max_retries: 0', '',
    ].join('\n'));
    // A key in the generated form (the server refuses hand-made ones).
    const key = `cadre_${randomBytes(32).toString('base64url')}`;
    server = await startStandalone(dataDir, { CADRE_API_KEY: key }, ['--workspace', cfg]);
    a = api(server.url, key);
  });
  after(async () => {
    if (server) await stop(server);
    await provider.stop();
    for (const d of [cfg, dataDir]) if (d) rmSync(d, { recursive: true, force: true });
  });
  beforeEach(() => { repo = sampleApp(); });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const BUILD_AGENTS = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai'];
  /** full-sdlc's agents with an embedded skill for their step's action, in pipeline order. */
  const SDLC_SKILLED = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'tester-ai', 'review-ai', 'security-ai'];
  /**
   * What LEARNING asks a person for in these runs (docs/decisions.md, "BUILD with a model"): coder-ai's
   * two writes over the files it drafted, and tester-ai's test command. Everything else only reads.
   */
  const LEARNING_APPROVALS = [
    ['coder-ai', 'write_file', ['src/math.js', 'test/subtract.test.js']],
    ['coder-ai', 'git_commit', ['src/math.js', 'test/subtract.test.js']],
    ['tester-ai', 'run_command', null],
  ];

  interface Run { status: Json; approvals: Array<{ id: string; agentId: string; risk: string; action: { kind: string; paths?: string[] } }> }

  /** Invokes a workflow on the sample app and follows it to its end, granting every approval it asks for. */
  async function run(workflow: string): Promise<Run> {
    const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow, input: { prompt: GOAL, source: repo } });
    assert.equal(r.status, 202, r.text);
    const id = r.body['workflowId'] as string;
    const approvals: Run['approvals'] = [];
    for (;;) {
      const status = await poll(a, r.body['statusUrl'] as string, (b) => [...TERMINAL, 'awaiting_approval'].includes(b['status'] as string));
      if (status['status'] !== 'awaiting_approval') return { status, approvals };
      const pending = (await a.get(`/v1/approvals?execution_id=${id}`)).body['approvals'] as Run['approvals'];
      for (const x of pending) {
        approvals.push(x);
        const d = await a.post(`/v1/approvals/${x.id}/decision`, { approved: true, reason: 'reviewed the declared action' });
        assert.equal(d.status, 200, d.text);
      }
      if (!pending.length) await new Promise((res) => setTimeout(res, 200));
    }
  }

  type Step = { step: number; agentId: string; action: string; status: string; summary: string | null; phases: Array<{ phase: string; status: string }>; error: { code: string; message: string } | null };
  const steps = (s: Json) => s['phases'] as Step[];

  /** Each agent ran Research, Inspect, Generate, Optimize and Review, and passed. */
  function ranFivePhases(s: Json, agents: string[]): void {
    const byAgent = new Map(steps(s).map((x) => [x.agentId, x]));
    for (const id of agents) {
      const st = byAgent.get(id);
      assert.ok(st, `${id} is in the run`);
      assert.equal(st.status, 'completed', `${id}: ${JSON.stringify(st.error)}`);
      assert.deepEqual(st.phases.map((p) => `${p.phase}:${p.status}`), ['Research:Completed', 'Inspect:Completed', 'Generate:Completed', 'Optimize:Completed', 'Review:Completed'], id);
    }
  }

  /** coder-ai's branch holds the code; review-ai and tester-ai name that branch and its commit; the user's checkout is as it was. */
  function checkBranchChain(s: Json, head: string): void {
    const sh = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
    const by = new Map(steps(s).map((x) => [x.agentId, x]));
    const branch = /committed on new branch (\S+);/.exec(by.get('coder-ai')!.summary ?? '')?.[1];
    assert.ok(branch, by.get('coder-ai')!.summary ?? '');
    const commit = sh('rev-parse', branch);
    assert.match(sh('show', `${branch}:src/math.js`), /function subtract/);
    assert.equal(sh('rev-parse', `${branch}~1`), head, 'the branch starts at the user\'s HEAD');
    assert.ok((by.get('review-ai')!.summary ?? '').includes(`on branch ${branch} (commit ${commit.slice(0, 12)}, diff against ${head.slice(0, 12)})`), by.get('review-ai')!.summary ?? '');
    // Two tests pass: the user's add test and coder-ai's new subtract test (only on the branch).
    assert.ok((by.get('tester-ai')!.summary ?? '').startsWith('node-test: 2 passed, 0 failed'), by.get('tester-ai')!.summary ?? '');
    assert.ok((by.get('tester-ai')!.summary ?? '').includes(`tested coder-ai's branch ${branch} at ${commit.slice(0, 12)} in a temporary worktree`), by.get('tester-ai')!.summary ?? '');
    assert.equal(sh('rev-parse', 'HEAD'), head);
    assert.equal(sh('rev-parse', '--abbrev-ref', 'HEAD'), 'main');
    assert.equal(sh('status', '--porcelain'), '', 'nothing was written to the user\'s working tree');
    assert.equal(sh('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1, 'no worktree left behind');
  }

  /**
   * full-sdlc's deploy-ai step runs the action `deploy`: the sample app has no deploy script, so the step
   * is not applicable with its reason (proposing only reads, it asks nobody); then observe-ai `analyze`
   * finds no metrics or logs in the sample app and is not applicable too, naming where it looked: the
   * run completes (docs/decisions.md, "BUILD with a model" and "observe-ai").
   */
  function completesAtObserve(s: Json): void {
    assert.equal(s['status'], 'completed', JSON.stringify(s['error']));
    const deploy = steps(s).find((x) => x.agentId === 'deploy-ai');
    assert.ok(deploy, 'deploy-ai is in the run');
    assert.equal(deploy.error, null, JSON.stringify(deploy.error));
    assert.match(deploy.summary ?? '', /not applicable: no deploy command for staging: add a "deploy:staging" or "deploy" script to package\.json/);
    const observe = steps(s).find((x) => x.agentId === 'observe-ai');
    assert.ok(observe, 'observe-ai is in the run');
    assert.equal(observe.action, 'analyze');
    assert.equal(observe.error, null, JSON.stringify(observe.error));
    assert.equal(observe.summary, 'observe-ai analyze: not applicable: no metrics or logs to analyze: looked for input.metrics, input.logs, metrics/, logs/, *.prom, *.log');
    assert.equal(steps(s).at(-1)!.agentId, 'observe-ai', 'observe-ai is the last step');
  }

  const head = () => execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();

  it('BUILD in AUTONOMOUS: every agent runs the five phases and passes, no approval is asked, review and tests are of coder-ai\'s branch', async () => {
    const h = head();
    const { status, approvals } = await run('build');
    assert.equal(status['status'], 'completed', JSON.stringify(status['error']));
    assert.deepEqual(approvals, []);
    assert.deepEqual(steps(status).map((x) => x.agentId), BUILD_AGENTS);
    ranFivePhases(status, BUILD_AGENTS);
    checkBranchChain(status, h);
    assert.equal((status['output'] as { passed: boolean }).passed, true);
  });

  it('full-sdlc in AUTONOMOUS: every agent runs the five phases with no approval; deploy-ai and observe-ai are not applicable (no deploy script, no metrics or logs); the run completes', async () => {
    const h = head();
    const { status, approvals } = await run('full-sdlc');
    assert.deepEqual(approvals, []);
    ranFivePhases(status, SDLC_SKILLED);
    checkBranchChain(status, h);
    completesAtObserve(status);
  });

  describe('in LEARNING', () => {
    before(async () => {
      for (const id of [...SDLC_SKILLED, 'debug-ai', 'deploy-ai', 'observe-ai']) {
        const m = await a.post(`/v1/agents/${id}/acmf`, { mode: 'LEARNING', reason: 'every change reviewed by a person' });
        assert.equal(m.status, 200, m.text);
      }
    });

    it('BUILD asks for exactly coder-ai\'s two writes (over the drafted files) and tester-ai\'s test command; granted, the run completes', async () => {
      const h = head();
      const { status, approvals } = await run('build');
      assert.deepEqual(approvals.map((x) => [x.agentId, x.action.kind, x.action.paths ?? null]), LEARNING_APPROVALS);
      assert.ok(approvals.every((x) => x.risk === 'low'), JSON.stringify(approvals.map((x) => x.risk)));
      assert.equal(status['status'], 'completed', JSON.stringify(status['error']));
      ranFivePhases(status, BUILD_AGENTS);
      checkBranchChain(status, h);
    });

    it('full-sdlc asks for the same three (a not-applicable deploy or observe asks nobody); granted, the run completes', async () => {
      const h = head();
      const { status, approvals } = await run('full-sdlc');
      assert.deepEqual(approvals.map((x) => [x.agentId, x.action.kind, x.action.paths ?? null]), LEARNING_APPROVALS);
      ranFivePhases(status, SDLC_SKILLED);
      checkBranchChain(status, h);
      completesAtObserve(status);
    });
  });
});
