/**
 * The durable delivery queue of the outbound webhooks: one row per (subscription, event) in the
 * store's `webhookDeliveries` collection, sent by lanes (one per subscription) under a concurrency
 * limit per subscription and one over the whole install.
 *
 * - Durable, at least once: a delivery is acknowledged once its row is on disk (journal group
 *   commit); a row still `pending`/`retrying` when the process stops or is killed is sent again at
 *   the next start with the same body and the same `webhook-id` (the event id), for the receiver to
 *   dedupe.
 * - Order: first attempts of one subscription START in enqueue order (`seq`); up to
 *   `concurrency_per_subscription` are in flight at once, and a retry waits for its backoff, so a
 *   retried event can arrive after later ones.
 * - Outcomes: 2xx `delivered`; network error, timeout, 408, 429, 5xx `retrying` until the retry
 *   window is spent (`dead`); another status `failed` at once.
 * - A subscription with no success for `disableAfterMs` since its first failure is disabled with a
 *   reason; what it still had queued turns `dead` (redeliverable by hand once it is enabled again).
 * - Memory stays bounded: per subscription only the last `retention` final rows are kept.
 */
import type { Clock, Repository } from '../engine/ports';
import { TERMINAL_DELIVERY, MAX_ATTEMPT_LOG, type AttemptEntry, type DeliveryRecord, type WebhookRecord } from './records';
import { isRetryable, isSuccess, nextAttemptAt, shouldDisable, type AttemptResult, type RetryPolicy } from './retry-policy';
import type { Sender } from './http-sender';
import { deliveryHeaders } from './signing';

export interface QueueLimits {
  perSubscription: number;
  total: number;
  /** Final rows kept per subscription. */
  retention: number;
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface DeliveryQueueDeps {
  deliveries: Repository<DeliveryRecord>;
  webhooks: Repository<WebhookRecord>;
  send: Sender;
  clock: Clock;
  random: () => number;
  retry: RetryPolicy;
  limits: QueueLimits;
  disableAfterMs: number;
  newId(prefix: string): string;
  log(line: string): void;
  /** A subscription was disabled by Cadre (log line, editor notification, audit). */
  onDisabled?(webhook: WebhookRecord): void;
  timers?: Timers;
}

interface Due { at: number; seq: number; id: string }

/** A binary min-heap of due times (then enqueue order). */
class DueHeap {
  private readonly items: Due[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): Due | undefined {
    return this.items[0];
  }
  push(d: Due): void {
    const a = this.items;
    a.push(d);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Due | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l]!, a[m]!)) m = l;
        if (r < a.length && less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

function less(x: Due, y: Due): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}

interface Lane {
  webhookId: string;
  inflight: number;
  /** Due now, in enqueue order (head index avoids shifting a long array). */
  ready: string[];
  head: number;
  waiting: DueHeap;
  /** Final rows, oldest first (pruned beyond `retention`). */
  final: string[];
}

export class DeliveryQueue {
  private readonly lanes = new Map<string, Lane>();
  private inflight = 0;
  private seq = 0;
  private timer: unknown = null;
  private timerAt = Infinity;
  private closed = false;
  private readonly running = new Set<Promise<void>>();
  /** Outcome writes not yet durable (close() waits for them). */
  private readonly writes = new Set<Promise<void>>();
  private readonly idleWaiters: Array<() => void> = [];
  private readonly timers: Timers;

  constructor(private readonly deps: DeliveryQueueDeps) {
    this.timers = deps.timers ?? realTimers;
  }

  /** Builds the lanes from the stored rows (what a previous process left queued is sent again) and starts sending. */
  start(): { queued: number } {
    const rows = this.deps.deliveries.list().sort((a, b) => a.seq - b.seq);
    let queued = 0;
    for (const r of rows) {
      this.seq = Math.max(this.seq, r.seq);
      const lane = this.lane(r.webhookId);
      if (TERMINAL_DELIVERY.has(r.status)) lane.final.push(r.id);
      else {
        this.schedule(lane, r);
        queued++;
      }
    }
    // A lowered retention applies at once.
    for (const lane of this.lanes.values()) this.prune(lane);
    this.pump();
    return { queued };
  }

  /** Adds a delivery; resolves once its row is durable. */
  async enqueue(webhook: WebhookRecord, e: { event: string; eventId: string; body: string; createdAt: string; redeliveryOf?: string }): Promise<DeliveryRecord> {
    if (this.closed) throw new Error('the webhook delivery queue is closed');
    const now = this.deps.clock.now();
    const rec: DeliveryRecord = {
      id: this.deps.newId('whd'), webhookId: webhook.id, event: e.event, eventId: e.eventId, body: e.body,
      status: 'pending', attempts: 0, attemptLog: [], nextAttemptAt: now, seq: ++this.seq,
      createdAt: e.createdAt, firstAttemptAt: null, updatedAt: new Date(now).toISOString(),
      ...(e.redeliveryOf ? { redeliveryOf: e.redeliveryOf } : {}),
    };
    await this.deps.deliveries.put(rec);
    // Sent only once acknowledged: a row the receiver saw is always a row the store holds.
    if (!this.closed) {
      this.schedule(this.lane(webhook.id), rec);
      this.pump();
    }
    return rec;
  }

