/**
 * /webhooks/pagerduty and /webhooks/jira against the real built server: signed deliveries with the
 * secrets the config reads from environment variables, 401 on a bad signature, a replay processed
 * once, one incident.resolution.completed per resolved incident (read from the audit trail), Jira's
 * prefixed and bare event names, a mapped issue starting a task, 404 for an unknown provider.
 */
import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { request } from 'undici';
import { jiraIssue, jiraSprint, pdEvent } from '../../fixtures/projects/payloads';
import { api, KEY } from '../../support/fleet-server';
import { startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const PD_SECRET = 'pd-secret-0f9a7c1e';
const JIRA_SECRET = 'jira-secret-77b2';

const CONFIG = `defaults:
  intelligence: ultra
  acmf_mode: AUTONOMOUS
integrations:
  incident_management:
    enabled: true
    routing_key: \${PD_ROUTING_KEY}
    webhooks:
      enabled: true
      endpoint: https://cadre.example.com/webhooks/pagerduty
      secret: \${PD_WEBHOOK_SECRET}
  tracker:
    enabled: true
    base_url: https://acme.atlassian.net
    auth:
      account: bot@acme.example
      api_token: \${JIRA_API_TOKEN}
    projects:
      mapping:
        OPS: OPERATE incident
    webhooks:
      secret: \${JIRA_WEBHOOK_SECRET}
`;

interface AuditLine { kind: string; executionId?: string; data: Record<string, unknown> }

function auditRecords(dataDir: string): AuditLine[] {
  const dir = path.join(dataDir, 'audit');
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditLine));
}

async function until<T>(what: string, f: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('inbound webhooks (real server)', function () {
  this.timeout(90_000);
  let srv: ServerProcess & { url: string };
  let dataDir: string;

  const send = async (provider: string, body: unknown, headers: Record<string, string>) => {
    const res = await request(`${srv.url}/webhooks/${provider}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) as Record<string, unknown> : null, text };
  };
  const pd = (body: unknown, id: string, secret = PD_SECRET) => {
    const raw = JSON.stringify(body);
    return send('pagerduty', raw, { 'x-pagerduty-signature': `v1=${createHmac('sha256', secret).update(raw).digest('hex')}`, 'x-webhook-id': id });
  };
  const jira = (body: unknown, id: string, secret = JIRA_SECRET) => {
    const raw = JSON.stringify(body);
    return send('jira', raw, { 'x-hub-signature': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`, 'x-atlassian-webhook-identifier': id });
  };

  before(async () => {
    dataDir = tempDir();
    const workspace = tempDir('cadre-ws-');
    writeFileSync(path.join(workspace, '.cadre.yaml'), CONFIG);
    srv = await startStandalone(dataDir, {
      CADRE_API_KEY: KEY, PD_ROUTING_KEY: 'R0UT1NGKEY', PD_WEBHOOK_SECRET: PD_SECRET, JIRA_API_TOKEN: 'jira-token', JIRA_WEBHOOK_SECRET: JIRA_SECRET,
    }, ['--workspace', workspace]);
  });
  after(async () => { if (srv) await stop(srv); });

  it('a signed PagerDuty delivery is accepted; a bad signature is 401; no API key is needed', async () => {
    const ok = await pd(pdEvent('incident.triggered', 'PAAA'), 'wh-1');
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual([ok.body!['delivery_id'], ok.body!['duplicate'], ok.body!['processed']], ['wh-1', false, 'later']);
    const bad = await pd(pdEvent('incident.triggered', 'PAAA'), 'wh-2', 'another-secret');
    assert.equal(bad.status, 401, bad.text);
    // During a rotation PagerDuty sends one signature per secret.
    const raw = JSON.stringify(pdEvent('incident.acknowledged', 'PAAA'));
    const both = await send('pagerduty', raw, { 'x-webhook-id': 'wh-3', 'x-pagerduty-signature': `v1=${createHmac('sha256', 'old').update(raw).digest('hex')},v1=${createHmac('sha256', PD_SECRET).update(raw).digest('hex')}` });
    assert.equal(both.status, 200, both.text);
    await until('the triggered and acknowledged records', () => (auditRecords(dataDir).filter((r) => (r.data['incidentId'] === 'pagerduty:PAAA')).length >= 2 ? true : undefined));
  });

  it('a replayed delivery is processed once; a resolved incident publishes incident.resolution.completed once', async () => {
    const first = await pd(pdEvent('incident.resolved', 'PBBB'), 'wh-r1');
    const replay = await pd(pdEvent('incident.resolved', 'PBBB'), 'wh-r1');
    assert.equal(first.status, 200);
    assert.equal(replay.status, 200);
    assert.equal(replay.body!['duplicate'], true);
    // Resolved again by another delivery: the chain does not start twice.
    assert.equal((await pd(pdEvent('incident.resolved', 'PBBB'), 'wh-r2')).status, 200);
    await until('both deliveries applied', () => (auditRecords(dataDir).filter((r) => r.kind === 'incident.resolved' && r.data['incidentId'] === 'pagerduty:PBBB').length === 2 ? true : undefined));
    const resolutions = auditRecords(dataDir).filter((r) => r.kind === 'incident.resolution.completed' && r.data['incidentId'] === 'pagerduty:PBBB');
    assert.equal(resolutions.length, 1);
    assert.equal(resolutions[0]!.data['title'], 'The server is on fire.');
    const applied = auditRecords(dataDir).filter((r) => r.data['deliveryId'] === 'wh-r1');
    assert.equal(applied.length, 1, 'the replay was not applied');
  });

  it('Jira: a mapped issue starts a task; the bare sprint names Jira sends are accepted like the prefixed ones', async () => {
    const created = await jira(jiraIssue('jira:issue_created', 'OPS-7'), 'j-1');
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body!['event'], 'jira:issue_created');
    const rec = await until('the issue record', () => auditRecords(dataDir).find((r) => r.kind === 'tracker.issue_created' && r.data['key'] === 'OPS-7'));
    assert.match(rec.data['taskId'] as string, /^task_/);
    const task = await api(srv.url).get(`/v1/agents/tasks/${rec.data['taskId']}`);
    assert.equal(task.status, 200, task.text);
    assert.equal((await jira(jiraSprint('sprint_started', 3), 'j-2')).status, 200);
    assert.equal((await jira(jiraSprint('jira:sprint_closed', 3, 'closed'), 'j-3')).status, 200);
    await until('both sprint events', () => (auditRecords(dataDir).filter((r) => r.kind.startsWith('tracker.sprint_') && r.data['sprintId'] === '3').length === 2 ? true : undefined));
    assert.equal((await jira(jiraIssue('jira:issue_created', 'OPS-8'), 'j-4', 'wrong')).status, 401);
  });

  it('an unknown provider is a 404 problem', async () => {
    const r = await send('opsgenie', '{}', {});
    assert.equal(r.status, 404);
    assert.match(r.text, /no webhook receiver/);
  });
});
