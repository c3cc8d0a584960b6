/**
 * Jira webhooks (the contract's tracker). Admin webhooks registered with a secret carry
 * `X-Hub-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw body; `X-Atlassian-Webhook-Identifier`
 * identifies the delivery (the same on a retry). The event name is the body's `webhookEvent`:
 * `jira:issue_created`, `jira:issue_updated`, and `sprint_started` / `sprint_closed`, which Jira sends
 * without the `jira:` prefix (the prefixed forms are accepted too).
 */
import { createHash } from 'node:crypto';
import { hexMatches } from './signatures';

export const JIRA_SIGNATURE_HEADER = 'x-hub-signature';
export const JIRA_DELIVERY_HEADER = 'x-atlassian-webhook-identifier';

export function verifyJira(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  return m ? hexMatches(secret, rawBody, m[1]!) : false;
}

export function jiraEventName(body: unknown): string | null {
  const e = (body as { webhookEvent?: unknown } | null)?.webhookEvent;
  return typeof e === 'string' ? e : null;
}

/**
 * The delivery id: `X-Atlassian-Webhook-Identifier`; without it, a hash of the raw body (a replay of
 * the same bytes is the same delivery; Jira's bodies carry a millisecond timestamp, so two events differ).
 */
export function jiraDeliveryId(header: string | undefined, rawBody: Buffer): string {
  if (header && header.length <= 200) return header;
  return `body-sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}
