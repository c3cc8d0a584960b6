/**
 * Outbound webhooks against the real server (dist/) and a real local receiver: registration checks,
 * a security scan of a planted secret delivered as security.vulnerability_detected and verified with
 * both signatures, 500 then 200, 410, and a SIGKILL with deliveries queued.
 */
import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { waitFor } from '../../support/wait';
import { fixtureProject } from '../../support/fixture-project';
import { startReceiver, type Receiver } from './receiver';

const SECRET = 'it-secret-0123456789abcdef';

/** The data directory's own config (a repository's .cadre.yaml may not allow loopback). */
function dataDirWithConfig(extra: string[] = []): string {
  const dir = tempDir('cadre-wh-');
  writeFileSync(path.join(dir, 'config.yaml'), [
    'defaults:', '  intelligence: ultra', '  acmf_mode: AUTONOMOUS',
    'webhooks:', '  allow_loopback: true', '  allow_http: true', '  retry_base_delay_ms: 200', ...extra, '',
  ].join('\n'));
  return dir;
}

async function start(dataDir: string): Promise<ServerProcess & { url: string }> {
  return startStandalone(dataDir, { CADRE_API_KEY: KEY });
}

/** Polls an async probe every 50 ms until it answers something. */
async function poll<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function verifyBoth(r: { headers: Record<string, unknown>; body: Buffer }): Json {
  const expected = `sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`;
  assert.equal(r.headers['x-cadre-signature'], expected);
  const wh = new Webhook(SECRET, { format: 'raw' });
  return wh.verify(r.body, { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) }) as Json;
}

