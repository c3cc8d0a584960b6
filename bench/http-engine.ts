/**
 * HTTP benchmarks against the real server process (dist/server.js, built first):
 *   - tasks: `POST /v1/agents/tasks` acknowledged (durably stored, 202) per second with 64 concurrent
 *     clients, against the same clients' rate on `GET /v1/health` in the same run (the baseline of
 *     what the machine and the load generator can do without a durable write);
 *   - sse:   1,000 subscribers on one execution's stream; delay from publish (the event's `ts`) to
 *     receipt, p50 / p99 / max (goal: p99 under 50 ms). By default the subscribers are read by child
 *     processes (bench/sse-subscribers.ts, 2 × 500) so that the tail is the server's, then, on a fresh
 *     server, by the original single-process reader for comparison (`--single` / `--processes-only` run one).
 * Each client uses a key of its own (keys are rate-limited per key by plan, as in production).
 * Run: node --import tsx bench/http-engine.ts [tasks|sse] [--subscribers N] [--processes K] [--single|--processes-only]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Agent, request } from 'undici';
import { ensureBuilt, stop } from '../test/support/server-process';
import { freshKey, startFleetServer } from '../test/support/fleet-server';
import type { ConnectMessage, DoneMessage } from './sse-subscribers';

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

export type SseClientMode = 'processes' | 'single';

export interface SseFanoutResult {
  mode: SseClientMode;
  subscribers: number;
  /** Load-generator processes (1 for the single-process mode, where the bench itself reads). */
  processes: number;
  events: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU time (user + system) the server process used from all connected to the last delivery (ms; processes mode, Linux). */
  serverCpuMs?: { user: number; sys: number };
  /** Worst event-loop delay p99 among the load-generator processes (ms; processes mode only). */
  clientLagP99?: number;
  ok: boolean;
  summary: string;
  /** The other mode's result when both ran. */
  other?: SseFanoutResult;
}

export interface SseFanoutOptions {
  /**
   * `processes` (default): the subscribers are spread over `processes` child processes, each with a
   * minimal parser, so the tail measures the server rather than the bench's own event loop;
   * `single`: the original load generator, every stream parsed by undici in this process;
   * `both`: `processes`, then `single` on a fresh server, both printed (the result is `processes`'s).
   */
  mode?: SseClientMode | 'both';
  processes?: number;
}

const SSE_PATH = '/api/admin/events/stream?execution_id=';

