/**
 * Retries with exponential backoff, jitter and progressive per-attempt timeouts (contract,
 * "Workflows and orchestration" rule 4: "Transient failures are handled with progressive timeouts,
 * exponential backoff and circuit breakers").
 *
 * `runWithRetry` knows nothing of agents or executions: it runs a function that takes an attempt
 * number and an AbortSignal, and decides when to try again. Time comes from an injected Clock and
 * Timers, randomness from an injected `random`, so every schedule is reproducible in tests.
 *
 * @example
 * const policy = retryPolicy({ maxAttempts: 3, timeouts: [30_000, 60_000, 120_000] });
 * const artifact = await runWithRetry((attempt, signal) => skill.run(ctx, signal), policy, {
 *   signal: execution.signal,
 *   timeoutFactor: () => load.timeoutFactor(agentId),
 * });
 */
import { EngineError, isEngineError } from '../errors';
import { systemClock, type Clock } from '../ports';
import { systemTimers, type TimerHandle, type Timers } from './timers';

/** How random the backoff delay is; see `backoffDelay`. */
export type Jitter = 'full' | 'equal' | 'none';

/** Timeouts that grow geometrically: attempt n gets `min(maxMs, baseMs * growth^(n-1))`. */
export interface GrowingTimeouts {
  baseMs: number;
  growth: number;
  maxMs?: number;
}

/**
 * Per-attempt timeouts: a list (attempt n uses entry n-1; the last entry repeats), a geometric
 * rule, or `null` for no timeout.
 */
export type AttemptTimeouts = readonly number[] | GrowingTimeouts | null;

/** A retry policy: plain data, so that it can live in configuration and in status output. */
export interface RetryPolicy {
  /** Total attempts, the first included (1 = no retry). */
  readonly maxAttempts: number;
  /** Delay before the second attempt, before jitter. */
  readonly baseDelayMs: number;
  /** Ceiling of any delay, before jitter. */
  readonly maxDelayMs: number;
  /** Growth of the delay per failed attempt. */
  readonly factor: number;
  readonly jitter: Jitter;
  readonly timeouts: AttemptTimeouts;
}

/**
 * Defaults (docs/decisions.md, "Retry defaults"): 3 attempts; 1 s, 2 s (capped at 30 s) with full
 * jitter; timeouts 30 s, 60 s, 120 s. Three attempts bound the worst case of a step to about
 * 3.5 minutes, which keeps a nine-agent workflow interactive.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 'full',
  timeouts: Object.freeze([30_000, 60_000, 120_000]),
});

function invalid(message: string, details: Record<string, unknown>): EngineError {
  return new EngineError('ERR_VALIDATION', `retry policy: ${message}`, { details });
}

/**
 * A validated, frozen policy: `DEFAULT_RETRY_POLICY` with `overrides` applied.
 * Throws ERR_VALIDATION for a value that would make the schedule meaningless (0 attempts, a
 * negative delay, a factor below 1, a non-positive timeout).
 */
export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const p = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1) throw invalid('maxAttempts must be an integer >= 1', { maxAttempts: p.maxAttempts });
  if (!(p.baseDelayMs >= 0) || !(p.maxDelayMs >= p.baseDelayMs)) throw invalid('need 0 <= baseDelayMs <= maxDelayMs', { baseDelayMs: p.baseDelayMs, maxDelayMs: p.maxDelayMs });
  if (!(p.factor >= 1)) throw invalid('factor must be >= 1', { factor: p.factor });
  if (!['full', 'equal', 'none'].includes(p.jitter)) throw invalid("jitter must be 'full', 'equal' or 'none'", { jitter: p.jitter });
  const timeouts = p.timeouts;
  if (Array.isArray(timeouts)) {
    if (timeouts.length === 0 || timeouts.some((t) => !(t > 0))) throw invalid('timeouts must be a non-empty list of positive numbers', { timeouts });
    return Object.freeze({ ...p, timeouts: Object.freeze([...timeouts]) });
  }
  if (timeouts !== null) {
    const g = timeouts as GrowingTimeouts;
    if (!(g.baseMs > 0) || !(g.growth >= 1) || (g.maxMs !== undefined && !(g.maxMs >= g.baseMs))) {
      throw invalid('growing timeouts need baseMs > 0, growth >= 1 and maxMs >= baseMs', { timeouts });
    }
    return Object.freeze({ ...p, timeouts: Object.freeze({ ...g }) });
  }
  return Object.freeze(p);
}

/**
 * The delay before attempt `attempt + 1`, after attempt `attempt` (1-based) failed.
 *
 * raw = min(maxDelayMs, baseDelayMs * factor^(attempt-1)), then
 * - `none`:  raw
 * - `full`:  random() * raw                 (spreads retries of many callers the most)
 * - `equal`: raw/2 + random() * raw/2       (keeps at least half of the backoff)
 *
 * rounded to a whole millisecond. `random` returns a number in [0, 1).
 */
