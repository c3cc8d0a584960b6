/**
 * Per-key rate limits by plan (contract "Limits", agent task API): an hourly limit and a per-minute
 * burst, both enforced.
 *
 * Algorithm: a sliding window of 61 sub-window counters per limit (1 s slots for the minute, 60 s
 * slots for the hour). A request counts from its slot until 61 slots later, i.e. for between one
 * and one-and-a-sixtieth windows, so no span of exactly one window ever holds more than the limit;
 * the price is that a slot is freed up to 1/60 of a window late. Memory is fixed per key (two rings
 * of 61 counters) whatever the limits, and the state of a key idle for over an hour is dropped.
 * Refused requests are not counted.
 *
 * Headers (on every authenticated response): with two windows, the one that binds first is
 * reported — the window with the fewest requests remaining (on a tie, the one that frees a slot
 * later). `X-RateLimit-Limit` is that window's limit, `X-RateLimit-Remaining` what is left in it
 * after this request, `X-RateLimit-Reset` the seconds (delta, integer, rounded up) until that
 * window frees its next slot, i.e. until Remaining grows. A 429 carries the same headers with
 * Remaining 0 and `Retry-After` equal to Reset.
 */
import type { ApiPlan } from '../auth/api-keys';
import { type Clock, systemClock } from '../engine/ports';

export interface PlanLimit {
  /** Requests per hour. */
  hourly: number;
  /** Requests per minute (the contract's burst limit). */
  burst: number;
}

/** The contract's agent-task-API plans. */
export const PLAN_LIMITS: Readonly<Record<ApiPlan, PlanLimit>> = Object.freeze({
  startup: { hourly: 1000, burst: 17 },
  growth: { hourly: 2500, burst: 42 },
  scale: { hourly: 5000, burst: 84 },
  enterprise: { hourly: 10000, burst: 167 },
});

export interface RateDecision {
  allowed: boolean;
  /** Limit of the binding window. */
  limit: number;
  remaining: number;
  /** Seconds until the binding window frees a slot. */
  resetS: number;
  /** Which window binds. */
  window: 'minute' | 'hour';
}

const SLOTS = 61;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** One limit over one window: a ring of SLOTS counters, each covering window/60. */
class SlidingWindow {
  private readonly counts = new Uint32Array(SLOTS);
  private head = -Infinity;
  /** No counted request is older than this slot. */
  private oldest = -Infinity;
  total = 0;

  constructor(private readonly slotMs: number) {}

  /** Moves to the slot of `now`, dropping slots that left the window. */
  advance(now: number): number {
    const slot = Math.floor(now / this.slotMs);
    if (slot <= this.head) return this.head;
    if (slot - this.head >= SLOTS) {
      this.counts.fill(0);
      this.total = 0;
    } else {
      for (let s = this.head + 1; s <= slot; s++) {
        const i = s % SLOTS;
        this.total -= this.counts[i]!;
        this.counts[i] = 0;
      }
    }
    this.head = slot;
    return slot;
  }

  add(): void {
    this.counts[this.head % SLOTS] += 1;
    this.total++;
  }

  /** Milliseconds from `now` until the oldest counted request leaves (0 when empty). */
  msUntilFree(now: number): number {
    if (this.total === 0) return 0;
    // `oldest` only moves forward, so the scan is amortised O(1) per request.
    for (let s = Math.max(this.oldest, this.head - SLOTS + 1); s <= this.head; s++) {
      if (this.counts[s % SLOTS]! > 0) {
        this.oldest = s;
        return Math.max(0, (s + SLOTS) * this.slotMs - now);
      }
    }
    return 0;
  }
}

interface KeyState {
  plan: PlanLimit;
  minute: SlidingWindow;
  hour: SlidingWindow;
  lastSeen: number;
}

export interface RateLimiterOptions {
  plans?: Readonly<Record<ApiPlan, PlanLimit>>;
  clock?: Clock;
}

const SWEEP_EVERY = 1024;

export class RateLimiter {
  private readonly plans: Readonly<Record<ApiPlan, PlanLimit>>;
  private readonly clock: Clock;
  private readonly keys = new Map<string, KeyState>();
  private calls = 0;

  constructor(opts: RateLimiterOptions = {}) {
    this.plans = opts.plans ?? PLAN_LIMITS;
    this.clock = opts.clock ?? systemClock;
  }

  /** Counts one request of `keyId` if its plan allows it. */
  take(keyId: string, plan: ApiPlan): RateDecision {
    const now = this.clock.now();
    if (++this.calls % SWEEP_EVERY === 0) this.sweep(now);
    const limits = this.plans[plan] ?? this.plans.startup;
    let st = this.keys.get(keyId);
    if (!st || st.plan !== limits) {
      st = { plan: limits, minute: new SlidingWindow(MINUTE_MS / 60), hour: new SlidingWindow(HOUR_MS / 60), lastSeen: now };
      this.keys.set(keyId, st);
    }
    st.lastSeen = now;
    st.minute.advance(now);
    st.hour.advance(now);
    const minuteFull = st.minute.total >= limits.burst;
    const hourFull = st.hour.total >= limits.hourly;
    if (minuteFull || hourFull) {
      const m = minuteFull ? st.minute.msUntilFree(now) : -1;
      const h = hourFull ? st.hour.msUntilFree(now) : -1;
      const window = h > m ? 'hour' : 'minute';
      return { allowed: false, limit: window === 'hour' ? limits.hourly : limits.burst, remaining: 0, resetS: Math.max(1, Math.ceil(Math.max(m, h) / 1000)), window };
    }
    st.minute.add();
    st.hour.add();
    const remMinute = limits.burst - st.minute.total;
    const remHour = limits.hourly - st.hour.total;
    // The binding window: fewest remaining; on a tie the one that frees a slot later (the hour).
    if (remMinute < remHour) {
      return { allowed: true, limit: limits.burst, remaining: remMinute, resetS: Math.ceil(st.minute.msUntilFree(now) / 1000), window: 'minute' };
    }
    return { allowed: true, limit: limits.hourly, remaining: remHour, resetS: Math.ceil(st.hour.msUntilFree(now) / 1000), window: 'hour' };
  }

  /** Drops the state of a key (revoked). */
  forget(keyId: string): void {
    this.keys.delete(keyId);
  }

  /** Keys with state (bounded by the keys seen in the last hour). */
  get size(): number {
    return this.keys.size;
  }

  private sweep(now: number): void {
    for (const [id, st] of this.keys) if (now - st.lastSeen > HOUR_MS + HOUR_MS / 60) this.keys.delete(id);
  }
}
