import assert from 'node:assert/strict';
import { MessageBus } from '../../../server/src/engine/bus';
import { DeliveryQueue, type Timers } from '../../../server/src/webhooks/delivery-queue';
import type { SendResult } from '../../../server/src/webhooks/http-sender';
import type { DeliveryRecord, WebhookRecord } from '../../../server/src/webhooks/records';
import { WebhookInputError, WebhookService } from '../../../server/src/webhooks/webhook-service';
import { ManualClock, MemoryRepository } from '../../support/fakes';

const DAY = 86_400_000;
const LOOPBACK_DEV = { allowLoopback: true, allowPrivate: false, allowHttp: true };

/** Timers that never fire: the test moves the clock and pumps by hand. */
const manualTimers: Timers = { set: () => 0, clear: () => undefined };

interface Sent { url: string; body: string; headers: Record<string, string> }

function harness(opts: { answers?: (s: Sent, n: number) => SendResult; perSubscription?: number; retention?: number; disableAfterDays?: number } = {}) {
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
  const webhooks = new MemoryRepository<WebhookRecord>();
  const deliveries = new MemoryRepository<DeliveryRecord>();
  const sent: Sent[] = [];
  const disabled: WebhookRecord[] = [];
  const logs: string[] = [];
  let n = 0;
  const answers = opts.answers ?? (() => ({ status: 200, latencyMs: 3, excerpt: 'ok' }));
  const make = () => new DeliveryQueue({
    deliveries, webhooks, clock, random: () => 0.5, timers: manualTimers,
    send: async (url, body, headers) => {
      const s = { url, body, headers };
      sent.push(s);
      return answers(s, ++n);
    },
    retry: { baseDelayMs: 10_000, maxDelayMs: 3_600_000, windowMs: DAY },
    limits: { perSubscription: opts.perSubscription ?? 4, total: 64, retention: opts.retention ?? 100 },
    disableAfterMs: (opts.disableAfterDays ?? 3) * DAY,
    newId: (() => { let i = 0; return (p: string) => `${p}_${++i}`; })(),
    log: (l) => logs.push(l),
    onDisabled: (w) => disabled.push(w),
  });
  const queue = make();
  const service = new WebhookService({ webhooks, deliveries, queue, clock, egress: () => LOOPBACK_DEV, log: (l) => logs.push(l), resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  const bus = new MessageBus();
  service.attach(bus);
  queue.start();
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      await queue.idle();
    }
  };
  /** Moves the clock to the earliest retry and pumps. */
  const nextRetry = async () => {
    const due = deliveries.list((d) => d.status === 'retrying').map((d) => d.nextAttemptAt!).sort((a, b) => a - b)[0];
    assert.ok(due !== undefined, 'a retry is scheduled');
    clock.ms = due;
    queue.pump();
    await settle();
  };
  return { clock, webhooks, deliveries, sent, disabled, logs, queue, service, bus, settle, nextRetry, make };
}

const hookInput = { url: 'http://127.0.0.1:9/hook', events: ['code.reviewed', 'deployment.failed'], secret: 'secret-secret-secret' };

