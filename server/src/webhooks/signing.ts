/**
 * The bytes of a delivery and their signatures.
 *
 * - Body: the JSON envelope `{id, event, type, created_at, data}` serialised once at enqueue and sent
 *   as these exact bytes on every attempt. `type` repeats `event` for receivers written against the
 *   Standard Webhooks payload shape. No `signature` field in the body: a body cannot carry the
 *   HMAC of itself; the headers carry it (docs/decisions.md, "Outbound webhooks: envelope").
 * - `X-Cadre-Signature: sha256=<hex>`: HMAC-SHA256 of the exact body bytes, keyed with the UTF-8
 *   bytes of the subscription secret (contract, Authentication 4).
 * - Standard Webhooks: `webhook-id` (the event id), `webhook-timestamp` (seconds, at sending),
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. The key: a secret of
 *   the form `whsec_<base64>` is that base64's bytes (what `new Webhook(secret)` expects); any other
 *   secret is its UTF-8 bytes (verify with `new Webhook(secret, {format: 'raw'})`).
 */
import { createHmac } from 'node:crypto';

export const USER_AGENT = 'Cadre-Webhooks/0.1 (+https://cadre.dev/docs/webhooks)';

export interface Envelope {
  id: string;
  event: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** The exact bytes sent (as a string: JSON is ASCII-safe UTF-8 text). */
export function envelopeBody(e: Envelope): string {
  return JSON.stringify({ id: e.id, event: e.event, type: e.event, created_at: e.created_at, data: e.data });
}

/** `sha256=<lower-case hex HMAC-SHA256 of body keyed with secret>`. */
export function cadreSignature(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;
}

/** The Standard Webhooks key of a subscription secret (see the header comment). */
export function standardKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const raw = Buffer.from(secret.slice('whsec_'.length), 'base64');
    if (raw.length > 0) return raw;
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,<base64>` over `<id>.<timestamp>.<body>`. */
export function standardSignature(id: string, timestampS: number, body: string | Buffer, secret: string): string {
  const mac = createHmac('sha256', standardKey(secret)).update(`${id}.${timestampS}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** Every header of one attempt. */
export function deliveryHeaders(opts: { eventId: string; event: string; deliveryId: string; body: string; secret: string; nowMs: number }): Record<string, string> {
  const ts = Math.floor(opts.nowMs / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-cadre-signature': cadreSignature(opts.body, opts.secret),
    'x-cadre-event': opts.event,
    'x-cadre-delivery': opts.deliveryId,
    'webhook-id': opts.eventId,
    'webhook-timestamp': String(ts),
    'webhook-signature': standardSignature(opts.eventId, ts, opts.body, opts.secret),
  };
}
