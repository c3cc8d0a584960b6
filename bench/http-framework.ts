/**
 * Cadre's own HTTP layer (server/src/http) against fastify, serving the same three representative
 * routes with the same application code, in the same run (issue 18, item 7):
 *
 *   node --import tsx bench/http-framework.ts [--connections 16] [--seconds 2] [--rounds 4] [--warmup 1]
 *
 * Routes (each server in a child process of its own; the load generator is this process):
 *   - `get-by-id`: GET /v1/admin/keys/{id}: bearer key, admin role, rate limiter, params validation,
 *     one record as JSON (Cadre's real route from routes/auth; fastify: the same checks as hooks);
 *   - `post-json`: POST /bench/items: bearer key, rate limiter, a JSON body validated with a zod schema
 *     (strings, an enum, an integer range, an array), 201 with the created item;
 *   - `sse`: GET /bench/stream: bearer key, then 50 events of a finished execution through
 *     http/sse.ts `serveEventStream` (fastify hijacks the reply and calls the same function): the
 *     latency is the whole stream's.
 * What is the same on both sides: the key store and its constant-time verification (ApiKeys), the
 * rate limiter (RateLimiter, unlimited plans so it never refuses), the Host check (OriginPolicy), the
 * zod schemas (fastify's validator compiler runs zod's safeParse, as fastify-type-provider-zod does),
 * the JSON and the X-RateLimit-* headers. What differs is the framework: routing, request and reply
 * objects, hooks, body reading and parsing, error handling.
 *
 * Printed per route: requests/s, p50 and p99 latency (ms) and server CPU per request (µs) of each,
 * and the ratios fastify / Cadre (medians of the per-round ratios; rounds alternate the order).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Pool } from 'undici';
import { cpuOf, stopChild } from './http';
import { z } from 'zod';
import type { EngineEvent } from '../protocol/events';
import { ApiKeys, keyView, type ApiKeyRecord } from '../server/src/auth/api-keys';
import { Sessions, SESSIONS_COLLECTION, type SessionRecord } from '../server/src/auth/sessions';
import { COLLECTIONS } from '../server/src/engine/ports';
import { createHttpServer, type HealthReport } from '../server/src/http/app';
import { OriginPolicy } from '../server/src/http/origin-policy';
import { problemFor } from '../server/src/http/problem';
import { RateLimiter, type PlanLimit } from '../server/src/http/rate-limit';
import { defineRoute, RESPONSE_SENT } from '../server/src/http/route';
import { authRoutes } from '../server/src/http/routes/index';
import { serveEventStream, type EventStreamSource } from '../server/src/http/sse';
import { openStore, storeFilePath } from '../server/src/store/lowdb-store';

type Mode = 'cadre' | 'fastify';
const MODES: readonly Mode[] = ['cadre', 'fastify'];

const UNLIMITED: Record<'startup' | 'growth' | 'scale' | 'enterprise', PlanLimit> = {
  startup: { hourly: 1e12, burst: 1e12 }, growth: { hourly: 1e12, burst: 1e12 }, scale: { hourly: 1e12, burst: 1e12 }, enterprise: { hourly: 1e12, burst: 1e12 },
};

/** The POST body: a few fields of each kind a Cadre request body has. */
const ItemBody = z.object({
  name: z.string().min(1).max(200),
  priority: z.enum(['low', 'normal', 'high', 'critical']),
  count: z.number().int().min(1).max(1000),
  tags: z.array(z.string().min(1).max(40)).max(10).default([]),
  source: z.string().max(1000).optional(),
});
const IdParams = z.object({ id: z.string().min(1) });
const ItemSchema = ItemBody.extend({ id: z.string(), createdAt: z.string() });

const STREAM_EVENTS = 50;

/** A finished execution's 50 events: the stream replays them and ends at the terminal one. */
function finishedSource(): EventStreamSource {
  const events: EngineEvent[] = [];
  const ts = new Date(0).toISOString();
  for (let seq = 1; seq < STREAM_EVENTS; seq++) {
    events.push({ seq, ts, type: 'work_progress', execution_id: 'exec_bench', agent_id: 'coder-ai', phase: 'Generate', message: `progress ${seq} of the benchmark stream`, percent: seq } as unknown as EngineEvent);
  }
  events.push({ seq: STREAM_EVENTS, ts, type: 'execution_completed', execution_id: 'exec_bench', status: 'completed' } as unknown as EngineEvent);
  return { replay: () => events, subscribe: () => () => {}, isFinished: () => true };
}

function itemOf(body: z.output<typeof ItemBody>, n: number) {
  return { id: `item_${n}`, ...body, createdAt: new Date(0).toISOString() };
}

