import assert from 'node:assert/strict';
import { WarmPool, type WarmChange } from '../../../server/src/engine/availability/warm-pool';
import type { AvailabilityMode } from '../../../server/src/engine/catalog';
import { isEngineError } from '../../../server/src/engine/errors';
import { ManualTime, flushMicrotasks } from '../../support/manual-time';

const MIN = 60_000;
// Monday 2026-03-09, EDT: the window is 11:00Z-23:00Z.
const MON_0900_EDT = Date.parse('2026-03-09T13:00:00Z');
const MON_0600_EDT = Date.parse('2026-03-09T10:00:00Z');
const MON_0700_EDT = Date.parse('2026-03-09T11:00:00Z');
const MON_1900_EDT = Date.parse('2026-03-09T23:00:00Z');
const SAT_1200_EST = Date.parse('2026-03-07T17:00:00Z');

const AGENTS: { id: string; availability: AvailabilityMode }[] = [
  { id: 'observe-ai', availability: 'always_on' },
  { id: 'coder-ai', availability: 'business_hours' },
  { id: 'cost-ai', availability: 'commercial' },
];

/** A warm-up the test finishes by hand, like a worker thread reporting ready. */
class Deferred {
  resolve!: () => void;
  reject!: (err: unknown) => void;
  readonly promise = new Promise<void>((res, rej) => {
    this.resolve = res;
    this.reject = rej;
  });
}

function setup(start: number, opts: { prewarm?: boolean; busy?: Set<string> } = {}) {
  const time = new ManualTime(start);
  const warmUps: { agentId: string; done: Deferred }[] = [];
  const coolDowns: string[] = [];
  const changes: WarmChange[] = [];
  const errors: [string, unknown][] = [];
  const busy = opts.busy ?? new Set<string>();
  const pool = new WarmPool({
    agents: AGENTS,
    clock: time,
    idleTimeoutMs: 15 * MIN,
    prewarm: opts.prewarm ?? true,
    warmUp: (agentId) => {
      const done = new Deferred();
      warmUps.push({ agentId, done });
      return done.promise;
    },
    coolDown: (agentId) => void coolDowns.push(agentId),
    isBusy: (agentId) => busy.has(agentId),
    onChange: (c) => changes.push(c),
    onError: (agentId, err) => errors.push([agentId, err]),
  });
  /** Finishes every pending warm-up successfully. */
  const finishWarmUps = async (): Promise<void> => {
    for (const w of warmUps.splice(0)) w.done.resolve();
    await flushMicrotasks();
  };
  return { time, pool, warmUps, coolDowns, changes, errors, busy, finishWarmUps };
}

/** Makes an agent warm through a request. */
async function warm(h: ReturnType<typeof setup>, agentId: string): Promise<void> {
  const p = h.pool.ensureWarm(agentId);
  await h.finishWarmUps();
  await p;
}

