/**
 * Outbound webhooks benchmark, against a baseline measured in the same run:
 *
 * 1. Throughput and latency: 10,000 deliveries (2,500 events × 4 subscriptions) queued at once through
 *    the real pipeline (service.event on the bus → durable rows in the journal store → signed POSTs
 *    through the SSRF-guarded undici agent) to a local receiver in another process; per-delivery
 *    latency = receipt − publish (same host clock). Baseline: the same 10,000 bodies POSTed with plain
 *    undici `request` at the same concurrency to the same receiver. Printed: deliveries/s, p50/p99
 *    latency of both and the ratios.
 * 2. SIGKILL: a child process queues 10,000 deliveries (acknowledged = durable), is killed with
 *    SIGKILL while they are being delivered, and a new process on the same data directory finishes
 *    them. Checked: every event id reached the receiver (delivered ≥ enqueued, none lost); duplicates
 *    (at-least-once) are counted.
 *
 *   npm run build is not needed (runs from sources): node --import tsx bench/webhooks.ts [--deliveries 10000]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { request, Agent } from 'undici';
import { MessageBus } from '../server/src/engine/bus';
import { cadreConfigSchema } from '../server/src/config/schema';
import { openStore, storeFilePath } from '../server/src/store';
import { startWebhooks } from '../server/src/webhooks/index';

const SUBSCRIPTIONS = 4;
const PER_SUBSCRIPTION = 8;
const SECRET = 'bench-secret-0123456789abcdef';

interface ReceiverStats { type: 'stats'; count: number; ids: string[]; latencies: number[] }

// ------------------------------------------------------------------------------------------------
// Receiver process: answers 200 at once, records webhook-id and receipt − data.t (ms).

function receiverMain(): void {
  const ids: string[] = [];
  const latencies: number[] = [];
  // The parent waits for a count without polling (a poll would copy every id while deliveries arrive).
  let waitingFor: number | null = null;
  /** Distinct deliveries: the wait is for every delivery, not for as many requests (duplicates count once). */
  const distinct = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.timeOrigin + performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      // One delivery = (subscription path, event id): an event fans out to every subscription with the same id.
      const id = `${req.url}|${String(req.headers['webhook-id'] ?? req.headers['x-bench-id'] ?? '')}`;
      const k = body.indexOf('"t":');
      if (k >= 0) latencies.push(now - Number.parseFloat(body.slice(k + 4)));
      ids.push(id);
      distinct.add(id);
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      if (waitingFor !== null && distinct.size >= waitingFor) {
        waitingFor = null;
        process.send!({ type: 'reached', count: distinct.size });
      }
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1', () => process.send!({ type: 'port', port: (server.address() as AddressInfo).port }));
  process.on('message', (m: { type: string }) => {
    if (m.type === 'wait') {
      const n = (m as unknown as { n: number }).n;
      if (distinct.size >= n) process.send!({ type: 'reached', count: distinct.size });
      else waitingFor = n;
    }
    if (m.type === 'stats') process.send!({ type: 'stats', count: ids.length, ids, latencies } satisfies ReceiverStats);
    if (m.type === 'reset') {
      ids.length = 0;
      latencies.length = 0;
      distinct.clear();
    }
    if (m.type === 'exit') process.exit(0);
  });
}

