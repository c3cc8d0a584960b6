/**
 * Memory benchmark: the built server's RSS idle, with the default warm pool, and per additional warm
 * agent, against a bare `node` process started in the same run.
 *
 *   npm run build && node --import tsx bench/memory.ts [--extra 10] [--per-agent]
 *
 * Every figure is the process's RSS (all threads) as /v1/health reports it (`memory.rss_bytes`),
 * taken once the agents endpoints say no agent is `warming` and the process has sat idle for a moment;
 * the bare process reports its own process.memoryUsage().rss after the same wait.
 *
 *  1. bare:    `node -e` doing nothing;
 *  2. idle:    `node dist/server.js --standalone --port 0 --data-dir <tmp>` as the pool leaves it now
 *              (business hours in New York pre-warm the business-hours agents; outside them none);
 *  3. default: the default warm pool as in business hours (the always-on and business-hours agents
 *              with a skill warm): agents the clock left cold are warmed through the API;
 *  4. +N:      N more agents warmed through the API, `(RSS(+N) - RSS(default)) / N` per agent.
 * Agents are warmed the way a user wakes them: `POST /api/agents/{id}/{action}` (docs/api.md), which
 * warms the agent and runs one step. So that the step is cheap and every catalog agent has a skill,
 * the server gets a skill module (`--skill-module`) with an echo skill for each agent's first action
 * (it replaces the embedded skill of that action; the workers still load the whole embedded bundle).
 * `--per-agent` runs the same with CADRE_SHARED_WORKERS=0 (one worker per agent, the former model).
 * Goals (issue 11): default warm pool < 250 MB, each additional warm agent < 20 MB.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AGENTS } from '../server/src/engine/catalog/index';

const ROOT = path.resolve(__dirname, '..');
const SERVER_JS = path.join(ROOT, 'dist', 'server.js');
const MB = 1024 * 1024;
const IDLE_GOAL_MB = 250;
const PER_AGENT_GOAL_MB = 20;
/** How long a process sits idle before its RSS is read. */
const SETTLE_MS = 2000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => (bytes / MB).toFixed(1);

export interface MemoryBenchResult {
  bareMb: number;
  idleMb: number;
  defaultMb: number;
  defaultWarm: number;
  perAgentMb: number;
  extra: number;
  threads: number;
  ok: boolean;
}

/** RSS of a bare node process that does nothing, after the same settling time. */
async function bareRss(): Promise<number> {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => console.log(process.memoryUsage().rss), ${SETTLE_MS}); setTimeout(() => {}, ${SETTLE_MS + 100});`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.on('exit', r));
  return Number(out.trim());
}

/** An echo skill for every catalog agent's first action. */
function echoModule(dir: string): { file: string; actions: Map<string, string> } {
  const actions = new Map(AGENTS.map((a) => [a.id, a.actions[0]!.name] as const));
  const file = path.join(dir, 'echo-skills.cjs');
  writeFileSync(file, `
