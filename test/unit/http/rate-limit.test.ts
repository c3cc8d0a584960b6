import { strict as assert } from 'node:assert';
import { request } from 'undici';
import type { ApiPlan } from '../../../server/src/auth/api-keys';
import { PLAN_LIMITS, RateLimiter, type PlanLimit } from '../../../server/src/http/rate-limit';
import { bearer, ManualClock, startTestApi } from './harness';

const SMALL: Record<ApiPlan, PlanLimit> = { startup: { hourly: 5, burst: 3 }, growth: { hourly: 50, burst: 10 }, scale: { hourly: 100, burst: 20 }, enterprise: { hourly: 1e9, burst: 1e9 } };

describe('rate limiter', () => {
  it('has the contract plans', () => {
    assert.deepEqual(PLAN_LIMITS, {
      startup: { hourly: 1000, burst: 17 }, growth: { hourly: 2500, burst: 42 }, scale: { hourly: 5000, burst: 84 }, enterprise: { hourly: 10000, burst: 167 },
    });
  });

  it('allows the startup burst of 17 in a minute, refuses the 18th, and frees slots a minute later', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0, 500));
    const rl = new RateLimiter({ clock });
    const seen = [];
    for (let i = 0; i < 17; i++) {
      seen.push(rl.take('k', 'startup'));
      clock.advance(100);
    }
    assert.ok(seen.every((d) => d.allowed));
    assert.deepEqual(seen.map((d) => d.remaining), [16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    assert.ok(seen.every((d) => d.limit === 17 && d.window === 'minute'), 'the burst binds first');
    const refused = rl.take('k', 'startup');
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.window, 'minute');
    // The first request (at :00.5, slot :00) is counted until the slot :61 begins: 61 s after :00.
    const elapsed = 1.7; // seconds since :00.5
    assert.equal(refused.resetS, Math.ceil(61 - 0.5 - elapsed));
    clock.advance(refused.resetS * 1000);
    const again = rl.take('k', 'startup');
    assert.equal(again.allowed, true);
  });

  it('never lets more than the burst through in any 60-second span (random arrivals)', () => {
    const clock = new ManualClock(1_000_000_000_123);
    const rl = new RateLimiter({ clock, plans: SMALL });
    const accepted: number[] = [];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 20000; i++) {
      clock.advance(Math.floor(rand() * 4000));
      if (rl.take('k', 'growth').allowed) accepted.push(clock.t);
    }
    for (let i = 0; i < accepted.length; i++) {
      let j = i;
      while (j < accepted.length && accepted[j]! - accepted[i]! < 60_000) j++;
      assert.ok(j - i <= 10, `at most 10 in the minute from ${accepted[i]}: got ${j - i}`);
      let h = i;
      while (h < accepted.length && accepted[h]! - accepted[i]! < 3_600_000) h++;
      assert.ok(h - i <= 50, `at most 50 in the hour from ${accepted[i]}: got ${h - i}`);
    }
    assert.ok(accepted.length > 300, 'and it does let requests through');
  });

  it('reports the minute while it has fewer left, then the hour, and refuses by the hour with its Retry-After', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
    const plans = { ...SMALL, startup: { hourly: 5, burst: 4 } };
    const rl = new RateLimiter({ clock, plans });
    const d1 = rl.take('k', 'startup'); // minute 3 left, hour 4 left
    assert.deepEqual([d1.window, d1.limit, d1.remaining, d1.resetS], ['minute', 4, 3, 61]);
    clock.advance(61_000);
    const d2 = rl.take('k', 'startup'); // minute 3 left, hour 3 left: tie → hour
    assert.deepEqual([d2.window, d2.limit, d2.remaining], ['hour', 5, 3]);
    assert.equal(d2.resetS, 3660 - 61, 'the hour frees the first request\'s slot 61 minutes after it');
    rl.take('k', 'startup');
    rl.take('k', 'startup');
    const d5 = rl.take('k', 'startup');
    assert.deepEqual([d5.allowed, d5.window, d5.remaining], [true, 'hour', 0]);
    const refused = rl.take('k', 'startup');
    assert.deepEqual([refused.allowed, refused.window, refused.limit], [false, 'hour', 5]);
    assert.equal(refused.resetS, 3660 - 61);
  });

  it('keeps keys apart, counts no refused request, and forgets idle keys', () => {
    const clock = new ManualClock();
    const rl = new RateLimiter({ clock, plans: SMALL });
    for (let i = 0; i < 3; i++) assert.ok(rl.take('a', 'startup').allowed);
    for (let i = 0; i < 10; i++) assert.equal(rl.take('a', 'startup').allowed, false);
    assert.ok(rl.take('b', 'startup').allowed, 'another key has its own budget');
    clock.advance(61_000);
    assert.equal(rl.take('a', 'startup').remaining, 1, 'refusals were not counted: 3 of 5 used, minute window empty again');
    clock.advance(3 * 3600_000);
    for (let i = 0; i < 1024; i++) rl.take('c', 'enterprise');
    assert.equal(rl.size, 1, 'idle keys were swept');
  });
});

describe('rate limits over HTTP', () => {
  it('puts X-RateLimit-* on every authenticated response and answers 429 with Retry-After past the burst', async () => {
    const api = await startTestApi({ deps: { plans: SMALL } });
    try {
      const key = await api.newKey('startup');
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof request>> | null = null;
      for (let i = 0; i < 4; i++) {
        last = await request(`${api.url}/v1/info`, { headers: bearer(key) });
        statuses.push(last.statusCode);
        assert.equal(last.headers['x-ratelimit-limit'], '3');
        if (i < 3) assert.equal(last.headers['x-ratelimit-remaining'], String(2 - i));
        assert.match(String(last.headers['x-ratelimit-reset']), /^\d+$/);
        await last.body.dump();
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const again = await request(`${api.url}/v1/info`, { headers: bearer(key) });
      assert.equal(again.statusCode, 429);
      assert.equal(again.headers['x-ratelimit-remaining'], '0');
      assert.equal(again.headers['retry-after'], again.headers['x-ratelimit-reset']);
      assert.ok(Number(again.headers['retry-after']) >= 1 && Number(again.headers['retry-after']) <= 61);
      const p = await again.body.json() as { code: string; status: number };
      assert.deepEqual([p.code, p.status], ['ERR_RATE_LIMITED', 429]);

      const health = await request(`${api.url}/v1/health`);
      assert.equal(health.statusCode, 200, '/v1/health is not limited');
      assert.equal(health.headers['x-ratelimit-limit'], undefined);
      await health.body.dump();

      const other = await request(`${api.url}/v1/info`, { headers: bearer(api.key) });
      assert.equal(other.statusCode, 200, 'another key is not affected');
      await other.body.dump();

      api.clock.advance(Number(again.headers['retry-after']) * 1000);
      const later = await request(`${api.url}/v1/info`, { headers: bearer(key) });
      assert.equal(later.statusCode, 200, 'allowed again after Retry-After');
      await later.body.dump();
    } finally {
      await api.close();
    }
  });
});
