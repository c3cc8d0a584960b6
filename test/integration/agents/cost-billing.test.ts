import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { PooledClient } from '../core-loop/client';

const FIX = path.resolve(__dirname, '../../fixtures/cost');

/**
 * Issue 12 items 7 and 9 over HTTP: a real server (dist/, agent workers, embedded skills, no model) whose
 * configuration makes every agent ASSISTED with `pro` intelligence by default. cost-ai report and optimize
 * read the planted billing export and its clean twin (POST with a source; GET from the query, on the
 * server's workspace); billing-ai usage and analytics meter the executions this test ran, as the engine
 * hands them in. Neither asks a person anything. There is no task verb for these agents (catalog/verbs.ts).
 */
describe('cost-ai and billing-ai over HTTP', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  let c: PooledClient;
  const dirs: string[] = [];
  let planted: string;
  let clean: string;

  const project = (files: Record<string, string>): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-cost-it-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'package.json'), '{"name":"infra","version":"1.0.0"}\n');
    for (const [to, from] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
      cpSync(path.join(FIX, from), path.join(dir, to));
    }
    return dir;
  };

  before(async () => {
    ensureBuilt();
    const dataDir = tempDir('cadre-cost-data-');
    // The server's own workspace holds the clean twin: the GET form (no source) reads it.
    const workspace = tempDir('cadre-cost-ws-');
    dirs.push(dataDir, workspace);
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  acmf_mode: ASSISTED\n  intelligence: pro\n');
    mkdirSync(path.join(workspace, 'billing'));
    cpSync(path.join(FIX, 'generic-clean.csv'), path.join(workspace, 'billing', 'march.csv'));
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
    c = await PooledClient.create(server.url, 2);
    planted = project({ 'billing/cur.csv': 'aws-cur.csv', 'billing/utilization.json': 'aws-utilization.json', 'offers.json': 'aws-reservations.json' });
    clean = project({ 'billing/cur.csv': 'aws-cur-clean.csv', 'billing/utilization.json': 'aws-utilization-clean.json' });
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Runs a direct action (POST), waits for its end, and checks nobody was asked anything. */
  async function direct(agent: string, action: string, body: Json): Promise<Json> {
    const r = await c.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, ...body });
    assert.equal(r.status, 202, r.text);
    const done = await c.until(r.body['statusUrl'] as string, 30_000);
    const approvals = await c.get(`/v1/approvals?status=all&execution_id=${r.body['executionId'] as string}`);
    assert.equal((approvals.body['approvals'] as unknown[]).length, 0, approvals.text);
    return done;
  }

  it('cost-ai report (POST): totals and breakdowns of the planted CUR, each resource with its lines; the schema gate passes', async () => {
    const done = await direct('cost-ai', 'report', { source: planted, input: { export: 'billing/cur.csv' } });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as { total: number; period: { days: number }; byService: Array<{ key: string }>; byResource: Array<{ resource: string; file: string; lines: number[] }>; byTag: Record<string, unknown> };
    assert.ok(Math.abs(out.total - 150.0185) < 0.001, String(out.total));
    assert.equal(out.period.days, 7);
    assert.deepEqual(out.byService.map((s) => s.key), ['AmazonEC2']);
    assert.deepEqual([out.byResource[0]!.resource, out.byResource[0]!.file, out.byResource[0]!.lines[0]], ['i-0batch', 'billing/cur.csv', 5]);
    assert.deepEqual(Object.keys(out.byTag), ['env', 'team']);
    const gate = (done['gates'] as Array<{ gate: string; status: string }>).find((g) => g.gate === 'artifact-schema')!;
    assert.equal(gate.status, 'pass');
  });

  it('cost-ai optimize (POST): the planted idle, unattached and oversized resources with their lines, rightsizing and the reserved break-even', async () => {
    const done = await direct('cost-ai', 'optimize', { source: planted, input: { utilization: 'billing/utilization.json', reservations: 'offers.json' } });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as { waste: Array<{ kind: string; resource: string; file: string; lines: number[] }>; rightsizing: Array<{ suggested: string }>; reservations: Array<{ instanceType: string; breakEvenMonths: number | null; arithmetic: string }> };
    assert.deepEqual(out.waste.map((w) => [w.kind, w.resource, `${w.file}:${w.lines[0]}`]), [
      ['oversized', 'i-0batch', 'billing/cur.csv:5'], ['idle', 'nat-0idle', 'billing/cur.csv:6'],
      ['unattached-volume', 'vol-0orphan', 'billing/cur.csv:9'], ['unattached-ip', 'eipalloc-0free', 'billing/cur.csv:8'],
    ]);
    assert.deepEqual(out.rightsizing.map((r) => r.suggested), ['m5.large']);
    const web = out.reservations.find((r) => r.instanceType === 'm5.xlarge')!;
    assert.equal(web.breakEvenMonths, 5.19);
    assert.match(web.arithmetic, /break-even = \$500\.00 \/ \$96\.36 = 5\.19 months/);
    assert.ok((done['confidence'] as number) >= 0.75);
  });

  it('cost-ai optimize on the clean twin (POST) and on the server workspace (GET, input from the query) raises nothing', async () => {
    const done = await direct('cost-ai', 'optimize', { source: clean, input: { utilization: 'billing/utilization.json' } });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    assert.deepEqual((done['output'] as { waste: unknown[] }).waste, []);
    const got = await c.get('/api/agents/cost-ai/optimize?export=billing/march.csv&utilizationBelow=20');
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body['status'], 'completed', got.text.slice(0, 1500));
    const out = got.body['output'] as { waste: unknown[]; rightsizing: unknown[]; source: { files: Array<{ file: string; format: string }> } };
    assert.deepEqual([out.waste, out.rightsizing, out.source.files.map((f) => [f.file, f.format])], [[], [], [['billing/march.csv', 'generic']]]);
  });

  it('cost-ai: a broken row is needs_input naming the file and line', async () => {
    const bad = project({ 'billing/bad.csv': 'bad-row.csv' });
    const done = await direct('cost-ai', 'report', { source: bad });
    assert.equal(done['status'], 'failed');
    assert.equal(done['outcome'], 'needs_input', JSON.stringify(done).slice(0, 800));
    assert.match(String(done['reason']), /billing\/bad\.csv:4: column cost: "12\.3x" is not a number$/);
  });

  it('billing-ai usage counts the executions run above per agent, tier and capability, and a task run at core; analytics gives the daily count (GET)', async () => {
    const task = await c.post('/v1/agents/tasks', { capabilities: ['OPERATE'], verb: 'monitor', task: 'monitor: anything odd?', source: clean, intelligence: 'core' });
    assert.equal(task.status, 202, task.text);
    const t = await c.until(task.body['statusUrl'] as string, 30_000);
    assert.equal(t['status'], 'completed', JSON.stringify(t).slice(0, 800));
    const done = await direct('billing-ai', 'usage', {});
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const u = done['output'] as { executions: { total: number }; byAgent: Array<{ key: string; executions: number }>; byTier: Array<{ key: string; executions: number }>; byCapability: Array<{ key: string; executions: number }>; unknown: { executions: number } };
    const count = (l: Array<{ key: string; executions: number }>) => Object.fromEntries(l.map((x) => [x.key, x.executions]));
    // 5 cost-ai actions (report, optimize, optimize of the clean twin, the GET optimize, the broken report).
    assert.equal(count(u.byAgent)['cost-ai'], 5);
    assert.equal(count(u.byAgent)['observe-ai'], 1);
    assert.deepEqual(count(u.byTier), { pro: 5, core: 1 });
    assert.equal(count(u.byCapability)['OPERATE'], 1);
    assert.equal(u.executions.total, 6);
    assert.equal(u.unknown.executions, 0);
    const got = await c.get('/api/agents/billing-ai/analytics?horizon=3');
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body['status'], 'completed', got.text.slice(0, 1500));
    const a = got.body['output'] as { total: number; daily: Array<{ executions: number }>; forecast: unknown; forecastNote: string };
    assert.equal(a.total, 7, 'the usage action above is counted too');
    assert.equal(a.daily.reduce((n, d) => n + d.executions, 0), 7);
    assert.equal(a.forecast, null);
    assert.match(a.forecastNote, /^no forecast: 1 day\(s\) of data/);
  });

  it('the OPTIMIZE domain workflow on a project with a CUR: cost-ai report and billing-ai usage complete, no approval', async () => {
    const r = await c.post('/v1/agents/tasks', { capabilities: ['OPTIMIZE'], task: 'where does the money go?', source: planted, intelligence: 'pro' });
    assert.equal(r.status, 202, r.text);
    const done = await c.until(r.body['statusUrl'] as string, 30_000);
    const approvals = await c.get(`/v1/approvals?status=all&execution_id=${r.body['taskId'] as string}`);
    assert.equal((approvals.body['approvals'] as unknown[]).length, 0, approvals.text);
    const steps = (done['output'] as { steps?: Array<{ agentId: string; action: string; outcome: string; summary: string | null }> } | null)?.steps ?? [];
    const mine = steps.filter((s) => s.agentId === 'cost-ai' || s.agentId === 'billing-ai').map((s) => [s.agentId, s.action, s.outcome]);
    assert.deepEqual(mine, [['cost-ai', 'report', 'completed'], ['billing-ai', 'usage', 'completed']], JSON.stringify(steps).slice(0, 1500));
    assert.match(steps.find((s) => s.agentId === 'cost-ai')!.summary ?? '', /^total \$150\.02 over 2026-03-01 \.\. 2026-03-07/);
    assert.match(steps.find((s) => s.agentId === 'billing-ai')!.summary ?? '', /^8 execution\(s\): by agent cost-ai 5/);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
  });
});
