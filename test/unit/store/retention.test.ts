import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail, verifyAuditDir } from '../../../server/src/audit/jsonl-audit-trail';
import type { Clock } from '../../../server/src/engine/ports';
import { openStore, storeFilePath, type Store } from '../../../server/src/store';
import { applyRetention, readArchivedExecution } from '../../../server/src/store/retention';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2026, 0, 1);

function execution(id: string, status: string, at: number): { id: string } & Record<string, unknown> {
  const iso = new Date(at).toISOString();
  return {
    id, kind: 'task', status, agents: [], steps: [], request: { prompt: 'p', capabilities: [], input: {} },
    createdAt: iso, startedAt: iso, completedAt: status === 'in_progress' ? null : iso, updatedAt: iso, resumes: 0,
  };
}

describe('store: retention (injected clock)', () => {
  let dir: string;
  let store: Store;
  const clock = { t: T0, now() { return this.t; } } satisfies Clock & { t: number };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-retention-'));
    store = await openStore({ file: storeFilePath(dir) });
    clock.t = T0;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('archives terminal executions older than the retention with their event logs; running ones stay', async () => {
    const ex = store.collection<{ id: string }>('executions');
    await ex.put(execution('task_00000000000000a1', 'completed', T0));
    await ex.put(execution('task_00000000000000a2', 'failed', T0 + 50 * DAY));
    await ex.put(execution('task_00000000000000a3', 'in_progress', T0));
    await mkdir(path.join(dir, 'events'), { recursive: true });
    await writeFile(path.join(dir, 'events', 'task_00000000000000a1.jsonl'), '{"seq":1,"type":"x"}\n{"seq":2,"type":"y"}\n');

    clock.t = T0 + 89 * DAY;
    let r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90 });
    assert.equal(r.archivedExecutions, 0, 'nothing is older than 90 days yet');

    clock.t = T0 + 91 * DAY;
    r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90 });
    assert.equal(r.archivedExecutions, 1);
    assert.equal(r.archivedEventLogs, 1);
    assert.equal(ex.get('task_00000000000000a1'), undefined, 'left the store (and memory)');
    assert.ok(ex.get('task_00000000000000a2'));
    assert.ok(ex.get('task_00000000000000a3'), 'an execution in flight is never archived');
    assert.equal(existsSync(path.join(dir, 'events', 'task_00000000000000a1.jsonl')), false);
    const archived = await readArchivedExecution(dir, 'task_00000000000000a1');
    assert.equal((archived?.record as unknown as { status: string }).status, 'completed');
    assert.equal(archived?.events.length, 2);

    await store.close();
    store = await openStore({ file: storeFilePath(dir) });
    assert.equal(store.collection('executions').count(), 2, 'the deletion is durable');
  });

  it('removes the probe tenants of ended isolation checks once none of their executions is live; other tenants stay', async () => {
    const tenants = store.collection<{ id: string; probe?: boolean; deletedAt?: string }>('tenants');
    const at = new Date(T0).toISOString();
    await tenants.put({ id: 'tnt_probe_gone', probe: true, deletedAt: at });
    await tenants.put({ id: 'tnt_probe_busy', probe: true, deletedAt: at });
    await tenants.put({ id: 'tnt_probe_running', probe: true });
    await tenants.put({ id: 'tnt_customer_deleted', deletedAt: at });
    const ex = store.collection<{ id: string } & Record<string, unknown>>('executions');
    await ex.put({ ...execution('task_00000000000000b1', 'completed', T0 + 80 * DAY), tenantId: 'tnt_probe_busy' });
    await ex.put({ ...execution('task_00000000000000b2', 'completed', T0), tenantId: 'tnt_probe_gone' });
    clock.t = T0 + 91 * DAY;
    const r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90 });
    assert.equal(r.archivedExecutions, 1, 'the probe run older than the retention left');
    assert.equal(r.purgedProbeTenants, 1);
    assert.deepEqual(tenants.list().map((t) => t.id).sort(), ['tnt_customer_deleted', 'tnt_probe_busy', 'tnt_probe_running']);
  });

  it('keeps at most N terminal executions, the newest', async () => {
    const ex = store.collection<{ id: string }>('executions');
    for (let i = 0; i < 10; i++) await ex.put(execution(`task_${String(i).padStart(16, '0')}`, 'completed', T0 + i * 1000));
    const r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90, maxExecutions: 4 });
    assert.equal(r.archivedExecutions, 6);
    assert.deepEqual(ex.list().map((e) => e.id).sort(), ['task_0000000000000006', 'task_0000000000000007', 'task_0000000000000008', 'task_0000000000000009']);
  });

  it('archives a large history in chunks bounded by size, not only by count: every record readable from its archive', async () => {
    // 40 executions of ~1 MB each (a scan's findings stored in full): at 1,000 records a chunk held them all.
    const ex = store.collection<{ id: string } & Record<string, unknown>>('executions');
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 40; i++) await ex.put({ ...execution(`task_${String(i).padStart(16, '0')}`, 'completed', T0), output: { findings: big } });
    clock.t = T0 + 91 * DAY;
    const r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90 });
    assert.equal(r.archivedExecutions, 40);
    const files = (await readdir(path.join(dir, 'archive'))).filter((f) => f.startsWith('executions-'));
    assert.ok(files.length >= 4, `${files.length} archive file(s) for 40 MB of records`);
    for (const i of [0, 17, 39]) {
      const archived = await readArchivedExecution(dir, `task_${String(i).padStart(16, '0')}`);
      assert.equal((archived?.record as unknown as { output: { findings: string } }).output.findings.length, big.length);
    }
    assert.equal(ex.count(), 0);
  });

  it('compresses old audit days; the chain still verifies across the archive boundary and keeps growing', async () => {
    const auditDir = path.join(dir, 'audit');
    const trailClock = { t: T0, now() { return this.t; } };
    let trail = await openAuditTrail({ dir: auditDir, clock: trailClock, durable: false });
    for (let d = 0; d < 5; d++) {
      trailClock.t = T0 + d * 30 * DAY;
      for (let i = 0; i < 3; i++) await trail.append({ kind: 'k', actor: 'engine', data: { d, i } });
    }
    await trail.close();
    clock.t = T0 + 130 * DAY; // cut-off at day 40: days 0 and 30 are archived
    const r = await applyRetention({ store, dataDir: dir, clock, maxAgeDays: 90 });
    assert.equal(r.archivedAuditDays, 2);
    const names = (await readdir(auditDir)).sort();
    assert.equal(names.filter((n) => n.endsWith('.jsonl.gz')).length, 2);
    assert.equal(names.filter((n) => n.endsWith('.jsonl')).length, 3);
    const v = await verifyAuditDir(auditDir);
    assert.deepEqual(v, { ok: true, checked: 15 });
    trail = await openAuditTrail({ dir: auditDir, clock: trailClock, durable: false });
    await trail.append({ kind: 'after', actor: 'engine', data: {} });
    assert.deepEqual(await trail.verify(), { ok: true, checked: 16 });
    assert.equal((await trail.query({ kind: 'k' })).length, 15, 'archived records stay readable');
    await trail.close();
  });
});
