/**
 * Extension benchmark: (a) the minified bundle sizes of client, server and webview, from a production
 * build made in a temp directory (dist/ stays as `npm run build` left it), against the goal of a client
 * under 300 KB; (b) the language server's time from spawn to `cadre/serverReady`, as a ratio to a bare
 * `node -e ''` start measured in the same run (goal under 10x), cold (fresh data dir: the first start
 * creates an API key) and warm (the data dir of an earlier start).
 *
 *   node --import tsx bench/extension.ts [--rounds 5] [--server dist/server.js]
 *
 * The server is forked with `--node-ipc` and spoken to with vscode-jsonrpc exactly as the extension
 * does (initialize with a workspace folder, initialized, then wait for the ready notification).
 * Each round measures the bare start, a cold start and a warm start back to back, so a neighbour's
 * load spoils all three alike; the medians of the per-round ratios count.
 */
import { fork, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createMessageConnection, IPCMessageReader, IPCMessageWriter } from 'vscode-jsonrpc/node';
import { ServerReadyNotification } from '../protocol/lsp';

const ROOT = path.resolve(__dirname, '..');
/** 300 KB, counted as 300 × 1024 bytes. */
const CLIENT_GOAL_BYTES = 300 * 1024;
const STARTUP_GOAL = 10;
const BUNDLES = ['client.js', 'server.js', 'webview.js'] as const;

export interface BundleSize {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export interface ExtensionBenchOptions {
  /** Rounds of (bare, cold, warm) starts; medians count (default 5). */
  rounds?: number;
  /** Server bundle to start (default: the production build's server.js). */
  serverJs?: string;
  log?: (line: string) => void;
}

export interface ExtensionBenchResult {
  sizes: BundleSize[];
  clientGoalBytes: number;
  clientOk: boolean;
  rounds: number;
  /** Medians, milliseconds. */
  bareMs: number;
  coldMs: number;
  warmMs: number;
  /** Medians of the per-round ratios to the bare start. */
  coldRatio: number;
  warmRatio: number;
  startupGoal: number;
  startupOk: boolean;
  ok: boolean;
  summary: string;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/**
 * `node esbuild.mjs --production` with a temp directory as its working directory: the sources are
 * symlinked in, so the bundles land in <tmp>/dist and the repository's dist/ is left alone.
 */
export function productionBuild(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-ext-build-'));
  for (const entry of readdirSync(ROOT)) {
    if (entry === 'dist' || entry === '.git' || entry === 'out') continue;
    symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  const r = spawnSync(process.execPath, [path.join(ROOT, 'esbuild.mjs'), '--production'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`production build failed (exit ${r.status})`);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The sizes esbuild reported in dist/sizes.json, plus gzip (what a .vsix roughly compresses to). */
export function bundleSizes(buildDir: string): BundleSize[] {
  const reported = JSON.parse(readFileSync(path.join(buildDir, 'dist', 'sizes.json'), 'utf8')) as Record<string, number>;
  return BUNDLES.map((b) => {
    const file = `dist/${b}`;
    const bytes = reported[file];
    if (bytes === undefined) throw new Error(`${file} missing from dist/sizes.json`);
    return { file, bytes, gzipBytes: gzipSync(readFileSync(path.join(buildDir, file))).length };
  });
}

/** Milliseconds from spawning `node -e ''` to its exit. */
function bareStart(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`node -e '' exited with ${code}`))));
  });
}

