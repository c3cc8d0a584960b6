/**
 * The projects API against the real built server with the embedded skills: CRUD, paging, 422s,
 * the projects-API rate-limit headers, ingest → capacity-ai prediction, remediation through the
 * engine (backup-ai archive, verify), and a restart keeping projects and predictions.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const MIN = 60_000;

async function start(dataDir: string, workspace: string): Promise<ServerProcess & { url: string }> {
  return startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
}

/** Prometheus text with timestamps: `name value ts_ms` per sample. */
function prom(name: string, values: number[], end: number): string {
  return [`# TYPE ${name} gauge`, ...values.map((v, i) => `${name} ${v} ${end - (values.length - 1 - i) * MIN}`)].join('\n') + '\n';
}

async function poll<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('projects API (real server)', function () {
  this.timeout(120_000);
  let srv: ServerProcess & { url: string };
  let dataDir: string;
  let workspace: string;
  let repo: string;
  let remId: string | null = null;

  before(async () => {
    dataDir = tempDir();
    workspace = tempDir('cadre-ws-');
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
    repo = tempDir('cadre-proj-repo-');
    mkdirSync(path.join(repo, 'src'));
    writeFileSync(path.join(repo, 'src', 'index.js'), 'module.exports = 1;\n');
    srv = await start(dataDir, workspace);
  });
  after(async () => { if (srv) await stop(srv); });

  it('creates, reads, lists with paging and filters, updates and deletes projects', async () => {
    const c = api(srv.url);
    const made: Json[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await c.post('/v1/projects', { name: `p${i}`, description: 'd', repository: { type: 'github', url: `https://github.com/acme/p${i}` }, settings: { auto_fix: true } });
      assert.equal(r.status, 201, r.text);
      made.push(r.body);
    }
    const p0 = made[0]!;
    assert.match(p0['id'] as string, /^proj_/);
    assert.equal(p0['status'], 'active');
    assert.equal(p0['workspace'], null);
    assert.deepEqual(p0['settings'], { auto_fix: true, predictive_analysis: true, security_scanning: false });
    assert.deepEqual(p0['metrics'], { issues_prevented: null, uptime: null, performance_gain: null });
    assert.match((p0['metrics_basis'] as Json)['uptime'] as string, /no health series/);

    const page = await c.get('/v1/projects?page=2&limit=2');
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(page.body['pagination'], { page: 2, limit: 2, total: 3 });
    assert.equal((page.body['projects'] as Json[]).length, 1);
    assert.deepEqual((await c.get('/v1/projects')).body['pagination'], { page: 1, limit: 20, total: 3 });

    const patched = await c.call('PATCH', `/v1/projects/${p0['id']}`, { status: 'paused' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body['status'], 'paused');
    const paused = await c.get('/v1/projects?status=paused');
    assert.deepEqual((paused.body['projects'] as Json[]).map((p) => p['id']), [p0['id']]);

    for (const q of ['limit=101', 'limit=0', 'page=0', 'page=x', 'status=deleted']) {
      const r = await c.get(`/v1/projects?${q}`);
      assert.equal(r.status, 422, `${q}: ${r.text}`);
      assert.match(r.headers['content-type'] as string, /application\/problem\+json/);
    }
    assert.equal((await c.post('/v1/projects', { name: 'x' })).status, 400, 'repository is required');
    assert.equal((await c.post('/v1/projects', { name: 'x', repository: { type: 'git', url: 'https://x/y' }, extra: 1 })).status, 400, 'only the contract\'s fields');
    assert.equal((await c.post('/v1/projects', { name: 'x', repository: { type: 'local', url: '/no/such/folder/here' } })).status, 422);
    assert.equal((await c.get('/v1/projects/proj_nope')).status, 404);
    assert.equal((await c.get('/v1/projects/proj_nope/predictions')).status, 404);

    const del = await c.call('DELETE', `/v1/projects/${made[2]!['id']}`);
    assert.equal(del.status, 204);
    assert.equal((await c.get(`/v1/projects/${made[2]!['id']}`)).status, 404);
  });

  it('rate limits follow the projects-API plan of the key (Free: 100 per minute) with X-RateLimit-* headers', async () => {
    const admin = api(srv.url);
    const made = await admin.post('/v1/admin/keys', { label: 'free', plan: 'startup', role: 'operator' });
    assert.equal(made.status, 201, made.text);
    const free = api(srv.url, made.body['key'] as string);
    const first = await free.get('/v1/projects');
    assert.equal(first.status, 200);
    assert.equal(first.headers['x-ratelimit-limit'], '100');
    assert.equal(first.headers['x-ratelimit-remaining'], '99');
    assert.match(first.headers['x-ratelimit-reset'] as string, /^\d+$/);
    // The agent-task API's own budget of this key is not spent by project calls.
    const ent = await admin.get('/v1/projects');
    assert.equal(ent.headers['x-ratelimit-limit'], '10000');
    let last = first;
    for (let i = 1; i < 101 && last.status === 200; i++) last = await free.get('/v1/projects');
    assert.equal(last.status, 429, last.text);
    assert.equal(last.headers['x-ratelimit-remaining'], '0');
    assert.ok(Number(last.headers['retry-after']) >= 1);
    const info = await free.get('/v1/info');
    assert.equal(info.status, 200, 'the task API budget is separate');
  });

  it('ingested series: the one rising to its limit is predicted near the known time, its flat twin is not', async () => {
    const c = api(srv.url);
    const p = (await c.post('/v1/projects', { name: 'shop', repository: { type: 'local', url: repo } })).body;
    assert.equal(p['workspace'], repo);
    const now = Date.now();
    const rising = Array.from({ length: 60 }, (_, i) => 10 + 2 * i + (i % 2 ? 0.5 : -0.5));
    const flat = Array.from({ length: 60 }, (_, i) => 100 + (i % 3) - 1);
    const up = Array.from({ length: 40 }, (_, i) => (i === 7 ? 0 : 1));
    const ing = await c.post(`/v1/projects/${p['id']}/metrics`, { content: prom('disk_used_gb', rising, now) + prom('queue_depth', flat, now) + prom('up', up, now), limits: { disk_used_gb: 250, queue_depth: 250 } });
    assert.equal(ing.status, 202, ing.text);
    assert.equal(ing.body['detection'], 'started');
    assert.deepEqual((ing.body['series'] as Json[]).map((s) => [s['key'], s['points'], s['limit']]), [['disk_used_gb', 60, 250], ['queue_depth', 60, 250], ['up', 40, null]]);

    const preds = await poll('a prediction', async () => {
      const r = await c.get(`/v1/projects/${p['id']}/predictions`);
      assert.equal(r.status, 200, r.text);
      const list = r.body['predictions'] as Json[];
      return list.length ? r.body : undefined;
    });
    const list = preds['predictions'] as Json[];
    assert.equal(list.length, 1);
    const pred = list[0]!;
    assert.match(pred['id'] as string, /^pred_/);
    assert.equal(pred['series'], 'disk_used_gb');
    assert.equal(pred['type'], 'capacity_exhaustion');
    assert.ok(Math.abs(Date.parse(pred['will_occur_at'] as string) - (now + 61 * MIN)) <= 2 * MIN, pred['will_occur_at'] as string);
    for (const k of ['confidence', 'predicted_impact', 'recommended_action', 'predicted_at', 'severity', 'description']) assert.ok(k in pred, k);
    assert.deepEqual(preds['pagination'], { page: 1, limit: 20, total: 1 });
    // The flat twin's forecast ran too (two capacity-ai executions) and made no prediction.
    const one = await c.get(`/v1/predictions/${pred['id']}`);
    assert.equal(one.status, 200);
    const project = (await c.get(`/v1/projects/${p['id']}`)).body;
    assert.equal((project['metrics'] as Json)['uptime'], 97.5);

    assert.equal((await c.post(`/v1/projects/${p['id']}/metrics`, {})).status, 422, 'neither content nor limits');
    const onlyLimit = await c.post(`/v1/projects/${p['id']}/metrics`, { limits: { up: 2 } });
    assert.equal(onlyLimit.status, 202, onlyLimit.text);
    assert.equal((onlyLimit.body['series'] as Json[]).find((s) => s['key'] === 'up')!['limit'], 2);
    const bad = await c.post(`/v1/projects/${p['id']}/metrics`, { content: 'disk 1\ndisk 2\n' });
    assert.equal(bad.status, 422, 'samples without timestamps');
    assert.equal((await c.post(`/v1/projects/${p['id']}/metrics`, { content: 'not metrics at all' })).status, 422);
  });

  it('remediate: steps progress through the engine, the backup archive exists, verify re-runs the detection', async () => {
    const c = api(srv.url);
    const projects = (await c.get('/v1/projects?limit=100')).body['projects'] as Json[];
    const shop = projects.find((p) => p['name'] === 'shop')!;
    const pred = ((await c.get(`/v1/projects/${shop['id']}/predictions`)).body['predictions'] as Json[])[0]!;
    const r = await c.post(`/v1/predictions/${pred['id']}/remediate`, { action: 'apply', mode: 'automatic', options: { create_backup: true, notify_team: true, rollback_on_failure: true } });
    assert.equal(r.status, 202, r.text);
    const rem = r.body['remediation'] as Json;
    assert.match(rem['id'] as string, /^rem_/);
    remId = rem['id'] as string;
    assert.equal(rem['status'], 'in_progress');
    assert.deepEqual((rem['steps'] as Json[]).map((s) => s['name']), ['create_backup', 'apply', 'verify', 'notify', 'rollback_on_failure']);
    assert.equal((await c.post(`/v1/predictions/${pred['id']}/remediate`, { action: 'apply', mode: 'automatic' })).status, 409, 'one at a time');
    const done = await poll('the remediation to end', async () => {
      const g = await c.get(`/v1/remediations/${rem['id']}`);
      assert.equal(g.status, 200, g.text);
      const x = g.body['remediation'] as Json;
      return !['in_progress', 'needs_approval'].includes(x['status'] as string) ? x : undefined;
    });
    const steps = Object.fromEntries((done['steps'] as Json[]).map((s) => [s['name'], s]));
    assert.equal(steps['create_backup']!['status'], 'completed', JSON.stringify(steps['create_backup']));
    assert.ok(existsSync(path.join(repo, (steps['create_backup']!['detail'] as Json)['archive'] as string)));
    assert.equal(steps['apply']!['status'], 'not_applicable');
    assert.equal(steps['verify']!['status'], 'completed');
    assert.notEqual(steps['verify']!['execution_id'], pred['execution_id']);
    assert.equal(done['status'], 'not_applicable');
    assert.equal((await c.post(`/v1/predictions/${pred['id']}/remediate`, { action: 'revert', mode: 'automatic' })).status, 400);
    assert.equal((await c.post('/v1/predictions/pred_nope/remediate', { action: 'apply', mode: 'automatic' })).status, 404);
  });

  it('metrics_path: observe-ai analyses the workspace metrics on detection and a spike becomes an anomaly prediction', async () => {
    const c = api(srv.url);
    const shop = ((await c.get('/v1/projects?limit=100')).body['projects'] as Json[]).find((p) => p['name'] === 'shop')!;
    mkdirSync(path.join(repo, 'metrics'), { recursive: true });
    const end = Date.now();
    const values = Array.from({ length: 60 }, (_, i) => (i === 45 ? 900 : 100 + ((i * 7) % 5) - 2));
    writeFileSync(path.join(repo, 'metrics', 'api.prom'), prom('api_latency_ms', values, end));
    assert.equal((await c.call('PATCH', `/v1/projects/${shop['id']}`, { metrics_path: '../elsewhere' })).status, 422);
    assert.equal((await c.call('PATCH', `/v1/projects/${shop['id']}`, { metrics_path: 'nope' })).status, 422);
    const patched = await c.call('PATCH', `/v1/projects/${shop['id']}`, { metrics_path: 'metrics' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body['metrics_path'], 'metrics');
    const d = await c.post(`/v1/projects/${shop['id']}/predictions/detect`, {});
    assert.equal(d.status, 202, d.text);
    const spike = await poll('an anomaly prediction', async () => {
      const list = (await c.get(`/v1/projects/${shop['id']}/predictions?status=open`)).body['predictions'] as Json[];
      return list.find((x) => x['detector'] === 'observe-ai:spike');
    });
    assert.equal(spike['type'], 'anomaly');
    assert.equal(spike['observed'], true);
    assert.equal(spike['series'], 'api_latency_ms');
    const remote = ((await c.get('/v1/projects?limit=100')).body['projects'] as Json[]).find((p) => p['workspace'] === null)!;
    assert.equal((await c.call('PATCH', `/v1/projects/${remote['id']}`, { metrics_path: 'metrics' })).status, 422);
  });

  it('a restart keeps projects, predictions and remediations', async () => {
    const c = api(srv.url);
    const before = (await c.get('/v1/projects?limit=100')).body['projects'] as Json[];
    const shop = before.find((p) => p['name'] === 'shop')!;
    const preds = (await c.get(`/v1/projects/${shop['id']}/predictions`)).body['predictions'] as Json[];
    const log = await c.call('GET', '/v1/projects/' + shop['id']);
    assert.equal(log.status, 200);
    await stop(srv);
    srv = await start(dataDir, workspace);
    const c2 = api(srv.url);
    const after = (await c2.get('/v1/projects?limit=100')).body['projects'] as Json[];
    assert.deepEqual(after.map((p) => p['id']), before.map((p) => p['id']));
    const preds2 = (await c2.get(`/v1/projects/${shop['id']}/predictions`)).body['predictions'] as Json[];
    assert.deepEqual(preds2.map((p) => p['id']), preds.map((p) => p['id']));
    assert.equal(remId !== null, true);
    const rem = await c2.get(`/v1/remediations/${remId}`);
    assert.equal(rem.status, 200, rem.text);
    assert.equal((rem.body['remediation'] as Json)['status'], 'not_applicable');
  });
});
