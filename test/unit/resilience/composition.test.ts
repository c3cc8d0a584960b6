import assert from 'node:assert/strict';
import { EngineError } from '../../../server/src/engine/errors';
import { AgentLoad, overloadedError } from '../../../server/src/engine/load/agent-load';
import { CircuitBreakers, circuitOpenError } from '../../../server/src/engine/resilience/circuit-breaker';
import { ManualTime } from '../../../server/src/engine/resilience/manual-time';
import { retryPolicy, runWithRetry, type AttemptReport } from '../../../server/src/engine/resilience/retry';

/** How the execution service is expected to combine the blocks around one agent step. */
describe('resilience: retry + breaker + load together', () => {
  it('an open breaker makes the retry wait for the probe, which then closes it', async () => {
    const time = new ManualTime(Date.parse('2026-03-09T15:00:00Z'));
    const t0 = time.now();
    const breakers = new CircuitBreakers({ clock: time, options: { failureThreshold: 2, baseCooldownMs: 5_000 } });
    const load = new AgentLoad({ agents: [{ id: 'coder-ai', capacity: 4 }], clock: time });
    const reports: AttemptReport[] = [];
    const starts: number[] = [];

    const step = async (attempt: number): Promise<string> => {
      starts.push(time.now() - t0);
      const permit = breakers.get('coder-ai').acquire();
      if (!permit.ok) throw circuitOpenError('coder-ai', permit);
      const admission = load.tryAcquire('coder-ai');
      if (!admission.ok) {
        permit.release(true);
        throw overloadedError(admission);
      }
      const slot = admission.queued ? await admission.slot : admission.slot;
      try {
        if (attempt <= 2) throw new EngineError('ERR_SKILL_FAILED', 'worker crashed', { retryable: true });
        permit.release(true);
        return 'done';
      } catch (err) {
        permit.release(false);
        throw err;
      } finally {
        slot.release();
      }
    };

    const policy = retryPolicy({ maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 10_000, jitter: 'none', timeouts: [30_000] });
    const result = runWithRetry(step, policy, { clock: time, timers: time, timeoutFactor: () => load.timeoutFactor('coder-ai'), onAttempt: (r) => reports.push(r) });
    await time.advance(10_000);

    assert.equal(await result, 'done');
    // 0 fail, 100 fail (breaker opens until 5100), 300 refused (retry-after 4800 beats the 400 backoff), 5100 probe succeeds.
    assert.deepEqual(starts, [0, 100, 300, 5_100]);
    assert.deepEqual(reports.map((r) => r.retryInMs), [100, 200, 4_800, null]);
    assert.equal(breakers.get('coder-ai').state, 'closed');
    assert.equal(load.stats('coder-ai').running, 0);
  });
});
