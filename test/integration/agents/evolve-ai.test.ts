import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { PooledClient } from '../core-loop/client';
import { fixtureProject } from '../../support/fixture-project';

interface Criterion { id: string; score: number | null; missing: string[]; evidence: Array<{ file: string; line?: number }> }
interface Assessment { score: number; levelName: string; criteria: Criterion[]; git: { repository: boolean; tags: string[] } }
interface Plan { from: { score: number; source: string }; items: Array<{ rank: number; check: string; priority: number; files: string[]; steps: string[] }>; projected: { score: number } }

/**
 * Issue 14, evolve-ai assess and plan [ULTRA] over HTTP on a real server (dist/, real agent workers,
 * embedded skills, no model): the bare repository (no CI, no security policy, no tests) is initial with
 * every gap named, the kept twin (CI, SECURITY.md, CODEOWNERS, lock file, tests, a release tag) scores
 * 100, plan orders the improvements by value / effort naming the files to add, and the EVOLVE domain
 * workflow runs assess. The server's --workspace is the bare repository (the GET form reads it).
 */
describe('evolve-ai over HTTP', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  let a: PooledClient;
  const dirs: string[] = [];
  const project = (fixture: string, extra: Record<string, string> = {}) => fixtureProject({ prefix: 'cadre-it-evolve-', copy: { '.': fixture }, files: extra }, dirs);

  before(async () => {
    ensureBuilt();
    const ws = project('maturity/bare', { '.cadre.yaml': 'defaults:\n  acmf_mode: AUTONOMOUS\n' });
    server = await startStandalone(tempDir('cadre-it-evolve-data-'), { CADRE_API_KEY: KEY }, ['--workspace', ws]);
    a = await PooledClient.create(server.url, 3);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function direct(action: string, input: Json, source: string): Promise<Json> {
    const r = await a.post(`/api/agents/evolve-ai/${action}`, { prompt: `evolve-ai ${action}`, input, source });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['executionId'] as string}`);
    assert.equal((approvals.body['approvals'] as unknown[]).length, 0, `read-only: no approval asked: ${approvals.text}`);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const gate = (done['gates'] as Array<{ gate: string; status: string }>).find((g) => g.gate === 'artifact-schema');
    assert.equal(gate?.status, 'pass', JSON.stringify(gate));
    return done['output'] as Json;
  }

  it('assess: the bare repository is initial with its gaps named; the kept twin (with a release tag) scores 100', async () => {
    const bare = await direct('assess', {}, project('maturity/bare')) as unknown as Assessment;
    assert.equal(bare.levelName, 'initial');
    const crit = (x: Assessment, id: string) => x.criteria.find((c) => c.id === id)!;
    assert.equal(crit(bare, 'ci').score, 0);
    assert.match(crit(bare, 'ci').missing[0]!, /no CI configuration: looked for \.github\/workflows\/\*\.yml/);
    assert.equal(crit(bare, 'security').score, 0);
    const keptDir = project('maturity/kept');
    execFileSync('git', ['tag', 'v1.2.0'], { cwd: keptDir });
    const kept = await direct('assess', {}, keptDir) as unknown as Assessment;
    assert.equal(kept.score, 100, JSON.stringify(kept.criteria.map((c) => [c.id, c.missing])));
    assert.deepEqual(kept.git, { repository: true, tags: ['v1.2.0'] });
    assert.ok(crit(kept, 'security').evidence.some((e) => e.file === 'SECURITY.md'));
  });

  it('plan: improvements ordered by value / effort with the files to add; the GET form plans the server workspace', async () => {
    const plan = await direct('plan', {}, project('maturity/bare')) as unknown as Plan;
    assert.equal(plan.from.source, 'assessed');
    for (let i = 1; i < plan.items.length; i++) assert.ok(plan.items[i - 1]!.priority >= plan.items[i]!.priority);
    assert.deepEqual(plan.items.find((i) => i.check === 'security-policy')!.files, ['SECURITY.md']);
    assert.ok(plan.projected.score > plan.from.score);
    const get = await a.get('/api/agents/evolve-ai/plan?limit=2');
    assert.equal(get.status, 200, get.text);
    assert.equal((get.body['output'] as unknown as Plan).items.length, 2);
    const bad = await a.post('/api/agents/evolve-ai/plan', { source: project('maturity/bare'), input: { limit: 'many' } });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual((bad.body['errors'] as Array<{ field: string }>).map((e) => e.field), ['body.input.limit']);
  });

  it('documents both actions in OpenAPI with their inputs', async () => {
    const doc = await a.get('/v1/openapi.json');
    const schemas = (doc.body['components'] as { schemas: Record<string, { properties?: Json }> }).schemas;
    for (const name of ['EvolveAiAssessInput', 'EvolveAiPlanInput']) assert.deepEqual(Object.keys(schemas[name]?.properties ?? {}), ['paths', 'assessment', 'limit'], name);
    assert.ok(schemas['EvolveAiAssessResult'] && schemas['EvolveAiPlanResult']);
  });

  it('the EVOLVE domain workflow runs evolve-ai assess on the project (evolve-ai itself asks no approval)', async () => {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['EVOLVE'], task: 'how mature is this service?', source: project('maturity/bare') });
    assert.equal(r.status, 202, r.text);
    const id = r.body['taskId'] as string;
    // Other EVOLVE agents may ask for approvals (adapt-ai proposes tuning): a person grants those; evolve-ai's are a failure.
    let done: Json = {};
    for (const t0 = Date.now(); Date.now() - t0 < 45_000;) {
      done = (await a.get(r.body['statusUrl'] as string)).body;
      if (['completed', 'failed', 'cancelled'].includes(String(done['status']))) break;
      const pending = (await a.get(`/v1/approvals?status=pending&execution_id=${id}`)).body['approvals'] as Array<{ id: string; agentId: string }>;
      for (const ap of pending) {
        assert.notEqual(ap.agentId, 'evolve-ai', 'evolve-ai is read-only');
        await a.post(`/v1/approvals/${ap.id}/decision`, { approved: true, reason: 'test: another agent of the workflow' });
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    const steps = (done['output'] as { steps?: Array<{ agentId: string; action: string; outcome: string; summary: string | null }> } | null)?.steps ?? [];
    const mine = steps.find((s) => s.agentId === 'evolve-ai');
    assert.deepEqual([mine?.action, mine?.outcome], ['assess', 'completed'], JSON.stringify(done).slice(0, 1500));
    assert.match(mine!.summary ?? '', /^maturity \d+\/100, level 1 \(initial\)/);
  });
});
