import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, ROOT, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const ASKER = path.join(ROOT, 'test/fixtures/skills/approval-asker.cjs');
const SECRET = 'tenant-isolation-secret-0123456789abcdef';

/** What tenant A owns, made through the API with A's key (the default tenant's admin key). */
interface Owned {
  task: string; workflow: string; rigor: string; action: string; custom: string; approval: string;
  project: string; prediction: string; remediation: string; webhook: string; delivery: string;
  integration: string; keyId: string;
}

type Expect = 404 | 403 | 'excludes' | 'own';
interface Probe {
  /** The request tenant B's key makes against A's objects. */
  req(o: Owned): { method: string; path: string; body?: unknown };
  /**
   * 404: A's object is not found (like a missing one); 403: the install's own (`install_only`);
   * 'excludes': 200 and none of A's ids in the answer; 'own': B acts on its own tenant (2xx/4xx that names nothing of A).
   */
  expect: Expect;
}

const ALL_IDS = (o: Owned) => Object.values(o) as string[];

/**
 * Every route of the server with its tenant rule, probed with tenant B's key against tenant A's objects.
 * A route added without a row here fails "every route has a probe" (the server's OpenAPI lists them with
 * their `x-cadre-tenancy`).
 */
const PROBES: Record<string, Probe> = {
  'POST /api/session': { req: () => ({ method: 'POST', path: '/api/session' }), expect: 'own' },
  'DELETE /api/session': { req: () => ({ method: 'DELETE', path: '/api/session' }), expect: 'own' },
  'POST /v1/admin/keys': { req: () => ({ method: 'POST', path: '/v1/admin/keys', body: { label: 'b2', role: 'operator' } }), expect: 'own' },
  'GET /v1/admin/keys': { req: () => ({ method: 'GET', path: '/v1/admin/keys' }), expect: 'excludes' },
  'GET /v1/admin/keys/{id}': { req: (o) => ({ method: 'GET', path: `/v1/admin/keys/${o.keyId}` }), expect: 404 },
  'DELETE /v1/admin/keys/{id}': { req: (o) => ({ method: 'DELETE', path: `/v1/admin/keys/${o.keyId}` }), expect: 404 },
  'POST /v1/admin/tenants': { req: () => ({ method: 'POST', path: '/v1/admin/tenants', body: { name: 'gamma' } }), expect: 403 },
  'GET /v1/admin/tenants': { req: () => ({ method: 'GET', path: '/v1/admin/tenants' }), expect: 403 },
  'GET /v1/admin/tenants/{tenant_id}': { req: () => ({ method: 'GET', path: '/v1/admin/tenants/tnt_default' }), expect: 403 },
  'PATCH /v1/admin/tenants/{tenant_id}': { req: () => ({ method: 'PATCH', path: '/v1/admin/tenants/tnt_default', body: { name: 'x' } }), expect: 403 },
  'DELETE /v1/admin/tenants/{tenant_id}': { req: () => ({ method: 'DELETE', path: '/v1/admin/tenants/tnt_default' }), expect: 403 },
  'POST /v1/admin/tenants/{tenant_id}/keys': { req: () => ({ method: 'POST', path: '/v1/admin/tenants/tnt_default/keys', body: { label: 'steal' } }), expect: 403 },
  'GET /v1/tenant': { req: () => ({ method: 'GET', path: '/v1/tenant' }), expect: 'own' },
  'POST /v1/agents/tasks': { req: () => ({ method: 'POST', path: '/v1/agents/tasks', body: { task: 'check the secrets', capabilities: ['SECURE'], source: ROOT } }), expect: 'own' },
  'GET /v1/agents/tasks/{taskId}': { req: (o) => ({ method: 'GET', path: `/v1/agents/tasks/${o.task}` }), expect: 404 },
  'POST /api/agents/tasks': { req: () => ({ method: 'POST', path: '/api/agents/tasks', body: { task: 'check the secrets', capabilities: ['SECURE'], source: ROOT } }), expect: 'own' },
  'GET /api/agents/tasks/{taskId}': { req: (o) => ({ method: 'GET', path: `/api/agents/tasks/${o.task}` }), expect: 404 },
  'POST /api/workflows/invoke': { req: () => ({ method: 'POST', path: '/api/workflows/invoke', body: { capability: 'SECURE', workflow: 'secure', input: { prompt: 'b', source: ROOT } } }), expect: 'own' },
  'GET /api/workflows/{id}/status': { req: (o) => ({ method: 'GET', path: `/api/workflows/${o.workflow}/status` }), expect: 404 },
  'GET /api/workflows': { req: () => ({ method: 'GET', path: '/api/workflows?limit=100' }), expect: 'excludes' },
  'POST /api/workflows/cancel/{id}': { req: (o) => ({ method: 'POST', path: `/api/workflows/cancel/${o.action}` }), expect: 404 },
  'POST /v1/admin/rigor/invoke/{agentId}': { req: () => ({ method: 'POST', path: '/v1/admin/rigor/invoke/security-ai', body: { prompt: 'b', source: ROOT } }), expect: 'own' },
  'POST /api/v1/rigor/invoke/{agentId}': { req: () => ({ method: 'POST', path: '/api/v1/rigor/invoke/security-ai', body: { prompt: 'b', source: ROOT } }), expect: 'own' },
  'GET /v1/admin/rigor/status/{executionId}': { req: (o) => ({ method: 'GET', path: `/v1/admin/rigor/status/${o.rigor}` }), expect: 404 },
  'GET /api/v1/rigor/status/{executionId}': { req: (o) => ({ method: 'GET', path: `/api/v1/rigor/status/${o.action}` }), expect: 404 },
  'GET /v1/admin/rigor/health': { req: () => ({ method: 'GET', path: '/v1/admin/rigor/health' }), expect: 'excludes' },
  'POST /v1/customer/workflow': {
    req: () => ({ method: 'POST', path: '/v1/customer/workflow', body: { name: 'b', pattern: 'sequential', steps: [{ id: 's', agent: 'security-ai', action: 'scan' }], input: { prompt: 'b', source: ROOT } } }),
    expect: 'own',
  },
  'GET /v1/customer/workflow/{id}': { req: (o) => ({ method: 'GET', path: `/v1/customer/workflow/${o.custom}` }), expect: 404 },
  'GET /v1/customer/workflow/{id}/status': { req: (o) => ({ method: 'GET', path: `/v1/customer/workflow/${o.custom}/status` }), expect: 404 },
  'GET /v1/agents/{id}/status': { req: () => ({ method: 'GET', path: '/v1/agents/coder-ai/status' }), expect: 'excludes' },
  'GET /v1/agents/orchestrator/coordination': { req: () => ({ method: 'GET', path: '/v1/agents/orchestrator/coordination' }), expect: 'excludes' },
  'POST /api/agents/{id}/{action}': { req: () => ({ method: 'POST', path: '/api/agents/security-ai/scan', body: { prompt: 'b', source: ROOT } }), expect: 'own' },
  'GET /api/agents/{id}/{action}': { req: () => ({ method: 'GET', path: '/api/agents/req-ai/analyze?prompt=b' }), expect: 'own' },
  'GET /api/admin/events/stream': { req: (o) => ({ method: 'GET', path: `/api/admin/events/stream?execution_id=${o.action}` }), expect: 404 },
  'GET /v1/approvals': { req: () => ({ method: 'GET', path: '/v1/approvals?status=all' }), expect: 'excludes' },
  'POST /v1/approvals/{id}/decision': { req: (o) => ({ method: 'POST', path: `/v1/approvals/${o.approval}/decision`, body: { approved: true } }), expect: 404 },
  'POST /v1/agents/{id}/acmf': { req: () => ({ method: 'POST', path: '/v1/agents/coder-ai/acmf', body: { mode: 'OBSERVE', reason: 'b' } }), expect: 403 },
  'POST /v1/webhooks': { req: () => ({ method: 'POST', path: '/v1/webhooks', body: { url: 'http://127.0.0.1:9/b', events: ['code.reviewed'], secret: SECRET } }), expect: 'own' },
  'GET /v1/webhooks': { req: () => ({ method: 'GET', path: '/v1/webhooks' }), expect: 'excludes' },
  'GET /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'GET', path: `/v1/webhooks/${o.webhook}` }), expect: 404 },
  'PATCH /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'PATCH', path: `/v1/webhooks/${o.webhook}`, body: { enabled: false } }), expect: 404 },
  'DELETE /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'DELETE', path: `/v1/webhooks/${o.webhook}` }), expect: 404 },
  'POST /v1/webhooks/{webhook_id}/test': { req: (o) => ({ method: 'POST', path: `/v1/webhooks/${o.webhook}/test` }), expect: 404 },
  'GET /v1/webhooks/{webhook_id}/deliveries': { req: (o) => ({ method: 'GET', path: `/v1/webhooks/${o.webhook}/deliveries` }), expect: 404 },
  'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': { req: (o) => ({ method: 'POST', path: `/v1/webhooks/${o.webhook}/deliveries/${o.delivery}/redeliver` }), expect: 404 },
  'GET /v1/admin/store': { req: () => ({ method: 'GET', path: '/v1/admin/store' }), expect: 403 },
  'POST /v1/admin/store/compact': { req: () => ({ method: 'POST', path: '/v1/admin/store/compact' }), expect: 403 },
  'GET /v1/projects': { req: () => ({ method: 'GET', path: '/v1/projects?limit=100' }), expect: 'excludes' },
  'POST /v1/projects': { req: () => ({ method: 'POST', path: '/v1/projects', body: { name: 'b-shop', repository: { type: 'local', url: ROOT } } }), expect: 'own' },
  'GET /v1/projects/{project_id}': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}` }), expect: 404 },
  'PATCH /v1/projects/{project_id}': { req: (o) => ({ method: 'PATCH', path: `/v1/projects/${o.project}`, body: { name: 'taken' } }), expect: 404 },
  'DELETE /v1/projects/{project_id}': { req: (o) => ({ method: 'DELETE', path: `/v1/projects/${o.project}` }), expect: 404 },
  'POST /v1/projects/{project_id}/metrics': { req: (o) => ({ method: 'POST', path: `/v1/projects/${o.project}/metrics`, body: { limits: { up: 2 } } }), expect: 404 },
  'GET /v1/projects/{project_id}/metrics': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}/metrics` }), expect: 404 },
  'POST /v1/projects/{project_id}/predictions/detect': { req: (o) => ({ method: 'POST', path: `/v1/projects/${o.project}/predictions/detect` }), expect: 404 },
  'GET /v1/projects/{project_id}/predictions': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}/predictions` }), expect: 404 },
  'GET /v1/predictions/{prediction_id}': { req: (o) => ({ method: 'GET', path: `/v1/predictions/${o.prediction}` }), expect: 404 },
  'POST /v1/predictions/{prediction_id}/remediate': { req: (o) => ({ method: 'POST', path: `/v1/predictions/${o.prediction}/remediate`, body: { action: 'apply', mode: 'automatic' } }), expect: 404 },
  'GET /v1/remediations/{remediation_id}': { req: (o) => ({ method: 'GET', path: `/v1/remediations/${o.remediation}` }), expect: 404 },
  'POST /api/v1/integrations/github': {
    req: () => ({ method: 'POST', path: '/api/v1/integrations/github', body: { integration_name: 'b', github_repo: 'acme/b', github_installation_id: 7, secrets_manager_arn: 'cadre/integrations/local/github', verify: false, config: { agents: ['coder-ai'], require_review: true } } }),
    expect: 'own', // refused: tenant B may not borrow the install's secret (422), checked below
  },
  'GET /api/v1/integrations/github': { req: () => ({ method: 'GET', path: '/api/v1/integrations/github' }), expect: 'excludes' },
  'GET /api/v1/integrations/github/{integration_id}': { req: (o) => ({ method: 'GET', path: `/api/v1/integrations/github/${o.integration}` }), expect: 404 },
  'DELETE /api/v1/integrations/github/{integration_id}': { req: (o) => ({ method: 'DELETE', path: `/api/v1/integrations/github/${o.integration}` }), expect: 404 },
  'POST /api/v1/integrations/github/{integration_id}/verify': { req: (o) => ({ method: 'POST', path: `/api/v1/integrations/github/${o.integration}/verify` }), expect: 404 },
  'GET /api/v1/integrations/github/{integration_id}/pulls': { req: (o) => ({ method: 'GET', path: `/api/v1/integrations/github/${o.integration}/pulls` }), expect: 404 },
  'PUT /api/v1/secrets/{name}': { req: () => ({ method: 'PUT', path: `/api/v1/secrets/${encodeURIComponent('cadre/integrations/local/github')}`, body: { note: 'overwrite' } }), expect: 'own' },
  'DELETE /api/v1/secrets/{name}': { req: () => ({ method: 'DELETE', path: `/api/v1/secrets/${encodeURIComponent('cadre/integrations/local/github')}` }), expect: 'own' },
  'POST /mcp': {
    req: (o) => ({ method: 'POST', path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'cadre_get_execution', arguments: { executionId: o.action } } } }),
    expect: 'own',
  },
};

/** Routes that are the same for every tenant (no tenant data) or take no key at all. */
const SHARED = new Set(['GET /v1/health', 'GET /v1/info', 'GET /v1/openapi.json', 'GET /v1/agents/list', 'GET /v1/agents/fleet/schedule', 'POST /webhooks/{provider}', 'POST /api/webhooks/github']);

function prom(name: string, values: number[], end: number): string {
  return values.map((v, i) => `${name} ${v} ${end - (values.length - 1 - i) * 60_000}`).join('\n') + '\n';
}

describe('tenant isolation over HTTP (every route, two tenants)', function () {
  this.timeout(180_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];
  let keyB: string;
  let tenantB: string;
  const owned = {} as Owned;
  const servers: ServerProcess[] = [];

  async function poll<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 200));
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
        if (/^\/api\/agents\/[a-z]+-ai\/[a-z-]+$/.test(p)) continue;
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
      // An id the request itself named may be echoed (the 404's `instance`); any other of A's ids is a leak.
      const sent = r.path + JSON.stringify(r.body ?? null);
      const leaked = ALL_IDS(owned).filter((x) => res.text.includes(x) && !sent.includes(x));
      if (probe.expect === 404 && res.status !== 404) failures.push(`${id}: ${res.status} ${res.text.slice(0, 200)}`);
      if (probe.expect === 403 && !(res.status === 403 && /install_only/.test(res.text))) failures.push(`${id}: ${res.status} ${res.text.slice(0, 200)}`);
      if (probe.expect === 'excludes' && res.status !== 200) failures.push(`${id}: ${res.status} ${res.text.slice(0, 200)}`);
      if (leaked.length > 0) failures.push(`${id}: answer names A's ${leaked.join(', ')}`);
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

  it("audit records of B's executions carry B's tenant; A's carry the default tenant", async () => {
    // A second key of B: the first spent its rate-limit budget on the probes.
    const k2 = await api(server.url).post(`/v1/admin/tenants/${tenantB}/keys`, { label: 'beta 2' });
    const b = api(server.url, k2.body['key'] as string);
    const r = await b.post('/v1/admin/rigor/invoke/security-ai', { prompt: 'scan', source: ROOT });
    assert.equal(r.status, 202, r.text);
    await b.until(r.body['statusUrl'] as string, undefined, 60_000);
    const auditDir = path.join(dirs[0]!, 'audit');
    const lines = readdirSync(auditDir).filter((f) => f.endsWith('.jsonl')).flatMap((f) => readFileSync(path.join(auditDir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json));
    const ofB = lines.filter((l) => l['executionId'] === r.body['executionId']);
    assert.ok(ofB.length >= 5, `${ofB.length} audit records of B's execution`); // its five RIGOR phases at least
    assert.ok(ofB.every((l) => l['tenantId'] === tenantB), JSON.stringify(ofB.find((l) => l['tenantId'] !== tenantB)));
    const ofA = lines.filter((l) => l['executionId'] === owned.rigor);
    assert.ok(ofA.length >= 5 && ofA.every((l) => l['tenantId'] === 'tnt_default'), JSON.stringify(ofA.map((l) => l['tenantId'])));
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
