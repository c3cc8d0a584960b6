/**
 * Outbound webhook subscriptions (docs/api.md, "Webhooks"): CRUD, a test delivery, the delivery log
 * and manual redelivery. Handlers translate to WebhookService calls; a request that parses but names
 * an unknown event or a refused URL is a 422 naming the field.
 */
import { z } from 'zod';
import { WEBHOOK_EVENT_NAMES } from '../../engine/catalog/webhook-events';
import { DELIVERY_STATUSES } from '../../webhooks/records';
import { deliveryView, webhookView, WebhookInputError, type WebhookService } from '../../webhooks/webhook-service';
import { PaginationSchema } from '../engine-schemas';
import { HttpProblem, problem } from '../problem';
import { defineRoute, type RouteDef } from '../route';

const iso = z.string();

export const WebhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  enabled: z.boolean(),
  created_at: iso,
  updated_at: iso,
  status: z.enum(['active', 'disabled']),
  disabled_reason: z.string().optional(),
}).meta({ id: 'Webhook' });

const AttemptSchema = z.object({
  attempt: z.number().int(), at: iso, status_code: z.number().int().optional(), error: z.string().optional(),
  latency_ms: z.number().int(), response_excerpt: z.string(),
});

export const DeliverySchema = z.object({
  id: z.string(),
  event: z.string(),
  event_id: z.string().describe('the webhook-id header: the same on every attempt and redelivery'),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  attempt_log: z.array(AttemptSchema),
  next_attempt_at: iso.optional(),
  created_at: iso,
  redelivery_of: z.string().optional(),
  dead_reason: z.string().optional(),
}).meta({ id: 'WebhookDelivery' });

const eventList = z.array(z.string().max(100)).max(100).describe(`event names: ${WEBHOOK_EVENT_NAMES.join(', ')}`);
const CreateSchema = z.strictObject({
  url: z.string().max(2048),
  events: eventList,
  secret: z.string().max(512).describe('signs the deliveries; write-only (never returned)'),
  description: z.string().max(500).optional(),
  enabled: z.boolean().optional(),
});
const PatchSchema = z.strictObject({
  url: z.string().max(2048).optional(),
  events: eventList.optional(),
  secret: z.string().max(512).optional(),
  description: z.string().max(500).optional(),
  enabled: z.boolean().optional(),
});
const PageQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
const hookParam = z.object({ webhook_id: z.string().min(1) });
const deliveryParam = z.object({ webhook_id: z.string().min(1), delivery_id: z.string().min(1) });
const invalid = { 422: { description: 'An unknown event name or a refused URL (the field is named; valid_events lists the names)' } } as const;

/** 422 problem+json for what parses but cannot be accepted. */
async function orUnprocessable<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WebhookInputError) {
      throw new HttpProblem(problem(422, 'ERR_WEBHOOK_INVALID', 'Invalid Webhook Subscription', err.message, { errors: err.errors, ...err.extra }));
    }
    throw err;
  }
}