  /** Counts for health and the bench. */
  stats(): { queued: number; inflight: number } {
    let queued = 0;
    for (const l of this.lanes.values()) queued += l.ready.length - l.head + l.waiting.size;
    return { queued, inflight: this.inflight };
  }

  /** Drops a deleted subscription's lane and rows. */
  async forget(webhookId: string): Promise<void> {
    this.lanes.delete(webhookId);
    const rows = this.deps.deliveries.list((d) => d.webhookId === webhookId);
    await Promise.all(rows.map((r) => this.deps.deliveries.delete(r.id)));
  }

  /** The subscription was disabled (by its owner or by Cadre): what it had queued turns `dead`. */
  async drop(webhookId: string, reason: string): Promise<number> {
    const lane = this.lanes.get(webhookId);
    if (!lane) return 0;
    const ids = [...lane.ready.slice(lane.head)];
    while (lane.waiting.size > 0) ids.push(lane.waiting.pop()!.id);
    lane.ready = [];
    lane.head = 0;
    const nowIso = new Date(this.deps.clock.now()).toISOString();
    const writes = ids.flatMap((id) => {
      const r = this.deps.deliveries.get(id);
      if (!r || TERMINAL_DELIVERY.has(r.status)) return [];
      lane.final.push(id);
      return [this.deps.deliveries.put({ ...r, status: 'dead', nextAttemptAt: null, updatedAt: nowIso, attemptLog: trimLog([...r.attemptLog]), deadReason: reason })];
    });
    await Promise.all(writes);
    this.prune(lane);
    return writes.length;
  }

  /** Starts every delivery that is due and fits the limits; arms the timer for the next one. */
  pump(): void {
    if (this.closed) return;
    const now = this.deps.clock.now();
    const { perSubscription, total } = this.deps.limits;
    let next = Infinity;
    let progress = true;
    // Round robin over the lanes, one start per lane per round: one busy subscription cannot starve the others.
    while (progress && this.inflight < total) {
      progress = false;
      for (const lane of this.lanes.values()) {
        while (lane.waiting.size > 0 && lane.waiting.peek()!.at <= now) lane.ready.push(lane.waiting.pop()!.id);
        if (lane.inflight >= perSubscription || lane.head >= lane.ready.length || this.inflight >= total) continue;
        const id = lane.ready[lane.head++]!;
        if (lane.head > 1024 && lane.head * 2 > lane.ready.length) {
          lane.ready = lane.ready.slice(lane.head);
          lane.head = 0;
        }
        this.startAttempt(lane, id);
        progress = true;
      }
    }
    for (const lane of this.lanes.values()) {
      const w = lane.waiting.peek();
      if (w && w.at < next) next = w.at;
    }
    this.arm(next);
  }

