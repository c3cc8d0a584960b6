/**
 * Growth curve: the acknowledged latency of `POST /v1/agents/tasks` (p50, p99; the 202 comes after
 * the task is on disk) and the server's RSS, at increasing numbers of stored executions, with the
 * ratio last / first (goal: latency under 1.5x; RSS under the bound printed with it).
 *
 * The data directory is filled the faithful way at first (real tasks through the real server), then
 * topped up between levels by bench/growth-seed.ts, a child process that copies those executions
 * under fresh ids through the store's own API while the server is stopped; the server is then started
 * on it (start-up reads the store as it would a user's) and measured. Each level gets a fresh server.
 *
 * Run: node --import tsx bench/growth.ts [--small | --levels 1000,10000] [--samples N]   (npm run build first)
 *   default levels 1,000 / 10,000 / 50,000 / 100,000 executions; --small: 200 / 2,000 (under a minute,
 *   used by test/integration/growth.test.ts, which asserts the ratio only).
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { writeFileSync } from 'node:fs';
import { freshKey, KEY } from '../test/support/fleet-server';
import { ensureBuilt, startServer, stop, tempDir, type ServerProcess } from '../test/support/server-process';

const run = promisify(execFile);

export const FULL_LEVELS = [1_000, 10_000, 50_000, 100_000];
export const SMALL_LEVELS = [200, 2_000];
/** RSS bound of the goal: what the issue asks of an idle server, plus the hot indexes of 100k executions. */
export const RSS_BOUND_MB = 400;
/** Under the enterprise burst of 167/min per key. */
const PER_KEY = 150;

export interface GrowthLevel {
  executions: number;
  p50Ms: number;
  p99Ms: number;
  rssMb: number;
  startMs: number;
}

export interface GrowthResult {
  levels: GrowthLevel[];
  p50Ratio: number;
  p99Ratio: number;
  rssRatio: number;
  ok: boolean;
  summary: string;
}

