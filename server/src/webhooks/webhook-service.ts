/**
 * Outbound webhooks: the subscriptions (validated: event names of the catalog, destination URLs
 * through the SSRF guard), the fan-out of every `service.event` published on the bus to the
 * subscriptions that list it, test deliveries, the delivery log and manual redelivery. Sending is
 * the delivery queue's (delivery-queue.ts).
 */
import { DEFAULT_TENANT_ID, tenantOf } from '../engine/tenants/tenant-id';
import { randomBytes } from 'node:crypto';
import type { MessageBus, ServiceEvent } from '../engine/bus';
import { isWebhookEvent, WEBHOOK_EVENT_NAMES, WEBHOOK_TEST_EVENT } from '../engine/catalog/webhook-events';
import { EngineError } from '../engine/errors';
import type { Clock, Repository } from '../engine/ports';
import { destinationRefusal, type EgressPolicy } from '../net/egress-guard';
import type { DeliveryQueue } from './delivery-queue';
import type { DeliveryRecord, WebhookRecord } from './records';
import { envelopeBody } from './signing';

/** A request the API answers with 422: each offending field and why. */
export class WebhookInputError extends Error {
  constructor(readonly errors: Array<{ field: string; message: string }>, readonly extra: Record<string, unknown> = {}) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'WebhookInputError';
  }
}

export const MIN_SECRET_LENGTH = 16;

export interface WebhookInput {
  url: string;
  events: string[];
  secret: string;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  status: 'active' | 'disabled';
  disabled_reason?: string;
}

export interface DeliveryView {
  id: string;
  event: string;
  event_id: string;
  status: DeliveryRecord['status'];
  attempts: number;
  attempt_log: DeliveryRecord['attemptLog'];
  next_attempt_at?: string;
  created_at: string;
  redelivery_of?: string;
  dead_reason?: string;
}

export function webhookView(r: WebhookRecord): WebhookView {
  const active = r.enabled && !r.disabledReason;
  return {
    id: r.id, url: r.url, events: [...r.events], description: r.description, enabled: active, created_at: r.createdAt, updated_at: r.updatedAt,
    status: active ? 'active' : 'disabled', ...(r.disabledReason ? { disabled_reason: r.disabledReason } : {}),
  };
}

export function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    id: d.id, event: d.event, event_id: d.eventId, status: d.status, attempts: d.attempts, attempt_log: d.attemptLog, created_at: d.createdAt,
    ...(d.nextAttemptAt !== null && (d.status === 'pending' || d.status === 'retrying') ? { next_attempt_at: new Date(d.nextAttemptAt).toISOString() } : {}),
    ...(d.redeliveryOf ? { redelivery_of: d.redeliveryOf } : {}),
    ...(d.deadReason ? { dead_reason: d.deadReason } : {}),
  };
}

export interface WebhookServiceDeps {
  webhooks: Repository<WebhookRecord>;
  deliveries: Repository<DeliveryRecord>;
  queue: DeliveryQueue;
  clock: Clock;
  egress: () => EgressPolicy;
  /** DNS answers at registration (tests inject); default the system resolver. */
  resolve?: Parameters<typeof destinationRefusal>[2];
  /** The tenant an event belongs to (its own tenantId, else its execution's); absent: the default tenant. */
  tenantOfEvent?(e: ServiceEvent): string;
  /** Refuses a subscription of a tenant at its `webhooks` quota; absent: no quota. */
  admitTenant?(tenantId: string): void;
  log(line: string): void;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** Fans every published service event out to the subscriptions that list it. */
  attach(bus: MessageBus): () => void {
    return bus.subscribe('service.event', async (e) => void (await this.publish(e)));
  }

  /** Enqueues one delivery per active subscription listing `e.event`; resolves when they are durable. */
  async publish(e: ServiceEvent): Promise<DeliveryRecord[]> {
    // A tenant's subscriptions get its own events only.
    const tenant = this.deps.tenantOfEvent?.(e) ?? e.tenantId ?? DEFAULT_TENANT_ID;
    const targets = this.deps.webhooks.list((w) => w.enabled && !w.disabledReason && w.events.includes(e.event) && tenantOf(w) === tenant);
    if (targets.length === 0) return [];
    const eventId = newId('evt');
    const createdAt = e.occurredAt ?? new Date(this.deps.clock.now()).toISOString();
    const data = { ...e.data, ...(e.executionId && !('execution_id' in e.data) ? { execution_id: e.executionId } : {}) };
    const body = envelopeBody({ id: eventId, event: e.event, created_at: createdAt, data });
    return Promise.all(targets.map((w) => this.deps.queue.enqueue(w, { event: e.event, eventId, body, createdAt })));
  }

  async create(input: WebhookInput, actor: string | null, tenantId: string = DEFAULT_TENANT_ID): Promise<WebhookRecord> {
    this.deps.admitTenant?.(tenantId);
    await this.check(input);
    const now = new Date(this.deps.clock.now()).toISOString();
    const rec: WebhookRecord = {
      id: newId('wh'), url: input.url, events: [...new Set(input.events)], secret: input.secret, description: input.description ?? null,
      enabled: input.enabled ?? true, disabledReason: null, disabledAt: null, failingSince: null, createdBy: actor, tenantId, createdAt: now, updatedAt: now,
    };
    await this.deps.webhooks.put(rec);
    return rec;
  }

