/**
 * What the outbound webhooks keep in the store: subscriptions (collection `webhooks`) and deliveries
 * (collection `webhookDeliveries`). Both live in the journal store, so an acknowledged write (a 201,
 * an enqueued delivery) survives a restart and a SIGKILL like every other record.
 */

export const WEBHOOKS_COLLECTION = 'webhooks';
export const DELIVERIES_COLLECTION = 'webhookDeliveries';

export interface WebhookRecord {
  /** `wh_<24 hex>`. */
  id: string;
  url: string;
  events: string[];
  /** Write-only: never returned by the API. */
  secret: string;
  description: string | null;
  /** What the owner asked for (PATCH enabled). */
  enabled: boolean;
  /** Set when Cadre disabled it (failing for `webhooks.disable_after_days`); cleared by a PATCH that enables it. */
  disabledReason: string | null;
  disabledAt: string | null;
  /** Start of the current run of failed attempts (ISO); null after any success. */
  failingSince: string | null;
  /** The API key that created it (`key:<id>` as the audit trail names it). */
  createdBy: string | null;
  /** Tenant that owns it: only that tenant's events are delivered to it (absent: the default tenant). */
  tenantId?: string;
  createdAt: string;
  updatedAt: string;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'retrying', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Final: nothing more is sent unless someone redelivers it. */
export const TERMINAL_DELIVERY: ReadonlySet<DeliveryStatus> = new Set(['delivered', 'failed', 'dead']);

export interface AttemptEntry {
  attempt: number;
  at: string;
  status_code?: number;
  error?: string;
  latency_ms: number;
  /** The first bytes of the receiver's answer (at most RESPONSE_EXCERPT_BYTES, as text). */
  response_excerpt: string;
}

export interface DeliveryRecord {
  /** `whd_<24 hex>`. */
  id: string;
  webhookId: string;
  event: string;
  /** The event's id: the `webhook-id` header, the same on every attempt and every redelivery. */
  eventId: string;
  /** The exact JSON body sent on every attempt (signed as these bytes). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** The last MAX_ATTEMPT_LOG attempts. */
  attemptLog: AttemptEntry[];
  /** Epoch ms of the next attempt (pending, retrying); null when final. */
  nextAttemptAt: number | null;
  /** Enqueue order over the whole install: first attempts of one subscription start in this order. */
  seq: number;
  createdAt: string;
  /** First attempt's time (the retry window counts from it). */
  firstAttemptAt: string | null;
  updatedAt: string;
  /** The delivery this one sends again (POST .../redeliver). */
  redeliveryOf?: string;
  /** Why it turned `dead` without its retries being spent (the subscription was disabled or deleted). */
  deadReason?: string;
}

export const MAX_ATTEMPT_LOG = 20;
export const RESPONSE_EXCERPT_BYTES = 512;