function rssMb(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** `samples` acknowledged POSTs, one at a time (latency, not throughput), after a few warm-up ones. */
async function measurePosts(url: string, workspace: string, samples: number): Promise<{ p50: number; p99: number; ids: string[]; keys: string[] }> {
  const keys = await Promise.all(Array.from({ length: Math.ceil((samples + 10) / PER_KEY) }, () => freshKey(url)));
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  // A cheap task: security-ai scans an empty workspace (or fails fast when the server has no skills).
  const body = JSON.stringify({ task: 'growth bench task', capabilities: ['SECURE'], source: workspace });
  const times: number[] = [];
  const ids: string[] = [];
  try {
    for (let i = 0; i < samples + 10; i++) {
      let t = process.hrtime.bigint();
      let r = await request(`${url}/v1/agents/tasks`, { method: 'POST', dispatcher, headers: { authorization: `Bearer ${keys[Math.floor(i / PER_KEY)]}`, 'content-type': 'application/json' }, body });
      let text = await r.body.text();
      // The agents' queues are bounded: on a loaded machine the posts can outrun the scans. A refusal
      // is not an acknowledged write: wait for the queue to drain, retry, and time only the accepted post.
      for (let waited = 0; r.statusCode === 503 && waited < 120_000; waited += 500) {
        await new Promise((res) => setTimeout(res, 500));
        t = process.hrtime.bigint();
        r = await request(`${url}/v1/agents/tasks`, { method: 'POST', dispatcher, headers: { authorization: `Bearer ${keys[Math.floor(i / PER_KEY)]}`, 'content-type': 'application/json' }, body });
        text = await r.body.text();
      }
      if (r.statusCode !== 202) throw new Error(`POST /v1/agents/tasks answered ${r.statusCode}: ${text}`);
      ids.push((JSON.parse(text) as { taskId: string }).taskId);
      if (i >= 10) times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  } finally {
    await dispatcher.close();
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), ids, keys };
}

/** Polls until every task ended: only finished executions are copied (in-flight ones would resume at start). */
async function waitFinished(url: string, ids: string[]): Promise<void> {
  const end = Date.now() + 120_000;
  let key = '';
  let used = PER_KEY;
  for (const id of ids) {
    for (;;) {
      if (used++ >= PER_KEY) [key, used] = [await freshKey(url), 1]; // keys are rate-limited per minute
      const r = await request(`${url}/v1/agents/tasks/${id}`, { headers: { authorization: `Bearer ${key}` } });
      const status = ((await r.body.json()) as { status?: string }).status;
      if (status === 'completed' || status === 'failed' || status === 'cancelled') break;
      if (Date.now() > end) throw new Error(`task ${id} still ${status}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }
}

/**
 * The fleet server's start, with the wait for "listening" stretched: start-up reads the whole store, and
 * at tens of thousands of executions that takes longer than the tests' 15 s.
 */
async function startOn(dataDir: string): Promise<ServerProcess & { url: string; workspace: string }> {
  const workspace = tempDir('cadre-ws-');
  writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
  const p = startServer(['--standalone', '--port', '0', '--data-dir', dataDir, '--workspace', workspace], { CADRE_API_KEY: KEY });
  const m = await p.line(/^Cadre listening on (http:\/\/127\.0\.0\.1:\d+)$/, 600_000);
  return Object.assign(p, { url: m[1]!, workspace });
}

async function seed(dataDir: string, target: number): Promise<void> {
  const script = path.join(__dirname, 'growth-seed.ts');
  await run(process.execPath, ['--import', 'tsx', script, dataDir, String(target)], { cwd: path.join(__dirname, '..'), maxBuffer: 1 << 20 });
}

export async function runGrowthBench(opts: { levels?: number[]; samples?: number; log?: (l: string) => void } = {}): Promise<GrowthResult> {
  ensureBuilt();
  const levels = opts.levels ?? FULL_LEVELS;
  const samples = opts.samples ?? 200;
  const log = opts.log ?? ((l: string) => console.log(l));
  const dataDir = tempDir('cadre-bench-growth-');
  const out: GrowthLevel[] = [];
  try {
    // Real executions first: the templates the seeder copies are what the server itself stored.
    let server = await startOn(dataDir);
    try {
      const first = await measurePosts(server.url, server.workspace, 40);
      await waitFinished(server.url, first.ids);
    } finally {
      await stop(server);
    }
    for (const level of levels) {
      await seed(dataDir, level);
      const t = Date.now();
      server = await startOn(dataDir);
      const startMs = Date.now() - t;
      try {
        const { p50, p99 } = await measurePosts(server.url, server.workspace, samples);
        const rss = rssMb(server.child.pid);
        out.push({ executions: level, p50Ms: p50, p99Ms: p99, rssMb: rss, startMs });
        log(`growth: ${level.toLocaleString('en')} stored executions: POST /v1/agents/tasks acknowledged p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; server RSS ${rss.toFixed(0)} MB; start to listening ${startMs} ms`);
      } finally {
        await stop(server);
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const first = out[0]!;
  const last = out[out.length - 1]!;
  const p50Ratio = last.p50Ms / first.p50Ms;
  const p99Ratio = last.p99Ms / first.p99Ms;
  const rssRatio = last.rssMb / first.rssMb;
  const maxRss = Math.max(...out.map((l) => l.rssMb));
  const summary = `growth: ${first.executions.toLocaleString('en')} -> ${last.executions.toLocaleString('en')} executions: p50 x${p50Ratio.toFixed(2)}, p99 x${p99Ratio.toFixed(2)} (goal < 1.5x), RSS x${rssRatio.toFixed(2)}, max ${maxRss.toFixed(0)} MB (bound ${RSS_BOUND_MB} MB)`;
  log(summary);
  return { levels: out, p50Ratio, p99Ratio, rssRatio, ok: p50Ratio < 1.5 && maxRss < RSS_BOUND_MB, summary };
}

if (require.main === module) {
  const small = process.argv.includes('--small');
  const i = process.argv.indexOf('--samples');
  const l = process.argv.indexOf('--levels');
  const levels = l > 0 ? process.argv[l + 1]!.split(',').map(Number) : small ? SMALL_LEVELS : FULL_LEVELS;
  runGrowthBench({ levels, ...(i > 0 ? { samples: Number(process.argv[i + 1]) } : {}) }).then((r) => process.exit(r.ok ? 0 : 1), (err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
