import assert from 'node:assert/strict';
import { isEngineError } from '../../../server/src/engine/errors';
import { CircuitBreakers, circuitOpenError, type BreakerTransition, type Permit } from '../../../server/src/engine/resilience/circuit-breaker';
import { ManualTime } from '../../support/manual-time';

const T0 = Date.parse('2026-03-09T15:00:00Z');

function setup(options = {}) {
  const time = new ManualTime(T0);
  const events: BreakerTransition[] = [];
  const breakers = new CircuitBreakers({ clock: time, onTransition: (t) => events.push(t), options: { failureThreshold: 3, baseCooldownMs: 10_000, maxCooldownMs: 25_000, ...options } });
  return { time, events, breakers, breaker: breakers.get('coder-ai') };
}

function pass(b: ReturnType<typeof setup>['breaker']): Permit {
  const p = b.acquire();
  assert.ok(p.ok, 'expected a pass');
  return p;
}

function fail(b: ReturnType<typeof setup>['breaker'], n: number): void {
  for (let i = 0; i < n; i++) pass(b).release(false);
}

describe('resilience: circuit breaker', () => {
  it('starts closed and lets every caller through', () => {
    const { breaker } = setup();
    assert.equal(breaker.state, 'closed');
    const a = pass(breaker);
    const b = pass(breaker);
    assert.equal(a.probe, false);
    a.release(true);
    b.release(true);
    assert.equal(breaker.canPass(), true);
  });

  it('opens after N consecutive failures; a success in between resets the count', () => {
    const { breaker, events, time } = setup();
    fail(breaker, 2);
    pass(breaker).release(true);
    fail(breaker, 2);
    assert.equal(breaker.state, 'closed');
    fail(breaker, 1);
    assert.equal(breaker.state, 'open');
    assert.deepEqual(events, [{ key: 'coder-ai', from: 'closed', to: 'open', at: T0, reason: 'failure_threshold', failures: 3, cooldownMs: 10_000 }]);
    const snap = breaker.snapshot();
    assert.deepEqual({ state: snap.state, failures: snap.failures, openedAt: snap.openedAt, nextProbeAt: snap.nextProbeAt, opens: snap.opens },
      { state: 'open', failures: 3, openedAt: new Date(T0).toISOString(), nextProbeAt: new Date(T0 + 10_000).toISOString(), opens: 1 });
    assert.equal(time.pending(), 0, 'no timer is needed');
  });

  it('refuses while open with the time left until the probe', async () => {
    const { breaker, time } = setup();
    fail(breaker, 3);
    await time.advance(4_000);
    assert.equal(breaker.canPass(), false);
    assert.deepEqual(breaker.acquire(), { ok: false, state: 'open', retryAfterMs: 6_000 });
  });

  it('after the cooldown, half-open admits exactly one probe; a concurrent caller is refused', async () => {
    const { breaker, time, events } = setup();
    fail(breaker, 3);
    await time.advance(10_000);
    assert.equal(breaker.state, 'half_open');
    assert.equal(events.at(-1)!.reason, 'cooldown_elapsed');
    assert.equal(events.at(-1)!.at, T0 + 10_000);
    const probe = pass(breaker);
    assert.equal(probe.probe, true);
    assert.equal(breaker.canPass(), false);
    assert.deepEqual(breaker.acquire(), { ok: false, state: 'half_open', retryAfterMs: 1_000 });
    assert.equal(breaker.snapshot().probeInFlight, true);
  });

  it('a successful probe closes the breaker and resets failures and cooldown', async () => {
    const { breaker, time, events } = setup();
    fail(breaker, 3);
    await time.advance(10_000);
    pass(breaker).release(true);
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(events.map((e) => `${e.from}->${e.to}:${e.reason}`), ['closed->open:failure_threshold', 'open->half_open:cooldown_elapsed', 'half_open->closed:probe_succeeded']);
    const snap = breaker.snapshot();
    assert.deepEqual([snap.failures, snap.openedAt, snap.nextProbeAt, snap.cooldownMs], [0, null, null, 10_000]);
  });

  it('a failed probe re-opens with a longer cooldown, capped', async () => {
    const { breaker, time, events } = setup();
    fail(breaker, 3);
    await time.advance(10_000);
    pass(breaker).release(false);
    assert.equal(breaker.state, 'open');
    assert.equal(events.at(-1)!.reason, 'probe_failed');
    assert.equal(breaker.snapshot().nextProbeAt, new Date(T0 + 10_000 + 20_000).toISOString());
    await time.advance(19_999);
    assert.equal(breaker.state, 'open');
    await time.advance(1);
    pass(breaker).release(false);
    // 20 s doubled is 40 s, capped at 25 s.
    assert.equal(breaker.snapshot().cooldownMs, 25_000);
    assert.deepEqual(breaker.acquire(), { ok: false, state: 'open', retryAfterMs: 25_000 });
    await time.advance(25_000);
    pass(breaker).release(true);
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.snapshot().cooldownMs, 10_000);
    assert.equal(breaker.snapshot().opens, 3);
  });

  it('a probe never released is counted as failed after probeTimeoutMs', async () => {
    const { breaker, time, events } = setup({ probeTimeoutMs: 5_000 });
    fail(breaker, 3);
    await time.advance(10_000);
    const lost = pass(breaker);
    await time.advance(5_000);
    assert.equal(breaker.state, 'open');
    assert.equal(events.at(-1)!.reason, 'probe_timeout');
    lost.release(true); // too late: it belongs to an older generation
    assert.equal(breaker.state, 'open');
  });

  it('late results of passes granted before the breaker opened do not move it', async () => {
    const { breaker, time } = setup();
    const slow = pass(breaker);
    fail(breaker, 3);
    slow.release(true);
    assert.equal(breaker.state, 'open');
    await time.advance(10_000);
    const probe = pass(breaker);
    probe.release(true);
    probe.release(false); // a second release is ignored
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.snapshot().totalSuccesses, 2);
  });

  it('turns a refusal into a retryable ERR_CIRCUIT_OPEN carrying retryAfterMs', () => {
    const { breaker } = setup();
    fail(breaker, 3);
    const refusal = breaker.acquire();
    assert.ok(!refusal.ok);
    const err = circuitOpenError('coder-ai', refusal);
    assert.equal(err.code, 'ERR_CIRCUIT_OPEN');
    assert.equal(err.retryable, true);
    assert.deepEqual(err.details, { agentId: 'coder-ai', state: 'open', retryAfterMs: 10_000 });
  });

  it('reset closes an open breaker', () => {
    const { breaker, events } = setup();
    fail(breaker, 3);
    breaker.reset();
    assert.equal(breaker.state, 'closed');
    assert.equal(events.at(-1)!.reason, 'reset');
    assert.equal(breaker.snapshot().failures, 0);
  });

  it('keeps one breaker per key and snapshots them sorted', () => {
    const { breakers } = setup();
    assert.equal(breakers.get('coder-ai'), breakers.get('coder-ai'));
    fail(breakers.get('tester-ai'), 3);
    assert.deepEqual(breakers.snapshot().map((s) => [s.key, s.state]), [['coder-ai', 'closed'], ['tester-ai', 'open']]);
  });

  it('rejects out-of-range options', () => {
    assert.throws(() => new CircuitBreakers({ options: { failureThreshold: 0 } }), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION');
    assert.throws(() => new CircuitBreakers({ options: { baseCooldownMs: 10, maxCooldownMs: 5 } }), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION');
  });
});