// ---------------------------------------------------------------------------------------------
// child: one server

async function serve(mode: Mode): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cadre-bench-fw-'));
  const store = await openStore({ file: storeFilePath(dir) });
  const keys = new ApiKeys(store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys));
  const sessions = new Sessions(store.collection<SessionRecord>(SESSIONS_COLLECTION), keys);
  const { key, record } = await keys.create('bench', 'enterprise', 'admin');
  for (let i = 0; i < 4; i++) await keys.create(`other ${i}`, 'growth');
  let created = 0;
  let server: Server;
  if (mode === 'cadre') {
    const routes = [
      ...authRoutes({ keys, sessions }),
      defineRoute({
        method: 'POST', path: '/bench/items', auth: 'key', tenancy: 'tenant', tags: ['bench'], summary: 'Create an item (benchmark)',
        body: ItemBody, responses: { 201: { description: 'Created', schema: ItemSchema } },
        handler: (ctx) => ({ status: 201, body: itemOf(ctx.body, ++created) }),
      }),
      defineRoute({
        method: 'GET', path: '/bench/stream', auth: 'key', tenancy: 'tenant', tags: ['bench'], summary: 'A finished execution\'s events (benchmark)',
        responses: { 200: { description: 'text/event-stream' } },
        handler: async (ctx) => {
          await serveEventStream(ctx.req, ctx.res, finishedSource());
          return RESPONSE_SENT;
        },
      }),
    ];
    const health = (): HealthReport => ({ status: 'ok', service: 'cadre', version: '0.1.0', pid: process.pid, uptime_s: 0, components: {} } as unknown as HealthReport);
    server = createHttpServer({ version: '0.1.0', health, log: (l) => process.stderr.write(`[bench] ${l}\n`), keys, sessions, plans: UNLIMITED }, routes);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  } else {
    server = await fastifyServer(keys, () => ++created);
  }
  const port = (server.address() as AddressInfo).port;
  process.send!({ port, key, keyId: record.id });
  process.on('message', (m: unknown) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpuUs: u.user + u.system });
    }
    if (m === 'stop') {
      server.closeAllConnections();
      server.close();
      void store.close().then(() => rm(dir, { recursive: true, force: true })).then(() => process.exit(0));
    }
  });
}