  /** A tenant's subscriptions (all of them when `tenantId` is absent), oldest first. */
  list(page: number, limit: number, tenantId?: string): { webhooks: WebhookRecord[]; total: number } {
    const all = this.deps.webhooks.list((w) => tenantId === undefined || tenantOf(w) === tenantId).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    const from = (page - 1) * limit;
    return { webhooks: all.slice(from, from + limit), total: all.length };
  }

  /** The subscription as `tenantId` sees it: another tenant's is ERR_NOT_FOUND like a missing one. */
  getFor(tenantId: string, id: string): WebhookRecord {
    const rec = this.deps.webhooks.get(id);
    if (!rec || tenantOf(rec) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no webhook subscription ${id}`, { details: { id } });
    return rec;
  }

  countOf(tenantId: string): number {
    return this.deps.webhooks.list((w) => tenantOf(w) === tenantId).length;
  }

  get(id: string): WebhookRecord {
    const rec = this.deps.webhooks.get(id);
    if (!rec) throw new EngineError('ERR_NOT_FOUND', `no webhook subscription ${id}`, { details: { id } });
    return rec;
  }

  async update(id: string, patch: Partial<WebhookInput>): Promise<WebhookRecord> {
    const cur = this.get(id);
    const next = { url: patch.url ?? cur.url, events: patch.events ?? cur.events, secret: patch.secret ?? cur.secret };
    await this.check(next, { url: patch.url !== undefined, events: patch.events !== undefined, secret: patch.secret !== undefined });
    const enabling = patch.enabled === true;
    const disabling = patch.enabled === false;
    const updated = await this.deps.webhooks.update(id, {
      url: next.url, events: [...new Set(next.events)], secret: next.secret,
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      // Enabling again clears what Cadre decided: the failing run starts over.
      ...(enabling ? { disabledReason: null, disabledAt: null, failingSince: null } : {}),
      updatedAt: new Date(this.deps.clock.now()).toISOString(),
    });
    if (disabling) await this.deps.queue.drop(id, 'the subscription was disabled by its owner');
    return updated;
  }

  async remove(id: string): Promise<void> {
    this.get(id);
    await this.deps.webhooks.delete(id);
    await this.deps.queue.forget(id);
  }

  /** A `webhook.test` delivery to this subscription only, through the same queue. */
  async test(id: string): Promise<DeliveryRecord> {
    const hook = this.active(id, 'test');
    const eventId = newId('evt');
    const createdAt = new Date(this.deps.clock.now()).toISOString();
    const body = envelopeBody({ id: eventId, event: WEBHOOK_TEST_EVENT, created_at: createdAt, data: { webhook_id: id, message: 'Test delivery from Cadre: verify X-Cadre-Signature or webhook-signature with your secret' } });
    return this.deps.queue.enqueue(hook, { event: WEBHOOK_TEST_EVENT, eventId, body, createdAt });
  }

  /** Deliveries of one subscription, newest first. */
  deliveries(id: string, page: number, limit: number): { deliveries: DeliveryRecord[]; total: number } {
    this.get(id);
    const all = this.deps.deliveries.list((d) => d.webhookId === id).sort((a, b) => b.seq - a.seq);
    const from = (page - 1) * limit;
    return { deliveries: all.slice(from, from + limit), total: all.length };
  }

  /** Sends a delivery again as a new row: same event id (`webhook-id`) and the same body bytes. */
  async redeliver(id: string, deliveryId: string): Promise<DeliveryRecord> {
    const hook = this.active(id, 'redeliver to');
    const d = this.deps.deliveries.get(deliveryId);
    if (!d || d.webhookId !== id) throw new EngineError('ERR_NOT_FOUND', `no delivery ${deliveryId} of webhook ${id}`, { details: { id: deliveryId } });
    return this.deps.queue.enqueue(hook, { event: d.event, eventId: d.eventId, body: d.body, createdAt: d.createdAt, redeliveryOf: d.id });
  }

  private active(id: string, what: string): WebhookRecord {
    const hook = this.get(id);
    if (!hook.enabled || hook.disabledReason) {
      throw new EngineError('ERR_CONFLICT', `webhook ${id} is disabled${hook.disabledReason ? ` (${hook.disabledReason})` : ''}: enable it (PATCH {"enabled": true}) to ${what} it`, { details: { id } });
    }
    return hook;
  }

  private async check(input: Pick<WebhookInput, 'url' | 'events' | 'secret'>, which = { url: true, events: true, secret: true }): Promise<void> {
    const errors: Array<{ field: string; message: string }> = [];
    let unknown = false;
    if (which.events) {
      if (input.events.length === 0) errors.push({ field: 'body.events', message: 'name at least one event' });
      input.events.forEach((name, i) => {
        if (!isWebhookEvent(name)) {
          unknown = true;
          errors.push({ field: `body.events[${i}]`, message: `unknown event ${JSON.stringify(name)}` });
        }
      });
    }
    if (which.secret && input.secret.length < MIN_SECRET_LENGTH) errors.push({ field: 'body.secret', message: `must be at least ${MIN_SECRET_LENGTH} characters (e.g. 32 random bytes in hex)` });
    if (which.url) {
      const why = await destinationRefusal(input.url, this.deps.egress(), ...(this.deps.resolve ? [this.deps.resolve] as const : []));
      if (why) errors.push({ field: 'body.url', message: why });
    }
    if (errors.length > 0) throw new WebhookInputError(errors, unknown ? { valid_events: WEBHOOK_EVENT_NAMES } : {});
  }
}
