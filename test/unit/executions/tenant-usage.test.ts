import { strict as assert } from 'node:assert';
import { observedRepository, TenantUsageIndex } from '../../../server/src/engine/executions/tenant-usage';
import { summarizeExecution, TERMINAL_STATUSES, type ExecutionRecord } from '../../../server/src/engine/executions/records';
import { IDEMPOTENCY_TTL_MS } from '../../../server/src/http/idempotency';
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

  it('finds what an idempotency claim created in the last 24 hours, as a walk would, without walking', async () => {
    let now = Date.parse('2026-11-24T00:00:00Z');
    const raw = new MemoryRepository<ExecutionRecord>();
    const claimed = (id: string, claim: string, at: number) => ({ ...rec(id, 'tnt_a', at, 'completed'), idempotencyId: claim }) as ExecutionRecord;
    await raw.put(claimed('e_old', 'k_old', now - 30 * HOUR));
    await raw.put(claimed('e_kept', 'k_kept', now - 2 * HOUR));
    const index = new TenantUsageIndex(() => now, raw.list().map(summarizeExecution));
    const repo = observedRepository(raw, index);
    // The walk the index replaces, within the door's claim lifetime.
    const walk = (claim: string) => raw.list().find((r) => r.idempotencyId === claim && Date.parse(r.createdAt) >= now - IDEMPOTENCY_TTL_MS)?.id;
    assert.equal(index.byClaim('k_kept'), 'e_kept', 'built from the summaries');
    assert.equal(index.byClaim('k_old'), undefined, 'older than a claim lives');
    await repo.put(claimed('e_new', 'k_new', now));
    await repo.put({ ...rec('e_plain', 'tnt_b', now, 'queued') });
    for (const k of ['k_kept', 'k_new', 'k_none']) assert.equal(index.byClaim(k), walk(k), k);
    await repo.delete('e_new');
    assert.equal(index.byClaim('k_new'), undefined, 'deleted');
    now += 23 * HOUR;
    assert.equal(index.byClaim('k_kept'), undefined, 'left the window (25 hours old)');
    assert.equal(walk('k_kept'), undefined);
    // The door keeps a claim a day: the index must cover at least that long.
    assert.ok(IDEMPOTENCY_TTL_MS <= 24 * HOUR, 'the claim TTL fits the index window');
  });
});
