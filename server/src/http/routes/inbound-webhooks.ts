/**
 * Receivers of third-party webhooks (contract: /webhooks/{incident_provider}, /webhooks/{tracker}):
 * PagerDuty v3 and Jira. No API key (the provider cannot send one): each delivery is verified with
 * the provider's signature over the exact bytes received, with the secret the configuration reads
 * from an environment variable (`integrations.incident_management.webhooks.secret`,
 * `integrations.tracker.webhooks.secret`). 401 when it does not verify; otherwise 200 at once, the
 * engine (InboundService) records the delivery id durably and processes it in the background, a
 * replayed delivery id is answered 200 and not processed again. An unknown provider, or one not
 * configured, is 404.
 */
import { z } from 'zod';
import type { CadreConfig } from '../../config/schema';
import type { Engine } from '../../engine/index';
import { jiraDeliveryId, jiraEventName, JIRA_DELIVERY_HEADER, JIRA_SIGNATURE_HEADER, verifyJira } from '../../integrations/jira';
import { pagerDutyDeliveryId, pagerDutyEventType, PAGERDUTY_DELIVERY_HEADER, PAGERDUTY_SIGNATURE_HEADER, verifyPagerDuty } from '../../integrations/pagerduty';
import { HttpProblem, problemFor } from '../problem';
import { defineRoute, type RouteDef } from '../route';

export interface InboundRouteDeps {
  engine: Pick<Engine, 'inbound'>;
  config: Pick<CadreConfig, 'integrations'>;
}

const ReceivedSchema = z.object({ received: z.literal(true), provider: z.string(), delivery_id: z.string(), event: z.string(), duplicate: z.boolean(), processed: z.enum(['later', 'never']) }).meta({ id: 'InboundReceived' });

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

/** The secret of a provider, or why the receiver is off. */
export function receiverSecret(config: Pick<CadreConfig, 'integrations'>, provider: string): { secret: string } | { off: string } {
  if (provider === 'pagerduty') {
    const im = config.integrations.incident_management;
    if (!im.enabled || !im.webhooks.enabled) return { off: 'integrations.incident_management (and its webhooks) is not enabled' };
    return im.webhooks.secret ? { secret: im.webhooks.secret } : { off: 'integrations.incident_management.webhooks.secret is not set (give ${ENV_VAR})' };
  }
  if (provider === 'jira') {
    const t = config.integrations.tracker;
    if (!t.enabled) return { off: 'integrations.tracker is not enabled' };
    return t.webhooks.secret ? { secret: t.webhooks.secret } : { off: 'integrations.tracker.webhooks.secret is not set (give ${ENV_VAR})' };
  }
  return { off: `no receiver for "${provider}" (known: pagerduty, jira)` };
}

export function inboundWebhookRoutes(deps: InboundRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'POST', path: '/webhooks/{provider}', auth: 'none', tenancy: 'public', rawBody: true, rateLimited: false, tags: ['webhooks'],
      summary: 'Inbound webhooks of PagerDuty (v3) and Jira',
      description: 'pagerduty: X-PagerDuty-Signature v1=<hex> (several during a rotation), X-Webhook-Id; jira: X-Hub-Signature sha256=<hex>, X-Atlassian-Webhook-Identifier. 200 at once, processed in the background, a replayed delivery id once.',
      params: z.object({ provider: z.string().min(1) }),
      responses: {
        200: { description: 'Received (or a replay of a delivery already received)', schema: ReceivedSchema },
        400: { description: 'Not JSON, or no delivery id' },
        401: { description: 'The signature does not verify' },
        404: { description: 'Unknown provider, or its receiver is not configured' },
      },
      handler: async (ctx) => {
        const provider = ctx.params.provider.toLowerCase();
        const s = receiverSecret(deps.config, provider);
        if ('off' in s) throw new HttpProblem(problemFor('ERR_ROUTE_NOT_FOUND', `no webhook receiver at /webhooks/${ctx.params.provider}: ${s.off}`));
        const raw = ctx.rawBody;
        const verified = provider === 'pagerduty'
          ? verifyPagerDuty(s.secret, raw, header(ctx.req.headers[PAGERDUTY_SIGNATURE_HEADER]))
          : verifyJira(s.secret, raw, header(ctx.req.headers[JIRA_SIGNATURE_HEADER]));
        if (!verified) {
          const name = provider === 'pagerduty' ? 'X-PagerDuty-Signature' : 'X-Hub-Signature';
          throw new HttpProblem(problemFor('ERR_AUTH_INVALID', `the ${name} header does not verify against the configured secret (HMAC-SHA256 of the raw body)`));
        }
        let body: unknown;
        try { body = JSON.parse(raw.toString('utf8')); } catch { throw new HttpProblem(problemFor('ERR_MALFORMED_JSON', 'the signed body is not JSON')); }
        let deliveryId: string | null; let event: string | null;
        if (provider === 'pagerduty') {
          deliveryId = pagerDutyDeliveryId(header(ctx.req.headers[PAGERDUTY_DELIVERY_HEADER]), body);
          event = pagerDutyEventType(body);
        } else {
          deliveryId = jiraDeliveryId(header(ctx.req.headers[JIRA_DELIVERY_HEADER]), raw);
          event = jiraEventName(body);
        }
        if (!deliveryId) throw new HttpProblem(problemFor('ERR_VALIDATION', 'no delivery id: X-Webhook-Id header or event.id expected', { errors: [{ field: 'header.x-webhook-id', message: 'missing' }] }));
        const ev = event ?? '(none)';
        // An event the configuration does not subscribe to is acknowledged and left alone.
        const wanted = provider === 'pagerduty' ? deps.config.integrations.incident_management.webhooks.events as readonly string[] : deps.config.integrations.tracker.webhooks.events as readonly string[];
        const subscribed = provider === 'pagerduty' ? wanted.includes(ev) : wanted.length === 0 || wanted.includes(ev.replace(/^jira:/, ''));
        const outcome = subscribed ? await deps.engine.inbound.receive(provider as 'pagerduty' | 'jira', deliveryId, ev, body) : 'accepted';
        return { status: 200, body: { received: true as const, provider, delivery_id: deliveryId, event: ev, duplicate: outcome === 'duplicate', processed: subscribed && outcome === 'accepted' ? 'later' as const : 'never' as const } };
      },
    }),
  ];
}