export function backoffDelay(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'factor' | 'jitter'>, random: () => number = Math.random): number {
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** Math.max(0, attempt - 1));
  switch (policy.jitter) {
    case 'none':
      return Math.round(raw);
    case 'full':
      return Math.round(random() * raw);
    case 'equal':
      return Math.round(raw / 2 + (random() * raw) / 2);
  }
}

/** The timeout of attempt `attempt` (1-based) before any load factor, or `null` for none. */
export function attemptTimeout(attempt: number, timeouts: AttemptTimeouts): number | null {
  if (timeouts === null) return null;
  if (Array.isArray(timeouts)) {
    const list = timeouts as readonly number[];
    return list[Math.min(attempt, list.length) - 1] ?? null;
  }
  const g = timeouts as GrowingTimeouts;
  const t = g.baseMs * g.growth ** Math.max(0, attempt - 1);
  return Math.round(g.maxMs === undefined ? t : Math.min(g.maxMs, t));
}

// ---------------------------------------------------------------------------------------------
// Timeout errors
// ---------------------------------------------------------------------------------------------

/**
 * The error of an attempt that ran out of time: ERR_TIMEOUT, retryable, with
 * `details = { timeout: true, attempt, timeoutMs }` (the flag still marks it as a timeout if a
 * caller re-codes the error, e.g. into a step failure).
 */
export function timeoutError(attempt: number, timeoutMs: number): EngineError {
  return new EngineError('ERR_TIMEOUT', `attempt ${attempt} timed out after ${timeoutMs} ms`, {
    details: { timeout: true, attempt, timeoutMs },
    retryable: true,
  });
}

/** True for a timeout: ERR_TIMEOUT, or any engine error flagged `details.timeout`. */
export function isTimeoutError(err: unknown): boolean {
  return isEngineError(err) && (err.code === 'ERR_TIMEOUT' || err.details?.timeout === true);
}

/**
 * Default retry rule: an EngineError is retried when it says so (`retryable`), anything else (a
 * crashed worker, a thrown TypeError, ECONNRESET) is treated as transient. ERR_CANCELLED never is.
 */
export function defaultIsRetryable(err: unknown): boolean {
  if (isEngineError(err)) return err.code !== 'ERR_CANCELLED' && err.retryable;
  return true;
}

// ---------------------------------------------------------------------------------------------
// runWithRetry
// ---------------------------------------------------------------------------------------------

/** What `onAttempt` is told after each attempt. */
export interface AttemptReport {
  attempt: number;
  ok: boolean;
  timedOut: boolean;
  durationMs: number;
  /** The attempt's timeout after the load factor, or null. */
  timeoutMs: number | null;
  error?: unknown;
  /** Delay before the next attempt, or null when this was the last one. */
  retryInMs: number | null;
}

export interface RetryOptions {
  clock?: Clock;
  timers?: Timers;
  /** Source of jitter, in [0, 1). */
  random?: () => number;
  /** Outer cancellation: aborting rejects at once with ERR_CANCELLED and cancels a pending delay. */
  signal?: AbortSignal;
  /** Whether a thrown error deserves another attempt; timeouts always do. Default `defaultIsRetryable`. */
  isRetryable?: (err: unknown) => boolean;
  /** Called after each attempt, e.g. to publish a `step.retry` event. Must not throw. */
  onAttempt?: (report: AttemptReport) => void;
  /**
   * Multiplies each attempt's timeout, read when the attempt starts: the backpressure factor of
   * `AgentLoad.timeoutFactor` (>= 1 under load), so that steps on a busy agent get more time.
   */
  timeoutFactor?: number | (() => number);
}

/** One failed attempt, as summarised in the final error's `details.retry.errors`. */
export interface AttemptFailure {
  attempt: number;
  code: string;
  message: string;
  timedOut: boolean;
  durationMs: number;
}

type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown; timedOut: boolean };

function cancelledError(reason: string): EngineError {
  return new EngineError('ERR_CANCELLED', reason);
}

function factorOf(option: RetryOptions['timeoutFactor']): number {
  const f = typeof option === 'function' ? option() : option ?? 1;
  return Number.isFinite(f) && f > 0 ? f : 1;
}

/** A delay before the next attempt: the backoff, or an error's own retry hint if longer (capped). */
function nextDelay(attempt: number, policy: RetryPolicy, random: () => number, error: unknown): number {
  const backoff = backoffDelay(attempt, policy, random);
  // An overloaded agent or an open breaker says when to come back; retrying earlier would fail again.
  const hint = isEngineError(error) ? error.details?.retryAfterMs : undefined;
  return typeof hint === 'number' && hint > backoff ? Math.min(policy.maxDelayMs, hint) : backoff;
}

