/** Delivers task completion notifications over HTTP (the engine signs and retries; this only posts). */
import { fetch } from 'undici';
import type { CallbackNotifier } from '../engine/executions/execution-service';
import { guardedAgent, urlRefusal, type EgressPolicy } from '../net/egress-guard';

const TIMEOUT_MS = 10_000;

/**
 * Posts through the SSRF guard shared with the outbound webhooks (net/egress-guard.ts): the URL's
 * literal host before each post, every resolved address at connect time. A refused destination
 * throws like a network error (DNS answers can change): the engine's bounded retries give up on it
 * after their rounds, and nothing is ever sent to the refused address.
 */
export function createCallbackNotifier(policy: EgressPolicy): CallbackNotifier {
  const agent = guardedAgent(policy, { connectTimeoutMs: TIMEOUT_MS, headersTimeoutMs: TIMEOUT_MS, bodyTimeoutMs: TIMEOUT_MS });
  return {
    async deliver(url, body, headers) {
      const refused = urlRefusal(url, policy);
      if (refused) throw Object.assign(new Error(`callback to ${url} refused by the SSRF guard: ${refused}`), { code: 'ERR_EGRESS_REFUSED' });
      const res = await fetch(url, { method: 'POST', body, headers: { ...headers, 'user-agent': 'Cadre' }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error', dispatcher: agent });
      await res.arrayBuffer().catch(() => undefined); // drain so the connection can be reused
      return { status: res.status };
    },
  };
}

/** Loopback, private ranges and http allowed: for tests and local development only (the server uses the configured policy). */
export const httpCallbackNotifier: CallbackNotifier = createCallbackNotifier({ allowLoopback: true, allowPrivate: true, allowHttp: true });