/** The same three routes on fastify, with the same checks as Cadre's door does them. */
async function fastifyServer(keys: ApiKeys, nextId: () => number): Promise<Server> {
  const app = Fastify({ logger: false, keepAliveTimeout: 5_000 });
  const policy = new OriginPolicy({ allowedHosts: [], corsOrigins: [] });
  const limiter = new RateLimiter({ plans: UNLIMITED });
  // The zod schemas validate, as with fastify-type-provider-zod.
  app.setValidatorCompiler(({ schema }) => (data: unknown) => {
    const r = (schema as z.ZodType).safeParse(data);
    return r.success ? { value: r.data } : { error: new Error(r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')) };
  });
  const problem = (reply: FastifyReply, code: Parameters<typeof problemFor>[0], detail: string) => {
    const p = problemFor(code, detail);
    return reply.code(p.status).type('application/problem+json').send(p);
  };
  app.setErrorHandler((err: { validation?: unknown; message: string }, _req, reply) => problem(reply, err.validation ? 'ERR_VALIDATION' : 'ERR_INTERNAL', err.message));
  app.decorateRequest('principal', null);
  const authenticate = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!policy.allowsHost(req.headers.host, req.socket.localPort)) return problem(reply, 'ERR_HOST_NOT_ALLOWED', 'host not allowed');
    const authz = req.headers.authorization ?? '';
    const principal = authz.startsWith('Bearer ') ? keys.verify(authz.slice(7).trim()) : null;
    if (!principal) return problem(reply, 'ERR_AUTH_INVALID', 'a valid API key is required');
    const d = limiter.take(principal.id, principal.plan);
    void reply.headers({ 'x-ratelimit-limit': String(d.limit), 'x-ratelimit-remaining': String(d.remaining), 'x-ratelimit-reset': String(d.resetS) });
    (req as unknown as { principal: ApiKeyRecord }).principal = principal;
  };
  app.get('/v1/admin/keys/:id', { onRequest: authenticate, schema: { params: IdParams } }, async (req, reply) => {
    const principal = (req as unknown as { principal: ApiKeyRecord }).principal;
    if (principal.role !== 'admin') return problem(reply, 'ERR_FORBIDDEN', 'needs the admin role');
    const rec = keys.get((req.params as { id: string }).id);
    if (!rec) return problem(reply, 'ERR_NOT_FOUND', 'no such key');
    return keyView(rec);
  });
  app.post('/bench/items', { onRequest: authenticate, schema: { body: ItemBody } }, async (req, reply) => {
    return reply.code(201).send(itemOf(req.body as z.output<typeof ItemBody>, nextId()));
  });
  app.get('/bench/stream', { onRequest: authenticate }, async (req, reply) => {
    reply.hijack();
    // The reply's headers so far (rate limit) go on the raw response, as Cadre sets them before a handler streams.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
    await serveEventStream(req.raw, reply.raw, finishedSource());
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server;
}

// ---------------------------------------------------------------------------------------------
// parent: load generator

interface Started { child: ChildProcess; url: string; key: string; keyId: string }

async function startChild(mode: Mode): Promise<Started> {
  const child = fork(__filename, ['--serve', mode], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<{ port: number; key: string; keyId: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; key: string; keyId: string }));
    child.once('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${ready.port}`, key: ready.key, keyId: ready.keyId };
}

interface Request { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }

const ROUTES: Record<string, { description: string; request(s: Started): Request; expect: number }> = {
  'get-by-id': {
    description: 'GET /v1/admin/keys/{id} (bearer key, admin role, rate limit, params schema, one record)',
    request: (s) => ({ method: 'GET', path: `/v1/admin/keys/${s.keyId}`, headers: { authorization: `Bearer ${s.key}` } }),
    expect: 200,
  },
  'post-json': {
    description: 'POST /bench/items (bearer key, rate limit, JSON body validated by a zod schema, 201)',
    request: (s) => ({
      method: 'POST', path: '/bench/items', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a benchmark item', priority: 'high', count: 42, tags: ['bench', 'http', 'fastify'], source: '/work/project' }),
    }),
    expect: 201,
  },
  sse: {
    description: `GET /bench/stream (bearer key, ${STREAM_EVENTS} SSE events of a finished execution, whole stream)`,
    request: (s) => ({ method: 'GET', path: '/bench/stream', headers: { authorization: `Bearer ${s.key}`, accept: 'text/event-stream' } }),
    expect: 200,
  },
};

/** `connections` loops, one request at a time each, for `seconds`: rate and latencies. */
async function measure(url: string, req: Request, expect: number, connections: number, seconds: number): Promise<{ perSecond: number; latencies: number[]; errors: number }> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
        await res.body.dump({ limit: 1 << 20 });
        if (res.statusCode !== expect) errors++;
        else latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return { perSecond: latencies.length / elapsed, latencies, errors };
}

async function fetchOnce(s: Started, req: Request): Promise<{ status: number; text: string; headers: string[] }> {
  const pool = new Pool(s.url, { connections: 1 });
  try {
    const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
    return { status: res.statusCode, text: await res.body.text(), headers: Object.keys(res.headers).sort() };
  } finally {
    await pool.close();
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The JSON's structure (keys and value types): both servers must answer alike. */
function shapeOf(text: string): string {
  const shape = (v: unknown): unknown => (Array.isArray(v) ? v.map(shape) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : v === null ? null : typeof v);
  try {
    return JSON.stringify(shape(JSON.parse(text)));
  } catch {
    return text.split('\n\n').length.toString(); // SSE: the number of event blocks
  }
}

export interface FrameworkRow {
  route: string;
  description: string;
  perSecond: Record<Mode, number>;
  p50Ms: Record<Mode, number>;
  p99Ms: Record<Mode, number>;
  cpuUsPerRequest: Record<Mode, number>;
  /** Medians of the per-round ratios fastify / Cadre. */
  rateRatio: number;
  p50Ratio: number;
  p99Ratio: number;
  cpuRatio: number;
  errors: number;
}

export async function runHttpFrameworkBench(opts: { connections?: number; seconds?: number; rounds?: number; warmupSeconds?: number; log?: (line: string) => void } = {}): Promise<FrameworkRow[]> {
  const connections = opts.connections ?? 16;
  const seconds = opts.seconds ?? 2;
  const rounds = opts.rounds ?? 4;
  const warmup = opts.warmupSeconds ?? 1;
  const log = opts.log ?? ((l: string) => console.log(l));
  const servers = {} as Record<Mode, Started>;
  for (const mode of MODES) servers[mode] = await startChild(mode);
  const rows: FrameworkRow[] = [];
  try {
    for (const [name, route] of Object.entries(ROUTES)) {
      const answers = await Promise.all(MODES.map((m) => fetchOnce(servers[m], route.request(servers[m]))));
      for (const [i, a] of answers.entries()) if (a.status !== route.expect) throw new Error(`${MODES[i]} answered ${a.status} to ${name}: ${a.text.slice(0, 300)}`);
      const shapes = answers.map((a) => shapeOf(a.text));
      if (shapes[0] !== shapes[1]) throw new Error(`the servers do not answer ${name} alike: ${shapes.join(' vs ')}`);
      const missing = answers[0]!.headers.filter((h) => !answers[1]!.headers.includes(h) && h !== 'keep-alive' && h !== 'connection');
      if (missing.length) log(`note: ${name}: headers Cadre sends and fastify does not: ${missing.join(', ')}`);
      for (const m of MODES) await measure(servers[m].url, route.request(servers[m]), route.expect, connections, warmup);
      const per: Record<Mode, { rate: number[]; p50: number[]; p99: number[]; cpu: number[] }> = { cadre: { rate: [], p50: [], p99: [], cpu: [] }, fastify: { rate: [], p50: [], p99: [], cpu: [] } };
      const ratios = { rate: [] as number[], p50: [] as number[], p99: [] as number[], cpu: [] as number[] };
      let errors = 0;
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? MODES : [...MODES].reverse();
        const round = {} as Record<Mode, { rate: number; p50: number; p99: number; cpu: number }>;
        for (const m of order) {
          const cpu0 = await cpuOf(servers[m].child);
          const res = await measure(servers[m].url, route.request(servers[m]), route.expect, connections, seconds);
          const cpu1 = await cpuOf(servers[m].child);
          errors += res.errors;
          const sorted = res.latencies.sort((a, b) => a - b);
          round[m] = { rate: res.perSecond, p50: percentile(sorted, 50), p99: percentile(sorted, 99), cpu: (cpu1 - cpu0) / Math.max(1, res.latencies.length) };
          per[m].rate.push(round[m].rate);
          per[m].p50.push(round[m].p50);
          per[m].p99.push(round[m].p99);
          per[m].cpu.push(round[m].cpu);
        }
        ratios.rate.push(round.fastify.rate / round.cadre.rate);
        ratios.p50.push(round.fastify.p50 / round.cadre.p50);
        ratios.p99.push(round.fastify.p99 / round.cadre.p99);
        ratios.cpu.push(round.fastify.cpu / round.cadre.cpu);
      }
      const med = (m: Mode, k: 'rate' | 'p50' | 'p99' | 'cpu') => median(per[m][k]);
      const row: FrameworkRow = {
        route: name, description: route.description,
        perSecond: { cadre: med('cadre', 'rate'), fastify: med('fastify', 'rate') },
        p50Ms: { cadre: med('cadre', 'p50'), fastify: med('fastify', 'p50') },
        p99Ms: { cadre: med('cadre', 'p99'), fastify: med('fastify', 'p99') },
        cpuUsPerRequest: { cadre: med('cadre', 'cpu'), fastify: med('fastify', 'cpu') },
        rateRatio: median(ratios.rate), p50Ratio: median(ratios.p50), p99Ratio: median(ratios.p99), cpuRatio: median(ratios.cpu), errors,
      };
      rows.push(row);
      log(`${name}: ${route.description}`);
      for (const m of MODES) {
        log(`  ${m.padEnd(8)} ${row.perSecond[m].toFixed(0).padStart(7)} req/s   p50 ${row.p50Ms[m].toFixed(2).padStart(6)} ms   p99 ${row.p99Ms[m].toFixed(2).padStart(7)} ms   cpu ${row.cpuUsPerRequest[m].toFixed(0).padStart(5)} µs/req`);
      }
      log(`  fastify / cadre: req/s x${row.rateRatio.toFixed(2)}   p50 x${row.p50Ratio.toFixed(2)}   p99 x${row.p99Ratio.toFixed(2)}   cpu/req x${row.cpuRatio.toFixed(2)}${errors ? `   (${errors} errors)` : ''}`);
    }
  } finally {
    for (const m of MODES) await stopChild(servers[m].child);
  }
  log(`(${connections} connections, ${rounds} rounds of ${seconds} s per server and route, order alternating; medians)`);
  return rows;
}

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : undefined;
}

if (require.main === module && process.argv.includes('--serve')) {
  void serve(process.argv[process.argv.indexOf('--serve') + 1] as Mode);
} else if (require.main === module) {
  runHttpFrameworkBench({
    ...(arg('connections') ? { connections: arg('connections')! } : {}), ...(arg('seconds') ? { seconds: arg('seconds')! } : {}),
    ...(arg('rounds') ? { rounds: arg('rounds')! } : {}), ...(arg('warmup') !== undefined ? { warmupSeconds: arg('warmup')! } : {}),
  }).catch((err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
