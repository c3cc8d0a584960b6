/**
 * Retries with exponential backoff and full jitter, cancellable by an AbortSignal. A thrown error is
 * retried when retryable (not a cancellation; an EngineError only when it says so); a returned value
 * is retried when `retryResult` says so, and handed back as it is once attempts run out.
 */
import { EngineError, isEngineError } from '../errors';

export interface RetryOptions {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  signal?: AbortSignal;
  random?: () => number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 10_000 };

export type RetryOutcome<T> = { ok: true; result: T; attempts: number } | { ok: false; error: unknown; attempts: number };

export function isRetryable(err: unknown): boolean {
  if (isEngineError(err)) return err.code !== 'ERR_CANCELLED' && err.retryable;
  return true;
}

/** Full jitter: a uniform delay in [0, min(max, base·2^(attempt−1))]. */
export function backoffDelay(attempt: number, opts: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  return Math.round(random() * Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1)));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function cancelled(signal: AbortSignal): EngineError {
  return isEngineError(signal.reason) ? signal.reason : new EngineError('ERR_CANCELLED', 'cancelled');
}

export async function runWithRetries<T>(
  fn: (attempt: number) => Promise<T>,
  options: Partial<RetryOptions> & { retryResult?: (value: T) => boolean } = {},
): Promise<RetryOutcome<T>> {
  const opts = { ...DEFAULT_RETRY, ...options };
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw cancelled(opts.signal);
    try {
      const result = await fn(attempt);
      if (attempt < opts.maxAttempts && options.retryResult?.(result)) {
        await sleep(backoffDelay(attempt, opts, opts.random), opts.signal);
        continue;
      }
      return { ok: true, result, attempts: attempt };
    } catch (err) {
      if (isEngineError(err) && err.code === 'ERR_CANCELLED') throw err;
      if (attempt >= opts.maxAttempts || !isRetryable(err)) return { ok: false, error: err, attempts: attempt };
      await sleep(backoffDelay(attempt, opts, opts.random), opts.signal);
    }
  }
}
