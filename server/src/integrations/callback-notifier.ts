/** Delivers task completion notifications over HTTP (the engine signs and retries; this only posts). */
import type { CallbackNotifier } from '../engine/executions/execution-service';

const TIMEOUT_MS = 10_000;

export const httpCallbackNotifier: CallbackNotifier = {
  async deliver(url, body, headers) {
    const res = await fetch(url, { method: 'POST', body, headers: { ...headers, 'user-agent': 'Cadre' }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
    await res.arrayBuffer().catch(() => undefined); // drain so the connection can be reused
    return { status: res.status };
  },
};