/** Milliseconds from forking the language server to its `cadre/serverReady`; then shuts it down cleanly. */
async function serverStart(serverJs: string, dataDir: string, workspace: string): Promise<number> {
  const t0 = performance.now();
  const child = fork(serverJs, ['--data-dir', dataDir, '--port', '0', '--node-ipc', `--clientProcessId=${process.pid}`], {
    execArgv: [],
    silent: true,
    env: { ...process.env, CADRE_API_KEY: '' },
  });
  const stderr: string[] = [];
  child.stdout?.resume();
  child.stderr?.on('data', (b: Buffer) => void stderr.push(b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const conn = createMessageConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
  try {
    const ready = new Promise<ServerReadyNotification.Params>((resolve, reject) => {
      conn.onNotification(ServerReadyNotification.method, resolve);
      void exited.then((code) => reject(new Error(`server exited (${code}) before ready: ${stderr.join('').slice(-2000)}`)));
      setTimeout(() => reject(new Error('no cadre/serverReady within 60 s')), 60_000).unref();
    });
    conn.onNotification(() => {});
    conn.onRequest(() => null);
    conn.listen();
    const uri = pathToFileURL(workspace).href;
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri, capabilities: {}, workspaceFolders: [{ uri, name: 'bench' }] });
    await conn.sendNotification('initialized', {});
    const params = await ready;
    const ms = performance.now() - t0;
    if (params.attached) throw new Error('the server attached to another owner of the data dir instead of starting');
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref())]);
    if (code !== 0) throw new Error(`server did not exit cleanly after shutdown/exit: ${code}`);
    return ms;
  } finally {
    conn.dispose();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

export async function runExtensionBench(opts: ExtensionBenchOptions = {}): Promise<ExtensionBenchResult> {
  const rounds = opts.rounds ?? 5;
  const log = opts.log ?? (() => {});
  const build = productionBuild();
  try {
    const sizes = bundleSizes(build.dir);
    for (const s of sizes) log(`${s.file}: ${kb(s.bytes)} minified, ${kb(s.gzipBytes)} gzipped`);
    const serverJs = opts.serverJs ? path.resolve(opts.serverJs) : path.join(build.dir, 'dist', 'server.js');

    const workspace = await mkdtemp(path.join(tmpdir(), 'cadre-bench-ext-ws-'));
    const warmDir = await mkdtemp(path.join(tmpdir(), 'cadre-bench-ext-warm-'));
    const bare: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    try {
      // Unmeasured: fills the OS file cache with node and the bundle, and gives the warm dir its key.
      await bareStart();
      await serverStart(serverJs, warmDir, workspace);
      for (let round = 0; round < rounds; round++) {
        const fresh = await mkdtemp(path.join(tmpdir(), 'cadre-bench-ext-cold-'));
        try {
          const b = await bareStart();
          const c = await serverStart(serverJs, fresh, workspace);
          const w = await serverStart(serverJs, warmDir, workspace);
          bare.push(b);
          cold.push(c);
          warm.push(w);
          log(`round ${round + 1}: node -e '' ${b.toFixed(0)} ms, server cold ${c.toFixed(0)} ms (${(c / b).toFixed(1)}x), warm ${w.toFixed(0)} ms (${(w / b).toFixed(1)}x)`);
        } finally {
          await rm(fresh, { recursive: true, force: true });
        }
      }
    } finally {
      await rm(workspace, { recursive: true, force: true });
      await rm(warmDir, { recursive: true, force: true });
    }

    const client = sizes.find((s) => s.file === 'dist/client.js')!;
    const clientOk = client.bytes < CLIENT_GOAL_BYTES;
    const coldRatio = median(cold.map((c, i) => c / bare[i]!));
    const warmRatio = median(warm.map((w, i) => w / bare[i]!));
    const startupOk = coldRatio < STARTUP_GOAL && warmRatio < STARTUP_GOAL;
    const summary =
      `extension bundles (production, minified): ` + sizes.map((s) => `${s.file.slice(5)} ${kb(s.bytes)} (gzip ${kb(s.gzipBytes)})`).join(', ') +
      ` (goal: client < ${kb(CLIENT_GOAL_BYTES)}: ${clientOk ? 'met' : 'NOT met'}); ` +
      `language server spawn to ready, medians of ${rounds} rounds: cold ${median(cold).toFixed(0)} ms = ${coldRatio.toFixed(1)}x, ` +
      `warm ${median(warm).toFixed(0)} ms = ${warmRatio.toFixed(1)}x a bare node start (${median(bare).toFixed(0)} ms) ` +
      `(goal: < ${STARTUP_GOAL}x: ${startupOk ? 'met' : 'NOT met'})`;
    return {
      sizes, clientGoalBytes: CLIENT_GOAL_BYTES, clientOk, rounds,
      bareMs: median(bare), coldMs: median(cold), warmMs: median(warm), coldRatio, warmRatio,
      startupGoal: STARTUP_GOAL, startupOk, ok: clientOk && startupOk, summary,
    };
  } finally {
    build.cleanup();
  }
}

function numberFlag(args: string[], name: string): number | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} needs a positive integer`);
  return value;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const server = args.indexOf('--server');
  runExtensionBench({
    rounds: numberFlag(args, '--rounds'),
    ...(server >= 0 ? { serverJs: args[server + 1]! } : {}),
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
