import assert from 'node:assert/strict';
import { backoffDelay, DEFAULT_RETRY_POLICY, isRetryable, nextAttemptAt, parseRetryAfter, shouldDisable } from '../../../server/src/webhooks/retry-policy';

const HOUR = 3_600_000;

describe('webhook retry policy', () => {
  it('full jitter: delay lies in [1 s, min(cap, base·2^(n-1))], doubling per attempt', () => {
    const p = { baseDelayMs: 30_000, maxDelayMs: 4 * HOUR, windowMs: 24 * HOUR };
    for (let n = 1; n <= 12; n++) {
      const ceiling = Math.min(p.maxDelayMs, 30_000 * 2 ** (n - 1));
      assert.equal(backoffDelay(n, () => 0.999999, p), Math.floor(0.999999 * ceiling), `attempt ${n}`);
      assert.equal(backoffDelay(n, () => 0, p), 1_000);
    }
    assert.equal(backoffDelay(2, () => 0.5, p), 30_000);
  });

  it('spreads retries over about a day and then gives up', () => {
    // A seeded sequence of randoms (mean 0.5): count attempts until the window is spent.
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const first = Date.parse('2026-01-01T00:00:00Z');
    let now = first;
    let attempts = 1;
    for (;;) {
      const at = nextAttemptAt({ attempt: attempts, nowMs: now, firstAttemptMs: first, result: { kind: 'status', status: 503 }, random });
      if (at === null) break;
      now = at;
      attempts++;
    }
    assert.ok(now - first <= DEFAULT_RETRY_POLICY.windowMs);
    assert.ok(now - first > 12 * HOUR, `last retry after ${(now - first) / HOUR} h`);
    assert.ok(attempts >= 10 && attempts <= 40, `${attempts} attempts`);
  });

  it('retries network errors, 5xx, 408 and 429; not other 4xx or 3xx', () => {
    assert.equal(isRetryable({ kind: 'error', message: 'ECONNREFUSED' }), true);
    for (const s of [500, 502, 503, 504, 429, 408]) assert.equal(isRetryable({ kind: 'status', status: s }), true, String(s));
    for (const s of [400, 401, 403, 404, 410, 422, 301, 302]) assert.equal(isRetryable({ kind: 'status', status: s }), false, String(s));
  });

  it('honours Retry-After in seconds and as an HTTP date on 429 and 503', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:05:00 GMT', now), 300_000);
    assert.equal(parseRetryAfter('soon', now), null);
    const r429 = nextAttemptAt({ attempt: 1, nowMs: now, firstAttemptMs: now, result: { kind: 'status', status: 429, retryAfter: '120' }, random: () => 0 });
    assert.equal(r429, now + 120_000);
    const r503 = nextAttemptAt({ attempt: 1, nowMs: now, firstAttemptMs: now, result: { kind: 'status', status: 503, retryAfter: 'Thu, 01 Jan 2026 00:05:00 GMT' }, random: () => 0 });
    assert.equal(r503, now + 300_000);
    // On a 500 the header is not a promise: backoff applies.
    assert.equal(nextAttemptAt({ attempt: 1, nowMs: now, firstAttemptMs: now, result: { kind: 'status', status: 500, retryAfter: '120' }, random: () => 0 }), now + 1_000);
    // A Retry-After beyond the window ends the retries.
    assert.equal(nextAttemptAt({ attempt: 1, nowMs: now, firstAttemptMs: now - 23.99 * HOUR, result: { kind: 'status', status: 429, retryAfter: '3600' }, random: () => 0 }), null);
  });

  it('disables after the configured days without a success', () => {
    const day = 86_400_000;
    assert.equal(shouldDisable(null, 10 * day, 3 * day), false);
    assert.equal(shouldDisable(0, 3 * day - 1, 3 * day), false);
    assert.equal(shouldDisable(0, 3 * day, 3 * day), true);
  });
});