export function webhookRoutes(deps: { webhooks: WebhookService }): RouteDef[] {
  const svc = deps.webhooks;
  return [
    defineRoute({
      method: 'POST', path: '/v1/webhooks', auth: 'key', tenancy: 'tenant', role: 'admin', idempotent: true, tags: ['webhooks'],
      summary: 'Subscribe a URL to webhook events',
      body: CreateSchema,
      responses: { 201: { description: 'The subscription (the secret is not echoed)', schema: WebhookSchema }, ...invalid },
      handler: async (ctx) => {
        const rec = await orUnprocessable(() => svc.create(ctx.body, ctx.actor, ctx.tenantId));
        return { status: 201, body: webhookView(rec), headers: { location: `/v1/webhooks/${rec.id}` } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/webhooks', auth: 'key', tenancy: 'tenant', tags: ['webhooks'],
      summary: 'Webhook subscriptions, oldest first',
      query: PageQuery,
      responses: { 200: { description: 'The subscriptions', schema: z.object({ webhooks: z.array(WebhookSchema), pagination: PaginationSchema }) } },
      handler: (ctx) => {
        const { webhooks, total } = svc.list(ctx.query.page, ctx.query.limit, ctx.tenantId);
        return { status: 200, body: { webhooks: webhooks.map(webhookView), pagination: { page: ctx.query.page, limit: ctx.query.limit, total } } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/webhooks/{webhook_id}', auth: 'key', tenancy: 'tenant', tags: ['webhooks'],
      summary: 'One webhook subscription (status, disabled_reason)',
      params: hookParam,
      responses: { 200: { description: 'The subscription', schema: WebhookSchema }, 404: { description: 'No such subscription' } },
      handler: (ctx) => ({ status: 200, body: webhookView(svc.getFor(ctx.tenantId, ctx.params.webhook_id)) }),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/webhooks/{webhook_id}', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['webhooks'],
      summary: 'Change url, events, secret, description; enable (also one Cadre disabled) or disable',
      params: hookParam,
      body: PatchSchema,
      responses: { 200: { description: 'The subscription', schema: WebhookSchema }, 404: { description: 'No such subscription' }, ...invalid },
      handler: async (ctx) => ({ status: 200, body: webhookView((svc.getFor(ctx.tenantId, ctx.params.webhook_id), await orUnprocessable(() => svc.update(ctx.params.webhook_id, ctx.body)))) }),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/webhooks/{webhook_id}', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['webhooks'],
      summary: 'Delete a subscription and its delivery log',
      params: hookParam,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such subscription' } },
      handler: async (ctx) => {
        svc.getFor(ctx.tenantId, ctx.params.webhook_id);
        await svc.remove(ctx.params.webhook_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/webhooks/{webhook_id}/test', auth: 'key', tenancy: 'tenant', tags: ['webhooks'],
      summary: 'Queue a webhook.test delivery to this subscription',
      params: hookParam,
      responses: { 202: { description: 'Queued (durably)', schema: z.object({ delivery: DeliverySchema }) }, 404: { description: 'No such subscription' }, 409: { description: 'The subscription is disabled' } },
      handler: async (ctx) => ({ status: 202, body: { delivery: (svc.getFor(ctx.tenantId, ctx.params.webhook_id), deliveryView(await svc.test(ctx.params.webhook_id))) } }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/webhooks/{webhook_id}/deliveries', auth: 'key', tenancy: 'tenant', tags: ['webhooks'],
      summary: 'Delivery log of a subscription, newest first (attempts, status codes, latency, response excerpts)',
      params: hookParam,
      query: PageQuery,
      responses: { 200: { description: 'The deliveries', schema: z.object({ deliveries: z.array(DeliverySchema), pagination: PaginationSchema }) }, 404: { description: 'No such subscription' } },
      handler: (ctx) => {
        svc.getFor(ctx.tenantId, ctx.params.webhook_id);
        const { deliveries, total } = svc.deliveries(ctx.params.webhook_id, ctx.query.page, ctx.query.limit);
        return { status: 200, body: { deliveries: deliveries.map(deliveryView), pagination: { page: ctx.query.page, limit: ctx.query.limit, total } } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', auth: 'key', tenancy: 'tenant', tags: ['webhooks'],
      summary: 'Send a delivery again (a new delivery row with the same event id and body)',
      params: deliveryParam,
      responses: { 202: { description: 'Queued (durably)', schema: z.object({ delivery: DeliverySchema }) }, 404: { description: 'No such subscription or delivery' }, 409: { description: 'The subscription is disabled' } },
      handler: async (ctx) => ({ status: 202, body: { delivery: (svc.getFor(ctx.tenantId, ctx.params.webhook_id), deliveryView(await svc.redeliver(ctx.params.webhook_id, ctx.params.delivery_id))) } }),
    }),
  ];
}
