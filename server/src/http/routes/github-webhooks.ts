/**
 * `POST /api/webhooks/github`: GitHub's deliveries (no API key: the X-Hub-Signature-256 HMAC with the
 * integration's WebhookSecret is the authentication, checked over the raw bytes). 401 on a signature
 * that does not verify, 200 at once otherwise; processing follows (integrations/github/webhooks.ts).
 * The webhook's content type must be application/json (the app setting).
 */
import { z } from 'zod';
import type { GithubWebhookReceiver } from '../../integrations/github/webhooks';
import { defineRoute, type RouteDef } from '../route';

const Answer = z.object({ ok: z.boolean(), delivery: z.string().nullable(), duplicate: z.boolean().optional(), integration_id: z.string().optional(), detail: z.string().optional() });

export function githubWebhookRoutes(deps: { receiver: GithubWebhookReceiver }): RouteDef[] {
  return [
    defineRoute({
      method: 'POST', path: '/api/webhooks/github', auth: 'none', tenancy: 'public', rawBody: true, rateLimited: false, tags: ['integrations'],
      summary: 'GitHub App webhook receiver (X-Hub-Signature-256 verified with the WebhookSecret)',
      description: 'Events used: pull_request, pull_request_review, push, workflow_run, workflow_job, check_suite, check_run. ' +
        'A delivery id (X-GitHub-Delivery) seen before answers 200 with duplicate: true and is not processed again.',
      body: z.record(z.string(), z.unknown()),
      responses: {
        200: { description: 'Verified and accepted (processed asynchronously)', schema: Answer },
        400: { description: 'X-GitHub-Event or X-GitHub-Delivery missing', schema: Answer },
        401: { description: 'The signature does not verify (a WebhookSecret mismatch)', schema: Answer },
      },
      handler: async (ctx) => {
        const r = await deps.receiver.receive(ctx.req.headers, ctx.rawBody, ctx.body);
        return r.status === 200 ? { status: 200, body: r.body } : r.status === 400 ? { status: 400, body: r.body } : { status: 401, body: r.body };
      },
    }),
  ];
}
