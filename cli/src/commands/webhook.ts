/**
 * `cadre webhook add|list|remove|test|deliveries|redeliver`: outbound webhooks of the server
 * (POST|GET /v1/webhooks, GET|PATCH|DELETE /v1/webhooks/{id}, POST /v1/webhooks/{id}/test,
 * GET /v1/webhooks/{id}/deliveries, POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver).
 * A server without these routes answers one line saying so.
 */
import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENT_NAMES } from '../../../server/src/engine/catalog/webhook-events';
import { usage } from '../cli-error';
import type { Target } from '../connection';
import type { Json } from '../http-client';
import { examples, printData, table, withTarget } from '../context';

const UNSUPPORTED = 'this server does not support webhooks yet (no /v1/webhooks route); update it';

export function registerWebhookCommands(program: Command): void {
  const wh = program.command('webhook').description('outbound webhooks: signed HTTP notifications of the contract\'s events');
  const call = (t: Target, method: string, p: string, body?: unknown) =>
    t.api.call<Json>(method, p, body, { notFound: UNSUPPORTED });

  const add = wh.command('add <url>')
    .description('register a URL for some events (all of them when none is named); deliveries are signed with the secret')
    .option('-e, --event <event>', `an event to send (repeatable): ${WEBHOOK_EVENT_NAMES.slice(0, 4).join(', ')}, ... (cadre webhook add --help lists all)`, (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--secret <secret>', 'the signing secret (default: a new random one, printed once)')
    .option('--description <text>', 'what it is for')
    .addHelpText('after', `\nEvents:\n${WEBHOOK_EVENT_NAMES.map((e) => `  ${e}`).join('\n')}\n`)
    .action(async (url: string, o: { event: string[]; secret?: string; description?: string }, cmd: Command) => {
      try {
        new URL(url);
      } catch {
        throw usage(`"${url}" is not a URL (e.g. https://example.com/hooks/cadre)`);
      }
      const unknown = o.event.filter((e) => !WEBHOOK_EVENT_NAMES.includes(e));
      if (unknown.length > 0) throw usage(`unknown event ${unknown.map((e) => `"${e}"`).join(', ')} (cadre webhook add --help lists them)`);
      // The server never returns the secret: one the CLI makes is printed once, here.
      const secret = o.secret ?? randomBytes(32).toString('base64url');
      await withTarget(cmd, async (t, g) => {
        const events = o.event.length > 0 ? o.event : [...WEBHOOK_EVENT_NAMES];
        const r = await call(t, 'POST', '/v1/webhooks', { url, events, secret, ...(o.description ? { description: o.description } : {}) });
        printData(g, { ...r, ...(o.secret ? {} : { secret }) }, () => `${r['id']} ${r['url']} (${o.event.length > 0 ? events.join(', ') : 'all events'})${o.secret ? '' : `\nsigning secret (shown once; verify the webhook-signature header with it): ${secret}`}`);
      });
    });
  examples(add, 'cadre webhook add https://example.com/hooks/cadre --event security.vulnerability_detected --event deployment.failed');

  const list = wh.command('list').description('registered webhooks')
    .option('--page <n>', 'page', '1')
    .action(async (o: { page: string }, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `/v1/webhooks?page=${encodeURIComponent(o.page)}`);
      const items = (r['webhooks'] as Json[] | undefined) ?? [];
      printData(g, r, () => (items.length === 0 ? 'no webhooks' : table([['ID', 'URL', 'EVENTS', 'STATUS'], ...items.map((w) => [String(w['id']), String(w['url']), Array.isArray(w['events']) ? (w['events'] as string[]).join(',') : 'all', String(w['status'])])])));
    }));
  examples(list, 'cadre webhook list', 'cadre webhook list --json');

  const remove = wh.command('remove <webhookId>').description('delete a webhook')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      await call(t, 'DELETE', `/v1/webhooks/${encodeURIComponent(id)}`);
      printData(g, { id, removed: true }, () => `${id} removed`);
    }));
  examples(remove, 'cadre webhook remove wh_0123456789abcdef01234567');

  const test = wh.command('test <webhookId>').description('send a test event now and show how it was answered')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'POST', `/v1/webhooks/${encodeURIComponent(id)}/test`);
      const d = (r['delivery'] as Json | undefined) ?? {};
      printData(g, r, () => `test event queued for ${id}: delivery ${d['id']} ${d['status']} (cadre webhook deliveries ${id} shows how it was answered)`);
    }));
  examples(test, 'cadre webhook test wh_0123456789abcdef01234567');

  const deliveries = wh.command('deliveries <webhookId>').description('recent deliveries: event, status, attempts, next attempt')
    .option('--page <n>', 'page', '1')
    .action(async (id: string, o: { page: string }, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `/v1/webhooks/${encodeURIComponent(id)}/deliveries?page=${encodeURIComponent(o.page)}`);
      const items = (r['deliveries'] as Json[] | undefined) ?? [];
      printData(g, r, () => (items.length === 0 ? 'no deliveries' : table([['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'NEXT ATTEMPT'], ...items.map((d) => [String(d['id']), String(d['event']), String(d['status']), String(d['attempts']), String(d['next_attempt_at'] ?? '-')])])));
    }));
  examples(deliveries, 'cadre webhook deliveries wh_0123456789abcdef01234567 --json');

  const redeliver = wh.command('redeliver <webhookId> <deliveryId>').description('send a delivery again')
    .action(async (id: string, deliveryId: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'POST', `/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`);
      const d = (r['delivery'] as Json | undefined) ?? {};
      printData(g, r, () => `${deliveryId} queued again as ${d['id']} (${d['status']})`);
    }));
  examples(redeliver, 'cadre webhook redeliver wh_0123456789abcdef01234567 whd_0123456789abcdef01234567');
}
