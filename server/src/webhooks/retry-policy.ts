/**
 * When a failed delivery is tried again. Pure functions of the attempt number, the answer and a
 * random number, so tests drive them with a fixed clock and a seeded random.
 *
 * - Retried: network errors (including timeouts and the SSRF guard refusing a DNS answer, which may
 *   change), 5xx, 408 and 429. Any other status (4xx, and 3xx since redirects are not followed) is
 *   final at once.
 * - Delay before attempt n+1: full jitter, `random() * min(maxDelay, baseDelay * 2^(n-1))`, at least
 *   1 s; a `Retry-After` (seconds or HTTP date) on a 429/503 replaces it (capped at maxDelay).
 * - Given up (`dead`) once the next attempt would start later than `windowMs` after the first one.
 */

export interface RetryPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long after the first attempt retries go on (about a day). */
  windowMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ baseDelayMs: 30_000, maxDelayMs: 4 * 60 * 60_000, windowMs: 24 * 60 * 60_000 });

const MIN_DELAY_MS = 1_000;

export type AttemptResult = { kind: 'status'; status: number; retryAfter?: string | undefined } | { kind: 'error'; message: string };

/** True when the answer is worth another attempt. */
export function isRetryable(r: AttemptResult): boolean {
  if (r.kind === 'error') return true;
  return r.status >= 500 || r.status === 429 || r.status === 408;
}

export function isSuccess(r: AttemptResult): boolean {
  return r.kind === 'status' && r.status >= 200 && r.status < 300;
}

/** Milliseconds from `nowMs` that a Retry-After header asks for, or null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/** Full-jitter delay after the `attempt`-th (1-based) failed attempt. */
export function backoffDelay(attempt: number, random: () => number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 40));
  return Math.max(MIN_DELAY_MS, Math.floor(random() * ceiling));
}

/**
 * Epoch ms of the next attempt after a retryable failure, or null when the retry window is spent.
 * `firstAttemptMs` is when the first attempt of the delivery started.
 */
export function nextAttemptAt(opts: { attempt: number; nowMs: number; firstAttemptMs: number; result: AttemptResult; random: () => number; policy?: RetryPolicy }): number | null {
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const asked = opts.result.kind === 'status' && (opts.result.status === 429 || opts.result.status === 503) ? parseRetryAfter(opts.result.retryAfter, opts.nowMs) : null;
  const delay = asked !== null ? Math.min(policy.maxDelayMs, Math.max(MIN_DELAY_MS, asked)) : backoffDelay(opts.attempt, opts.random, policy);
  const at = opts.nowMs + delay;
  return at > opts.firstAttemptMs + policy.windowMs ? null : at;
}

/** True when a subscription failing without a success since `failingSinceMs` is to be disabled. */
export function shouldDisable(failingSinceMs: number | null, nowMs: number, disableAfterMs: number): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= disableAfterMs;
}
