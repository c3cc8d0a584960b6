import assert from 'node:assert/strict';
import { AGENTS } from '../../../server/src/engine/catalog';
import { isEngineError } from '../../../server/src/engine/errors';
import {
  AgentLoad,
  isUnderPressure,
  loadOf,
  overloadedError,
  retryAfterEstimate,
  timeoutFactorFor,
  type Admission,
  type Slot,
} from '../../../server/src/engine/load/agent-load';
import { ManualTime, flushMicrotasks } from '../../support/manual-time';

const T0 = Date.parse('2026-03-09T15:00:00Z');

function setup(capacity = 2, tuning = {}) {
  const time = new ManualTime(T0);
  const load = new AgentLoad({ agents: [{ id: 'tester-ai', capacity }, { id: 'observe-ai', capacity: 8 }], clock: time, tuning });
  return { time, load };
}

function immediate(a: Admission): Slot {
  assert.ok(a.ok && !a.queued, 'expected an immediate slot');
  return a.slot;
}

function queued(a: Admission): Extract<Admission, { queued: true }> {
  assert.ok(a.ok && a.queued, 'expected a queued admission');
  return a;
}

describe('load: agent load', () => {
  describe('formulas', () => {
    it('load = (running + queued) / capacity; pressure strictly above 85%', () => {
      assert.equal(loadOf(3, 0, 4), 0.75);
      assert.equal(loadOf(4, 2, 4), 1.5);
      assert.equal(isUnderPressure(0.85), false);
      assert.equal(isUnderPressure(0.875), true);
    });

    it('timeout factor: 1 up to 85%, then 1 + 2 x (load - 0.85), capped at 2', () => {
      assert.equal(timeoutFactorFor(0.5), 1);
      assert.equal(timeoutFactorFor(0.85), 1);
      assert.ok(Math.abs(timeoutFactorFor(1) - 1.3) < 1e-9);
      assert.ok(Math.abs(timeoutFactorFor(1.25) - 1.8) < 1e-9);
      assert.equal(timeoutFactorFor(1.35), 2);
      assert.equal(timeoutFactorFor(5), 2);
    });

    it('Retry-After = ceil(position / capacity) x mean step, whole seconds, at least 1 s', () => {
      assert.equal(retryAfterEstimate(1, 2, 30_000), 30_000);
      assert.equal(retryAfterEstimate(2, 2, 30_000), 30_000);
      assert.equal(retryAfterEstimate(3, 2, 30_000), 60_000);
      assert.equal(retryAfterEstimate(9, 2, 12_300), 5 * 12_300 + 500);
      assert.equal(retryAfterEstimate(1, 8, 10), 1_000);
    });
  });

  it('grants slots at once below capacity', () => {
    const { load } = setup(2);
    immediate(load.tryAcquire('tester-ai'));
    immediate(load.tryAcquire('tester-ai'));
    assert.deepEqual([load.stats('tester-ai').running, load.stats('tester-ai').queued], [2, 0]);
  });

  it('queues beyond capacity, FIFO, and hands freed slots to waiters in order', async () => {
    const { load } = setup(1);
    const first = immediate(load.tryAcquire('tester-ai'));
    const a = queued(load.tryAcquire('tester-ai'));
    const b = queued(load.tryAcquire('tester-ai'));
    assert.deepEqual([a.position, b.position], [1, 2]);
    const order: string[] = [];
    void a.slot.then(() => order.push('a'));
    void b.slot.then(() => order.push('b'));
    first.release();
    await flushMicrotasks();
    assert.deepEqual(order, ['a']);
    assert.deepEqual([load.stats('tester-ai').running, load.stats('tester-ai').queued], [1, 1]);
    (await a.slot).release();
    await flushMicrotasks();
    assert.deepEqual(order, ['a', 'b']);
  });

  it('does not let a newcomer overtake the queue', async () => {
    const { load } = setup(1);
    const first = immediate(load.tryAcquire('tester-ai'));
    const a = queued(load.tryAcquire('tester-ai'));
    first.release();
    // The freed slot went to the waiter, so a newcomer queues.
    queued(load.tryAcquire('tester-ai'));
    (await a.slot).release();
  });

  it('refuses with overloaded and a Retry-After when the queue is at 4 x capacity', () => {
    const { load } = setup(2);
    immediate(load.tryAcquire('tester-ai'));
    immediate(load.tryAcquire('tester-ai'));
    for (let i = 0; i < 8; i++) queued(load.tryAcquire('tester-ai'));
    const refused = load.tryAcquire('tester-ai');
    // Position 9 with capacity 2 and the default 30 s mean: 5 rounds.
    assert.deepEqual(refused, { ok: false, reason: 'overloaded', agentId: 'tester-ai', retryAfterMs: 150_000 });
    assert.ok(!refused.ok);
    const err = overloadedError(refused);
    assert.deepEqual([err.code, err.retryable, err.details], ['ERR_OVERLOADED', true, { agentId: 'tester-ai', retryAfterMs: 150_000 }]);
    assert.equal(load.stats('tester-ai').queueBound, 8);
  });

  it('an aborted waiter leaves the queue and its promise rejects with ERR_CANCELLED', async () => {
    const { load } = setup(1);
    const first = immediate(load.tryAcquire('tester-ai'));
    const ctl = new AbortController();
    const a = queued(load.tryAcquire('tester-ai', { signal: ctl.signal }));
    const b = queued(load.tryAcquire('tester-ai'));
    ctl.abort();
    await assert.rejects(a.slot, (e: unknown) => isEngineError(e) && e.code === 'ERR_CANCELLED');
    assert.equal(load.stats('tester-ai').queued, 1);
    first.release();
    const slot = await b.slot;
    assert.equal(load.stats('tester-ai').running, 1);
    slot.release();
    assert.equal(load.stats('tester-ai').running, 0);
  });

  it('throws ERR_CANCELLED for an already aborted signal and ERR_NOT_FOUND for an unknown agent', () => {
    const { load } = setup();
    const ctl = new AbortController();
    ctl.abort();
    assert.throws(() => load.tryAcquire('tester-ai', { signal: ctl.signal }), (e: unknown) => isEngineError(e) && e.code === 'ERR_CANCELLED');
    assert.throws(() => load.tryAcquire('nope-ai'), (e: unknown) => isEngineError(e) && e.code === 'ERR_NOT_FOUND');
  });

  it('release is idempotent', () => {
    const { load } = setup(2);
    const s = immediate(load.tryAcquire('tester-ai'));
    s.release();
    s.release();
    assert.equal(load.stats('tester-ai').running, 0);
  });

  it('reports pressure and a timeout factor above 85% load', () => {
    const { load } = setup(8);
    const slots = Array.from({ length: 6 }, () => immediate(load.tryAcquire('observe-ai')));
    assert.equal(load.pressure('observe-ai'), false); // 6/8 = 75%
    assert.equal(load.timeoutFactor('observe-ai'), 1);
    slots.push(immediate(load.tryAcquire('observe-ai'))); // 7/8 = 87.5%
    assert.equal(load.pressure('observe-ai'), true);
    assert.ok(Math.abs(load.timeoutFactor('observe-ai') - 1.05) < 1e-9);
    slots.push(immediate(load.tryAcquire('observe-ai')));
    queued(load.tryAcquire('observe-ai'));
    queued(load.tryAcquire('observe-ai')); // 10/8 = 125%
    assert.deepEqual(load.stats('observe-ai'), {
      agentId: 'observe-ai', running: 8, queued: 2, capacity: 8, catalogCapacity: 8, queueBound: 32,
      load: 1.25, pressure: true, timeoutFactor: 1.8, meanStepMs: 30_000, retryAfterMs: 30_000,
    });
  });

  it('learns the mean step duration from released slots (EWMA, first sample replaces the default)', async () => {
    const { load, time } = setup(1);
    let s = immediate(load.tryAcquire('tester-ai'));
    await time.advance(10_000);
    s.release();
    assert.equal(load.stats('tester-ai').meanStepMs, 10_000);
    s = immediate(load.tryAcquire('tester-ai'));
    await time.advance(20_000);
    s.release();
    assert.equal(load.stats('tester-ai').meanStepMs, 12_000);
    // Queue time is not step time: the waiter's slot starts when granted.
    const holder = immediate(load.tryAcquire('tester-ai'));
    const w = queued(load.tryAcquire('tester-ai'));
    assert.equal(w.retryAfterMs, 12_000);
    await time.advance(12_000);
    holder.release();
    const slot = await w.slot;
    assert.equal(slot.acquiredAt, T0 + 42_000);
  });

  it('setCapacity admits waiters when raised and pre-empts nothing when lowered', async () => {
    const { load } = setup(1);
    const first = immediate(load.tryAcquire('tester-ai'));
    const a = queued(load.tryAcquire('tester-ai'));
    load.setCapacity('tester-ai', 2);
    const second = await a.slot;
    assert.equal(load.stats('tester-ai').running, 2);
    load.setCapacity('tester-ai', 1);
    assert.equal(load.stats('tester-ai').running, 2);
    queued(load.tryAcquire('tester-ai'));
    first.release();
    assert.deepEqual([load.stats('tester-ai').running, load.stats('tester-ai').queued], [1, 1]);
    second.release();
    assert.deepEqual([load.stats('tester-ai').running, load.stats('tester-ai').queued], [1, 0]);
    assert.equal(load.stats('tester-ai').catalogCapacity, 1);
    assert.throws(() => load.setCapacity('tester-ai', 0), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION');
  });

  it('queueFactor 0 means no queue', () => {
    const { load } = setup(1, { queueFactor: 0 });
    immediate(load.tryAcquire('tester-ai'));
    assert.equal(load.tryAcquire('tester-ai').ok, false);
  });

  it('takes its capacities from the catalog', () => {
    const load = new AgentLoad({ agents: AGENTS });
    const byId = new Map(load.statsAll().map((s) => [s.agentId, s.capacity]));
    assert.deepEqual([byId.get('tester-ai'), byId.get('observe-ai'), byId.get('coder-ai')], [2, 8, 4]);
    assert.equal(byId.size, 25);
  });
});
