import assert from 'node:assert/strict';
import { EngineError, isEngineError } from '../../../server/src/engine/errors';
import { ManualTime, flushMicrotasks } from '../../support/manual-time';
import {
  DEFAULT_RETRY_POLICY,
  attemptTimeout,
  backoffDelay,
  defaultIsRetryable,
  isTimeoutError,
  retryPolicy,
  runWithRetry,
  timeoutError,
  type AttemptReport,
} from '../../../server/src/engine/resilience/retry';

const T0 = Date.parse('2026-03-09T11:00:00Z');
const half = (): number => 0.5;
const transient = (msg = 'flaky'): EngineError => new EngineError('ERR_SKILL_FAILED', msg, { retryable: true });

/** Records the settlement of a promise without awaiting it (so tests can advance time meanwhile). */
function track<T>(p: Promise<T>): { settled: () => boolean; value: () => T; error: () => unknown } {
  let state: { done: false } | { done: true; ok: true; value: T } | { done: true; ok: false; error: unknown } = { done: false };
  p.then(
    (value) => (state = { done: true, ok: true, value }),
    (error: unknown) => (state = { done: true, ok: false, error }),
  );
  return {
    settled: () => state.done,
    value: () => {
      if (!state.done || !state.ok) throw new Error('not resolved');
      return state.value;
    },
    error: () => {
      if (!state.done || state.ok) throw new Error('not rejected');
      return state.error;
    },
  };
}

