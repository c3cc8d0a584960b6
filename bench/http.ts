/**
 * HTTP benchmark: requests/s of Cadre's HTTP door against a bare `node:http` server answering the
 * same JSON, with the same load generator and connection count, in the same run.
 *
 *   node --import tsx bench/http.ts [--connections 32] [--seconds 2] [--rounds 5] [--warmup 1] [--scenario read-one]
 *
 * Three servers, each in a child process of its own, answer the same request with the same JSON:
 *   - `cadre`:    the real door (createHttpServer with its routes);
 *   - `bare`:     node:http writing the same JSON with the same response headers (for authenticated
 *                 scenarios, the three X-RateLimit-* headers the contract requires, fixed values):
 *                 the ratio against it is what the door's own work costs (routing, Host check, key
 *                 check, rate accounting, validation);
 *   - `bare-min`: node:http writing the same JSON with only Content-Type and Content-Length.
 * Rounds measure the three back to back (order rotating); the headline ratios are medians of the
 * per-round ratios. The server's CPU time per request is reported too (it does not depend on how
 * fast the load generator is). Scenarios (SCENARIOS below) say what the servers hold and which
 * request is measured:
 *   - `health`:   GET /v1/health, no auth (router + Host check + JSON);
 *   - `read-one`: an authenticated GET of one record, `GET /v1/admin/keys/{id}` (key check in
 *                 constant time, rate limiter, params validation, JSON);
 *   - `task-status`: the contract's `GET /v1/agents/tasks/{taskId}` through the engine's status view.
 * Goal: the authenticated reads at >= 0.85 of the `bare` rate. POST throughput and SSE fan-out
 * run against the real server process: bench/http-engine.ts.
 *
 * To add a scenario (e.g. `GET /v1/agents/tasks/{id}` once the engine routes exist, POST task
 * throughput, SSE fan-out): add an entry to SCENARIOS whose `setup` builds the Cadre routes and the
 * record(s) in the child, and whose `request` says method, path, headers and body; a streaming
 * scenario needs its own measure function next to `measure` (events/s per subscriber), not this one.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Pool } from 'undici';
import { ApiKeys, type ApiKeyRecord, keyView } from '../server/src/auth/api-keys';
import { Sessions, SESSIONS_COLLECTION, type SessionRecord } from '../server/src/auth/sessions';
import { COLLECTIONS } from '../server/src/engine/ports';
import { createHttpServer, type HealthReport } from '../server/src/http/app';
import type { PlanLimit } from '../server/src/http/rate-limit';
import type { RouteDef } from '../server/src/http/route';
import { authRoutes } from '../server/src/http/routes/index';
import { openStore, storeFilePath, type Store } from '../server/src/store/lowdb-store';
import { openAuditTrail } from '../server/src/audit/jsonl-audit-trail';
import { DEFAULT_CONFIG } from '../server/src/config/schema';
import { createEngine, type Engine } from '../server/src/engine/index';
import { taskStatus } from '../server/src/engine/executions/views';
import { engineRoutes } from '../server/src/http/routes/engine';
import { reviewChecks } from '../server/src/skills/review-checks';

/** What the child prepared: the request to measure, identical on both servers. */
interface Prepared {
  method: 'GET' | 'POST';
  path: string;
  /** Headers of the Cadre request (the bare server ignores them). */
  headers: Record<string, string>;
  body?: string;
}

interface ScenarioContext {
  store: Store;
  keys: ApiKeys;
  sessions: Sessions;
  /** The key the load generator uses. */
  key: string;
  keyRecord: ApiKeyRecord;
}

interface Scenario {
  description: string;
  /** Cadre routes beyond the built-in ones (health, info, openapi) and sessions/keys. */
  routes?(ctx: ScenarioContext): RouteDef[];
  /** The request measured, and the bare servers' answer to it (same status and JSON as Cadre's). */
  prepare(ctx: ScenarioContext): Promise<{ request: Prepared; bare: { status: number; body: () => unknown; headers?: Record<string, string> } }>;
}

const START = Date.now();
const health = (): HealthReport => ({
  status: 'ok', service: 'cadre', version: '0.1.0', pid: process.pid, uptime_s: Math.round((Date.now() - START) / 1000),
  components: { store: { status: 'ok' }, audit: { status: 'ok', detail: '0 records' }, config: { status: 'ok', detail: 'defaults' } },
});

