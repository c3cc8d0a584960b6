import { strict as assert } from 'node:assert';
import { observedRepository, TenantUsageIndex } from '../../../server/src/engine/executions/tenant-usage';
import { summarizeExecution, TERMINAL_STATUSES, type ExecutionRecord } from '../../../server/src/engine/executions/records';
import { MemoryRepository } from '../../support/fakes';
import { rng } from '../../support/prng';

const HOUR = 3600_000;

/** The usage a walk over every record gives (what the index must always agree with). */
function walked(repo: MemoryRepository<ExecutionRecord>, tenant: string, now: number) {
  const all = repo.list().filter((r) => (r.tenantId ?? 'tnt_default') === tenant);
  return { executionsLast24h: all.filter((r) => Date.parse(r.createdAt) >= now - 24 * HOUR).length, activeExecutions: all.filter((r) => !TERMINAL_STATUSES.has(r.status)).length };
}

function rec(id: string, tenantId: string | undefined, at: number, status: ExecutionRecord['status']): ExecutionRecord {
  return { id, status, createdAt: new Date(at).toISOString(), ...(tenantId ? { tenantId } : {}) } as unknown as ExecutionRecord;
}

describe('tenant usage counters (quotas without walking the history)', () => {
  it('agrees with a walk over every record through creations, status changes, deletions and time passing', async () => {
    let now = Date.parse('2026-11-24T00:00:00Z');
    const raw = new MemoryRepository<ExecutionRecord>();
    // History from before the index: an old ended one, a recent ended one, one still running, one of the default tenant (no tenantId).
    await raw.put(rec('e_old', 'tnt_a', now - 30 * HOUR, 'completed'));
    await raw.put(rec('e_recent', 'tnt_a', now - 2 * HOUR, 'failed'));
    await raw.put(rec('e_run', 'tnt_a', now - 1 * HOUR, 'in_progress'));
    await raw.put(rec('e_def', undefined, now - 1 * HOUR, 'queued'));
    const index = new TenantUsageIndex(() => now, raw.list().map(summarizeExecution));
    const repo = observedRepository(raw, index);
    const check = (what: string) => {
      for (const t of ['tnt_a', 'tnt_b', 'tnt_default']) assert.deepEqual(index.usage(t), walked(raw, t, now), `${what}: ${t}`);
    };
    check('built from the summaries');
    // A seeded sequence of what the execution service does.
    const next = rng(7);
    const rand = (n: number) => Math.floor(next() * n);
    const statuses: Array<ExecutionRecord['status']> = ['queued', 'in_progress', 'completed', 'failed', 'cancelled'];
    for (let i = 0; i < 400; i++) {
      const ids = raw.list().map((r) => r.id);
      const op = rand(10);
      if (op < 4) await repo.put(rec(`e${i}`, ['tnt_a', 'tnt_b', undefined][rand(3)], now, statuses[rand(2)]!));
      else if (op < 8 && ids.length > 0) await repo.update(ids[rand(ids.length)]!, { status: statuses[rand(statuses.length)]! });
      else if (op < 9 && ids.length > 0) await repo.delete(ids[rand(ids.length)]!);
      else now += rand(3) * HOUR;
      check(`after operation ${i}`);
    }
  });

  it('a rewrite of the same record counts it once', async () => {
    const now = Date.now();
    const raw = new MemoryRepository<ExecutionRecord>();
    const index = new TenantUsageIndex(() => now, []);
    const repo = observedRepository(raw, index);
    await repo.put(rec('e1', 'tnt_a', now, 'queued'));
    await repo.put(rec('e1', 'tnt_a', now, 'in_progress'));
    assert.deepEqual(index.usage('tnt_a'), { executionsLast24h: 1, activeExecutions: 1 });
  });
});
