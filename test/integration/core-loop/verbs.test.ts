import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stop } from '../../support/server-process';
import type { Json } from '../../support/fleet-server';
import { startCoreLoopServer, type PooledClient } from './client';
import { buildProjects, type Projects } from './projects';

interface StepView { step: number; agentId: string; action: string; outcome: string | null; reason: string | null; confidence: number | null; summary: string | null }

/**
 * Issue 10, "Tests": each task verb, submitted over HTTP to a real server (real workers, embedded
 * skills, no language model) on fixture projects that look like real ones, runs exactly the agents
 * of the verb table (server/src/engine/catalog/verbs.ts), reaches a terminal state, and asks nobody
 * for an approval while every agent is ASSISTED (which needs a person for critical actions only).
 */
describe('core loop: each task verb over HTTP on fixture projects', function () {
  this.timeout(120_000);
  let p: Projects;
  let a: PooledClient;
  let stopServer: () => Promise<void>;

  before(async () => {
    p = buildProjects();
    const s = await startCoreLoopServer();
    a = s.client;
    stopServer = () => stop(s.server);
  });
  after(async () => stopServer?.());

  /** Submits a task, checks the 202's agentsAssigned, waits for a terminal state; no approval may have been asked. */
  async function run(body: Json, agents: string[]): Promise<{ done: Json; steps: StepView[] }> {
    const r = await a.post('/v1/agents/tasks', body);
    assert.equal(r.status, 202, r.text);
    assert.deepEqual(r.body['agentsAssigned'], agents, 'the 202 names the agents of the verb table');
    const done = await a.until(r.body['statusUrl'] as string, 90_000);
    const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['taskId'] as string}`);
    assert.deepEqual((approvals.body['approvals'] as unknown[]).length, 0, `no approval asked: ${approvals.text}`);
    const steps = ((done['output'] as { steps?: StepView[] } | null)?.steps ?? []);
    return { done, steps };
  }

  it('review of src/index.ts named in the instruction runs review-ai alone, on that file, and completes', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'review: src/index.ts for bugs', source: p.tsLibrary }, ['review-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 800));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['review-ai', 'review', 'completed']]);
    const result = (done['output'] as { result: { files: Array<{ file: string; functions: number }> } }).result;
    assert.deepEqual(result.files.map((f) => f.file), ['src/index.ts'], 'the named file, and only it, is reviewed');
    assert.ok(result.files[0]!.functions >= 5, 'the file was parsed, not skipped');
  });

  it('review naming a file that does not exist ends needs_input naming the file, and review-ai keeps its mode', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'review: src/nope.ts for bugs', source: p.tsLibrary }, ['review-ai']);
    assert.equal(done['status'], 'failed', 'nothing was reviewed: not a clean review');
    assert.equal(steps[0]!.outcome, 'needs_input', JSON.stringify(steps));
    assert.match(steps[0]!.reason ?? '', /does not exist in the workspace: src\/nope\.ts/);
    const agent = await a.get('/v1/agents/review-ai/status');
    assert.equal((agent.body['acmf'] as { mode: string }).mode, 'ASSISTED', 'a typo in the request does not count against the agent');
  });

  it('review naming one real and one missing file reviews the real one and names the missing one', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'review: src/index.ts and src/nope.ts', source: p.tsLibrary }, ['review-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 800));
    assert.match(steps[0]!.summary ?? '', /1 file\(s\) reviewed.*not found in the workspace: src\/nope\.ts/);
  });

  it('review with the verb field at ULTRA adds security-ai scan beside review-ai', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], verb: 'review', intelligence: 'ultra', task: 'review src/app.js', source: p.webApp }, ['review-ai', 'security-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 800));
    assert.deepEqual(steps.map((s) => `${s.agentId} ${s.action} ${s.outcome}`).sort(), ['review-ai review completed', 'security-ai scan completed']);
  });

  it('test runs tester-ai alone on the TypeScript library: 12 passed, completed', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'test: run the suite', source: p.tsLibrary }, ['tester-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['tester-ai', 'test', 'completed']]);
    assert.match(steps[0]!.summary ?? '', /12 passed/);
  });

  it('test on the HTTP app (its suite listens on a loopback port) completes', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], verb: 'test', task: 'run the tests', source: p.webApp }, ['tester-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.match(steps[0]!.summary ?? '', /5 passed/);
  });

  it('debug runs debug-ai alone on the given trace and points at the library line', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: `debug: ${p.trace}`, source: p.tsLibrary }, ['debug-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['debug-ai', 'explain', 'completed']]);
    assert.match(steps[0]!.summary ?? '', /lib\/index\.js:38/);
  });

  it('debug with no trace ends needs_input naming the trace, and debug-ai keeps its mode', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'debug: it crashes sometimes', source: p.tsLibrary }, ['debug-ai']);
    assert.equal(done['status'], 'failed');
    assert.equal(steps[0]!.outcome, 'needs_input', JSON.stringify(steps));
    assert.match(steps[0]!.reason ?? '', /no stack frame/);
    const agent = await a.get('/v1/agents/debug-ai/status');
    assert.equal((agent.body['acmf'] as { mode: string }).mode, 'ASSISTED', 'missing input does not count against the agent');
  });

  it('security on a repository with no logs: security-ai completes, threathunter-ai is not applicable with its reason, the task completes', async () => {
    const { done, steps } = await run({ capabilities: ['SECURE'], task: 'security: check this repository', source: p.noLogs }, ['security-ai', 'threathunter-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    const by = Object.fromEntries(steps.map((s) => [s.agentId, s]));
    assert.equal(by['security-ai']!.outcome, 'completed');
    assert.equal(by['threathunter-ai']!.outcome, 'not_applicable');
    assert.match(by['threathunter-ai']!.reason ?? '', /nothing to hunt in/);
  });

  it('security on the HTTP app reports its hard-coded token as a finding and still completes', async () => {
    const { done, steps } = await run({ capabilities: ['SECURE'], verb: 'security', task: 'scan the app', source: p.webApp }, ['security-ai', 'threathunter-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    const scan = steps.find((s) => s.agentId === 'security-ai')!;
    assert.match(scan.summary ?? '', /[1-9]\d* finding\(s\)/);
  });

  it('test on a repository without a test runner: tester-ai is not applicable with its reason, tester-ai keeps its mode', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'test: run the tests', source: p.noLogs }, ['tester-ai']);
    assert.equal(done['status'], 'completed', 'a skipped step does not fail its execution');
    assert.equal(steps[0]!.outcome, 'not_applicable', JSON.stringify(steps));
    assert.match(steps[0]!.reason ?? '', /no test runner detected/);
    const agent = await a.get('/v1/agents/tester-ai/status');
    assert.equal((agent.body['acmf'] as { mode: string }).mode, 'ASSISTED');
  });

  it('review of a repository with nothing changed and no file named: review-ai is not applicable (nothing changed since the base)', async () => {
    const { done, steps } = await run({ capabilities: ['BUILD'], task: 'review: my changes', source: p.noLogs }, ['review-ai']);
    assert.equal(done['status'], 'completed', 'a skipped step does not fail its execution');
    assert.equal(steps[0]!.outcome, 'not_applicable', JSON.stringify(steps));
    assert.match(steps[0]!.reason ?? '', /nothing changed since/);
  });

  it('code without a language model is refused at submission: 501 naming coder-ai generate', async () => {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['BUILD'], task: 'code: add a subtract function to src/index.ts', source: p.tsLibrary });
    assert.equal(r.status, 501, r.text);
    assert.equal(r.body['code'], 'ERR_SKILL_UNAVAILABLE');
    assert.deepEqual((r.body['details'] as Json)['agentId'], 'coder-ai');
    assert.match(String(r.headers['content-type']), /application\/problem\+json/);
  });

  it('deploy runs deploy-ai readiness then plan on the HTTP app and completes; the plan names its /health route and what deploy would need', async () => {
    const { done, steps } = await run({ capabilities: ['OPERATE'], task: 'deploy: the users api', source: p.webApp }, ['deploy-ai', 'deploy-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['deploy-ai', 'readiness', 'completed'], ['deploy-ai', 'plan', 'completed']]);
    const plan = steps[1]!;
    assert.match(plan.summary ?? '', /^canary plan for staging: 6 steps; health checks: HTTP GET \/health; no deploy command/);
    // Readiness ran first: the app's hard-coded token is an open critical finding, a blocker of the plan.
    assert.match(plan.summary ?? '', /readiness blocker\(s\)/);
  });

  it('deploy-ai deploy as a direct action runs the project\'s deploy:staging script once in ASSISTED (deploy_staging needs no person) and completes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-deploy-direct-'));
    try {
      cpSync(path.resolve(__dirname, '../../fixtures/deploy/node-app'), dir, { recursive: true });
      const sh = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
      sh('init', '-q', '-b', 'main');
      sh('-c', 'user.email=t@example.com', '-c', 'user.name=T', 'add', '.');
      sh('-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-q', '-m', 'v1');
      writeFileSync(path.join(dir, 'VERSION'), '2\n');
      sh('-c', 'user.email=t@example.com', '-c', 'user.name=T', 'add', '.');
      sh('-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-q', '-m', 'v2');
      const r = await a.post('/api/agents/deploy-ai/deploy', { prompt: 'deploy to staging', input: { environment: 'staging' }, source: dir });
      assert.equal(r.status, 202, r.text);
      const done = await a.until(r.body['statusUrl'] as string, 60_000);
      assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
      const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['executionId'] as string}`);
      assert.equal((approvals.body['approvals'] as unknown[]).length, 0, approvals.text);
      assert.equal(readFileSync(path.join(dir, '.deploy-marker'), 'utf8'), 'staging\n', 'the script ran exactly once');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('monitor runs observe-ai analyze on a project with a metrics/ file, asks nobody in ASSISTED, completes and reports the planted spike and dip', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-monitor-'));
    try {
      // A service repository whose metrics/ holds a Prometheus export with two planted anomalies (test/fixtures/observe/generate.ts).
      mkdirSync(path.join(dir, 'metrics'));
      cpSync(path.resolve(__dirname, '../../fixtures/observe/anomalies.prom'), path.join(dir, 'metrics', 'api.prom'));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'api', version: '1.0.0', scripts: { start: 'node index.js' } }) + '\n');
      const sh = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', ...args], { cwd: dir, encoding: 'utf8' });
      sh('init', '-q', '-b', 'main');
      sh('add', '.');
      sh('commit', '-q', '-m', 'api with its metrics');
      const { done, steps } = await run({ capabilities: ['OPERATE'], task: 'monitor: the api latency', source: dir }, ['observe-ai']);
      assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
      assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['observe-ai', 'analyze', 'completed']]);
      assert.match(steps[0]!.summary ?? '', /^2 anomalies: high spike of api_latency_ms\{instance="10\.0\.0\.1:9100",job="api"\} at 2026-03-10T11:10:00\.000Z/);
      assert.match(steps[0]!.summary ?? '', /dip of api_latency_ms\{[^}]*\} at 2026-03-10T12:20:00\.000Z/);
      assert.ok((steps[0]!.confidence ?? 0) >= 0.75, String(steps[0]!.confidence));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('monitor on a project with no metrics or logs: observe-ai is not applicable, naming where it looked', async () => {
    const { done, steps } = await run({ capabilities: ['OPERATE'], task: 'monitor: anything odd?', source: p.noLogs }, ['observe-ai']);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.equal(steps[0]!.outcome, 'not_applicable');
    assert.equal(steps[0]!.reason, 'not applicable: no metrics or logs to analyze: looked for input.metrics, input.logs, metrics/, logs/, *.prom, *.log');
  });

  it('observe-ai alerts and analyze as direct actions: the rule fires on the planted spike with its point and line, the clean twin raises nothing, an outside path is needs_input', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-observe-direct-'));
    try {
      mkdirSync(path.join(dir, 'metrics'));
      cpSync(path.resolve(__dirname, '../../fixtures/observe/anomalies.prom'), path.join(dir, 'metrics', 'api.prom'));
      cpSync(path.resolve(__dirname, '../../fixtures/observe/clean.prom'), path.join(dir, 'clean.prom'));
      const direct = async (action: string, input: Json) => {
        const r = await a.post(`/api/agents/observe-ai/${action}`, { prompt: `observe ${action}`, input, source: dir });
        assert.equal(r.status, 202, r.text);
        const done = await a.until(r.body['statusUrl'] as string, 60_000);
        const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['executionId'] as string}`);
        assert.equal((approvals.body['approvals'] as unknown[]).length, 0, approvals.text);
        return done;
      };
      const rules = [{ name: 'LatencyHigh', expr: { metric: 'api_latency_ms', op: '>', threshold: 130 }, severity: 'page' }];
      const fired = await direct('alerts', { rules, metrics: 'metrics/api.prom' });
      assert.equal(fired['status'], 'completed', JSON.stringify(fired).slice(0, 1500));
      const out = fired['output'] as { firing: number; resolved: number; rules: Array<{ rule: string; episodes: Array<{ since: string; points: Array<{ time: string; value: number; file: string; line: number }> }> }> };
      assert.deepEqual([out.firing, out.resolved, out.rules[0]!.rule], [0, 1, 'LatencyHigh']);
      const schemaGate = (fired['gates'] as Array<{ gate: string; status: string; reason: string }>).find((g) => g.gate === 'artifact-schema')!;
      assert.deepEqual([schemaGate.status, schemaGate.reason], ['pass', 'data matches the observe-ai alerts schema']);
      const pt = out.rules[0]!.episodes[0]!.points[0]!;
      assert.deepEqual([pt.time, pt.file, pt.line], ['2026-03-10T11:10:00.000Z', 'metrics/api.prom', 73]);
      assert.ok(pt.value > 130, String(pt.value));
      const clean = await direct('analyze', { metrics: 'clean.prom' });
      assert.equal(clean['status'], 'completed', JSON.stringify(clean).slice(0, 1500));
      const analysis = clean['output'] as { anomalies: unknown[]; examined: { series: number; points: number; seriesJudged: number } };
      assert.deepEqual(analysis.anomalies, []);
      assert.deepEqual([analysis.examined.series, analysis.examined.points, analysis.examined.seriesJudged], [2, 360, 2]);
      const outside = await direct('analyze', { metrics: path.join(p.webApp, 'package.json') });
      assert.equal(outside['status'], 'failed');
      assert.equal(outside['outcome'], 'needs_input', JSON.stringify(outside).slice(0, 800));
      assert.match(String(outside['reason']), /^observe-ai analyze needs input: input\.metrics: .*web-app\/package\.json is outside the workspace; not read$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('capabilities only (no verb) still runs the BUILD workflow: the old routing, kept for compatibility', async () => {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['BUILD'], task: 'add a subtract function', source: p.tsLibrary });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual((r.body['agentsAssigned'] as string[]).slice(0, 3), ['req-ai', 'planner-ai', 'architect-ai']);
  });
});