/** What an authenticated Cadre answer carries besides the JSON (values are irrelevant to the cost). */
const RATE_LIMIT_HEADERS = { 'x-ratelimit-limit': '167', 'x-ratelimit-remaining': '166', 'x-ratelimit-reset': '61' };

export const SCENARIOS: Record<string, Scenario> = {
  health: {
    description: 'GET /v1/health (no auth)',
    prepare: async () => ({ request: { method: 'GET', path: '/v1/health', headers: {} }, bare: { status: 200, body: health } }),
  },
  'read-one': {
    description: 'GET /v1/admin/keys/{id} (bearer key, rate limit, params schema, one record)',
    prepare: async (ctx) => {
      // A few more keys, so verification compares against more than one hash.
      for (let i = 0; i < 4; i++) await ctx.keys.create(`other ${i}`, 'growth');
      const id = ctx.keyRecord.id;
      return {
        request: { method: 'GET', path: `/v1/admin/keys/${id}`, headers: { authorization: `Bearer ${ctx.key}` } },
        bare: { status: 200, body: () => keyView(ctx.keys.get(id)!), headers: RATE_LIMIT_HEADERS },
      };
    },
  },
  'task-status': {
    description: 'GET /v1/agents/tasks/{taskId} (bearer key, rate limit, one task record through the engine)',
    routes: () => engineRoutes({ engine: taskEngine! }),
    prepare: async (ctx) => {
      const audit = await openAuditTrail({ dir: path.join(path.dirname(ctx.store.file), 'audit') });
      taskEngine = createEngine({ store: ctx.store, audit, config: DEFAULT_CONFIG, checks: reviewChecks, log: () => {} });
      const rec = await taskEngine.executions.submitTask({ task: 'benchmark', capabilities: ['SECURE'] }, { keyId: ctx.keyRecord.id, callbackSecret: null });
      // The task ends at once (no skill is loaded); its status is then stable for both servers.
      while (taskEngine.executions.isRunning(rec.id)) await new Promise((r) => setTimeout(r, 5));
      return {
        request: { method: 'GET', path: `/v1/agents/tasks/${rec.id}`, headers: { authorization: `Bearer ${ctx.key}` } },
        bare: { status: 200, body: () => taskStatus(taskEngine!.executions.get(rec.id)), headers: RATE_LIMIT_HEADERS },
      };
    },
  },
};

/** The engine behind the task-status scenario (created in the child by `prepare`). */
let taskEngine: Engine | null = null;

/** No plan limits in the way of the measurement (the limiter still runs on every request). */
const UNLIMITED: Record<'startup' | 'growth' | 'scale' | 'enterprise', PlanLimit> = {
  startup: { hourly: 1e12, burst: 1e12 }, growth: { hourly: 1e12, burst: 1e12 }, scale: { hourly: 1e12, burst: 1e12 }, enterprise: { hourly: 1e12, burst: 1e12 },
};

// ---------------------------------------------------------------------------------------------
// child: one server

type Mode = 'cadre' | 'bare' | 'bare-min';
const MODES: readonly Mode[] = ['bare', 'cadre', 'bare-min'];

async function serve(mode: Mode, scenarioName: string): Promise<void> {
  const scenario = SCENARIOS[scenarioName];
  if (!scenario) throw new Error(`unknown scenario ${scenarioName}`);
  const dir = await mkdtemp(path.join(tmpdir(), 'cadre-bench-http-'));
  const store = await openStore({ file: storeFilePath(dir) });
  const keys = new ApiKeys(store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys));
  const sessions = new Sessions(store.collection<SessionRecord>(SESSIONS_COLLECTION), keys);
  const { key, record } = await keys.create('bench', 'enterprise', 'admin'); // reads other keys: admin
  const ctx: ScenarioContext = { store, keys, sessions, key, keyRecord: record };
  const { request, bare } = await scenario.prepare(ctx);

  let server: Server;
  if (mode === 'cadre') {
    server = createHttpServer({ version: '0.1.0', health, log: (l) => process.stderr.write(`[bench] ${l}\n`), keys, sessions, plans: UNLIMITED },
      [...authRoutes({ keys, sessions }), ...(scenario.routes?.(ctx) ?? [])]);
  } else {
    const extra = mode === 'bare' ? bare.headers ?? {} : {};
    server = createServer((_req: IncomingMessage, res: ServerResponse) => {
      const body = JSON.stringify(bare.body());
      res.writeHead(bare.status, { ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    server.closeAllConnections();
    server.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  };
  if (process.send) {
    process.send({ port, request });
    process.on('message', (m: unknown) => {
      if (m === 'stop') void stop();
      if (m === 'cpu') {
        const u = process.cpuUsage();
        process.send!({ cpuUs: u.user + u.system });
      }
    });
  } else {
    // Run by hand (e.g. under --cpu-prof): print where it listens; Ctrl+C stops it.
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, request }));
    process.on('SIGINT', () => void stop());
  }
}

