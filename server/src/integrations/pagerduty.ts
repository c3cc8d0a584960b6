/**
 * PagerDuty v3 webhooks (the contract's incident-management provider, "third webhook generation").
 *
 * `X-PagerDuty-Signature` holds one or more comma-separated `v1=<hex>` values: during a secret
 * rotation PagerDuty signs with every active secret. The delivery verifies when any v1 value is the
 * HMAC-SHA256 (hex) of the raw body under the configured secret; values of other schemes are ignored.
 * `X-Webhook-Id` identifies the delivery (the dedupe key; a retry of the same delivery carries it again).
 */
import { hexMatches } from './signatures';

export const PAGERDUTY_SIGNATURE_HEADER = 'x-pagerduty-signature';
export const PAGERDUTY_DELIVERY_HEADER = 'x-webhook-id';

/** The v1 signatures of the header, in order (other schemes and malformed parts dropped). */
export function pagerDutySignatures(header: string | undefined): string[] {
  if (!header) return [];
  return header.split(',').map((p) => p.trim()).filter((p) => p.startsWith('v1=')).map((p) => p.slice(3)).filter((h) => /^[0-9a-f]{64}$/i.test(h));
}

/** Any v1 value matches (constant-time per value; every value is checked so the time does not tell which). */
export function verifyPagerDuty(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  let ok = false;
  for (const sig of pagerDutySignatures(header)) ok = hexMatches(secret, rawBody, sig) || ok;
  return ok;
}

/** The event type of a v3 payload (`event.event_type`), or null. */
export function pagerDutyEventType(body: unknown): string | null {
  const ev = (body as { event?: { event_type?: unknown } } | null)?.event;
  return typeof ev?.event_type === 'string' ? ev.event_type : null;
}

/** The delivery id: `X-Webhook-Id`, else the event's own id (PagerDuty sends both). */
export function pagerDutyDeliveryId(header: string | undefined, body: unknown): string | null {
  if (header && header.length <= 200) return header;
  const id = (body as { event?: { id?: unknown } } | null)?.event?.id;
  return typeof id === 'string' && id.length <= 200 ? id : null;
}