describe('resilience: retry', () => {
  describe('backoffDelay', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1_000, factor: 2 };

    it('grows geometrically without jitter and caps at maxDelayMs', () => {
      const none = { ...policy, jitter: 'none' as const };
      assert.deepEqual([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, none, half)), [100, 200, 400, 800, 1_000, 1_000]);
    });

    it('full jitter is random * raw', () => {
      const full = { ...policy, jitter: 'full' as const };
      assert.equal(backoffDelay(1, full, half), 50);
      assert.equal(backoffDelay(3, full, () => 0.25), 100);
      assert.equal(backoffDelay(3, full, () => 0), 0);
      assert.equal(backoffDelay(10, full, () => 0.999), 999);
    });

    it('equal jitter keeps at least half of the raw delay', () => {
      const equal = { ...policy, jitter: 'equal' as const };
      assert.equal(backoffDelay(1, equal, half), 75);
      assert.equal(backoffDelay(2, equal, () => 0), 100);
      assert.equal(backoffDelay(4, equal, () => 0.5), 600);
    });

    it('rounds to whole milliseconds', () => {
      assert.equal(backoffDelay(1, { baseDelayMs: 3, maxDelayMs: 10, factor: 1.5, jitter: 'full' }, () => 0.5), 2);
    });
  });

  describe('policy and timeouts', () => {
    it('defaults: 3 attempts, 1 s base, 30 s cap, factor 2, full jitter, 30/60/120 s timeouts', () => {
      assert.deepEqual({ ...DEFAULT_RETRY_POLICY, timeouts: [...(DEFAULT_RETRY_POLICY.timeouts as number[])] }, {
        maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 30_000, factor: 2, jitter: 'full', timeouts: [30_000, 60_000, 120_000],
      });
      assert.ok(Object.isFrozen(retryPolicy()));
    });

    it('rejects meaningless policies with ERR_VALIDATION', () => {
      for (const bad of [{ maxAttempts: 0 }, { baseDelayMs: -1 }, { baseDelayMs: 10, maxDelayMs: 5 }, { factor: 0.5 }, { timeouts: [] }, { timeouts: [10, 0] }, { timeouts: { baseMs: 0, growth: 2 } }]) {
        assert.throws(() => retryPolicy(bad), (e: unknown) => isEngineError(e) && e.code === 'ERR_VALIDATION', JSON.stringify(bad));
      }
    });

    it('list timeouts repeat their last entry; growing timeouts grow and cap; null means none', () => {
      assert.deepEqual([1, 2, 3, 4].map((a) => attemptTimeout(a, [30_000, 60_000, 120_000])), [30_000, 60_000, 120_000, 120_000]);
      assert.deepEqual([1, 2, 3, 4].map((a) => attemptTimeout(a, { baseMs: 10_000, growth: 3, maxMs: 60_000 })), [10_000, 30_000, 60_000, 60_000]);
      assert.equal(attemptTimeout(1, null), null);
    });

    it('default retryability: EngineError.retryable, any non-engine error, never ERR_CANCELLED', () => {
      assert.equal(defaultIsRetryable(transient()), true);
      assert.equal(defaultIsRetryable(new EngineError('ERR_VALIDATION', 'bad')), false);
      assert.equal(defaultIsRetryable(new EngineError('ERR_CANCELLED', 'x', { retryable: true })), false);
      assert.equal(defaultIsRetryable(new TypeError('boom')), true);
      assert.equal(timeoutError(1, 10).code, 'ERR_TIMEOUT');
      assert.equal(timeoutError(1, 10).retryable, true);
      assert.equal(isTimeoutError(timeoutError(1, 10)), true);
      assert.equal(isTimeoutError(transient()), false);
    });
  });

  describe('runWithRetry', () => {
    let time: ManualTime;
    beforeEach(() => (time = new ManualTime(T0)));

    it('returns the first success without delay', async () => {
      const calls: number[] = [];
      const value = await runWithRetry(async (attempt) => (calls.push(attempt), 'ok'), retryPolicy(), { clock: time, timers: time });
      assert.equal(value, 'ok');
      assert.deepEqual(calls, [1]);
      assert.equal(time.pending(), 0, 'the attempt timer is cleared');
    });

    it('backs off exponentially between retryable failures, then succeeds', async () => {
      const starts: number[] = [];
      const reports: AttemptReport[] = [];
      const policy = retryPolicy({ maxAttempts: 4, baseDelayMs: 1_000, jitter: 'none', timeouts: null });
      const run = track(runWithRetry(async (attempt) => {
        starts.push(time.now() - T0);
        if (attempt < 3) throw transient();
        return attempt;
      }, policy, { clock: time, timers: time, onAttempt: (r) => reports.push(r) }));
      await time.advance(999);
      assert.deepEqual(starts, [0]);
      await time.advance(1);
      assert.deepEqual(starts, [0, 1_000]);
      await time.advance(2_000);
      assert.deepEqual(starts, [0, 1_000, 3_000]);
      assert.equal(run.value(), 3);
      assert.deepEqual(reports.map((r) => [r.attempt, r.ok, r.retryInMs]), [[1, false, 1_000], [2, false, 2_000], [3, true, null]]);
    });

    it('uses the injected random for jitter', async () => {
      const starts: number[] = [];
      const policy = retryPolicy({ maxAttempts: 2, baseDelayMs: 1_000, jitter: 'full', timeouts: null });
      const run = track(runWithRetry(async (attempt) => {
        starts.push(time.now() - T0);
        if (attempt === 1) throw transient();
        return 'ok';
      }, policy, { clock: time, timers: time, random: () => 0.3 }));
      await time.advance(10_000);
      assert.deepEqual(starts, [0, 300]);
      assert.equal(run.value(), 'ok');
    });

    it('a timed-out attempt is aborted and retried with the next, longer timeout', async () => {
      const signals: AbortSignal[] = [];
      const reports: AttemptReport[] = [];
      const policy = retryPolicy({ maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, jitter: 'none', timeouts: [100, 200, 400] });
      const run = track(runWithRetry((attempt, signal) => {
        signals.push(signal);
        // Attempts 1 and 2 hang; attempt 3 answers after 300 ms (within its 400 ms).
        return new Promise<string>((resolve) => void (attempt === 3 && time.setTimeout(() => resolve('late but fine'), 300)));
      }, policy, { clock: time, timers: time, onAttempt: (r) => reports.push(r) }));
      await time.advance(100);
      assert.equal(signals[0]!.aborted, true);
      assert.ok(isTimeoutError(signals[0]!.reason));
      assert.equal(signals.length, 2);
      await time.advance(200);
      assert.equal(signals.length, 3);
      await time.advance(300);
      assert.equal(run.value(), 'late but fine');
      assert.deepEqual(reports.map((r) => [r.attempt, r.timedOut, r.timeoutMs, r.durationMs]), [[1, true, 100, 100], [2, true, 200, 200], [3, false, 400, 300]]);
    });

    it('stretches timeouts by the load factor read at each attempt start', async () => {
      let factor = 1.5;
      const reports: AttemptReport[] = [];
      const policy = retryPolicy({ maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, timeouts: [100] });
      const run = track(runWithRetry(() => new Promise<never>(() => undefined), policy, {
        clock: time, timers: time, timeoutFactor: () => factor, onAttempt: (r) => {
          reports.push(r);
          factor = 2;
        },
      }));
      await time.advance(149);
      assert.equal(reports.length, 0);
      await time.advance(1);
      assert.equal(reports[0]!.timeoutMs, 150);
      await time.advance(200);
      assert.equal(reports[1]!.timeoutMs, 200);
      assert.ok(run.settled());
    });

    it('gives up after maxAttempts with the last error, its code and the attempts', async () => {
      const policy = retryPolicy({ maxAttempts: 3, baseDelayMs: 10, jitter: 'none', timeouts: null });
      const run = track(runWithRetry(async (attempt) => {
        throw transient(`failure ${attempt}`);
      }, policy, { clock: time, timers: time }));
      await time.advance(1_000);
      const err = run.error();
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_SKILL_FAILED');
      assert.equal(err.message, 'failure 3');
      assert.equal(err.retryable, true);
      assert.equal((err.cause as Error).message, 'failure 3');
      const retry = err.details?.retry as { attempts: number; maxAttempts: number; errors: { attempt: number; message: string }[] };
      assert.equal(retry.attempts, 3);
      assert.equal(retry.maxAttempts, 3);
      assert.deepEqual(retry.errors.map((e) => e.message), ['failure 1', 'failure 2', 'failure 3']);
    });

    it('when every attempt times out, rejects with ERR_TIMEOUT and the attempts', async () => {
      const policy = retryPolicy({ maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, timeouts: [100, 200] });
      const run = track(runWithRetry(() => new Promise<never>(() => undefined), policy, { clock: time, timers: time }));
      await time.advance(300);
      const err = run.error();
      assert.ok(isEngineError(err) && err.code === 'ERR_TIMEOUT');
      assert.equal(err.details?.timeoutMs, 200);
      const retry = err.details?.retry as { errors: { timedOut: boolean; code: string }[] };
      assert.deepEqual(retry.errors.map((e) => [e.code, e.timedOut]), [['ERR_TIMEOUT', true], ['ERR_TIMEOUT', true]]);
      assert.equal(time.pending(), 0);
    });

    it('does not retry a non-retryable error', async () => {
      let calls = 0;
      await assert.rejects(
        runWithRetry(async () => {
          calls++;
          throw new EngineError('ERR_ACMF_DENIED', 'not allowed', { details: { agentId: 'coder-ai' } });
        }, retryPolicy(), { clock: time, timers: time }),
        (e: unknown) => isEngineError(e) && e.code === 'ERR_ACMF_DENIED' && e.details?.agentId === 'coder-ai' && (e.details.retry as { attempts: number }).attempts === 1,
      );
      assert.equal(calls, 1);
    });

    it('honours a custom isRetryable, and always retries timeouts', async () => {
      let calls = 0;
      const policy = retryPolicy({ maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, timeouts: [50] });
      const run = track(runWithRetry((attempt) => {
        calls++;
        return attempt === 1 ? new Promise<never>(() => undefined) : Promise.reject(new TypeError('boom'));
      }, policy, { clock: time, timers: time, isRetryable: () => false }));
      await time.advance(50);
      assert.equal(calls, 2);
      const err = run.error();
      assert.ok(isEngineError(err));
      assert.equal(err.code, 'ERR_SKILL_FAILED', 'a non-engine error is wrapped');
      assert.ok(err.cause instanceof TypeError);
    });

    it('waits at least the retryAfterMs an error asks for, within maxDelayMs', async () => {
      const starts: number[] = [];
      const policy = retryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 5_000, jitter: 'none', timeouts: null });
      const run = track(runWithRetry(async (attempt) => {
        starts.push(time.now() - T0);
        if (attempt === 1) throw new EngineError('ERR_SKILL_FAILED', 'breaker open', { retryable: true, details: { retryAfterMs: 2_500 } });
        if (attempt === 2) throw new EngineError('ERR_SKILL_FAILED', 'overloaded', { retryable: true, details: { retryAfterMs: 60_000 } });
        return 'ok';
      }, policy, { clock: time, timers: time }));
      await time.advance(10_000);
      assert.deepEqual(starts, [0, 2_500, 7_500]);
      assert.equal(run.value(), 'ok');
    });

    it('outer abort during an attempt rejects at once with ERR_CANCELLED and aborts the attempt', async () => {
      const outer = new AbortController();
      let inner: AbortSignal | undefined;
      const run = track(runWithRetry((_a, signal) => {
        inner = signal;
        return new Promise<never>(() => undefined);
      }, retryPolicy(), { clock: time, timers: time, signal: outer.signal }));
      await flushMicrotasks();
      outer.abort();
      await flushMicrotasks();
      assert.ok(isEngineError(run.error()) && (run.error() as EngineError).code === 'ERR_CANCELLED');
      assert.equal(inner!.aborted, true);
      assert.equal(time.pending(), 0, 'the attempt timeout is cleared');
    });

    it('outer abort during the backoff delay cancels the pending delay', async () => {
      const outer = new AbortController();
      let calls = 0;
      const policy = retryPolicy({ baseDelayMs: 5_000, jitter: 'none', timeouts: null });
      const run = track(runWithRetry(async () => {
        calls++;
        throw transient();
      }, policy, { clock: time, timers: time, signal: outer.signal }));
      await time.advance(1_000);
      assert.equal(time.pending(), 1);
      outer.abort();
      await flushMicrotasks();
      assert.equal((run.error() as EngineError).code, 'ERR_CANCELLED');
      assert.equal(time.pending(), 0);
      await time.advance(10_000);
      assert.equal(calls, 1);
    });

    it('an already aborted signal never calls fn', async () => {
      const outer = new AbortController();
      outer.abort();
      let calls = 0;
      await assert.rejects(runWithRetry(async () => ++calls, retryPolicy(), { clock: time, timers: time, signal: outer.signal }), (e: unknown) => isEngineError(e) && e.code === 'ERR_CANCELLED');
      assert.equal(calls, 0);
    });

    it('a synchronous throw in fn counts as a failed attempt', async () => {
      const policy = retryPolicy({ maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, timeouts: null });
      let calls = 0;
      const value = await runWithRetry((): Promise<string> => {
        if (++calls === 1) throw new Error('sync');
        return Promise.resolve('ok');
      }, policy, { clock: time, timers: time });
      assert.equal(value, 'ok');
      assert.equal(calls, 2);
    });
  });
});