// ---------------------------------------------------------------------------------------------
// parent: load generator

async function startChild(mode: Mode, scenario: string): Promise<{ child: ChildProcess; url: string; request: Prepared }> {
  const child = fork(__filename, ['--serve', mode, scenario], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<{ port: number; request: Prepared }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; request: Prepared }));
    child.once('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${ready.port}`, request: ready.request };
}

/** CPU time (user + system, µs) the child has used so far. */
export function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if (typeof m === 'object' && m !== null && 'cpuUs' in m) {
        child.off('message', on);
        resolve((m as { cpuUs: number }).cpuUs);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.send('stop');
  await exited;
}

/** `connections` loops, each one request at a time, for `seconds`: completed requests per second. */
export async function measure(url: string, req: Prepared, connections: number, seconds: number): Promise<{ perSecond: number; requests: number; errors: number }> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  let requests = 0;
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      try {
        const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
        await res.body.dump();
        if (res.statusCode >= 400) errors++;
        else requests++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  return { perSecond: requests / elapsed, requests, errors };
}

async function fetchOnce(url: string, req: Prepared): Promise<{ status: number; body: unknown }> {
  const pool = new Pool(url, { connections: 1 });
  try {
    const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
    return { status: res.statusCode, body: await res.body.json() };
  } finally {
    await pool.close();
  }
}

export interface HttpBenchOptions {
  /** Concurrent connections, the same for both servers (default 32). */
  connections?: number;
  /** Measuring window per server, round and scenario, seconds (default 2). */
  seconds?: number;
  /** Rounds, each measuring both servers back to back (order alternating); medians count (default 5). */
  rounds?: number;
  /** Unmeasured warm-up per server and scenario, seconds (default 1). */
  warmupSeconds?: number;
  /** Scenario names (default: all of SCENARIOS). */
  scenarios?: string[];
  log?: (line: string) => void;
}

export interface HttpScenarioResult {
  scenario: string;
  description: string;
  /** Median requests/s over the rounds. */
  cadrePerSecond: number;
  barePerSecond: number;
  bareMinPerSecond: number;
  /** Median over rounds of (Cadre rate / bare rate), measured back to back in each round. */
  ratio: number;
  /** The same against `bare-min`. */
  ratioMin: number;
  /** Server CPU time per request (µs, medians). */
  cadreCpuUs: number;
  bareCpuUs: number;
  bareMinCpuUs: number;
  /** Median over rounds of bare CPU / Cadre CPU per request: the rate ratio a CPU-bound server would reach. */
  cpuRatio: number;
  errors: number;
}

export interface HttpBenchResult {
  connections: number;
  seconds: number;
  rounds: number;
  scenarios: HttpScenarioResult[];
  /** Goal for the authenticated read (`read-one`), on `ratio`. */
  goal: number;
  ok: boolean;
  summary: string;
}

const GOAL = 0.85;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The JSON's structure (keys and value types), so servers holding different ids compare equal. */
function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shapeOf);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)]));
  return v === null ? null : typeof v;
}