/** A fresh server, keys (one per 150 subscribers: the enterprise burst is 167/min) and a workflow whose first agent waits 4 s, so every subscriber is connected before the live events. */
async function sseFixture(subscribers: number) {
  const server = await startFleetServer();
  const keys = await Promise.all(Array.from({ length: Math.ceil(subscribers / 150) }, () => freshKey(server.url)));
  const invoke = async () => {
    const agents = ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai'];
    const prompt = `slow:req-ai:4000 ${agents.slice(1).map((a) => `slow:${a}:40`).join(' ')}`;
    const inv = await request(`${server.url}/api/workflows/invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ capability: 'BUILD', workflow: 'build', input: { prompt } }),
    });
    return ((await inv.body.json()) as { workflowId: string }).workflowId;
  };
  return { server, keys, invoke };
}

/** User and system CPU time of a process so far (ms), from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number | undefined): { user: number; sys: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return { user: Number(fields[11]) * 10, sys: Number(fields[12]) * 10 }; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

function summarize(mode: SseClientMode, subscribers: number, processes: number, delays: number[], clientLagP99?: number, serverCpuMs?: { user: number; sys: number }): SseFanoutResult {
  delays.sort((x, y) => x - y);
  const pick = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
  const max = delays.at(-1) ?? NaN;
  const where = mode === 'single' ? 'read in the bench process (undici)' : `read by ${processes} client processes`;
  const lag = (serverCpuMs === undefined ? '' : `; server CPU while streaming ${serverCpuMs.user} ms user + ${serverCpuMs.sys} ms system`)
    + (clientLagP99 === undefined ? '' : `; client event-loop delay p99 ${clientLagP99.toFixed(1)} ms`);
  return {
    mode, subscribers, processes, events: delays.length, p50: pick(0.5), p99: pick(0.99), max, ok: pick(0.99) < 50,
    ...(clientLagP99 === undefined ? {} : { clientLagP99 }),
    ...(serverCpuMs === undefined ? {} : { serverCpuMs }),
    summary: `sse [${mode}]: ${subscribers} subscribers ${where}, ${delays.length} live deliveries, publish-to-receipt p50 ${pick(0.5)} ms, p99 ${pick(0.99)} ms, max ${max} ms (goal p99 < 50 ms)${lag}`,
  };
}

/** The original load generator: every subscriber read and parsed in this process. */
async function fanoutSingleProcess(subscribers: number): Promise<SseFanoutResult> {
  const { server, keys, invoke } = await sseFixture(subscribers);
  try {
    const workflowId = await invoke();
    const dispatcher = new Agent({ connections: subscribers + 10 });
    const delays: number[] = [];
    let connected = 0;
    const startedAt = Date.now();
    const readers = Array.from({ length: subscribers }, async (_, i) => {
      const res = await request(`${server.url}${SSE_PATH}${workflowId}`, { dispatcher, headers: { authorization: `Bearer ${keys[i % keys.length]}`, accept: 'text/event-stream' } });
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
    return summarize('single', subscribers, 1, delays);
  } finally {
    await stop(server);
  }
}

/** The subscribers spread over child processes (bench/sse-subscribers.ts), started before the workflow. */
async function fanoutProcesses(subscribers: number, processes: number): Promise<SseFanoutResult> {
  const { server, keys, invoke } = await sseFixture(subscribers);
  const children: ChildProcess[] = [];
  try {
    const script = path.join(__dirname, 'sse-subscribers.ts');
    const msgs = (child: ChildProcess, type: string) => new Promise<Record<string, unknown>>((resolve, reject) => {
      const onMsg = (m: Record<string, unknown>) => {
        if (m['type'] !== type) return;
        child.off('message', onMsg);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null) => reject(new Error(`SSE client process exited (${code}) before '${type}'`));
      child.on('message', onMsg);
      child.once('exit', onExit);
    });
    for (let p = 0; p < processes; p++) children.push(fork(script, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    await Promise.all(children.map((c) => msgs(c, 'ready')));
    const workflowId = await invoke();
    const connected = children.map((c) => msgs(c, 'connected'));
    const done = children.map((c) => msgs(c, 'done') as Promise<unknown> as Promise<DoneMessage>);
    const per = Math.ceil(subscribers / processes);
    children.forEach((c, p) => {
      const first = p * per;
      const msg: ConnectMessage = { type: 'connect', url: server.url, path: `${SSE_PATH}${workflowId}`, keys, first, count: Math.max(0, Math.min(per, subscribers - first)) };
      c.send(msg);
    });
    await Promise.all(connected);
    const cpu0 = cpuMs(server.child.pid);
    // Replayed history is not fan-out; only events published after everyone connected count.
    const allConnectedAt = Date.now();
    const results = await Promise.all(done);
    const cpu1 = cpuMs(server.child.pid);
    const errors = results.flatMap((r) => r.errors);
    if (errors.length > 0) throw new Error(`${errors.length} subscribers failed: ${errors.slice(0, 3).join('; ')}`);
    const delays: number[] = [];
    for (const r of results) for (let i = 0; i < r.ts.length; i++) if (r.ts[i]! > allConnectedAt) delays.push(r.recv[i]! - r.ts[i]!);
    const serverCpuMs = cpu0 !== undefined && cpu1 !== undefined ? { user: cpu1.user - cpu0.user, sys: cpu1.sys - cpu0.sys } : undefined;
    return summarize('processes', subscribers, processes, delays, Math.max(...results.map((r) => r.lagP99)), serverCpuMs);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
    await stop(server);
  }
}

export async function runSseFanoutBench(subscribers = 1000, log: (l: string) => void = console.log, opts: SseFanoutOptions = {}): Promise<SseFanoutResult> {
  ensureBuilt();
  const mode = opts.mode ?? 'both';
  const processes = opts.processes ?? 2;
  let result: SseFanoutResult | undefined;
  if (mode !== 'single') {
    result = await fanoutProcesses(subscribers, processes);
    log(result.summary);
  }
  if (mode !== 'processes') {
    const single = await fanoutSingleProcess(subscribers);
    log(single.summary);
    result = result ? { ...result, other: single } : single;
  }
  return result!;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const which = argv.find((a, i) => !a.startsWith('--') && !['--subscribers', '--processes'].includes(argv[i - 1] ?? ''));
  const num = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  const mode = argv.includes('--single') ? 'single' : argv.includes('--processes-only') ? 'processes' : 'both';
  (async () => {
    if (!which || which === 'tasks') await runTaskAckBench();
    if (!which || which === 'sse') {
      const r = await runSseFanoutBench(num('--subscribers') ?? 1000, console.log, { mode, processes: num('--processes') ?? 2 });
      process.exitCode = r.ok ? 0 : 1;
    }
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