describe('outbound webhooks (real server, real receiver)', function () {
  this.timeout(120_000);
  let server: (ServerProcess & { url: string }) | null = null;
  let receiver: Receiver;
  let dataDir: string;

  before(async () => {
    ensureBuilt();
    receiver = await startReceiver();
    dataDir = dataDirWithConfig();
    server = await start(dataDir);
  });
  after(async () => {
    if (server) await stop(server);
    await receiver.close();
  });

  it('refuses unknown event names and SSRF destinations with 422 naming the field', async () => {
    const c = api(server!.url);
    const bad = await c.post('/v1/webhooks', { url: `${receiver.url}/x`, events: ['code.reviewed', 'code.exploded'], secret: SECRET });
    assert.equal(bad.status, 422, bad.text);
    assert.match(String(bad.headers['content-type']), /application\/problem\+json/);
    assert.deepEqual((bad.body['errors'] as Json[]).map((e) => e['field']), ['body.events[1]']);
    assert.ok((bad.body['valid_events'] as string[]).includes('security.vulnerability_detected'));
    for (const url of ['http://10.1.2.3/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::ffff:a9fe:a9fe]/', 'http://0xa9fea9fe/']) {
      const r = await c.post('/v1/webhooks', { url, events: ['code.reviewed'], secret: SECRET });
      assert.equal(r.status, 422, `${url}: ${r.text}`);
      assert.equal((r.body['errors'] as Json[])[0]!['field'], 'body.url');
    }
    // The same guard refuses a task's callbackUrl at submission.
    const task = await c.post('/v1/agents/tasks', { task: 'check the secrets', capabilities: ['SECURE'], callbackUrl: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(task.status, 400, task.text);
    assert.ok((task.body['errors'] as Json[]).some((e) => e['field'] === 'body.callbackUrl' && /metadata/.test(String(e['message']))));
  });

  it('delivers security.vulnerability_detected for a planted secret, signed (X-Cadre-Signature and Standard Webhooks)', async () => {
    const c = api(server!.url);
    const created = await c.post('/v1/webhooks', { url: `${receiver.url}/sec`, events: ['security.vulnerability_detected', 'code.reviewed'], secret: SECRET, description: 'it' });
    assert.equal(created.status, 201, created.text);
    assert.match(String(created.body['id']), /^wh_/);
    assert.equal('secret' in created.body, false);
    assert.equal(created.body['status'], 'active');
    const listed = await c.get('/v1/webhooks?page=1&limit=10');
    assert.ok((listed.body['webhooks'] as Json[]).some((w) => w['id'] === created.body['id']));
    assert.equal(JSON.stringify(listed.body).includes(SECRET), false);

    const ws = tempDir('cadre-wh-ws-');
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
    const run = await c.post('/api/agents/security-ai/scan', { source: ws });
    assert.ok([200, 202].includes(run.status), run.text);
    const got = await waitFor(() => receiver.received.find((r) => r.path === '/sec' && r.headers['x-cadre-event'] === 'security.vulnerability_detected'), 60_000);
    const body = verifyBoth(got);
    assert.equal(body['event'], 'security.vulnerability_detected');
    const finding = (body['data'] as Json)['finding'] as Json;
    assert.equal(finding['file'], 'src/config.ts');
    assert.ok(['high', 'critical'].includes(String(finding['severity'])));
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['user-agent']), /^Cadre-Webhooks\//);
    // The delivery log says delivered, once, with the receiver's answer.
    const d = await poll(async () => {
      const l = await c.get(`/v1/webhooks/${created.body['id']}/deliveries`);
      return (l.body['deliveries'] as Json[]).find((x) => x['event_id'] === got.headers['webhook-id'] && x['status'] === 'delivered');
    }, 10_000);
    assert.equal(d['event'], 'security.vulnerability_detected');
    assert.equal(d['attempts'], 1);
    assert.equal((d['attempt_log'] as Json[])[0]!['status_code'], 200);
  });

  it('delivers code.reviewed when a review task runs review-ai', async () => {
    const c = api(server!.url);
    const hook = await c.post('/v1/webhooks', { url: `${receiver.url}/rev`, events: ['code.reviewed'], secret: SECRET });
    assert.equal(hook.status, 201, hook.text);
    const ws = fixtureProject({ files: { 'src/index.ts': 'export function add(a: number, b: number): number {\n  return a + b;\n}\n' } });
    const task = await c.post('/v1/agents/tasks', { task: 'review: src/index.ts for bugs', capabilities: ['BUILD'], source: ws });
    assert.equal(task.status, 202, task.text);
    const got = await waitFor(() => receiver.received.find((r) => r.path === '/rev' && r.headers['x-cadre-event'] === 'code.reviewed'), 60_000);
    const body = verifyBoth(got);
    const data = body['data'] as Json;
    assert.equal(data['agent_id'], 'review-ai');
    assert.equal(data['execution_id'], task.body['taskId']);
    assert.equal(typeof data['passed'], 'boolean');
    assert.equal(typeof data['findings'], 'number');
  });

  it('500 then 200: retried with the same id and bytes, delivered, with the attempt log', async () => {
    const c = api(server!.url);
    receiver.answer = (p, n) => (p === '/flaky' && n === 0 ? { status: 500, body: 'try later' } : p === '/gone' ? { status: 410 } : { status: 200 });
    const hook = await c.post('/v1/webhooks', { url: `${receiver.url}/flaky`, events: ['code.reviewed'], secret: SECRET });
    const t = await c.post(`/v1/webhooks/${hook.body['id']}/test`);
    assert.equal(t.status, 202, t.text);
    const delivery = (t.body['delivery'] as Json);
    const done = await poll(async () => {
      const l = await c.get(`/v1/webhooks/${hook.body['id']}/deliveries`);
      const d = (l.body['deliveries'] as Json[]).find((x) => x['id'] === delivery['id']);
      return d && d['status'] === 'delivered' ? d : undefined;
    }, 30_000);
    const attempts = done['attempt_log'] as Json[];
    assert.deepEqual(attempts.map((a) => a['status_code']), [500, 200]);
    assert.equal(attempts[0]!['response_excerpt'], 'try later');
    assert.equal(typeof attempts[0]!['latency_ms'], 'number');
    const hits = receiver.received.filter((r) => r.path === '/flaky');
    assert.equal(hits.length, 2);
    assert.equal(hits[0]!.headers['webhook-id'], hits[1]!.headers['webhook-id']);
    assert.deepEqual(hits[0]!.body, hits[1]!.body);
    verifyBoth(hits[1]!);
  });

  it('410: failed at once, never retried', async () => {
    const c = api(server!.url);
    const hook = await c.post('/v1/webhooks', { url: `${receiver.url}/gone`, events: ['code.reviewed'], secret: SECRET });
    const t = await c.post(`/v1/webhooks/${hook.body['id']}/test`);
    const failed = await poll(async () => {
      const l = await c.get(`/v1/webhooks/${hook.body['id']}/deliveries`);
      const d = (l.body['deliveries'] as Json[]).find((x) => x['id'] === (t.body['delivery'] as Json)['id']);
      return d && d['status'] === 'failed' ? d : undefined;
    }, 20_000);
    assert.equal(failed['attempts'], 1);
    assert.equal(failed['next_attempt_at'], undefined);
    await new Promise((r) => setTimeout(r, 1_000)); // several base delays: nothing more arrives
    assert.equal(receiver.received.filter((r) => r.path === '/gone').length, 1);
  });

  it('SIGKILL with deliveries queued (receiver down): after a restart every one is delivered, ids stable', async () => {
    const down = await startReceiver();
    const port = down.port;
    await down.close(); // the port is now refused
    const c = api(server!.url);
    const hook = await c.post('/v1/webhooks', { url: `http://127.0.0.1:${port}/late`, events: ['code.reviewed'], secret: SECRET });
    assert.equal(hook.status, 201, hook.text);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await c.post(`/v1/webhooks/${hook.body['id']}/test`);
      assert.equal(t.status, 202);
      ids.push(String((t.body['delivery'] as Json)['event_id']));
    }
    server!.child.kill('SIGKILL');
    await server!.exited;
    const back = await startReceiver(port);
    try {
      server = await start(dataDir);
      const got = await waitFor(() => {
        const seen = new Set(back.received.filter((r) => r.path === '/late').map((r) => String(r.headers['webhook-id'])));
        return ids.every((id) => seen.has(id)) ? seen : undefined;
      }, 60_000);
      assert.equal(got.size, ids.length);
      for (const r of back.received) verifyBoth(r);
    } finally {
      await back.close();
    }
  });

  it('a subscription failing past disable_after_days is disabled and reported (status, disabled_reason, log line; its queue dead; 409 until enabled again)', async () => {
    // 0.00003 days is 2.6 s: the failing run starts at the first refused attempt.
    const dir = dataDirWithConfig(['  disable_after_days: 0.00003']);
    const other = await start(dir);
    try {
      const down = await startReceiver();
      await down.close();
      const c = api(other.url);
      const hook = await c.post('/v1/webhooks', { url: `http://127.0.0.1:${down.port}/never`, events: ['code.reviewed'], secret: SECRET });
      assert.equal(hook.status, 201, hook.text);
      const id = String(hook.body['id']);
      await c.post(`/v1/webhooks/${id}/test`);
      const disabled = await poll(async () => {
        const r = await c.get(`/v1/webhooks/${id}`);
        return r.body['status'] === 'disabled' ? r.body : undefined;
      }, 30_000);
      assert.equal(disabled['enabled'], false);
      assert.match(String(disabled['disabled_reason']), /without a success/);
      // The status is visible as soon as it changes in memory; the log line and the queue's rows follow.
      await poll(async () => {
        const log = await c.get(`/v1/webhooks/${id}/deliveries`);
        return (log.body['deliveries'] as Json[]).every((d) => d['status'] === 'dead') ? true : undefined;
      }, 10_000);
      await waitFor(() => (other.stdout.concat(other.stderr).some((l) => l.includes(`webhook ${id}`) && l.includes('disabled')) ? true : undefined), 10_000);
      const retest = await c.post(`/v1/webhooks/${id}/test`);
      assert.equal(retest.status, 409);
      const enabled = await c.call('PATCH', `/v1/webhooks/${id}`, { enabled: true });
      assert.equal(enabled.body['status'], 'active');
    } finally {
      await stop(other);
    }
  });

  it("refuses loopback without the development setting; a repository's .cadre.yaml cannot turn it on", async () => {
    const dir = tempDir('cadre-wh-repo-');
    const ws = tempDir('cadre-wh-repo-ws-');
    writeFileSync(path.join(ws, '.cadre.yaml'), 'webhooks:\n  allow_loopback: true\n  allow_http: true\n');
    const other = await startStandalone(dir, { CADRE_API_KEY: KEY }, ['--workspace', ws]);
    try {
      const c = api(other.url);
      for (const url of [`${receiver.url}/x`, 'https://localhost:8443/x', 'https://[::1]/x', 'https://2130706433/x']) {
        const r = await c.post('/v1/webhooks', { url, events: ['code.reviewed'], secret: SECRET });
        assert.equal(r.status, 422, `${url}: ${r.text}`);
        assert.equal((r.body['errors'] as Json[])[0]!['field'], 'body.url');
      }
      assert.ok(other.stdout.concat(other.stderr).some((l) => l.includes('webhooks.allow_* in') && l.includes('ignored')));
    } finally {
      await stop(other);
    }
  });
});