function forkSelf(args: string[]): ChildProcess {
  return fork(__filename, args, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function once<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before ${type}`));
    const onMsg = (m: { type: string }) => {
      if (m.type === type) {
        child.off('message', onMsg);
        child.off('exit', onExit);
        resolve(m as T);
      }
    };
    child.on('message', onMsg);
    child.once('exit', onExit);
  });
}

async function receiverStats(r: ChildProcess): Promise<ReceiverStats> {
  const p = once<ReceiverStats>(r, 'stats');
  r.send({ type: 'stats' });
  return p;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/** Resolves with the receiver's records once it has `n` requests (or after `timeoutMs`). */
async function waitCount(r: ChildProcess, n: number, timeoutMs: number): Promise<ReceiverStats> {
  const reached = once<{ count: number }>(r, 'reached');
  r.send({ type: 'wait', n });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([reached, new Promise((res) => (timer = setTimeout(res, timeoutMs)))]);
  clearTimeout(timer);
  return receiverStats(r);
}

// ------------------------------------------------------------------------------------------------
// The pipeline in one process (this one, or the SIGKILL child).

async function openPipeline(dir: string) {
  const store = await openStore({ file: storeFilePath(dir), log: () => undefined });
  const bus = new MessageBus((err) => console.error(`bus: ${(err as Error).message}`));
  const config = cadreConfigSchema.parse({ webhooks: { allow_loopback: true, allow_http: true, concurrency_per_subscription: PER_SUBSCRIPTION, concurrency_total: SUBSCRIPTIONS * PER_SUBSCRIPTION, retry_base_delay_ms: 200, retention_per_subscription: 20_000 } }).webhooks;
  const webhooks = startWebhooks({ store, bus, config, log: (l) => console.error(l) });
  return { store, bus, webhooks };
}

async function subscribe(p: Awaited<ReturnType<typeof openPipeline>>, url: string): Promise<void> {
  if (p.webhooks.service.list(1, 100).total >= SUBSCRIPTIONS) return;
  for (let i = 0; i < SUBSCRIPTIONS; i++) await p.webhooks.service.create({ url: `${url}/s${i}`, events: ['code.reviewed'], secret: SECRET }, null);
}

/** Publishes `events` events (each to every subscription); resolves when every delivery row is durable. */
async function publishAll(p: Awaited<ReturnType<typeof openPipeline>>, events: number): Promise<void> {
  const writes: Array<Promise<unknown>> = [];
  for (let i = 0; i < events; i++) {
    writes.push(p.webhooks.service.publish({ event: 'code.reviewed', data: { n: i, t: performance.timeOrigin + performance.now(), pad: 'x'.repeat(400) } }));
  }
  await Promise.all(writes);
}

async function killChildMain(dir: string, url: string, events: number): Promise<void> {
  const p = await openPipeline(dir);
  await subscribe(p, url);
  if (events > 0) {
    await publishAll(p, events);
    process.send!({ type: 'enqueued', deliveries: p.webhooks.queue.stats().queued + p.webhooks.queue.stats().inflight });
  } else {
    process.send!({ type: 'resumed' });
  }
  // Runs until killed (first child) or told to stop once everything is delivered (second child).
  // An EventEmitter drops a listener's promise: a failed close is reported and ends the child with 1.
  process.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    (async () => {
      await p.webhooks.close();
      await p.store.close();
    })().then(() => process.exit(0), (err: unknown) => {
      console.error(`closing the child failed: ${(err as Error).message}`);
      process.exit(1);
    });
  });
}

// ------------------------------------------------------------------------------------------------

export interface WebhooksBenchResult { ok: boolean; cadrePerSec: number; baselinePerSec: number; cadreP99: number; baselineP99: number; lost: number; duplicates: number }

export async function runWebhooksBench(opts: { deliveries?: number } = {}): Promise<WebhooksBenchResult> {
  const deliveries = opts.deliveries ?? 10_000;
  const events = Math.ceil(deliveries / SUBSCRIPTIONS);
  const total = events * SUBSCRIPTIONS;
  const receiver = forkSelf(['receiver']);
  const { port } = await once<{ port: number }>(receiver, 'port');
  const url = `http://127.0.0.1:${port}`;
  const dirs: string[] = [];
  try {
    // Baseline: plain undici POSTs of the same size, same concurrency, same receiver.
    const agent = new Agent({ connections: PER_SUBSCRIPTION });
    const body = (i: number) => JSON.stringify({ id: `evt_${i}`, event: 'code.reviewed', type: 'code.reviewed', created_at: new Date().toISOString(), data: { n: i, t: performance.timeOrigin + performance.now(), pad: 'x'.repeat(400) } });
    const bodies = Array.from({ length: total }, (_, i) => i);
    let next = 0;
    const t0 = performance.now();
    const queuedAt = performance.timeOrigin + t0;
    await Promise.all(Array.from({ length: SUBSCRIPTIONS * PER_SUBSCRIPTION }, async (_, w) => {
      for (;;) {
        const i = next++;
        if (i >= bodies.length) return;
        // The body is stamped with the time the whole batch was queued, like the Cadre run below.
        const b = body(i).replace(/"t":[0-9.]+/, `"t":${queuedAt}`);
        const res = await request(`${url}/s${w % SUBSCRIPTIONS}`, { method: 'POST', body: b, headers: { 'content-type': 'application/json', 'x-bench-id': `b${i}` }, dispatcher: agent });
        await res.body.dump();
      }
    }));
    const baseMs = performance.now() - t0;
    const base = await waitCount(receiver, total, 30_000);
    await agent.close();
    receiver.send({ type: 'reset' });

    // Cadre: publish every event at once, wait until the receiver has them all.
    const dir = await mkdtemp(path.join(tmpdir(), 'cadre-bench-wh-'));
    dirs.push(dir);
    const p = await openPipeline(dir);
    await subscribe(p, url);
    const c0 = performance.now();
    await publishAll(p, events);
    const enqueuedMs = performance.now() - c0;
    const cadre = await waitCount(receiver, total, 300_000);
    const cadreMs = performance.now() - c0;
    await p.webhooks.close();
    await p.store.close();
    receiver.send({ type: 'reset' });

    const cadrePerSec = (cadre.count / cadreMs) * 1000;
    const baselinePerSec = (base.count / baseMs) * 1000;
    const cadreP50 = pct(cadre.latencies, 50);
    const cadreP99 = pct(cadre.latencies, 99);
    const baselineP50 = pct(base.latencies, 50);
    const baselineP99 = pct(base.latencies, 99);
    console.log(`webhooks: ${total} deliveries (${events} events x ${SUBSCRIPTIONS} subscriptions, ${PER_SUBSCRIPTION} in flight per subscription)`);
    console.log(`  baseline (plain undici POSTs): ${baselinePerSec.toFixed(0)}/s, p50 ${baselineP50.toFixed(0)} ms, p99 ${baselineP99.toFixed(0)} ms (latency from the batch being queued)`);
    console.log(`  cadre (durable queue, signed, SSRF-guarded): ${cadrePerSec.toFixed(0)}/s, p50 ${cadreP50.toFixed(0)} ms, p99 ${cadreP99.toFixed(0)} ms; all ${total} rows durable after ${enqueuedMs.toFixed(0)} ms`);
    console.log(`  ratio cadre/baseline: throughput ${(cadrePerSec / baselinePerSec).toFixed(2)}x, p99 latency ${(cadreP99 / baselineP99).toFixed(2)}x`);

    // SIGKILL while delivering; a new process finishes.
    const kdir = await mkdtemp(path.join(tmpdir(), 'cadre-bench-whk-'));
    dirs.push(kdir);
    const first = forkSelf(['kill-child', kdir, url, String(events)]);
    await once(first, 'enqueued');
    const before = await waitCount(receiver, Math.floor(total / 4), 60_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const atKill = (await receiverStats(receiver)).count;
    const second = forkSelf(['kill-child', kdir, url, '0']);
    await once(second, 'resumed');
    const after = await waitCount(receiver, total, 300_000);
    second.send({ type: 'stop' });
    await new Promise((r) => second.once('exit', r));
    const unique = new Set(after.ids);
    const lost = Math.max(0, total - unique.size);
    const duplicates = after.ids.length - unique.size;
    console.log(`  SIGKILL after ${before.count} of ${total} were received (${atKill} when the process died): after the restart ${after.ids.length} received, ${unique.size} distinct (subscription, event id) deliveries, ${lost} lost, ${duplicates} duplicate(s) (at-least-once)`);
    const ok = lost === 0 && after.ids.length >= total;
    console.log(`  ${ok ? 'met' : 'NOT met'}: delivered >= enqueued, no id lost`);
    return { ok, cadrePerSec, baselinePerSec, cadreP99, baselineP99, lost, duplicates };
  } finally {
    receiver.send({ type: 'exit' });
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'receiver') receiverMain();
else if (mode === 'kill-child') void killChildMain(rest[0]!, rest[1]!, Number(rest[2]));
else if (require.main === module) {
  const i = process.argv.indexOf('--deliveries');
  runWebhooksBench(i > 0 ? { deliveries: Number(process.argv[i + 1]) } : {}).then((r) => process.exit(r.ok ? 0 : 1), (err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
