/**
 * Completion callbacks of tasks (`callbackUrl`): signed like webhooks, retried with backoff, delivered
 * through the side-effect ledger (intent before the POST, outcome after it) so a restart sends what was
 * not delivered, with the same delivery id and body, signed with the same secret.
 */
import type { Clock } from '../ports';
import { EngineError, isEngineError } from '../errors';
import { retryPolicy, runWithRetry, type RetryPolicy } from '../resilience/retry';
import type { Checkpoints } from './checkpoints';
import { isDone, type DurableSideEffectLedger } from './side-effect-ledger';

/** Posts a completion notification; the adapter does the HTTP. */
export interface CallbackNotifier {
  deliver(url: string, body: string, headers: Record<string, string>): Promise<{ status: number }>;
}

const CALLBACK_ATTEMPTS = 5;
/** Starts of one delivery (this process and the next ones) before it is given up on. */
const CALLBACK_ROUNDS = 3;

export interface CallbacksDeps {
  checkpoints: Checkpoints;
  ledger: DurableSideEffectLedger;
  clock: Clock;
  notifier?: CallbackNotifier;
  /** HMAC-SHA256 hex of `body` keyed with `secret` (the engine has no crypto policy of its own). */
  sign(body: string, secret: string): string;
  /**
   * The secret that signs the callbacks of the key `keyId` (the SHA-256 hex of the key, which the
   * receiver can compute): looked up when the callback is sent, so it survives a restart.
   */
  callbackSecret?(keyId: string): string | null;
  /** Overrides of the callback retry policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  log(line: string): void;
}

export class Callbacks {
  /** Secrets of this process's submissions (the caller's key hash), before the key store is asked. */
  private readonly secrets = new Map<string, string>();

  constructor(private readonly deps: CallbacksDeps) {}

  /** The secret a submission's caller gave (Principal.callbackSecret), for the callback of `executionId`. */
  remember(executionId: string, secret: string): void {
    this.secrets.set(executionId, secret);
  }

  /** Whether the callback of `executionId` has a recorded outcome (delivered, refused or given up on). */
  isDone(executionId: string): boolean {
    const r = this.deps.ledger.get(executionId, -1, 'callback');
    return r !== undefined && isDone(r);
  }

  /**
   * The secret that signs the subscriber's callback: the owner key's hash, from this process's
   * submission or, after a restart, from the key store (never the key id or the execution id, which
   * any receiver could know).
   */
  secretOf(executionId: string, ownerKeyId: string | null): string | null {
    return this.secrets.get(executionId) ?? (ownerKeyId ? this.deps.callbackSecret?.(ownerKeyId) : null) ?? null;
  }

  /**
   * POSTs the completion to `callbackUrl` through the ledger: the delivery is an intent (with its
   * delivery id) before the POST and an outcome after it. Exactly once unless the process dies between
   * the POST and the outcome record; then it is sent again after the restart with the SAME delivery id
   * (`X-Cadre-Delivery`, `Idempotency-Key`) and the same body, for the receiver to dedupe. A receiver
   * that keeps failing is given up on after CALLBACK_ROUNDS starts of the delivery (each with
   * CALLBACK_ATTEMPTS tries); a 4xx answer other than 429 is final at once.
   */
  async notify(id: string): Promise<void> {
    const cp = this.deps.checkpoints;
    const rec = cp.get(id);
    const url = rec.request.callbackUrl;
    if (!url || !this.deps.notifier) return;
    const notifier = this.deps.notifier;
    // The body is the same on every attempt (created_at is the completion's time), so is its signature.
    const event = `${rec.kind}.${rec.status}`;
    const body = JSON.stringify({ event, created_at: rec.completedAt ?? cp.now(), data: { id: rec.id, kind: rec.kind, status: rec.status, output: rec.output, error: rec.error, completedAt: rec.completedAt } });
    const secret = this.secretOf(id, rec.ownerKeyId);
    try {
      const outcome = await this.deps.ledger.once(id, -1, 1, 'callback', async ({ effectId, tries }) => {
        if (!secret) return { status: null, at: cp.now(), deliveryId: effectId, notSent: 'the key that submitted the task is unknown: nothing to sign the callback with' };
        if (tries > CALLBACK_ROUNDS) return { status: null, at: cp.now(), deliveryId: effectId, notSent: `given up after ${CALLBACK_ROUNDS} rounds of ${CALLBACK_ATTEMPTS} attempts` };
        const headers = {
          'content-type': 'application/json', 'x-cadre-signature': `sha256=${this.deps.sign(body, secret)}`, 'x-cadre-event': event,
          'x-cadre-delivery': effectId, 'idempotency-key': effectId,
        };
        try {
          const res = await runWithRetry(async () => {
            const r = await notifier.deliver(url, body, headers);
            if (r.status >= 200 && r.status < 300) return r;
            throw new EngineError('ERR_SKILL_FAILED', `callback answered ${r.status}`, { retryable: r.status >= 500 || r.status === 429, details: { status: r.status } });
          }, retryPolicy({ maxAttempts: CALLBACK_ATTEMPTS, timeouts: [10_000], ...this.deps.retry }), { clock: this.deps.clock });
          return { status: res.status, at: cp.now(), deliveryId: effectId };
        } catch (err) {
          // A refusal (4xx) will not change on a resend: recorded as the outcome. The rest stays an intent.
          const status = isEngineError(err) ? err.details?.['status'] : undefined;
          if (typeof status === 'number' && status < 500 && status !== 429) return { status, at: cp.now(), deliveryId: effectId, notSent: `the receiver refused it (${status})` };
          throw err;
        }
      });
      if (outcome.notSent) this.deps.log(`callback for ${id} to ${url} not delivered: ${outcome.notSent}`);
    } catch (err) {
      this.deps.log(`callback for ${id} to ${url} failed (sent again at the next start, same delivery id): ${(err as Error).message}`);
    }
  }
}
