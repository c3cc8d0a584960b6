import assert from 'node:assert/strict';
import { EngineError } from '../../../server/src/engine/errors';
import { AgentFleet } from '../../../server/src/engine/executions/agent-fleet';
import { runWithRetry, type AttemptReport } from '../../../server/src/engine/resilience/retry';
import { ManualTime } from '../../support/manual-time';

/**
 * The composition the execution service uses around one agent step, exercised through the real
 * AgentFleet (warm pool, then load, then breaker: agent-fleet.ts `admit`) and its retry policy, not
 * a copy of it: a crashing agent opens its breaker, the retry waits for the breaker's cool-down
 * rather than its own shorter backoff, and the probe that succeeds closes it and frees the slot.
 */
describe('resilience: the fleet admission + retry + breaker together', () => {
  it('an open breaker makes the retry wait for the probe, which then closes it', async () => {
    const time = new ManualTime(Date.parse('2026-03-09T15:00:00Z'));
    const t0 = time.now();
    const logs: string[] = [];
    const fleet = new AgentFleet({ clock: time, log: (l) => logs.push(l), retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 60_000, jitter: 'none' } });
    const reports: AttemptReport[] = [];
    const starts: number[] = [];
    const signal = new AbortController().signal;

    const step = async (attempt: number): Promise<string> => {
      starts.push(time.now() - t0);
      const admission = await fleet.admit('coder-ai', signal);
      if (attempt <= 5) {
        admission.release(false, 10);
        throw new EngineError('ERR_SKILL_FAILED', 'worker crashed', { retryable: true });
      }
      admission.release(true, 10);
      return 'done';
    };

    const result = runWithRetry(step, fleet.policy('coder-ai'), { clock: time, timers: time, timeoutFactor: () => fleet.timeoutFactor('coder-ai'), onAttempt: (r) => reports.push(r) });
    await time.advance(60_000);

    assert.equal(await result, 'done');
    // Five crashes on the backoff (100, 200, 400, 800): the fifth opens the breaker for 30 s (until 31,500).
    // The sixth attempt is refused by the open breaker and waits its retry-after (28,400) instead of the
    // 3,200 backoff; the seventh is the half-open probe and succeeds.
    assert.deepEqual(starts, [0, 100, 300, 700, 1_500, 3_100, 31_500]);
    assert.deepEqual(reports.map((r) => r.retryInMs), [100, 200, 400, 800, 1_600, 28_400, null]);
    assert.equal(fleet.status('coder-ai').breaker.state, 'closed');
    assert.equal(fleet.status('coder-ai').load.running, 0, 'every admission released its slot');
    assert.ok(logs.some((l) => /circuit breaker of coder-ai: closed -> open/.test(l)), logs.join('\n'));
  });
});
