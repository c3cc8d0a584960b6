import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, ROOT, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

const ASKER = path.join(ROOT, 'test/fixtures/skills/approval-asker.cjs');

/**
 * govern-ai approval over HTTP (issue 14 item 2b): a real server where coder-ai (LEARNING) waits on a
 * high-risk approval. govern-ai lists it; a decision through govern-ai is the act of the key that
 * started the govern-ai execution: an operator key is refused, the key that started coder-ai's
 * execution is refused by the same separation-of-duties rule as REST, another approver key approves
 * (recorded as `key:<id> via govern-ai (<execution id>)`) and coder-ai's execution goes on.
 */
describe('govern-ai approval over HTTP', function () {
  this.timeout(90_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];
  const keys: Record<string, { id: string; key: string }> = {};

  before(async () => {
    ensureBuilt();
    const dataDir = tempDir('cadre-gov-appr-data-');
    const workspace = tempDir('cadre-gov-appr-ws-');
    dirs.push(dataDir, workspace);
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\nagents:\n  coder-ai:\n    acmf_mode: LEARNING\n');
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace, '--skill-module', ASKER]);
    for (const [name, role] of [['starter', 'approver'], ['other', 'approver'], ['op', 'operator']] as const) {
      const r = await api(server.url).post('/v1/admin/keys', { label: name, role });
      assert.equal(r.status, 201, r.text);
      keys[name] = { id: r.body['id'] as string, key: r.body['key'] as string };
    }
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function govern(who: string, input: Json): Promise<Json> {
    const c = api(server.url, keys[who]!.key);
    const r = await c.post('/api/agents/govern-ai/approval', { prompt: 'approvals', input });
    assert.equal(r.status, 202, r.text);
    return c.until(r.body['statusUrl'] as string, undefined, 30_000);
  }

  let coder: string;
  let coderStatus: string;
  let approvalId: string;
  it('lists the pending approval with agent, action, risk, reasons and age', async () => {
    const r = await api(server.url, keys['starter']!.key).post('/api/agents/coder-ai/refactor', { prompt: 'drop the legacy login' });
    assert.equal(r.status, 202, r.text);
    coder = r.body['executionId'] as string;
    coderStatus = r.body['statusUrl'] as string;
    const c = api(server.url);
    await c.until(`/v1/approvals?execution_id=${coder}`, (b) => ((b['approvals'] as unknown[]) ?? []).length > 0, 30_000);
    const done = await govern('op', {});
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { pending: Array<{ id: string; executionId: string; agentId: string; action: { kind: string }; risk: string; reasons: string[]; age: string }>; decision: unknown };
    const mine = out.pending.find((p) => p.executionId === coder)!;
    assert.ok(mine, JSON.stringify(out));
    approvalId = mine.id;
    assert.deepEqual([mine.agentId, mine.action.kind, mine.risk], ['coder-ai', 'delete_file', 'high']);
    assert.ok(mine.reasons.some((x) => /destructive/.test(x)), mine.reasons.join('; '));
    assert.match(mine.age, /\d+s/);
    assert.equal(out.decision, null);
  });

  it('an operator key cannot decide through govern-ai (the approver role is needed)', async () => {
    const done = await govern('op', { decide: { approvalId, decision: 'approve' } });
    assert.equal(done['status'], 'failed');
    assert.match(JSON.stringify(done['error']), /operator role: deciding an approval needs the approver role/);
  });

  it('the key that started the execution is refused by the same separation-of-duties rule as REST', async () => {
    const done = await govern('starter', { decide: { approvalId, decision: 'approve' } });
    assert.equal(done['status'], 'failed');
    assert.match(JSON.stringify(done['error']), /another key with the approver role must decide it/);
    const rest = await api(server.url, keys['starter']!.key).post(`/v1/approvals/${approvalId}/decision`, { approved: true });
    assert.equal(rest.status, 403, rest.text);
    assert.equal(rest.body['reason'], 'self_approval');
    const still = await api(server.url).get(`/v1/approvals?status=all&execution_id=${coder}`);
    assert.equal((still.body['approvals'] as Array<{ status: string }>)[0]!.status, 'pending');
  });

  it('another approver key approves through govern-ai: recorded as that key via govern-ai, audited, and coder-ai goes on', async () => {
    const done = await govern('other', { decide: { approvalId, decision: 'approve', reason: 'legacy module is unused' } });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const govId = String(done['executionId']);
    const by = `key:${keys['other']!.id} via govern-ai (${govId})`;
    const out = done['output'] as { decision: { status: string; by: string; reason: string; replayed: boolean }; pending: Array<{ id: string }> };
    assert.deepEqual([out.decision.status, out.decision.by, out.decision.reason, out.decision.replayed], ['approved', by, 'legacy module is unused', false]);
    assert.equal(out.pending.some((p) => p.id === approvalId), false);
    const coderDone = await api(server.url, keys['starter']!.key).until(coderStatus, undefined, 30_000);
    assert.equal(coderDone['status'], 'completed', JSON.stringify(coderDone).slice(0, 800));
    const trail = await govern('other', {});
    assert.equal(trail['status'], 'completed');
    const audit = await api(server.url, keys['other']!.key).post('/api/agents/govern-ai/audit-trail', { input: { kind: 'approval.decided' } });
    const a = await api(server.url, keys['other']!.key).until(audit.body['statusUrl'] as string, undefined, 30_000);
    const records = (a['output'] as { records: Array<{ actor: string; data: Json }> }).records;
    assert.deepEqual(records.map((r) => [r.actor, r.data['approvalId']]), [[by, approvalId]]);
  });

  it('an unknown approval id is not found: the step needs input', async () => {
    const done = await govern('other', { decide: { approvalId: 'appr_nope', decision: 'deny' } });
    assert.equal(done['status'], 'failed');
    assert.equal(done['outcome'], 'needs_input', JSON.stringify(done).slice(0, 400));
    assert.match(JSON.stringify(done['error']), /approval appr_nope not found/);
  });
});
