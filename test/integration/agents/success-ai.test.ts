import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/**
 * success-ai over HTTP (issue 14 item 7): a real server (embedded skills, ULTRA). `health` scores the
 * tenant from what the store holds (executions run by this test, a failed one among them, a rating),
 * each component with its data, weight and reason; `engagement` on a store a few minutes old says
 * "not enough history" and invents no trend; a window out of range is refused naming the field.
 */
describe('success-ai over HTTP', function () {
  this.timeout(90_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];

  before(async () => {
    ensureBuilt();
    const dataDir = tempDir('cadre-success-data-');
    const workspace = tempDir('cadre-success-ws-');
    dirs.push(dataDir, workspace);
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function direct(agent: string, action: string, input: Json): Promise<Json> {
    const c = api(server.url);
    const r = await c.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, input });
    assert.equal(r.status, 202, r.text);
    return c.until(r.body['statusUrl'] as string, undefined, 30_000);
  }

  it('health: usage, failures and feedback from the store, each with data, weight and reason', async () => {
    const ok = await direct('billing-ai', 'usage', {});
    assert.equal(ok['status'], 'completed', JSON.stringify(ok['error']));
    const failed = await direct('govern-ai', 'audit-trail', { limit: 4000 });
    assert.equal(failed['status'], 'failed');
    const rated = await direct('adapt-ai', 'feedback', { executionId: ok['executionId'], rating: 5 });
    assert.equal(rated['status'], 'completed', JSON.stringify(rated['error']));
    const done = await direct('success-ai', 'health', { days: 7 });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { score: number; status: string; components: Array<{ name: string; weight: number; score: number | null; data: Json; reason: string }>; reasons: string[] };
    const c = Object.fromEntries(out.components.map((x) => [x.name, x]));
    assert.equal(c['usage']!.data['executions'], 3, 'the three executions before it, not itself');
    assert.deepEqual(c['usage']!.data['agents'], ['adapt-ai', 'billing-ai', 'govern-ai']);
    assert.deepEqual([c['failures']!.data['ended'], c['failures']!.data['failed']], [3, 1]);
    assert.match(c['failures']!.reason, /1 of 3 ended execution\(s\) failed/);
    assert.deepEqual([c['feedback']!.data['ratings'], c['feedback']!.score], [1, 100]);
    assert.equal(c['approvals']!.score, null);
    assert.ok(out.reasons.some((r) => /approvals had no data/.test(r)), out.reasons.join(' | '));
    assert.deepEqual(out.components.map((x) => x.weight), [0.3, 0.3, 0.2, 0.2]);
    assert.ok(out.score > 0 && out.score < 100, String(out.score));
  });

  it('engagement: a store minutes old has not enough history; the week\'s data is still shown', async () => {
    const done = await direct('success-ai', 'engagement', { weeks: 4 });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { enoughHistory: boolean; note: string; series: Array<{ executions: number; beforeFirstActivity: boolean }>; trends: { executions: unknown } };
    assert.equal(out.enoughHistory, false);
    assert.match(out.note, /^not enough history: 1 week\(s\) since the first execution/);
    assert.equal(out.trends.executions, null);
    assert.deepEqual(out.series.map((w) => w.beforeFirstActivity), [true, true, true, false]);
    assert.ok(out.series[3]!.executions >= 4);
  });

  it('the EVOLVE domain workflow completes on a project: adapt-ai evaluates the agents that ran, success-ai scores the tenant', async () => {
    const project = tempDir('cadre-success-project-');
    dirs.push(project);
    writeFileSync(path.join(project, 'package.json'), '{"name":"svc","version":"1.0.0","scripts":{"test":"node --test"}}\n');
    writeFileSync(path.join(project, 'README.md'), '# svc\n');
    const c = api(server.url);
    const r = await c.post('/v1/agents/tasks', { capabilities: ['EVOLVE'], task: 'how are we doing?', source: project });
    assert.equal(r.status, 202, r.text);
    const done = await c.until(r.body['statusUrl'] as string, undefined, 45_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const steps = (done['output'] as { steps: Array<{ agentId: string; action: string; outcome: string; summary: string | null }> }).steps;
    const by = Object.fromEntries(steps.map((x) => [x.agentId, x]));
    assert.deepEqual([by['adapt-ai']?.action, by['adapt-ai']?.outcome], ['evaluate', 'completed'], JSON.stringify(steps));
    assert.match(by['adapt-ai']!.summary ?? '', /agent\(s\) evaluated/);
    assert.deepEqual([by['success-ai']?.action, by['success-ai']?.outcome], ['health', 'completed'], JSON.stringify(steps));
    assert.match(by['success-ai']!.summary ?? '', /^health \d+(\.\d+)?\/100/);
  });

  it('a window out of range is refused at the step, naming the field (GET form: 422)', async () => {
    const r = await api(server.url).get('/api/agents/success-ai/engagement?weeks=99');
    assert.equal(r.status, 422, r.text);
    assert.match(String(r.body['detail']), /weeks must be a whole number from 1 to 52/);
  });
});
