/**
 * The timer port. Like `Clock`, timers are injected so that retries, cooldowns and host ticks can be
 * driven by tests (see `ManualTime`) instead of real sleeps.
 */

/** An opaque handle returned by `Timers.setTimeout`; only `clearTimeout` of the same port reads it. */
export type TimerHandle = unknown;

/** One-shot timers. */
export interface Timers {
  /** Calls `fn` once after `ms` milliseconds (never synchronously). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a pending timer; a no-op for a timer that already fired or was cleared. */
  clearTimeout(handle: TimerHandle): void;
}

/** The Node/browser global timers. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};