  /** Resolves when nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Stops starting attempts and waits for those in flight (their outcomes are stored). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
    await Promise.all([...this.running]);
    await Promise.all([...this.writes]);
  }

  private lane(webhookId: string): Lane {
    let lane = this.lanes.get(webhookId);
    if (!lane) this.lanes.set(webhookId, (lane = { webhookId, inflight: 0, ready: [], head: 0, waiting: new DueHeap(), final: [] }));
    return lane;
  }

  private schedule(lane: Lane, r: DeliveryRecord): void {
    const at = r.nextAttemptAt ?? this.deps.clock.now();
    if (at <= this.deps.clock.now() && r.status === 'pending') lane.ready.push(r.id);
    else lane.waiting.push({ at, seq: r.seq, id: r.id });
  }

  private arm(at: number): void {
    if (at === Infinity || this.closed) return;
    if (this.timer !== null && at >= this.timerAt) return;
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timerAt = at;
    this.timer = this.timers.set(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(0, at - this.deps.clock.now()));
  }

  private startAttempt(lane: Lane, id: string): void {
    lane.inflight++;
    this.inflight++;
    const p = this.attempt(lane, id)
      .catch((err: unknown) => this.deps.log(`webhook delivery ${id} failed unexpectedly: ${(err as Error).message}`))
      .finally(() => {
        lane.inflight--;
        this.inflight--;
        this.running.delete(p);
        if (this.inflight === 0) for (const w of this.idleWaiters.splice(0)) w();
        this.pump();
      });
    this.running.add(p);
  }

  private async attempt(lane: Lane, id: string): Promise<void> {
    const rec = this.deps.deliveries.get(id);
    if (!rec || TERMINAL_DELIVERY.has(rec.status)) return;
    const hook = this.deps.webhooks.get(rec.webhookId);
    if (!hook || !hook.enabled || hook.disabledReason) {
      this.finish(lane, rec, { status: 'dead', nextAttemptAt: null, deadReason: hook ? 'the subscription is disabled' : 'the subscription was deleted' });
      return;
    }
    const startMs = this.deps.clock.now();
    const headers = deliveryHeaders({ eventId: rec.eventId, event: rec.event, deliveryId: rec.id, body: rec.body, secret: hook.secret, nowMs: startMs });
    const sent = await this.deps.send(hook.url, rec.body, headers);
    const nowMs = this.deps.clock.now();
    // Deleted while the attempt was in flight: its rows are gone and must not come back.
    if (!this.deps.webhooks.get(rec.webhookId)) return;
    const result: AttemptResult = sent.status !== undefined ? { kind: 'status', status: sent.status, retryAfter: sent.retryAfter } : { kind: 'error', message: sent.error ?? 'no answer' };
    const entry: AttemptEntry = {
      attempt: rec.attempts + 1, at: new Date(startMs).toISOString(), latency_ms: sent.latencyMs, response_excerpt: sent.excerpt,
      ...(sent.status !== undefined ? { status_code: sent.status } : {}), ...(sent.error ? { error: sent.error } : {}),
    };
    const firstAttemptAt = rec.firstAttemptAt ?? entry.at;
    const base = { attempts: rec.attempts + 1, attemptLog: trimLog([...rec.attemptLog, entry]), firstAttemptAt };
    if (isSuccess(result)) {
      this.finish(lane, rec, { ...base, status: 'delivered', nextAttemptAt: null });
      if (hook.failingSince) this.track(this.deps.webhooks.update(hook.id, { failingSince: null }), `webhook ${hook.id}`);
      return;
    }
    const at = isRetryable(result)
      ? nextAttemptAt({ attempt: rec.attempts + 1, nowMs, firstAttemptMs: Date.parse(firstAttemptAt), result, random: this.deps.random, policy: this.deps.retry })
      : null;
    if (at !== null) {
      const updated = { ...rec, ...base, status: 'retrying' as const, nextAttemptAt: at, updatedAt: new Date(nowMs).toISOString() };
      this.track(this.deps.deliveries.put(updated), `webhook delivery ${rec.id}`);
      lane.waiting.push({ at, seq: rec.seq, id: rec.id });
    } else {
      this.finish(lane, rec, { ...base, status: isRetryable(result) ? 'dead' : 'failed', nextAttemptAt: null });
    }
    await this.failed(hook, nowMs);
  }

  /**
   * The outcome of an attempt goes to the store's next group commit; the lane's slot is not held
   * for that fsync (a crash before it is durable only means the delivery is sent again: at least
   * once). close() waits for these writes.
   */
  private finish(lane: Lane, rec: DeliveryRecord, patch: Partial<DeliveryRecord>): void {
    this.track(this.deps.deliveries.put({ ...rec, ...patch, updatedAt: new Date(this.deps.clock.now()).toISOString() }), `webhook delivery ${rec.id}`);
    lane.final.push(rec.id);
    this.prune(lane);
  }

  private track(write: Promise<unknown>, what: string): void {
    const p: Promise<void> = write.then(
      () => undefined,
      (err: unknown) => this.deps.log(`${what} not stored: ${(err as Error).message}`),
    ).finally(() => this.writes.delete(p));
    this.writes.add(p);
  }

  /** A failed attempt: starts or continues the subscription's failing run; disables it past the limit. */
  private async failed(hook: WebhookRecord, nowMs: number): Promise<void> {
    const current = this.deps.webhooks.get(hook.id);
    if (!current || current.disabledReason) return;
    if (!current.failingSince) {
      await this.deps.webhooks.update(hook.id, { failingSince: new Date(nowMs).toISOString() });
      return;
    }
    if (!shouldDisable(Date.parse(current.failingSince), nowMs, this.deps.disableAfterMs)) return;
    const days = this.deps.disableAfterMs / 86_400_000;
    const reason = `every delivery failed since ${current.failingSince} (${days} day${days === 1 ? '' : 's'} without a success); enable it again with PATCH {"enabled": true}`;
    const disabled = await this.deps.webhooks.update(hook.id, { disabledReason: reason, disabledAt: new Date(nowMs).toISOString(), updatedAt: new Date(nowMs).toISOString() });
    this.deps.log(`webhook ${hook.id} (${hook.url}) disabled: ${reason}`);
    this.deps.onDisabled?.(disabled);
    await this.drop(hook.id, `subscription disabled: ${reason}`);
  }

  private prune(lane: Lane): void {
    const excess = lane.final.length - this.deps.limits.retention;
    if (excess <= 0) return;
    for (const id of lane.final.splice(0, excess)) {
      this.deps.deliveries.delete(id).catch((err: unknown) => this.deps.log(`webhook delivery ${id} not pruned: ${(err as Error).message}`));
    }
  }
}

function trimLog(log: AttemptEntry[]): AttemptEntry[] {
  return log.length > MAX_ATTEMPT_LOG ? log.slice(log.length - MAX_ATTEMPT_LOG) : log;
}
