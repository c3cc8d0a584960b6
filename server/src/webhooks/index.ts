/**
 * Outbound webhooks, composed: subscriptions and deliveries in the store, an SSRF-guarded HTTP
 * sender, the durable delivery queue, and the bus subscription that turns every `service.event`
 * into deliveries. The host (host/runtime.ts) starts it after the store is open and closes it
 * before the store.
 */
import { randomBytes } from 'node:crypto';
import type { MessageBus, ServiceEvent } from '../engine/bus';
import { systemClock, type Clock, type CollectionStore } from '../engine/ports';
import type { CadreConfig } from '../config/schema';
import { guardedAgent, type EgressPolicy } from '../net/egress-guard';
import { DeliveryQueue, type Timers } from './delivery-queue';
import { httpSender, type Sender } from './http-sender';
import { DELIVERIES_COLLECTION, WEBHOOKS_COLLECTION, type DeliveryRecord, type WebhookRecord } from './records';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy';
import { WebhookService } from './webhook-service';

export type WebhooksConfig = CadreConfig['webhooks'];

/** The SSRF policy of the webhooks section (also applied to task callbacks). */
export function egressPolicyOf(c: WebhooksConfig): EgressPolicy {
  return { allowLoopback: c.allow_loopback, allowPrivate: c.allow_private, allowHttp: c.allow_http };
}

export interface WebhooksOptions {
  store: CollectionStore;
  bus: MessageBus;
  config: WebhooksConfig;
  log(line: string): void;
  clock?: Clock;
  /** Replaces the HTTP sender (unit tests). */
  send?: Sender;
  retry?: Partial<RetryPolicy>;
  timers?: Timers;
  random?: () => number;
  onDisabled?(webhook: WebhookRecord): void;
  /** The tenant of a service event (from its execution); absent: the event's own tenantId or the default tenant. */
  tenantOfEvent?(e: ServiceEvent): string;
  admitTenant?(tenantId: string): void;
}

export interface Webhooks {
  service: WebhookService;
  queue: DeliveryQueue;
  close(): Promise<void>;
}

export function startWebhooks(opts: WebhooksOptions): Webhooks {
  const clock = opts.clock ?? systemClock;
  const policy = egressPolicyOf(opts.config);
  const agent = opts.send ? null : guardedAgent(policy, { connectTimeoutMs: opts.config.timeout_ms, headersTimeoutMs: opts.config.timeout_ms, bodyTimeoutMs: opts.config.timeout_ms, connections: opts.config.concurrency_per_subscription });
  const send = opts.send ?? httpSender({ agent: agent!, policy: () => policy, timeoutMs: opts.config.timeout_ms });
  const webhooks = opts.store.collection<WebhookRecord>(WEBHOOKS_COLLECTION);
  const deliveries = opts.store.collection<DeliveryRecord>(DELIVERIES_COLLECTION);
  const queue = new DeliveryQueue({
    deliveries, webhooks, send, clock, random: opts.random ?? Math.random,
    retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: opts.config.retry_base_delay_ms, windowMs: opts.config.retry_window_hours * 3_600_000, ...opts.retry },
    limits: { perSubscription: opts.config.concurrency_per_subscription, total: opts.config.concurrency_total, retention: opts.config.retention_per_subscription },
    disableAfterMs: opts.config.disable_after_days * 86_400_000,
    newId: (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`,
    log: opts.log,
    ...(opts.onDisabled ? { onDisabled: opts.onDisabled } : {}),
    ...(opts.timers ? { timers: opts.timers } : {}),
  });
  const service = new WebhookService({
    webhooks, deliveries, queue, clock, egress: () => policy, log: opts.log,
    ...(opts.tenantOfEvent ? { tenantOfEvent: opts.tenantOfEvent } : {}), ...(opts.admitTenant ? { admitTenant: opts.admitTenant } : {}),
  });
  const detach = service.attach(opts.bus);
  const { queued } = queue.start();
  if (queued > 0) opts.log(`webhooks: ${queued} delivery(ies) left queued by the previous run are being sent`);
  return {
    service, queue,
    close: async () => {
      detach();
      await queue.close();
      await agent?.close().catch(() => undefined);
    },
  };
}
