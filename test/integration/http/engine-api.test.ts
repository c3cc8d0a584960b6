import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { ensureBuilt, stop, tempDir } from '../../support/server-process';
import { api, freshKey, startFleetServer, type Json } from '../../support/fleet-server';

describe('agent-platform API over HTTP', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let a: ReturnType<typeof api>;
  before(async () => {
    ensureBuilt();
    server = await startFleetServer();
  });
  beforeEach(async () => {
    a = api(server.url, await freshKey(server.url));
  });
  after(async () => stop(server));

  for (const family of ['/v1', '/api'] as const) {
    it(`${family}: submits a task (202, task_ id, statusUrl) and reports its progress to completion`, async () => {
      const r = await a.post(`${family}/agents/tasks`, { task: 'add a health endpoint', capabilities: ['BUILD'], priority: 'high', scope: 'mvp' });
      assert.equal(r.status, 202, r.text);
      assert.match(r.body['taskId'] as string, /^task_/);
      assert.equal(r.body['status'], 'queued');
      assert.deepEqual(r.body['agentsAssigned'], ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai']);
      assert.equal(r.body['statusUrl'], `${family}/agents/tasks/${r.body['taskId']}`);
      assert.ok(!Number.isNaN(Date.parse(r.body['estimatedCompletion'] as string)));
      const done = await a.until(r.body['statusUrl'] as string);
      assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
      assert.equal(done['progress'], 100);
      assert.deepEqual(done['completedPhases'], ['Research', 'Inspect', 'Generate', 'Optimize', 'Review']);
      for (const k of ['createdAt', 'startedAt', 'completedAt']) assert.ok(!Number.isNaN(Date.parse(done[k] as string)), k);
      assert.equal(done['error'], null);
    });
  }

  it('rejects bad task submissions with the offending fields', async () => {
    const missing = await a.post('/v1/agents/tasks', { capabilities: ['BUILD'] });
    assert.equal(missing.status, 400);
    assert.equal(missing.headers['content-type'], 'application/problem+json');
    assert.ok((missing.body['errors'] as Array<{ field: string }>).some((e) => e.field === 'body.task'), missing.text);
    const badEnum = await a.post('/v1/agents/tasks', { task: 'x', capabilities: ['BUILDING'] });
    assert.equal(badEnum.status, 400);
    assert.ok((badEnum.body['errors'] as Array<{ field: string }>).some((e) => e.field === 'body.capabilities[0]'), badEnum.text);
    const badType = await a.post('/v1/agents/tasks', { task: 42, capabilities: 'BUILD' });
    assert.equal(badType.status, 400);
    assert.equal((badType.body['errors'] as unknown[]).length, 2);
    const badSource = await a.post('/v1/agents/tasks', { task: 'x', capabilities: ['BUILD'], source: '/no/such/folder' });
    assert.equal(badSource.status, 400);
    const unknown = await a.get('/v1/agents/tasks/task_000000000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body['code'], 'ERR_NOT_FOUND');
  });

  it('invokes a template, lists it, and reports status, phases and output', async () => {
    const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'ship the login page', scope: 'mvp' } });
    assert.equal(r.status, 202, r.text);
    assert.match(r.body['workflowId'] as string, /^wf_/);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed');
    const phases = done['phases'] as Array<{ agentId: string; phases: Array<{ status: string }>; gates: { passed: number; failed: number } }>;
    assert.deepEqual(phases.map((p) => p.agentId), ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'tester-ai', 'review-ai', 'security-ai', 'deploy-ai', 'observe-ai']);
    assert.ok(phases.every((p) => p.phases.every((x) => x.status === 'Completed') && p.gates.failed === 0));
    const list = await a.get('/api/workflows?limit=5');
    assert.equal(list.status, 200);
    assert.ok((list.body['workflows'] as Array<{ workflowId: string }>).some((w) => w.workflowId === r.body['workflowId']));
    const bad = await a.post('/api/workflows/invoke', { capability: 'GOVERN', workflow: 'full-sdlc', input: { prompt: 'x' } });
    assert.equal(bad.status, 400);
    const unknownWf = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'nope', input: { prompt: 'x' } });
    assert.equal(unknownWf.status, 400);
    assert.equal((await a.get('/api/workflows?limit=500')).status, 400);
  });

  it('pages the workflow list newest first: page and limit, with the contract\'s pagination {page, limit, total}', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'build', input: { prompt: `page ${i}` } });
      assert.equal(r.status, 202, r.text);
      await a.until(r.body['statusUrl'] as string);
    }
    const all = await a.get('/api/workflows?limit=100');
    const total = all.body['total'] as number;
    assert.ok(total >= 3);
    const ids = (all.body['workflows'] as Array<{ workflowId: string }>).map((w) => w.workflowId);
    const p1 = await a.get('/api/workflows?limit=2&page=1');
    const p2 = await a.get('/api/workflows?limit=2&page=2');
    assert.deepEqual(p1.body['pagination'], { page: 1, limit: 2, total });
    assert.deepEqual([...(p1.body['workflows'] as Array<{ workflowId: string }>), ...(p2.body['workflows'] as Array<{ workflowId: string }>)].map((w) => w.workflowId), ids.slice(0, 4));
    const beyond = await a.get(`/api/workflows?limit=2&page=${Math.ceil(total / 2) + 1}`);
    assert.deepEqual(beyond.body['workflows'], []);
    assert.equal((await a.get('/api/workflows?page=0')).status, 400);
  });

  it('cancels a running workflow (and refuses to cancel it twice)', async () => {
    const r = await a.post('/api/workflows/invoke', { capability: 'SECURE', workflow: 'secure', input: { prompt: 'block:security-ai' } });
    await a.until(r.body['statusUrl'] as string, (b) => (b['phases'] as Array<{ agentId: string; status: string }>).some((p) => p.agentId === 'security-ai' && p.status === 'running'));
    const c = await a.post(`/api/workflows/cancel/${r.body['workflowId']}`);
    assert.equal(c.status, 200, c.text);
    assert.equal(c.body['status'], 'cancelled');
    assert.equal((await a.post(`/api/workflows/cancel/${r.body['workflowId']}`)).status, 409);
    assert.equal((await a.post('/api/workflows/cancel/wf_nope')).status, 404);
  });

  for (const [invoke, status] of [['/v1/admin/rigor/invoke', '/v1/admin/rigor/status'], ['/api/v1/rigor/invoke', '/api/v1/rigor/status']] as const) {
    it(`${invoke}: runs one agent through RIGOR and shows the full gate table`, async () => {
      const r = await a.post(`${invoke}/coder-ai`, { prompt: 'refactor the parser', priority: 'normal', acmfMode: 'ASSISTED' });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body['statusUrl'], `${status}/${r.body['executionId']}`);
      const done = await a.until(r.body['statusUrl'] as string);
      assert.equal(done['status'], 'completed');
      assert.equal(done['acmfMode'], 'ASSISTED');
      assert.equal((done['gates'] as unknown[]).length, 21);
      assert.equal((await a.post(`${invoke}/nobody-ai`, { prompt: 'x' })).status, 404);
      assert.equal((await a.post(`${invoke}/coder-ai`, { prompt: 'x', acmfMode: 'YOLO' })).status, 400);
    });
  }

  it('reports RIGOR health with the audit chain verified', async () => {
    const h = await a.get('/v1/admin/rigor/health');
    assert.equal(h.status, 200, h.text);
    assert.equal(h.body['gates'], 21);
    assert.equal((h.body['audit'] as { intact: boolean }).intact, true);
  });

  it('runs a customer workflow and refuses invalid definitions', async () => {
    const r = await a.post('/v1/customer/workflow', {
      name: 'review and test', pattern: 'sequential',
      steps: [{ id: 'review', agent: 'review-ai' }, { id: 'test', agent: 'tester-ai', depends_on: ['review'], input: { from: '$steps.review.summary' } }],
      input: { prompt: 'check the cache' },
    });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed');
    const details = await a.get(`/v1/customer/workflow/${r.body['workflowId']}`);
    assert.equal(details.status, 200);
    assert.equal((details.body['definition'] as { name: string }).name, 'review and test');
    const cycle = await a.post('/v1/customer/workflow', { name: 'c', steps: [{ id: 'a', agent: 'coder-ai', depends_on: ['b'] }, { id: 'b', agent: 'tester-ai', depends_on: ['a'] }], input: { prompt: 'x' } });
    assert.equal(cycle.status, 400);
    assert.match(cycle.body['detail'] as string, /cycle/);
    const unknown = await a.post('/v1/customer/workflow', { name: 'u', steps: [{ agent: 'ghost-ai' }], input: { prompt: 'x' } });
    assert.equal(unknown.status, 400);
    assert.ok((unknown.body['errors'] as Array<{ field: string }>).some((e) => e.field.includes('steps[0].agent')), unknown.text);
    const empty = await a.post('/v1/customer/workflow', { name: 'e', steps: [], input: { prompt: 'x' } });
    assert.equal(empty.status, 400);
    assert.equal((await a.get('/v1/customer/workflow/wf_nope')).status, 404);
  });

  it('lists the 25 agents with their domains and status, one agent, and the coordination view', async () => {
    const list = await a.get('/v1/agents/list');
    assert.equal(list.status, 200);
    const agents = list.body['agents'] as Array<{ id: string; domains: Array<{ domain: string; role: string }>; state: string; acmf: { mode: string } }>;
    assert.equal(agents.length, 25);
    const review = agents.find((x) => x.id === 'review-ai')!;
    assert.deepEqual(review.domains.map((d) => d.domain), ['BUILD', 'OPERATE']);
    assert.notEqual(review.domains[0]!.role, review.domains[1]!.role);
    const one = await a.get('/v1/agents/security-ai/status');
    assert.equal(one.status, 200);
    assert.equal(one.body['availability'], 'always_on');
    assert.equal((await a.get('/v1/agents/ghost-ai/status')).status, 404);
    const coord = await a.get('/v1/agents/orchestrator/coordination');
    assert.equal(coord.status, 200);
    assert.ok(Array.isArray(coord.body['executions']));
    const week = await a.get('/v1/agents/fleet/schedule');
    assert.equal(week.status, 200);
    assert.equal((week.body['agents'] as unknown[]).length, 25);
  });

  it('direct agent actions take a session cookie or the key; tiers answer with a preview', async () => {
    const s = await a.post('/api/session', {});
    assert.equal(s.status, 201, s.text);
    const cookie = String(s.headers['set-cookie']).split(';')[0]!;
    const res = await request(`${server.url}/api/agents/req-ai/analyze`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'users can reset their password' }) });
    assert.equal(res.statusCode, 202);
    const ref = (await res.body.json()) as Json;
    const done = await a.until(ref['statusUrl'] as string);
    assert.equal(done['status'], 'completed');
    const viaGet = await a.get('/api/agents/planner-ai/estimate?prompt=size');
    assert.equal(viaGet.status, 200, viaGet.text);
    assert.equal(viaGet.body['status'], 'completed');
    // A local install owns every product: [PRO] billing-ai runs whatever the request's intelligence.
    const local = await a.post('/api/agents/billing-ai/usage', { intelligence: 'core' });
    assert.notEqual(local.status, 403, local.text);
    // A subscription on trial answers [PRO] actions with a preview.
    const trial = await startFleetServer({ config: 'subscription:\n  products: [PLATFORM, OPTIMIZE]\n  tier: trial\n' });
    try {
      const gated = await api(trial.url).post('/api/agents/billing-ai/usage', {});
      assert.equal(gated.status, 403, gated.text);
      assert.equal(gated.body['code'], 'ERR_TIER_REQUIRED');
      assert.equal((gated.body['details'] as Json)['requiredCommercialTier'], 'pro');
      assert.ok(JSON.stringify(gated.body).includes('preview'));
    } finally {
      await stop(trial);
    }
    assert.equal((await a.post('/api/agents/coder-ai/teleport', {})).status, 404);
    const noAuth = await request(`${server.url}/api/agents/req-ai/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(noAuth.statusCode, 401);
    await noAuth.body.dump();
  });

  it('lists approvals and records who decided', async () => {
    const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'build', input: { prompt: 'crash:planner-ai:9' } });
    const pending = await a.until(`/v1/approvals?execution_id=${r.body['workflowId']}`, (b) => (b['approvals'] as unknown[]).length > 0);
    const approval = (pending['approvals'] as Array<{ id: string }>)[0]!;
    const d = await a.post(`/v1/approvals/${approval.id}/decision`, { approved: false, by: 'user:dana', reason: 'not today' });
    assert.equal(d.status, 200, d.text);
    // Attributed to the authenticated key; the client's `by` is only a note in the audit trail.
    assert.match(d.body['decidedBy'] as string, /^key:key_[0-9a-f]{12}$/);
    assert.equal((await a.post(`/v1/approvals/${approval.id}/decision`, { approved: false })).status, 409, 'deciding twice is a conflict');
    const done = await a.until(`/api/workflows/${r.body['workflowId']}/status`);
    assert.equal(done['status'], 'failed');
    // Paged like every list: a page of one, and the total.
    const all = await a.get('/v1/approvals?status=all&limit=1&page=1');
    assert.equal((all.body['approvals'] as unknown[]).length, 1);
    assert.equal((all.body['pagination'] as { total: number }).total >= 1, true, all.text);
    assert.equal((await a.get('/v1/approvals?limit=501')).status, 400);
  });
});

describe('progress stream (SSE)', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let a: ReturnType<typeof api>;
  let streamKey: string;
  before(async () => {
    ensureBuilt();
    server = await startFleetServer();
  });
  beforeEach(async () => {
    streamKey = await freshKey(server.url);
    a = api(server.url, streamKey);
  });
  after(async () => stop(server));

  async function readEvents(executionId: string, opts: { lastEventId?: number; max?: number } = {}): Promise<Array<{ id: number; event: string; data: Json }>> {
    const res = await request(`${server.url}/api/admin/events/stream?execution_id=${executionId}`, {
      headers: { authorization: `Bearer ${streamKey}`, accept: 'text/event-stream', ...(opts.lastEventId !== undefined ? { 'last-event-id': String(opts.lastEventId) } : {}) },
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const out: Array<{ id: number; event: string; data: Json }> = [];
    let buf = '';
    for await (const chunk of res.body) {
      buf += chunk.toString();
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const fields = Object.fromEntries(block.split('\n').filter((l) => l && !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
        if (fields['id'] === undefined) continue;
        out.push({ id: Number(fields['id']), event: fields['event']!, data: JSON.parse(fields['data']!) as Json });
        if (opts.max !== undefined && out.length >= opts.max) {
          res.body.destroy();
          return out;
        }
      }
    }
    return out;
  }

  it('streams the contract events; a client reconnecting with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const prompt = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai'].map((x) => `slow:${x}:80`).join(' ');
    const r = await a.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'build', input: { prompt } });
    const id = r.body['workflowId'] as string;
    const first = await readEvents(id, { max: 12 });
    const rest = await readEvents(id, { lastEventId: first.at(-1)!.id });
    const all = [...first, ...rest];
    assert.deepEqual(all.map((e) => e.id), all.map((_, i) => i + 1), 'no gap, no duplicate');
    assert.equal(all.at(-1)!.event, 'execution_completed');
    const started = all.find((e) => e.event === 'phase_started')!;
    assert.deepEqual(Object.keys(started.data).filter((k) => ['phase', 'agent_id'].includes(k)).sort(), ['agent_id', 'phase']);
    const progress = all.find((e) => e.event === 'work_progress')!;
    assert.ok(Number.isInteger(progress.data['progress']) && typeof progress.data['confidence'] === 'number');
    const completed = all.find((e) => e.event === 'phase_completed')!;
    assert.ok(Number.isInteger(completed.data['duration_ms']));
    // After the end, the stored log replays exactly what was missed.
    const replay = await readEvents(id, { lastEventId: 10 });
    assert.deepEqual(replay.map((e) => e.id), all.slice(10).map((e) => e.id));
  });

  it('an unknown execution is a 404, not an empty stream', async () => {
    const res = await a.get('/api/admin/events/stream?execution_id=wf_000000000000000000000000');
    assert.equal(res.status, 404);
    // An empty execution id is refused (no execution_id at all is the tenant's service stream: docs/api.md).
    assert.equal((await a.get('/api/admin/events/stream?execution_id=')).status, 400);
  });
});

describe('crash and restart', function () {
  this.timeout(90_000);
  before(ensureBuilt);

  it('SIGKILL mid-workflow: after a restart the workflow resumes, nothing acknowledged is lost, no side effect runs twice', async () => {
    const dataDir = tempDir();
    const effects = path.join(tempDir('cadre-fx-'), 'effects.log');
    mkdirSync(path.dirname(effects), { recursive: true });
    writeFileSync(effects, '');
    const s1 = await startFleetServer({ dataDir, effectsFile: effects });
    const a1 = api(s1.url);
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await a1.post('/v1/agents/tasks', { task: `task ${i}`, capabilities: ['SECURE'] });
      assert.equal(t.status, 202);
      tasks.push(t.body['taskId'] as string);
    }
    const prompt = 'effect:planner-ai slow:architect-ai:2000';
    const wf = await a1.post('/api/workflows/invoke', { capability: 'BUILD', workflow: 'build', input: { prompt } });
    await a1.until(`/api/workflows/${wf.body['workflowId']}/status`, (b) => b['currentAgent'] === 'architect-ai');
    s1.child.kill('SIGKILL');
    await s1.exited;

    const s2 = await startFleetServer({ dataDir, effectsFile: effects });
    const a2 = api(s2.url);
    for (const t of tasks) assert.equal((await a2.get(`/v1/agents/tasks/${t}`)).status, 200, 'every acknowledged task is there');
    const done = await a2.until(`/api/workflows/${wf.body['workflowId']}/status`);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const lines = readFileSync(effects, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `the side effect ran once: ${lines.join(', ')}`);
    await stop(s2);
  });
});
