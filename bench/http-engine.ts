/**
 * HTTP benchmarks against the real server process (dist/server.js, built first):
 *   - tasks: `POST /v1/agents/tasks` acknowledged (durably stored, 202) per second with 64 concurrent
 *     clients, against the same clients' rate on `GET /v1/health` in the same run (the baseline of
 *     what the machine and the load generator can do without a durable write);
 *   - sse:   1,000 subscribers on one execution's stream; delay from publish (the event's `ts`) to
 *     receipt, p50 / p99 (goal: p99 under 50 ms).
 * Each client uses a key of its own (keys are rate-limited per key by plan, as in production).
 * Run: node --import tsx bench/http-engine.ts [tasks|sse]
 */
import { Agent, request } from 'undici';
import { ensureBuilt, stop } from '../test/support/server-process';
import { freshKey, startFleetServer } from '../test/support/fleet-server';

const CLIENTS = 64;
/** Under the enterprise burst of 167/min per key. */
const PER_CLIENT = 150;

export interface TaskAckResult { clients: number; acked: number; refused: number; seconds: number; perSecond: number; healthPerSecond: number; ratio: number; summary: string }

async function drive(clients: number, perClient: number, one: (client: number) => Promise<number>): Promise<{ ok: number; other: number; seconds: number }> {
  let ok = 0;
  let other = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < perClient; i++) {
      const status = await one(c);
      if (status === 202 || status === 200) ok++;
      else other++;
    }
  }));
  return { ok, other, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

export async function runTaskAckBench(log: (l: string) => void = console.log): Promise<TaskAckResult> {
  ensureBuilt();
  // No skill module: tasks are acknowledged, then fail fast (no embedded skill yet), so the
  // measurement is the acknowledgment path and not the agents' work.
  const server = await startFleetServer({ skills: false });
  try {
    const keys = await Promise.all(Array.from({ length: CLIENTS }, () => freshKey(server.url)));
    const dispatcher = new Agent({ connections: CLIENTS, pipelining: 1 });
    const body = JSON.stringify({ task: 'benchmark task', capabilities: ['SECURE'] });
    const health = await drive(CLIENTS, 50, async () => {
      const r = await request(`${server.url}/v1/health`, { dispatcher });
      await r.body.dump();
      return r.statusCode;
    });
    const posts = await drive(CLIENTS, PER_CLIENT, async (c) => {
      const r = await request(`${server.url}/v1/agents/tasks`, { method: 'POST', dispatcher, headers: { authorization: `Bearer ${keys[c]}`, 'content-type': 'application/json' }, body });
      await r.body.dump();
      return r.statusCode;
    });
    await dispatcher.close();
    const perSecond = posts.ok / posts.seconds;
    const healthPerSecond = health.ok / health.seconds;
    const result = {
      clients: CLIENTS, acked: posts.ok, refused: posts.other, seconds: posts.seconds, perSecond, healthPerSecond, ratio: perSecond / healthPerSecond,
      summary: `tasks: ${posts.ok} POST /v1/agents/tasks acknowledged (durable) in ${posts.seconds.toFixed(2)} s by ${CLIENTS} clients: ${perSecond.toFixed(0)}/s (${posts.other} refused); GET /v1/health ${healthPerSecond.toFixed(0)}/s; ratio ${(perSecond / healthPerSecond).toFixed(2)}`,
    };
    log(result.summary);
    return result;
  } finally {
    await stop(server);
  }
}

export interface SseFanoutResult { subscribers: number; events: number; p50: number; p99: number; max: number; ok: boolean; summary: string }

export async function runSseFanoutBench(subscribers = 1000, log: (l: string) => void = console.log): Promise<SseFanoutResult> {
  ensureBuilt();
  const server = await startFleetServer();
  try {
    const keys = await Promise.all(Array.from({ length: Math.ceil(subscribers / 150) }, () => freshKey(server.url)));
    // The first agent waits a moment so that every subscriber is connected before the live events.
    const agents = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai'];
    const prompt = `slow:req-ai:4000 ${agents.slice(1).map((a) => `slow:${a}:40`).join(' ')}`;
    const inv = await request(`${server.url}/api/workflows/invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ capability: 'BUILD', workflow: 'build', input: { prompt } }),
    });
    const { workflowId } = (await inv.body.json()) as { workflowId: string };
    const dispatcher = new Agent({ connections: subscribers + 10 });
    const delays: number[] = [];
    let connected = 0;
    const startedAt = Date.now();
    const readers = Array.from({ length: subscribers }, async (_, i) => {
      const res = await request(`${server.url}/api/admin/events/stream?execution_id=${workflowId}`, { dispatcher, headers: { authorization: `Bearer ${keys[i % keys.length]}`, accept: 'text/event-stream' } });
      if (res.statusCode !== 200) throw new Error(`subscriber ${i}: HTTP ${res.statusCode}`);
      connected++;
      let buf = '';
      for await (const chunk of res.body) {
        const now = Date.now();
        buf += chunk.toString();
        let k: number;
        while ((k = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, k);
          buf = buf.slice(k + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue;
          const e = JSON.parse(data) as { ts: string; type: string };
          const ts = Date.parse(e.ts);
          // Replayed history is not fan-out; only events published after everyone connected count.
          if (ts > startedAt && connected === subscribers) delays.push(now - ts);
        }
      }
    });
    await Promise.all(readers);
    await dispatcher.close();
    delays.sort((x, y) => x - y);
    const pick = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
    const result = {
      subscribers, events: delays.length, p50: pick(0.5), p99: pick(0.99), max: delays.at(-1) ?? NaN, ok: pick(0.99) < 50,
      summary: `sse: ${subscribers} subscribers, ${delays.length} live deliveries, publish-to-receipt p50 ${pick(0.5)} ms, p99 ${pick(0.99)} ms, max ${delays.at(-1)} ms (goal p99 < 50 ms)`,
    };
    log(result.summary);
    return result;
  } finally {
    await stop(server);
  }
}

if (require.main === module) {
  const which = process.argv[2];
  (async () => {
    if (!which || which === 'tasks') await runTaskAckBench();
    if (!which || which === 'sse') {
      const r = await runSseFanoutBench();
      process.exitCode = r.ok ? 0 : 1;
    }
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
