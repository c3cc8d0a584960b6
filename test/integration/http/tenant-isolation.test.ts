import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { auditRecordsUntil } from '../../support/audit-files';
import { request } from 'undici';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, ROOT, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { ISOLATION_PROBES, SHARED_ROUTES, isConcreteActionPath, judgeProbe, type OwnedObjects } from '../../../server/src/http/isolation/probes';

const ASKER = path.join(ROOT, 'test/fixtures/skills/approval-asker.cjs');
const SECRET = 'tenant-isolation-secret-0123456789abcdef';

/** What tenant A (the default tenant) owns, made through the API with A's key; the probe table is the server's own. */
type Owned = OwnedObjects;
const PROBES = ISOLATION_PROBES;
const SHARED = SHARED_ROUTES;

function prom(name: string, values: number[], end: number): string {
  return values.map((v, i) => `${name} ${v} ${end - (values.length - 1 - i) * 60_000}`).join('\n') + '\n';
}

describe('tenant isolation over HTTP (every route, two tenants)', function () {
  this.timeout(180_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];
  let keyB: string;
  let tenantB: string;
  const owned = { tenant: 'tnt_default', secret: 'cadre/integrations/local/github' } as Owned;
  const servers: ServerProcess[] = [];

  async function poll<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000, everyMs = 200): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  before(async () => {
    ensureBuilt();
    const dataDir = tempDir('cadre-tenants-data-');
    const ws = tempDir('cadre-tenants-ws-');
    dirs.push(dataDir, ws);
    writeFileSync(path.join(dataDir, 'config.yaml'), [
      'defaults:', '  intelligence: ultra', '  acmf_mode: AUTONOMOUS', 'agents:', '  coder-ai:', '    acmf_mode: LEARNING',
      'webhooks:', '  allow_loopback: true', '  allow_http: true', '',
    ].join('\n'));
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src', 'app.js'), 'module.exports = () => 1;\n');
    owned.workspace = ws;
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--skill-module', ASKER]);
    servers.push(server);
    const a = api(server.url);
    const t = await a.post('/v1/admin/tenants', { name: 'beta', quotas: { projects: 5 } });
    assert.equal(t.status, 201, t.text);
    tenantB = t.body['id'] as string;
    const k = await a.post(`/v1/admin/tenants/${tenantB}/keys`, { label: 'beta admin' });
    assert.equal(k.status, 201, k.text);
    assert.equal(k.body['tenantId'], tenantB);
    keyB = k.body['key'] as string;

    // Tenant A's (the default tenant's) objects, one of each kind.
    const action = await a.post('/api/agents/coder-ai/refactor', { prompt: 'drop the legacy login', source: ws });
    assert.equal(action.status, 202, action.text);
    owned.action = action.body['executionId'] as string;
    owned.approval = await poll('approval', async () => ((await a.get(`/v1/approvals?execution_id=${owned.action}`)).body['approvals'] as Json[])[0]?.['id'] as string | undefined);
    const task = await a.post('/v1/agents/tasks', { task: 'check the secrets', capabilities: ['SECURE'], source: ws });
    assert.equal(task.status, 202, task.text);
    owned.task = task.body['taskId'] as string;
    const wf = await a.post('/api/workflows/invoke', { capability: 'SECURE', workflow: 'secure', input: { prompt: 'check', source: ws } });
    assert.equal(wf.status, 202, wf.text);
    owned.workflow = wf.body['workflowId'] as string;
    const rigor = await a.post('/v1/admin/rigor/invoke/security-ai', { prompt: 'scan', source: ws });
    assert.equal(rigor.status, 202, rigor.text);
    owned.rigor = rigor.body['executionId'] as string;
    const custom = await a.post('/v1/customer/workflow', { name: 'a', pattern: 'sequential', steps: [{ id: 's', agent: 'security-ai', action: 'scan' }], input: { prompt: 'a', source: ws } });
    assert.equal(custom.status, 202, custom.text);
    owned.custom = custom.body['workflowId'] as string;
    const project = await a.post('/v1/projects', { name: 'shop', repository: { type: 'local', url: ws } });
    assert.equal(project.status, 201, project.text);
    owned.project = project.body['id'] as string;
    const now = Date.now();
    const rising = Array.from({ length: 60 }, (_, i) => 10 + 2 * i);
    const ing = await a.post(`/v1/projects/${owned.project}/metrics`, { content: prom('disk_used_gb', rising, now), limits: { disk_used_gb: 250 } });
    assert.equal(ing.status, 202, ing.text);
    owned.prediction = await poll('prediction', async () => ((await a.get(`/v1/projects/${owned.project}/predictions`)).body['predictions'] as Json[])[0]?.['id'] as string | undefined);
    const rem = await a.post(`/v1/predictions/${owned.prediction}/remediate`, { action: 'apply', mode: 'automatic' });
    assert.equal(rem.status, 202, rem.text);
    owned.remediation = (rem.body['remediation'] as Json)['id'] as string;
    const hook = await a.post('/v1/webhooks', { url: 'http://127.0.0.1:9/a', events: ['code.reviewed'], secret: SECRET });
    assert.equal(hook.status, 201, hook.text);
    owned.webhook = hook.body['id'] as string;
    owned.delivery = ((await a.post(`/v1/webhooks/${owned.webhook}/test`)).body['delivery'] as Json)['id'] as string;
    const integ = await a.post('/api/v1/integrations/github', { integration_name: 'a', github_repo: 'acme/a', github_installation_id: 7, verify: false, config: { agents: ['coder-ai'], require_review: true } });
    assert.equal(integ.status, 201, integ.text);
    owned.integration = integ.body['integration_id'] as string;
    owned.keyId = ((await a.get('/v1/admin/keys')).body['keys'] as Json[])[0]!['id'] as string;
  });
  after(async () => {
    for (const p of servers) await stop(p);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function call(key: string, method: string, p: string, body?: unknown) {
    const res = await request(`${server.url}${p}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // A stream that opened would never end: read only its first chunk.
    const text = res.headers['content-type']?.toString().startsWith('text/event-stream') && p.startsWith('/api/admin/events/stream') ? (res.body.destroy(), '(stream opened)') : await res.body.text();
    return { status: res.statusCode, text };
  }

  it('every route of the server has a tenant rule and a probe (a new route without one fails here)', async () => {
    const doc = await api(server.url).get('/v1/openapi.json');
    const missing: string[] = [];
    const noRule: string[] = [];
    for (const [p, ops] of Object.entries(doc.body['paths'] as Record<string, Record<string, Json>>)) {
      for (const [m, op] of Object.entries(ops)) {
        const id = `${m.toUpperCase()} ${p}`;
        // Concrete action documents (`/api/agents/security-ai/scan`) are the generic action route's.
        if (isConcreteActionPath(p)) continue;
        if (!['tenant', 'install', 'catalog', 'public'].includes(op['x-cadre-tenancy'] as string)) noRule.push(id);
        if (!PROBES[id] && !SHARED.has(id)) missing.push(id);
        if (SHARED.has(id)) assert.ok(['catalog', 'public'].includes(op['x-cadre-tenancy'] as string), `${id} is shared but declared ${String(op['x-cadre-tenancy'])}`);
      }
    }
    assert.deepEqual(noRule, [], 'routes without a tenancy');
    assert.deepEqual(missing, [], 'routes without an isolation probe in this test');
  });

  it("tenant B's key gets 404 for each of A's objects, 403 on the install's routes, and lists without A's objects", async () => {
    const failures: string[] = [];
    const report: string[] = [];
    for (const [id, probe] of Object.entries(PROBES)) {
      if (probe.expect === 'own') continue;
      const r = probe.req(owned);
      const res = await call(keyB, r.method, r.path, r.body);
      report.push(`${id} -> ${res.status}`);
      const j = judgeProbe(probe, r, res, owned);
      if (j.verdict !== 'isolated') failures.push(`${id}: ${j.why}: ${res.text.slice(0, 200)}`);
    }
    assert.deepEqual(failures, [], report.join('\n'));
    // A's own key still sees them all (the probes did not break anything of A).
    const a = api(server.url);
    for (const p of [`/v1/agents/tasks/${owned.task}`, `/v1/projects/${owned.project}`, `/v1/webhooks/${owned.webhook}`, `/api/v1/integrations/github/${owned.integration}`, `/v1/predictions/${owned.prediction}`]) {
      assert.equal((await a.get(p)).status, 200, p);
    }
  });

  it('what B creates belongs to B: A cannot see it, B can; B cannot use the install\'s secrets', async () => {
    const b = api(server.url, keyB);
    const a = api(server.url);
    const task = await b.post('/v1/agents/tasks', { task: 'check the secrets', capabilities: ['SECURE'], source: ROOT });
    assert.equal(task.status, 202, task.text);
    const taskId = task.body['taskId'] as string;
    assert.equal((await b.get(`/v1/agents/tasks/${taskId}`)).status, 200);
    assert.equal((await a.get(`/v1/agents/tasks/${taskId}`)).status, 404, "A may not read B's task either");
    const project = await b.post('/v1/projects', { name: 'b-shop', repository: { type: 'local', url: ROOT } });
    assert.equal(project.status, 201, project.text);
    assert.equal((await a.get(`/v1/projects/${project.body['id'] as string}`)).status, 404);
    assert.ok(!((await a.get('/v1/projects?limit=100')).text.includes(project.body['id'] as string)));
    const stolen = await b.post('/api/v1/integrations/github', PROBES['POST /api/v1/integrations/github']!.req(owned).body);
    assert.equal(stolen.status, 422, stolen.text);
    assert.match(stolen.text, /may only use secrets named cadre\/integrations\/tnt_/);
    const overwrite = await b.call('PUT', `/api/v1/secrets/${encodeURIComponent('cadre/integrations/local/github')}`, { note: 'x' });
    assert.equal(overwrite.status, 422, overwrite.text);
    const mcp = await call(keyB, 'POST', '/mcp', PROBES['POST /mcp']!.req(owned).body);
    assert.ok(!mcp.text.includes('coder-ai') || /no execution/.test(mcp.text), mcp.text.slice(0, 300));
    assert.match(mcp.text, /no execution/);
    const me = await b.get('/v1/tenant');
    assert.equal(me.body['id'], tenantB);
    assert.equal(((me.body['usage'] as Json[]).find((q) => q['name'] === 'projects'))!['used'], 1);
  });

  it('tenant-ai quotas: the install sees every tenant with its usage, a tenant only itself', async () => {
    type Out = { scope: string; tenants: Array<{ id: string; quotas: Array<{ name: string; limit: number | null; used: number }> }> };
    const asInstall = await api(server.url).get('/api/agents/tenant-ai/quotas');
    assert.equal(asInstall.status, 200, asInstall.text);
    const all = asInstall.body['output'] as unknown as { data?: Out } & Out;
    const out = (all.data ?? all) as Out;
    assert.equal(out.scope, 'install', asInstall.text.slice(0, 400));
    assert.deepEqual(out.tenants.map((t) => t.id).sort(), ['tnt_default', tenantB].sort());
    const beta = out.tenants.find((t) => t.id === tenantB)!;
    assert.deepEqual(beta.quotas.find((q) => q.name === 'projects'), { name: 'projects', limit: 5, used: 1, exceeded: false, share: 0.2 });
    const k3 = await api(server.url).post(`/v1/admin/tenants/${tenantB}/keys`, { label: 'beta 3' });
    const asB = await api(server.url, k3.body['key'] as string).get('/api/agents/tenant-ai/quotas');
    assert.equal(asB.status, 200, asB.text);
    const mine = ((asB.body['output'] as unknown as { data?: Out }).data ?? asB.body['output']) as unknown as Out;
    assert.equal(mine.scope, 'tenant');
    assert.deepEqual(mine.tenants.map((t) => t.id), [tenantB], 'a tenant sees only itself');
  });

  it('tenant-ai check-isolation proves the boundary through the real API, route by route, and leaves no probe behind', async () => {
    type Row = { route: string; status: number; ownerStatus: number | null; verdict: string; why: string };
    type Out = { verdict: string; routes: number; leaks: number; rows: Row[]; unprobed: string[]; intact: Array<{ object: string; ok: boolean }>; ownerTenant: string; intruderTenant: string };
    const a = api(server.url);
    const tenantsBefore = ((await a.get('/v1/admin/tenants')).body['tenants'] as Json[]).map((t) => t['id']);
    const res = await a.post('/api/agents/tenant-ai/check-isolation', {});
    assert.equal(res.status, 202, res.text);
    // Polled once a second: the check takes a while and the key's rate limit counts every poll.
    const status = await poll('the end of check-isolation', async () => {
      const r = await a.get(res.body['statusUrl'] as string);
      return ['completed', 'failed', 'cancelled'].includes(r.body['status'] as string) ? r.body : undefined;
    }, 150_000, 1000);
    assert.equal(status['status'], 'completed', JSON.stringify(status).slice(0, 600));
    const output = status['output'] as { data?: Out } & Out;
    const out = (output.data ?? output) as Out;
    assert.equal(out.rows.length, Object.keys(PROBES).length, 'every probe row was sent');
    const notIsolated = out.rows.filter((r) => r.verdict !== 'isolated').map((r) => `${r.route}: ${r.why}`);
    assert.deepEqual(notIsolated, [], 'routes that did not hold');
    assert.deepEqual(out.unprobed, [], 'routes without a probe');
    assert.ok(out.intact.length >= 5 && out.intact.every((i) => i.ok), JSON.stringify(out.intact));
    assert.equal(out.verdict, 'isolated');
    // Reads were controlled: the owner itself read each object the intruder could not.
    const reads = out.rows.filter((r) => r.ownerStatus !== null);
    assert.ok(reads.length >= 15 && reads.every((r) => r.ownerStatus! < 300 && r.status === 404), JSON.stringify(reads.slice(0, 3)));
    // The probe tenants are deleted, their keys revoked; the install's tenants are as they were.
    const after = ((await a.get('/v1/admin/tenants')).body['tenants'] as Json[]).map((t) => t['id']);
    assert.deepEqual(after, tenantsBefore);
    for (const t of [out.ownerTenant, out.intruderTenant]) {
      const rec = await a.get(`/v1/admin/tenants/${t}`);
      assert.ok(rec.body['deletedAt'], `${t} not deleted: ${rec.text.slice(0, 200)}`);
    }
    // A tenant cannot run it (it makes tenants): unable, saying why.
    const k = await a.post(`/v1/admin/tenants/${tenantB}/keys`, { label: 'beta check' });
    const asB = await api(server.url, k.body['key'] as string).post('/api/agents/tenant-ai/check-isolation', {});
    assert.equal(asB.status, 202, asB.text);
    const bDone = await api(server.url, k.body['key'] as string).until(asB.body['statusUrl'] as string, undefined, 60_000);
    assert.match(JSON.stringify(bDone), /only a key of the install/);
  });

  it("audit records of B's executions carry B's tenant; A's carry the default tenant", async () => {
    // A second key of B: the first spent its rate-limit budget on the probes.
    const k2 = await api(server.url).post(`/v1/admin/tenants/${tenantB}/keys`, { label: 'beta 2' });
    const b = api(server.url, k2.body['key'] as string);
    const r = await b.post('/v1/admin/rigor/invoke/security-ai', { prompt: 'scan', source: ROOT });
    assert.equal(r.status, 202, r.text);
    await b.until(r.body['statusUrl'] as string, undefined, 60_000);
    const lines = (await auditRecordsUntil(dirs[0]!, "B's execution's records", (all) => all.filter((l) => l.executionId === r.body['executionId']).length >= 5)) as unknown as Json[];
    const ofB = lines.filter((l) => l['executionId'] === r.body['executionId']);
    assert.ok(ofB.length >= 5, `${ofB.length} audit records of B's execution`); // its five RIGOR phases at least
    assert.ok(ofB.every((l) => l['tenantId'] === tenantB), JSON.stringify(ofB.find((l) => l['tenantId'] !== tenantB)));
    const ofA = lines.filter((l) => l['executionId'] === owned.rigor);
    assert.ok(ofA.length >= 5 && ofA.every((l) => l['tenantId'] === 'tnt_default'), JSON.stringify(ofA.map((l) => l['tenantId'])));
    // A remediation names no execution: its records carry its project's tenant all the same.
    const rem = lines.filter((l) => String(l['kind']).startsWith('remediation.'));
    assert.ok(rem.length >= 2, `${rem.length} remediation records`);
    const ofOwned = rem.filter((l) => (l['data'] as Json)['remediationId'] === owned.remediation);
    assert.ok(ofOwned.length >= 1 && ofOwned.every((l) => l['tenantId'] === 'tnt_default'), JSON.stringify(ofOwned));
    assert.ok(rem.every((l) => typeof l['tenantId'] === 'string'), JSON.stringify(rem.filter((l) => typeof l['tenantId'] !== 'string')));
  });

  it("check-isolation's probe runs are no evidence about the agents: their ACMF records do not move", async () => {
    const dataDir = tempDir('cadre-tenants-probe-acmf-');
    dirs.push(dataDir);
    const fresh = await startStandalone(dataDir, { CADRE_API_KEY: KEY });
    servers.push(fresh);
    const a = api(fresh.url);
    // Every agent's ACMF record as adapt-ai evaluate reports it (mode, tasks, quality, success rate, failures).
    const acmf = async () => {
      const r = await a.get('/api/agents/adapt-ai/evaluate');
      const out = r.body['output'] as { data?: { agents: Json[] }; agents?: Json[] };
      return ((out.data ?? out).agents ?? []).filter((x) => x['agentId'] !== 'adapt-ai' && x['agentId'] !== 'tenant-ai')
        .map((x) => `${String(x['agentId'])} ${String(x['mode'])} tasks ${String(x['tasks'])} quality ${String(x['quality'])} success ${String(x['successRate'])} failures ${String(x['recentFailures'])}`);
    };
    // One real run first, so that there is a record to compare.
    const one = await a.post('/v1/admin/rigor/invoke/security-ai', { prompt: 'scan', source: ROOT });
    // (Cadre's own repository, test files full of planted secrets: the report passes its own secrets gate.)
    const oneDone = await a.until(one.body['statusUrl'] as string, undefined, 60_000);
    assert.equal(oneDone['status'], 'completed', String(oneDone['reason']));
    const before = await acmf();
    assert.ok(before.some((l) => l.startsWith('security-ai ') && / tasks 1 /.test(l)), before.join('\n'));
    const res = await a.post('/api/agents/tenant-ai/check-isolation', {});
    const end = await poll('the end of check-isolation', async () => {
      const r = await a.get(res.body['statusUrl'] as string);
      return ['completed', 'failed', 'cancelled'].includes(r.body['status'] as string) ? r.body : undefined;
    }, 150_000, 1000);
    assert.equal(end['status'], 'completed', JSON.stringify(end).slice(0, 400));
    // A dozen runs of the probe tenants ended (security-ai, req-ai, capacity-ai...); none counted.
    // (An agent the probes touched for the first time gets its empty record: nothing counted in it.)
    const after = (await acmf()).filter((l) => before.includes(l) || !/ tasks 0 quality 0 success null failures 0$/.test(l));
    assert.deepEqual(after, before);
  });

  it('a quota is enforced: 429 ERR_QUOTA_EXCEEDED naming it, nothing stored', async () => {
    const dataDir = tempDir('cadre-tenants-quota-');
    dirs.push(dataDir);
    const other = await startStandalone(dataDir, { CADRE_API_KEY: KEY });
    servers.push(other);
    const a = api(other.url);
    const t = await a.post('/v1/admin/tenants', { name: 'small', quotas: { concurrentExecutions: 0 } });
    const k = await a.post(`/v1/admin/tenants/${t.body['id'] as string}/keys`, { label: 'small' });
    const small = api(other.url, k.body['key'] as string);
    const r = await small.post('/v1/agents/tasks', { task: 'check the secrets', capabilities: ['SECURE'], source: ROOT });
    assert.equal(r.status, 429, r.text);
    assert.match(r.text, /ERR_QUOTA_EXCEEDED/);
    assert.match(r.text, /concurrentExecutions quota \(0 of 0\)/);
    assert.equal(((await small.get('/api/workflows')).body['total'] as number), 0);
    // Deleting the tenant revokes its keys.
    assert.equal((await a.call('DELETE', `/v1/admin/tenants/${t.body['id'] as string}`)).status, 200);
    assert.equal((await small.get('/v1/tenant')).status, 401);
  });
});