describe('webhook delivery queue', () => {
  it('fans a service event out to the subscriptions listing it, one delivery each, with the event id as webhook-id', async () => {
    const h = harness();
    const a = await h.service.create(hookInput, 'key:1');
    await h.service.create({ ...hookInput, events: ['code.generated'] }, 'key:1');
    const c = await h.service.create({ ...hookInput, url: 'http://127.0.0.1:9/other' }, 'key:1');
    const out = await h.service.publish({ event: 'code.reviewed', data: { passed: true } });
    await h.settle();
    assert.deepEqual(out.map((d) => d.webhookId).sort(), [a.id, c.id].sort());
    assert.equal(h.sent.length, 2);
    assert.equal(h.sent[0]!.headers['webhook-id'], h.sent[1]!.headers['webhook-id']);
    assert.equal(h.sent[0]!.body, h.sent[1]!.body);
    assert.equal(JSON.parse(h.sent[0]!.body).event, 'code.reviewed');
    assert.ok(h.deliveries.list().every((d) => d.status === 'delivered' && d.attempts === 1));
  });

  it('500 then 200: retried after the backoff with the same bytes and id, delivered once, attempt log kept', async () => {
    const h = harness({ answers: (_s, n) => (n === 1 ? { status: 500, latencyMs: 4, excerpt: 'boom' } : { status: 200, latencyMs: 2, excerpt: 'fine' }) });
    await h.service.create(hookInput, null);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    const [d1] = h.deliveries.list();
    assert.equal(d1!.status, 'retrying');
    assert.equal(d1!.nextAttemptAt, h.clock.now() + 5_000); // random 0.5 of base 10 s
    h.clock.advance(4_999);
    h.queue.pump();
    await h.settle();
    assert.equal(h.sent.length, 1, 'not before its time');
    await h.nextRetry();
    const [d2] = h.deliveries.list();
    assert.equal(d2!.status, 'delivered');
    assert.deepEqual(d2!.attemptLog.map((a) => [a.attempt, a.status_code, a.response_excerpt]), [[1, 500, 'boom'], [2, 200, 'fine']]);
    assert.equal(h.sent[0]!.body, h.sent[1]!.body);
    assert.equal(h.sent[0]!.headers['webhook-id'], h.sent[1]!.headers['webhook-id']);
    assert.equal(h.webhooks.list()[0]!.failingSince, null, 'a success ends the failing run');
  });

  it('410 is final at once (failed, no retry); a network error is retried', async () => {
    const h = harness({ answers: (s) => (s.url.endsWith('/gone') ? { status: 410, latencyMs: 1, excerpt: 'gone' } : { error: 'ECONNREFUSED', latencyMs: 1, excerpt: '' }) });
    await h.service.create({ ...hookInput, url: 'http://127.0.0.1:9/gone' }, null);
    await h.service.create({ ...hookInput, url: 'http://127.0.0.1:9/down' }, null);
    await h.service.publish({ event: 'deployment.failed', data: {} });
    await h.settle();
    const byUrl = (suffix: string) => h.deliveries.list().find((d) => h.webhooks.get(d.webhookId)!.url.endsWith(suffix))!;
    assert.equal(byUrl('/gone').status, 'failed');
    assert.equal(byUrl('/gone').nextAttemptAt, null);
    assert.equal(byUrl('/down').status, 'retrying');
    assert.equal(byUrl('/down').attemptLog[0]!.error, 'ECONNREFUSED');
  });

  it('honours Retry-After on 429', async () => {
    const h = harness({ answers: (_s, n) => (n === 1 ? { status: 429, retryAfter: '90', latencyMs: 1, excerpt: '' } : { status: 200, latencyMs: 1, excerpt: '' }) });
    await h.service.create(hookInput, null);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    assert.equal(h.deliveries.list()[0]!.nextAttemptAt, h.clock.now() + 90_000);
  });

  it('gives up after the retry window (dead)', async () => {
    const h = harness({ answers: () => ({ status: 503, latencyMs: 1, excerpt: '' }), disableAfterDays: 30 });
    await h.service.create(hookInput, null);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    for (let i = 0; i < 200 && h.deliveries.list()[0]!.status === 'retrying'; i++) await h.nextRetry();
    const d = h.deliveries.list()[0]!;
    assert.equal(d.status, 'dead');
    assert.ok(Date.parse(d.attemptLog.at(-1)!.at) - Date.parse(d.firstAttemptAt!) <= DAY);
    assert.ok(d.attempts > 5);
  });

  it('disables a subscription failing for N days: reason in the record, log line, callback, queued rows dead', async () => {
    const h = harness({ answers: () => ({ status: 500, latencyMs: 1, excerpt: '' }), disableAfterDays: 2 });
    const hook = await h.service.create(hookInput, null);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    const since = h.webhooks.get(hook.id)!.failingSince;
    assert.equal(since, new Date(h.clock.now()).toISOString());
    // A day and a half later another event fails too: still enabled.
    h.clock.advance(1.5 * DAY);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    assert.equal(h.webhooks.get(hook.id)!.disabledReason, null);
    h.clock.advance(0.5 * DAY);
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await h.settle();
    const w = h.webhooks.get(hook.id)!;
    assert.match(w.disabledReason ?? '', /without a success/);
    assert.equal(h.disabled.length, 1);
    assert.ok(h.logs.some((l) => l.includes(`webhook ${hook.id}`) && l.includes('disabled')));
    assert.ok(h.deliveries.list().every((d) => d.status === 'dead' || d.status === 'failed'));
    // Not subscribed while disabled; enabling again resumes.
    assert.deepEqual(await h.service.publish({ event: 'code.reviewed', data: {} }), []);
    await h.service.update(hook.id, { enabled: true });
    assert.equal(h.webhooks.get(hook.id)!.failingSince, null);
    assert.equal((await h.service.publish({ event: 'code.reviewed', data: {} })).length, 1);
  });

  it('starts first attempts of a subscription in event order (concurrency 1: strict FIFO)', async () => {
    const h = harness({ perSubscription: 1 });
    await h.service.create(hookInput, null);
    for (let i = 0; i < 20; i++) await h.service.publish({ event: 'code.reviewed', data: { n: i } });
    await h.settle();
    assert.deepEqual(h.sent.map((s) => JSON.parse(s.body).data.n), [...Array(20).keys()]);
  });

  it('keeps at most `retention` final rows per subscription', async () => {
    const h = harness({ retention: 10 });
    const hook = await h.service.create(hookInput, null);
    for (let i = 0; i < 25; i++) await h.service.publish({ event: 'code.reviewed', data: { n: i } });
    await h.settle();
    await h.settle();
    const rows = h.deliveries.list((d) => d.webhookId === hook.id);
    assert.equal(rows.length, 10);
    assert.deepEqual(rows.map((r) => JSON.parse(r.body).data.n).sort((a, b) => a - b), [...Array(10).keys()].map((i) => i + 15));
  });

  it('a new queue over the same rows sends what was left queued (restart), with the same ids', async () => {
    let up = false;
    const h = harness({ answers: () => (up ? { status: 204, latencyMs: 1, excerpt: '' } : { error: 'ECONNREFUSED', latencyMs: 1, excerpt: '' }) });
    await h.service.create(hookInput, null);
    for (let i = 0; i < 3; i++) await h.service.publish({ event: 'code.reviewed', data: { n: i } });
    await h.settle();
    await h.queue.close();
    const ids = h.deliveries.list().map((d) => d.eventId).sort();
    up = true;
    h.clock.advance(DAY / 2);
    const again = h.make();
    assert.equal(again.start().queued, 3);
    await new Promise((r) => setImmediate(r));
    await again.idle();
    assert.ok(h.deliveries.list().every((d) => d.status === 'delivered'));
    const redelivered = h.sent.slice(3).map((s) => s.headers['webhook-id']).sort();
    assert.deepEqual(redelivered, ids);
  });

  it('redelivery is a new row with the same event id and body; a test delivery goes to one subscription', async () => {
    const h = harness();
    const hook = await h.service.create(hookInput, null);
    await h.service.publish({ event: 'code.reviewed', data: { x: 1 } });
    await h.settle();
    const first = h.deliveries.list()[0]!;
    const again = await h.service.redeliver(hook.id, first.id);
    await h.settle();
    assert.notEqual(again.id, first.id);
    assert.equal(again.eventId, first.eventId);
    assert.equal(h.sent[1]!.body, h.sent[0]!.body);
    const t = await h.service.test(hook.id);
    await h.settle();
    assert.equal(t.event, 'webhook.test');
    assert.equal(h.deliveries.get(t.id)!.status, 'delivered');
  });

  it('refuses unknown events (422 data: field and valid names) and short secrets', async () => {
    const h = harness();
    await assert.rejects(h.service.create({ ...hookInput, events: ['code.reviewed', 'code.generated', 'code.exploded'] }, null), (err: WebhookInputError) => {
      assert.deepEqual(err.errors.map((e) => e.field), ['body.events[2]']);
      assert.ok((err.extra['valid_events'] as string[]).includes('prediction.created'));
      return true;
    });
    await assert.rejects(h.service.create({ ...hookInput, secret: 'short' }, null), (err: WebhookInputError) => err.errors[0]!.field === 'body.secret');
  });

  it('a subscription deleted while an attempt is in flight leaves no delivery row behind', async () => {
    let release: () => void = () => undefined;
    const h = harness();
    const hook = await h.service.create(hookInput, null);
    const gate = new Promise<void>((r) => (release = r));
    // Hold the attempt until the subscription is deleted.
    (h.queue as unknown as { deps: { send: unknown } }).deps.send = async () => {
      await gate;
      return { status: 200, latencyMs: 1, excerpt: '' };
    };
    await h.service.publish({ event: 'code.reviewed', data: {} });
    await new Promise((r) => setImmediate(r));
    await h.service.remove(hook.id);
    release();
    await h.settle();
    assert.equal(h.deliveries.list().length, 0);
  });
});
