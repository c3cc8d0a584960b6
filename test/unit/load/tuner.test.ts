import assert from 'node:assert/strict';
import { isEngineError } from '../../../server/src/engine/errors';
import { EMPTY_TUNING_STATE, Tuner, observe, recommend, type AgentTuningState } from '../../../server/src/engine/load/tuner';

const ok = (durationMs: number) => ({ ok: true, durationMs });
const failed = (durationMs = 30_000) => ({ ok: false, durationMs });

function replay(outcomes: { ok: boolean; durationMs: number }[]): AgentTuningState {
  return outcomes.reduce((s, o) => observe(s, o), EMPTY_TUNING_STATE as AgentTuningState);
}

describe('load: tuner', () => {
  describe('observe (EWMA, alpha 0.2)', () => {
    it('the first success sets the mean; later ones move it by alpha', () => {
      const s1 = replay([ok(10_000)]);
      assert.deepEqual(s1, { outcomes: 1, samples: 1, meanMs: 10_000, varianceMs2: 0, failureRate: 0 });
      const s2 = observe(s1, ok(20_000));
      assert.equal(s2.meanMs, 12_000);
      // West: var = (1 - a) * (var + diff * a * diff) = 0.8 * (0 + 10_000 * 2_000)
      assert.equal(s2.varianceMs2, 16_000_000);
    });

    it('failures move the failure rate but not the duration statistics', () => {
      const s = replay([ok(10_000), failed(120_000)]);
      assert.equal(s.meanMs, 10_000);
      assert.equal(s.samples, 1);
      assert.equal(s.outcomes, 2);
      assert.ok(Math.abs(s.failureRate - 0.2) < 1e-12);
      assert.equal(replay([failed()]).failureRate, 1, 'the first outcome sets the rate');
    });

    it('is pure and deterministic', () => {
      const outcomes = [ok(1_000), ok(3_000), failed(), ok(2_000), ok(2_500)];
      const a = replay(outcomes);
      assert.deepEqual(a, replay(outcomes));
      const frozen = Object.freeze({ ...a });
      observe(frozen, ok(9_000));
      assert.deepEqual(frozen, a);
    });

    it('ignores nonsensical durations', () => {
      assert.equal(replay([ok(Number.NaN)]).samples, 0);
      assert.equal(replay([ok(-5)]).samples, 0);
    });
  });

  describe('recommend', () => {
    it('defaults before enough samples: catalog capacity and a 30 s timeout', () => {
      const r = recommend(replay([ok(1_000), ok(1_000)]), 4);
      assert.equal(r.concurrency, 4);
      assert.equal(r.timeoutMs, 30_000);
      assert.equal(r.basis.timeout, 'default');
    });

    it('timeout = mean + 3 stddev, rounded up to a second', () => {
      const s = replay([ok(20_000), ok(20_000), ok(20_000), ok(20_000), ok(30_000)]);
      // mean 22_000, variance 0.8 * 10_000 * 2_000 = 16e6, stddev 4_000 → 34_000
      const r = recommend(s, 4);
      assert.equal(r.basis.meanMs, 22_000);
      assert.equal(r.basis.stddevMs, 4_000);
      assert.equal(r.timeoutMs, 34_000);
      assert.equal(r.basis.timeout, 'learned');
    });

    it('clamps the timeout to [10 s, 10 min]', () => {
      const fast = recommend(replay(Array.from({ length: 5 }, () => ok(200))), 4);
      assert.deepEqual([fast.timeoutMs, fast.basis.timeout], [10_000, 'clamped']);
      const slow = recommend(replay(Array.from({ length: 5 }, () => ok(900_000))), 4);
      assert.deepEqual([slow.timeoutMs, slow.basis.timeout], [600_000, 'clamped']);
    });

    it('keeps the ceiling while the failure rate is within 10%, then throttles, never below 1', () => {
      const healthy = replay(Array.from({ length: 10 }, () => ok(1_000)));
      assert.equal(recommend(healthy, 8).concurrency, 8);
      // Five successes then two failures: rate 0.36 → floor(8 x 0.64) = 5
      const flaky = replay([...Array.from({ length: 5 }, () => ok(1_000)), failed(), failed()]);
      assert.ok(Math.abs(flaky.failureRate - 0.36) < 1e-12);
      assert.equal(recommend(flaky, 8).concurrency, 5);
      const broken = replay(Array.from({ length: 6 }, () => failed()));
      assert.equal(recommend(broken, 8).concurrency, 1);
      assert.equal(recommend(broken, 1).concurrency, 1);
    });

    it('does not throttle on too few outcomes', () => {
      assert.equal(recommend(replay([failed(), failed()]), 4).concurrency, 4);
    });

    it('stays within [1, capacity x ceilingFactor]', () => {
      const healthy = replay(Array.from({ length: 10 }, () => ok(1_000)));
      const tuner = new Tuner({ ceilingFactor: 2 });
      assert.equal(recommend(healthy, 2, tuner.config).concurrency, 4);
      assert.equal(recommend(healthy, 2).concurrency, 2);
    });

    it('recovers concurrency as successes return', () => {
      let s = replay(Array.from({ length: 6 }, () => failed()));
      const seen: number[] = [];
      for (let i = 0; i < 12; i++) {
        s = observe(s, ok(1_000));
        seen.push(recommend(s, 4).concurrency);
      }
      // rate 0.8^k after k successes; floor(4 x (1 - rate)), back to the ceiling once rate <= 10%
      assert.deepEqual(seen, [1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4]);
    });
  });

  describe('Tuner', () => {
    it('keeps one state per agent and snapshots them for persistence', () => {
      const tuner = new Tuner();
      tuner.record('tester-ai', ok(5_000));
      tuner.record('coder-ai', failed());
      assert.deepEqual(Object.keys(tuner.snapshot()), ['coder-ai', 'tester-ai']);
      const restored = new Tuner({}, tuner.snapshot());
      assert.deepEqual(restored.recommend('tester-ai', 2), tuner.recommend('tester-ai', 2));
      assert.deepEqual(tuner.state('unknown-ai'), EMPTY_TUNING_STATE);
    });

    it('rejects configurations out of range', () => {
      assert.throws(() => new Tuner({ alpha: 0 }), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION');
      assert.throws(() => new Tuner({ minTimeoutMs: 10, maxTimeoutMs: 5 }), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION');
    });
  });
});