const list = ${JSON.stringify([...actions])};
exports.skills = list.map(([agentId, action]) => ({
  agentId, action,
  async research(ctx) { return { items: [{ source: 'goal', detail: ctx.request.goal.prompt, weight: 1 }], constraints: [], pathsRead: [] }; },
  propose() { return []; },
  async generate(ctx) { return { kind: 'report', summary: agentId + ' ' + action + ': memory bench', goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId }, tokens: 0 }; },
}));
`);
  return { file, actions };
}

interface Server {
  child: ChildProcess;
  url: string;
  key: string;
}

async function startServer(dataDir: string, skillModule: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, [SERVER_JS, '--standalone', '--port', '0', '--data-dir', dataDir, '--skill-module', skillModule], {
    cwd: ROOT, env: { ...process.env, CADRE_API_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.resume();
  return new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${out}`)), 30_000);
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${out}`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const key = /New API key[^:]*: (\S+)/.exec(out)?.[1];
      const url = /Cadre listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (key && url) {
        clearTimeout(timer);
        resolve({ child, url, key });
      }
    });
  });
}

async function api<T>(s: Server, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${s.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 400 && !(p === '/v1/health' && res.status === 503)) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

type AgentView = { id: string; state: 'warm' | 'warming' | 'cold' };
type Health = { memory: { rss_bytes: number; worker_threads: number; warm_agents: number } };

async function agents(s: Server): Promise<AgentView[]> {
  const r = await api<AgentView[] | { agents: AgentView[] }>(s, 'GET', '/v1/agents/list');
  return Array.isArray(r) ? r : r.agents;
}

/** Waits until no agent is warming, then lets the process sit idle; returns its health. */
async function settled(s: Server): Promise<Health> {
  // Polled every 500 ms: the key's rate limit (167 a minute) counts every poll, and a loaded machine warms slowly.
  for (let i = 0; i < 240; i++) {
    if (!(await agents(s)).some((a) => a.state === 'warming')) break;
    await sleep(500);
  }
  await sleep(SETTLE_MS);
  return api<Health>(s, 'GET', '/v1/health');
}

/** Wakes agents the way a user does: one direct action each, then waits until each says `warm`. */
async function warm(s: Server, ids: string[], actions: Map<string, string>): Promise<void> {
  for (const id of ids) await api(s, 'POST', `/api/agents/${id}/${actions.get(id)}`, { prompt: 'memory bench', intelligence: 'ultra' });
  for (let i = 0; i < 240; i++) {
    const states = new Map((await agents(s)).map((a) => [a.id, a.state]));
    if (ids.every((id) => states.get(id) === 'warm')) return;
    await sleep(500);
  }
  throw new Error(`agents did not warm: ${ids.join(', ')}`);
}

async function measure(label: string, env: NodeJS.ProcessEnv, extra: number, bare: number, log: (l: string) => void): Promise<MemoryBenchResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-memory-'));
  const { file, actions } = echoModule(dir);
  const s = await startServer(path.join(dir, 'data'), file, env);
  try {
    const idle = await settled(s);
    const poolAgents = AGENTS.filter((a) => a.availability === 'always_on' || a.availability === 'business_hours').map((a) => a.id);
    const states = new Map((await agents(s)).map((a) => [a.id, a.state]));
    const coldInPool = poolAgents.filter((id) => states.get(id) !== 'warm');
    if (coldInPool.length) await warm(s, coldInPool, actions);
    const def = await settled(s);
    const others = AGENTS.filter((a) => !poolAgents.includes(a.id)).map((a) => a.id).slice(0, extra);
    await warm(s, others, actions);
    const more = await settled(s);
    const perAgent = (more.memory.rss_bytes - def.memory.rss_bytes) / others.length;
    const r: MemoryBenchResult = {
      bareMb: bare / MB, idleMb: idle.memory.rss_bytes / MB, defaultMb: def.memory.rss_bytes / MB, defaultWarm: def.memory.warm_agents,
      perAgentMb: perAgent / MB, extra: others.length, threads: more.memory.worker_threads,
      ok: def.memory.rss_bytes / MB < IDLE_GOAL_MB && perAgent / MB < PER_AGENT_GOAL_MB,
    };
    log(`[${label}] idle now: ${mb(idle.memory.rss_bytes)} MB (${idle.memory.warm_agents} warm agent(s) on ${idle.memory.worker_threads} worker(s); ${coldInPool.length ? `${coldInPool.length} pool agent(s) cold at this hour` : 'business hours'}), ${(idle.memory.rss_bytes / bare).toFixed(2)}x bare`);
    log(`[${label}] default warm pool (${def.memory.warm_agents} agents warm, ${def.memory.worker_threads} worker thread(s)): ${mb(def.memory.rss_bytes)} MB, ${(def.memory.rss_bytes / bare).toFixed(2)}x bare — goal < ${IDLE_GOAL_MB} MB: ${r.defaultMb < IDLE_GOAL_MB ? 'MET' : 'NOT MET'}`);
    log(`[${label}] +${others.length} warm agents: ${mb(more.memory.rss_bytes)} MB on ${more.memory.worker_threads} worker thread(s); per additional warm agent ${mb(perAgent)} MB (${(perAgent / bare).toFixed(3)}x bare) — goal < ${PER_AGENT_GOAL_MB} MB: ${r.perAgentMb < PER_AGENT_GOAL_MB ? 'MET' : 'NOT MET'}`);
    return r;
  } finally {
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runMemoryBench(opts: { extra?: number; perAgent?: boolean; log?: (l: string) => void } = {}): Promise<MemoryBenchResult> {
  const log = opts.log ?? ((l: string) => console.log(l));
  if (!existsSync(SERVER_JS)) throw new Error('dist/server.js is missing: npm run build first');
  log(`memory bench: ${path.relative(ROOT, SERVER_JS)} (${(readFileSync(SERVER_JS).length / MB).toFixed(1)} MB bundle), Node ${process.version}`);
  const bare = await bareRss();
  log(`bare node -e idle: ${mb(bare)} MB`);
  const extra = opts.extra ?? 10;
  const shared = await measure('shared workers (default)', {}, extra, bare, log);
  if (opts.perAgent) await measure('one worker per agent (CADRE_SHARED_WORKERS=0)', { CADRE_SHARED_WORKERS: '0' }, extra, bare, log);
  return shared;
}

if (require.main === module) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  runMemoryBench({ extra: Number(arg('--extra') ?? 10), perAgent: process.argv.includes('--per-agent') })
    .then((r) => process.exit(r.ok ? 0 : 1))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(2);
    });
}