/**
 * Runs `fn` until it resolves, the policy runs out of attempts, an error is not retryable, or the
 * outer signal aborts.
 *
 * - Each attempt gets its own AbortSignal, aborted when the attempt times out or the outer signal
 *   aborts. A timed-out attempt is abandoned at once (its late result is ignored) and counts as a
 *   retryable failure (`timeoutError`).
 * - Resolves with `fn`'s value. Rejects with ERR_CANCELLED as soon as the outer signal aborts.
 *   Otherwise rejects with an EngineError that keeps the last error's code, message and
 *   retryability, adds `details.retry = { attempts, maxAttempts, errors: AttemptFailure[] }` and
 *   has the last error as `cause` (a non-engine last error becomes ERR_SKILL_FAILED, the
 *   pipeline's convention for a crash in agent code).
 */
export async function runWithRetry<T>(
  fn: (attempt: number, signal: AbortSignal) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  options: RetryOptions = {},
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const random = options.random ?? Math.random;
  const isRetryable = options.isRetryable ?? defaultIsRetryable;
  const outer = options.signal;
  const failures: AttemptFailure[] = [];

  for (let attempt = 1; ; attempt++) {
    if (outer?.aborted) throw cancelledError(`cancelled before attempt ${attempt}`);
    const base = attemptTimeout(attempt, policy.timeouts);
    const timeoutMs = base === null ? null : Math.round(base * factorOf(options.timeoutFactor));
    const started = clock.now();
    const outcome = await runAttempt(fn, attempt, timeoutMs, timers, outer);
    const durationMs = clock.now() - started;
    if (outer?.aborted) throw cancelledError(`cancelled during attempt ${attempt}`);

    if (outcome.ok) {
      options.onAttempt?.({ attempt, ok: true, timedOut: false, durationMs, timeoutMs, retryInMs: null });
      return outcome.value;
    }
    const { error, timedOut } = outcome;
    failures.push(describeFailure(attempt, error, timedOut, durationMs));
    const again = attempt < policy.maxAttempts && (timedOut || isRetryable(error));
    const retryInMs = again ? nextDelay(attempt, policy, random, error) : null;
    options.onAttempt?.({ attempt, ok: false, timedOut, durationMs, timeoutMs, error, retryInMs });
    if (retryInMs === null) throw finalError(error, failures, policy);
    await sleep(retryInMs, timers, outer);
  }
}

/** Runs one attempt, settling on its result, its timeout or the outer abort, whichever is first. */
function runAttempt<T>(
  fn: (attempt: number, signal: AbortSignal) => Promise<T>,
  attempt: number,
  timeoutMs: number | null,
  timers: Timers,
  outer: AbortSignal | undefined,
): Promise<AttemptOutcome<T>> {
  const controller = new AbortController();
  return new Promise<AttemptOutcome<T>>((resolve) => {
    let timer: TimerHandle | undefined;
    let settled = false;
    const settle = (outcome: AttemptOutcome<T>): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = (): void => {
      const error = cancelledError(`attempt ${attempt} cancelled`);
      controller.abort(error);
      settle({ ok: false, error, timedOut: false });
    };
    outer?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== null) {
      timer = timers.setTimeout(() => {
        const error = timeoutError(attempt, timeoutMs);
        // Tell the attempt to stop; its late result, if any, is ignored.
        controller.abort(error);
        settle({ ok: false, error, timedOut: true });
      }, timeoutMs);
    }
    let pending: Promise<T>;
    try {
      pending = fn(attempt, controller.signal);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (value) => settle({ ok: true, value }),
      (error: unknown) => settle({ ok: false, error, timedOut: false }),
    );
  });
}

/** Waits `ms` on the injected timers; rejects with ERR_CANCELLED (and clears the timer) on abort. */
function sleep(ms: number, timers: Timers, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError('cancelled while waiting to retry'));
    // No delay, no timer: a zero backoff (or full jitter drawing 0) retries at once.
    if (ms <= 0) return resolve();
    const onAbort = (): void => {
      timers.clearTimeout(timer);
      reject(cancelledError('cancelled while waiting to retry'));
    };
    const timer = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function describeFailure(attempt: number, error: unknown, timedOut: boolean, durationMs: number): AttemptFailure {
  const code = isEngineError(error) ? error.code : 'ERR_SKILL_FAILED';
  const message = error instanceof Error ? error.message : String(error);
  return { attempt, code, message, timedOut, durationMs };
}

function finalError(last: unknown, failures: AttemptFailure[], policy: RetryPolicy): EngineError {
  const retry = { attempts: failures.length, maxAttempts: policy.maxAttempts, errors: failures };
  if (isEngineError(last)) {
    return new EngineError(last.code, last.message, { details: { ...last.details, retry }, cause: last, retryable: last.retryable });
  }
  const message = last instanceof Error ? last.message : String(last);
  return new EngineError('ERR_SKILL_FAILED', message, { details: { retry }, cause: last, retryable: true });
}
