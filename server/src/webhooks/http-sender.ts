/**
 * One HTTP attempt of a delivery: POST through the SSRF-guarded dispatcher, no redirects followed,
 * a deadline over the whole exchange, and the first bytes of the answer kept for the delivery log
 * (the rest is discarded so the connection can be reused).
 */
import type { Agent } from 'undici';
import { request } from 'undici';
import { urlRefusal, type EgressPolicy } from '../net/egress-guard';
import { RESPONSE_EXCERPT_BYTES } from './records';

export interface SendResult {
  /** HTTP status, absent when no answer came (network error, timeout, refused by the guard). */
  status?: number;
  retryAfter?: string;
  error?: string;
  latencyMs: number;
  excerpt: string;
}

export type Sender = (url: string, body: string, headers: Record<string, string>) => Promise<SendResult>;

export function httpSender(opts: { agent: Agent; policy: () => EgressPolicy; timeoutMs: number; now?: () => number }): Sender {
  const now = opts.now ?? (() => performance.now());
  return async (url, body, headers) => {
    const t0 = now();
    // A literal IP host never goes through the guarded lookup: it is checked here on every attempt.
    const refused = urlRefusal(url, opts.policy());
    if (refused) return { error: `refused by the SSRF guard: ${refused}`, latencyMs: 0, excerpt: '' };
    try {
      const res = await request(url, {
        method: 'POST', body, headers, dispatcher: opts.agent, signal: AbortSignal.timeout(opts.timeoutMs),
      });
      let excerpt = '';
      try {
        for await (const chunk of res.body) {
          excerpt += (chunk as Buffer).toString('utf8');
          if (excerpt.length >= RESPONSE_EXCERPT_BYTES) break;
        }
      } finally {
        // Breaking out of the loop destroys the body; an unread remainder is dropped.
        res.body.destroy();
      }
      const ra = res.headers['retry-after'];
      return {
        status: res.statusCode, latencyMs: Math.round(now() - t0), excerpt: excerpt.slice(0, RESPONSE_EXCERPT_BYTES),
        ...(typeof ra === 'string' ? { retryAfter: ra } : {}),
      };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { message?: string } };
      const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${opts.timeoutMs} ms` : `${e.code ? `${e.code}: ` : ''}${e.message}${e.cause?.message ? ` (${e.cause.message})` : ''}`;
      return { error: why, latencyMs: Math.round(now() - t0), excerpt: '' };
    }
  };
}
