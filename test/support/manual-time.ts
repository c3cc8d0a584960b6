/**
 * A manual clock with manual timers, for tests and simulations: time only moves when `advance` is
 * called, and timers fire in due order as it passes them. Nothing here sleeps for real.
 *
 * @example
 * const time = new ManualTime(Date.parse('2026-03-09T11:00:00Z'));
 * const done = runWithRetry(fn, policy, { clock: time, timers: time });
 * await time.advance(30_000); // fires the attempt timeout, then lets promise callbacks run
 */
import type { Clock } from '../../server/src/engine/ports';
import type { TimerHandle, Timers } from '../../server/src/engine/resilience/timers';

interface PendingTimer {
  id: number;
  due: number;
  fn: () => void;
}

/** Lets every queued promise callback run (a macrotask boundary drains the microtask queue). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class ManualTime implements Clock, Timers {
  private current: number;
  private nextId = 1;
  // Kept sorted by (due, id) so that equal deadlines fire in creation order, like real timers.
  private timers: PendingTimer[] = [];

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, due: this.current + Math.max(0, ms), fn };
    const at = this.timers.findIndex((t) => t.due > timer.due);
    if (at === -1) this.timers.push(timer);
    else this.timers.splice(at, 0, timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers not yet fired or cleared. */
  pending(): number {
    return this.timers.length;
  }

  /** Deadline of the next timer, if any. */
  nextDue(): number | undefined {
    return this.timers[0]?.due;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due on the way at its own instant and
   * draining promise callbacks after each one (so a timer set by a callback still fires if due).
   */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.current + ms);
  }

  /** Moves time forward to `instantMs` (never backwards), firing due timers on the way. */
  async advanceTo(instantMs: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      const next = this.timers[0];
      if (next === undefined || next.due > instantMs) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.due);
      next.fn();
      await flushMicrotasks();
    }
    this.current = Math.max(this.current, instantMs);
    await flushMicrotasks();
  }

  /** Sets the clock without firing timers (for jumping between scenarios in schedule tests). */
  set(instantMs: number): void {
    this.current = instantMs;
  }
}