export async function runHttpBench(opts: HttpBenchOptions = {}): Promise<HttpBenchResult> {
  const connections = opts.connections ?? 32;
  const seconds = opts.seconds ?? 2;
  const warmup = opts.warmupSeconds ?? 1;
  const rounds = opts.rounds ?? 5;
  const log = opts.log ?? (() => {});
  const results: HttpScenarioResult[] = [];
  for (const name of opts.scenarios ?? Object.keys(SCENARIOS)) {
    const servers = {} as Record<Mode, Awaited<ReturnType<typeof startChild>>>;
    for (const mode of MODES) servers[mode] = await startChild(mode, name);
    try {
      const shapes: string[] = [];
      for (const mode of MODES) {
        const { url, request } = servers[mode];
        const once = await fetchOnce(url, request);
        if (once.status >= 400) throw new Error(`${mode} answered ${once.status} to ${request.method} ${request.path}: ${JSON.stringify(once.body)}`);
        shapes.push(JSON.stringify(shapeOf(once)));
        await measure(url, request, connections, warmup);
      }
      if (new Set(shapes).size !== 1) throw new Error(`the servers do not answer alike for ${name}: ${shapes.join(' vs ')}`);
      const rate = { cadre: [] as number[], bare: [] as number[], 'bare-min': [] as number[] };
      const cpu = { cadre: [] as number[], bare: [] as number[], 'bare-min': [] as number[] };
      let errors = 0;
      for (let round = 0; round < rounds; round++) {
        // Rotate the order so that no server always runs first or last in a round.
        const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]!);
        for (const mode of order) {
          const before = await cpuOf(servers[mode].child);
          const m = await measure(servers[mode].url, servers[mode].request, connections, seconds);
          const usPerRequest = ((await cpuOf(servers[mode].child)) - before) / Math.max(1, m.requests);
          rate[mode].push(m.perSecond);
          cpu[mode].push(usPerRequest);
          errors += m.errors;
          log(`${name} round ${round + 1} ${mode}: ${Math.round(m.perSecond)} req/s (${m.requests} in ${seconds} s, ${m.errors} errors), server CPU ${usPerRequest.toFixed(1)} µs/request`);
        }
      }
      // The median of per-round ratios shrugs off a round that a neighbour's load spoilt for one server.
      results.push({
        scenario: name, description: SCENARIOS[name]!.description,
        cadrePerSecond: median(rate.cadre), barePerSecond: median(rate.bare), bareMinPerSecond: median(rate['bare-min']),
        ratio: median(rate.cadre.map((c, i) => c / rate.bare[i]!)),
        ratioMin: median(rate.cadre.map((c, i) => c / rate['bare-min'][i]!)),
        cadreCpuUs: median(cpu.cadre), bareCpuUs: median(cpu.bare), bareMinCpuUs: median(cpu['bare-min']),
        cpuRatio: median(cpu.cadre.map((c, i) => cpu.bare[i]! / c)),
        errors,
      });
    } finally {
      await Promise.all(MODES.map((m) => stopChild(servers[m].child)));
    }
  }
  const read = results.find((r) => r.scenario === 'read-one');
  const ok = read ? read.ratio >= GOAL && read.errors === 0 : results.every((r) => r.errors === 0);
  const summary = `http (${connections} connections, medians of ${rounds} rounds of ${seconds} s): ` + results.map((r) =>
    `${r.scenario} ${Math.round(r.cadrePerSecond)} req/s vs bare ${Math.round(r.barePerSecond)} = ${r.ratio.toFixed(2)} ` +
    `(vs bare-min ${Math.round(r.bareMinPerSecond)} = ${r.ratioMin.toFixed(2)}; server CPU ${r.cadreCpuUs.toFixed(1)} vs ${r.bareCpuUs.toFixed(1)} ` +
    `vs ${r.bareMinCpuUs.toFixed(1)} µs/request, CPU ratio ${r.cpuRatio.toFixed(2)})`).join('; ') +
    (read ? ` (goal: read-one >= ${GOAL} of bare: ${ok ? 'met' : 'NOT met'})` : '');
  return { connections, seconds, rounds, scenarios: results, goal: GOAL, ok, summary };
}

function numberFlag(args: string[], name: string): number | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a positive number`);
  return value;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args[0] === '--serve') {
    serve(args[1] as Mode, args[2]!).catch((err: unknown) => {
      console.error(err);
      process.exit(2);
    });
  } else {
    const only = args.indexOf('--scenario');
    runHttpBench({
      ...(only >= 0 ? { scenarios: [args[only + 1]!] } : {}),
      connections: numberFlag(args, '--connections'),
      seconds: numberFlag(args, '--seconds'),
      warmupSeconds: numberFlag(args, '--warmup'),
      rounds: numberFlag(args, '--rounds'),
      log: (line) => console.log(line),
    }).then(
      (result) => {
        console.log(result.summary);
        process.exitCode = result.ok ? 0 : 1;
      },
      (err: unknown) => {
        console.error(err);
        process.exitCode = 2;
      },
    );
  }
}
