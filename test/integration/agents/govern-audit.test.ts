import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/**
 * govern-ai audit-trail over HTTP (issue 14 item 2a): a real server (dist/, agent workers, the
 * embedded skills, ULTRA tier) queries its own hash-chained trail through the engine; after one line
 * of the JSONL file is edited while the server is stopped, the action run on the restarted server
 * completes and names the tampered record's seq, and the records from it on are unverified.
 */
describe('govern-ai audit-trail over HTTP', function () {
  this.timeout(90_000);
  let server: (ServerProcess & { url: string }) | undefined;
  const dirs: string[] = [];
  let dataDir: string;
  let workspace: string;

  const start = async () => (server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]));
  async function direct(agent: string, action: string, input: Json): Promise<Json> {
    const c = api(server!.url);
    const r = await c.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, input });
    assert.equal(r.status, 202, r.text);
    return c.until(r.body['statusUrl'] as string, undefined, 30_000);
  }

  before(async () => {
    ensureBuilt();
    dataDir = tempDir('cadre-gov-audit-data-');
    workspace = tempDir('cadre-gov-audit-ws-');
    dirs.push(dataDir, workspace);
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
    await start();
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  let first: Json;
  it('an intact trail: the records of one execution, counts by kind and agent, the chain verified', async () => {
    first = await direct('success-ai', 'health', {});
    assert.equal(first['status'], 'completed', JSON.stringify(first['error']));
    const done = await direct('govern-ai', 'audit-trail', { executionId: first['executionId'] ?? first['id'] });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { records: Array<{ executionId: string; verified: boolean }>; byAgent: Array<{ key: string }>; verification: { status: string; checked: number } };
    assert.ok(out.records.length >= 5, JSON.stringify(out).slice(0, 500));
    assert.ok(out.records.every((r) => r.executionId === (first['executionId'] ?? first['id']) && r.verified));
    assert.deepEqual(out.byAgent.map((r) => r.key), ['success-ai']);
    assert.equal(out.verification.status, 'intact');
    assert.ok(out.verification.checked > out.records.length);
  });

  it('a limit over 1000 in the GET form answers 422 naming the field', async () => {
    const r = await api(server!.url).get('/api/agents/govern-ai/audit-trail?limit=5000');
    assert.equal(r.status, 422, r.text);
    assert.match(String(r.body['detail']), /limit must be a whole number from 1 to 1000/);
  });

  it('one line edited on disk while stopped: after the restart the action completes and names the tampered seq', async () => {
    await stop(server!);
    server = undefined;
    const auditDir = path.join(dataDir, 'audit');
    const [file] = readdirSync(auditDir).filter((f) => f.endsWith('.jsonl')).sort();
    const lines = readFileSync(path.join(auditDir, file!), 'utf8').split('\n');
    const id = String(first['executionId'] ?? first['id']);
    const at = lines.findIndex((l) => l.includes(id) && l.includes('"phase.completed"'));
    assert.ok(at >= 0 && at < lines.length - 2, 'a record in the middle of the file');
    const rec = JSON.parse(lines[at]!) as { seq: number; data: Record<string, unknown> };
    rec.data['duration_ms'] = Number(rec.data['duration_ms']) + 1234;
    lines[at] = JSON.stringify(rec);
    writeFileSync(path.join(auditDir, file!), lines.join('\n'));
    await start();
    const done = await direct('govern-ai', 'audit-trail', { executionId: id });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { records: Array<{ seq: number; verified: boolean }>; verification: { status: string; firstBroken: { seq: number; problem: string; file: string; line: number; ofThisTenant: boolean } } };
    assert.equal(out.verification.status, 'broken');
    assert.deepEqual([out.verification.firstBroken.seq, out.verification.firstBroken.problem, out.verification.firstBroken.file, out.verification.firstBroken.line],
      [rec.seq, 'tampered', file, at + 1]);
    assert.equal(out.verification.firstBroken.ofThisTenant, true);
    assert.ok(out.records.filter((r) => r.seq >= rec.seq).every((r) => !r.verified));
    assert.ok(out.records.filter((r) => r.seq < rec.seq).every((r) => r.verified));
  });
});