describe('availability: warm pool', () => {
  it('starts everything cold', () => {
    const h = setup(SAT_1200_EST);
    assert.deepEqual(h.pool.statusAll().map((s) => [s.agentId, s.state]), [['observe-ai', 'cold'], ['coder-ai', 'cold'], ['cost-ai', 'cold']]);
  });

  it('a request to a cold agent starts one warm-up that concurrent callers share; status says warming', async () => {
    const h = setup(SAT_1200_EST);
    const a = h.pool.ensureWarm('coder-ai');
    const b = h.pool.ensureWarm('coder-ai');
    assert.equal(h.warmUps.length, 1);
    assert.equal(h.pool.status('coder-ai').state, 'warming');
    await h.time.advance(20_000); // the warm-up takes what it takes: no fake delay in the pool
    assert.equal(h.pool.status('coder-ai').state, 'warming');
    h.warmUps[0]!.done.resolve();
    await Promise.all([a, b]);
    const s = h.pool.status('coder-ai');
    assert.equal(s.state, 'warm');
    assert.equal(s.since, new Date(SAT_1200_EST + 20_000).toISOString());
    assert.deepEqual(h.changes.map((c) => `${c.from}->${c.to}:${c.reason}`), ['cold->warming:request', 'warming->warm:warmed']);
    await h.pool.ensureWarm('coder-ai');
    assert.equal(h.warmUps.length, 1, 'a warm agent needs no warm-up');
  });

  it('a failed warm-up rejects every awaiter, returns to cold and is reported in status', async () => {
    const h = setup(SAT_1200_EST);
    const a = h.pool.ensureWarm('cost-ai');
    const b = h.pool.ensureWarm('cost-ai');
    h.warmUps[0]!.done.reject(new Error('worker crashed'));
    await assert.rejects(a, /worker crashed/);
    await assert.rejects(b, /worker crashed/);
    const s = h.pool.status('cost-ai');
    assert.equal(s.state, 'cold');
    assert.equal(s.lastError, 'warm-up failed: worker crashed');
    // The next request tries again.
    const c = h.pool.ensureWarm('cost-ai');
    await h.finishWarmUps();
    await c;
    assert.equal(h.pool.status('cost-ai').lastError, null);
  });

  it('an aborted waiter stops waiting; the shared warm-up goes on', async () => {
    const h = setup(SAT_1200_EST);
    const ctl = new AbortController();
    const mine = h.pool.ensureWarm('coder-ai', ctl.signal);
    const other = h.pool.ensureWarm('coder-ai');
    ctl.abort();
    await assert.rejects(mine, (e: unknown) => isEngineError(e) && e.code === 'ERR_CANCELLED');
    await h.finishWarmUps();
    await other;
    assert.equal(h.pool.status('coder-ai').state, 'warm');
  });

  it('rejects unknown agents with ERR_NOT_FOUND', () => {
    const h = setup(SAT_1200_EST);
    assert.throws(() => h.pool.touch('nope-ai'), (e: unknown) => isEngineError(e) && e.code === 'ERR_NOT_FOUND');
  });

  describe('tick', () => {
    it('keeps always_on agents warm at any hour and never cools them', async () => {
      const h = setup(SAT_1200_EST);
      assert.deepEqual(h.pool.tick(), { warming: ['observe-ai'], cooling: [] });
      await h.finishWarmUps();
      await h.time.advance(24 * 60 * MIN);
      assert.deepEqual(h.pool.tick(), { warming: [], cooling: [] });
      assert.equal(h.pool.status('observe-ai').state, 'warm');
      assert.equal(h.pool.status('observe-ai').nextChange, null);
    });

    it('pre-warms business-hours agents when the window opens, once per window', async () => {
      const h = setup(MON_0600_EDT);
      h.pool.tick();
      await h.finishWarmUps();
      assert.equal(h.pool.status('coder-ai').state, 'cold');
      assert.equal(h.pool.status('coder-ai').nextChange?.at, new Date(MON_0700_EDT).toISOString());
      await h.time.advanceTo(MON_0700_EDT);
      assert.deepEqual(h.pool.tick(), { warming: ['coder-ai'], cooling: [] });
      assert.equal(h.changes.at(-1)!.reason, 'window_opened');
      await h.finishWarmUps();
      assert.equal(h.pool.status('coder-ai').state, 'warm');
      // Idle for 15 minutes inside the window: scaled to zero, and not pre-warmed again.
      await h.time.advance(15 * MIN);
      assert.deepEqual(h.pool.tick(), { warming: [], cooling: ['coder-ai'] });
      await flushMicrotasks();
      assert.deepEqual(h.coolDowns, ['coder-ai']);
      assert.equal(h.pool.status('coder-ai').state, 'cold');
      await h.time.advance(MIN);
      assert.deepEqual(h.pool.tick().warming, []);
    });

    it('does not pre-warm when prewarm is off, and never pre-warms commercial agents', async () => {
      const h = setup(MON_0900_EDT, { prewarm: false });
      assert.deepEqual(h.pool.tick().warming, ['observe-ai']);
      assert.equal(h.pool.status('coder-ai').nextChange, null);
      assert.equal(h.pool.status('cost-ai').nextChange, null);
    });

    it('inside the window, use postpones the idle cool-down', async () => {
      const h = setup(MON_0900_EDT, { prewarm: false });
      await warm(h, 'coder-ai');
      await h.time.advance(10 * MIN);
      h.pool.touch('coder-ai');
      await h.time.advance(10 * MIN);
      assert.deepEqual(h.pool.tick().cooling, []);
      assert.equal(h.pool.status('coder-ai').nextChange?.at, new Date(MON_0900_EDT + 25 * MIN).toISOString());
      await h.time.advance(5 * MIN);
      assert.deepEqual(h.pool.tick().cooling, ['coder-ai']);
    });

    it('at 19:00 a business-hours agent used in the window is scaled to zero at once', async () => {
      const h = setup(MON_1900_EDT - 5 * MIN, { prewarm: false });
      await warm(h, 'coder-ai');
      assert.deepEqual(h.pool.status('coder-ai').nextChange, { at: new Date(MON_1900_EDT).toISOString(), to: 'draining', reason: 'window_closed' });
      await h.time.advanceTo(MON_1900_EDT);
      assert.deepEqual(h.pool.tick().cooling, ['coder-ai']);
      assert.equal(h.changes.find((c) => c.to === 'draining')!.reason, 'window_closed');
    });

    it('after hours, a request wakes a business-hours agent, which stays warm until idle', async () => {
      const h = setup(SAT_1200_EST);
      await warm(h, 'coder-ai');
      await h.time.advance(14 * MIN);
      assert.deepEqual(h.pool.tick().cooling, []);
      await h.time.advance(MIN);
      assert.deepEqual(h.pool.tick().cooling, ['coder-ai']);
    });

    it('commercial agents cool after the idle timeout at any hour', async () => {
      const h = setup(MON_0900_EDT);
      await warm(h, 'cost-ai');
      await h.time.advance(15 * MIN - 1);
      assert.deepEqual(h.pool.tick().cooling.includes('cost-ai'), false);
      await h.time.advance(1);
      assert.deepEqual(h.pool.tick().cooling.includes('cost-ai'), true);
    });

    it('never cools a busy agent', async () => {
      const busy = new Set(['coder-ai']);
      const h = setup(MON_1900_EDT - MIN, { prewarm: false, busy });
      await warm(h, 'coder-ai');
      await h.time.advance(60 * MIN);
      assert.deepEqual(h.pool.tick().cooling, []);
      assert.equal(h.pool.status('coder-ai').nextChange, null);
      busy.clear();
      assert.deepEqual(h.pool.tick().cooling, ['coder-ai']);
    });

    it('a request during the cool-down waits for it, then warms up again', async () => {
      const h = setup(SAT_1200_EST);
      let stop!: () => void;
      const stopped = new Promise<void>((r) => (stop = r));
      const pool = new WarmPool({
        agents: AGENTS, clock: h.time, warmUp: () => Promise.resolve(), coolDown: () => stopped, onChange: (c) => h.changes.push(c),
      });
      await pool.ensureWarm('cost-ai');
      await h.time.advance(15 * MIN);
      pool.tick();
      assert.equal(pool.status('cost-ai').state, 'draining');
      const a = pool.ensureWarm('cost-ai');
      const b = pool.ensureWarm('cost-ai');
      await flushMicrotasks();
      assert.equal(pool.status('cost-ai').state, 'draining');
      stop();
      await Promise.all([a, b]);
      assert.equal(pool.status('cost-ai').state, 'warm');
      assert.deepEqual(h.changes.filter((c) => c.agentId === 'cost-ai').map((c) => c.to), ['warming', 'warm', 'draining', 'cold', 'warming', 'warm']);
    });

    it('a failing cool-down still ends cold, reported to onError and status', async () => {
      const h = setup(SAT_1200_EST);
      const errors: unknown[] = [];
      const pool = new WarmPool({
        agents: AGENTS, clock: h.time, warmUp: () => Promise.resolve(), coolDown: () => Promise.reject(new Error('stuck')), onError: (_id, e) => errors.push(e),
      });
      await pool.ensureWarm('cost-ai');
      await h.time.advance(15 * MIN);
      pool.tick();
      await flushMicrotasks();
      assert.equal(pool.status('cost-ai').state, 'cold');
      assert.equal(pool.status('cost-ai').lastError, 'cool-down failed: stuck');
      assert.equal(errors.length, 1);
    });

    it('reports a failed background warm-up to onError and retries at the next tick', async () => {
      const h = setup(SAT_1200_EST);
      h.pool.tick();
      h.warmUps.splice(0)[0]!.done.reject(new Error('no threads'));
      await flushMicrotasks();
      assert.deepEqual(h.errors.map(([id, e]) => [id, (e as Error).message]), [['observe-ai', 'no threads']]);
      assert.equal(h.pool.status('observe-ai').state, 'cold');
      assert.deepEqual(h.pool.tick().warming, ['observe-ai']);
    });
  });

  it('status shows since, lastUsed and the next foreseen change', async () => {
    const h = setup(SAT_1200_EST);
    await warm(h, 'cost-ai');
    await h.time.advance(MIN);
    h.pool.touch('cost-ai');
    assert.deepEqual(h.pool.status('cost-ai'), {
      agentId: 'cost-ai',
      availability: 'commercial',
      state: 'warm',
      since: new Date(SAT_1200_EST).toISOString(),
      lastUsed: new Date(SAT_1200_EST + MIN).toISOString(),
      nextChange: { at: new Date(SAT_1200_EST + 16 * MIN).toISOString(), to: 'draining', reason: 'idle' },
      lastError: null,
    });
  });
});
