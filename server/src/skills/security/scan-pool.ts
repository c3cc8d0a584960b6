/**
 * Sharing a large secret scan with worker threads. The calling thread scans files itself from a
 * shared queue while scan workers (created on first use, kept while scans keep coming, unref'd so they
 * never hold a process open) take batches of about BATCH_BYTES from the same queue: the caller never
 * waits for a worker to start, and a worker that fails hands its batch back. Results are sorted at
 * the end, so the outcome does not depend on which thread scanned which file.
 *
 * A worker runs the scan loop of scan-worker.ts. Bundled, that is dist/scan-worker.js next to the
 * running bundle (a small file of its own, esbuild.mjs); the TypeScript source under tsx (tests,
 * bench). Without a scan-worker.js next to it, the bundle that contains this module runs its own
 * file, but only when it is dist/skills.js (which also holds the loop); any other host bundle gets no
 * workers (loading it in a worker could start a server), so its scans stay in-thread.
 */
import { existsSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SCAN_WORKER_FLAG, type BatchReply, type BatchRequest } from './scan-worker';
import { addOutcome, finishTreeResult, scanFile, type TreeScanOptions, type TreeScanResult } from './scanner';

/** Below this many bytes in all, a scan stays in the calling thread. */
export const PARALLEL_MIN_BYTES = 8 * 1024 * 1024;
const BATCH_BYTES = 2 * 1024 * 1024;
const IDLE_MS = 60_000;

/** The file this module runs from (its bundle when bundled); tests may pretend another (setScanWorkerHost). */
let hostFile = __filename;
let resolved: { host: string; src: { source: string; eval: boolean } | undefined } | undefined;

/** The script a scan worker runs, or undefined when no file a worker may load holds the scan loop. */
function workerSource(): { source: string; eval: boolean } | undefined {
  if (resolved?.host !== hostFile) resolved = { host: hostFile, src: resolveWorkerSource(hostFile) };
  return resolved.src;
}

function resolveWorkerSource(self: string): { source: string; eval: boolean } | undefined {
  const ts = /\.([cm]?ts)$/.exec(self);
  if (ts) {
    try {
      const req = require;
      const tsx = req.resolve(['tsx', 'cjs'].join('/'));
      const entry = path.join(path.dirname(self), `scan-worker.${ts[1]}`);
      return { source: `require(${JSON.stringify(tsx)}); require(${JSON.stringify(existsSync(entry) ? entry : self)});`, eval: true };
    } catch {
      return undefined;
    }
  }
  // The dedicated entry next to the running bundle (dist/scan-worker.js), or next to a compiled scan-pool.js.
  const dedicated = path.join(path.dirname(self), 'scan-worker.js');
  if (path.basename(self) !== 'scan-worker.js' && existsSync(dedicated)) return { source: dedicated, eval: false };
  return /(?:^|[\\/])(?:scan-pool\.[cm]?js|skills\.js)$/.test(self) ? { source: self, eval: false } : undefined;
}

interface PoolWorker { worker: Worker; busy: BatchRequest | null; broken: boolean }

let pool: PoolWorker[] = [];
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
let disabled = false;
/** Batches answered by scan workers since this module was loaded. */
let workerBatches = 0;
/** Batch id → the scan waiting for it (null = the worker failed; the batch comes back). */
const waiting = new Map<number, (reply: BatchReply | null) => void>();

function poolSize(): number {
  const cpus = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(0, Math.min(3, cpus - 1));
}

function ensurePool(size: number): PoolWorker[] {
  pool = pool.filter((p) => !p.broken);
  const src = workerSource();
  if (!src) return pool;
  while (pool.length < size) {
    const worker = new Worker(src.source, { eval: src.eval, workerData: { [SCAN_WORKER_FLAG]: true } });
    worker.unref();
    const p: PoolWorker = { worker, busy: null, broken: false };
    worker.on('message', (reply: BatchReply) => {
      if (!p.busy || p.busy.id !== reply.id) return;
      p.busy = null;
      worker.unref();
      workerBatches++;
      const h = waiting.get(reply.id);
      waiting.delete(reply.id);
      h?.(reply);
    });
    const fail = () => {
      if (p.broken) return;
      p.broken = true;
      const busy = p.busy;
      p.busy = null;
      if (busy) {
        const h = waiting.get(busy.id);
        waiting.delete(busy.id);
        h?.(null);
      }
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    pool.push(p);
  }
  return pool;
}

/** Ends the scan workers (they also end after a minute without scans). */
export async function stopScanWorkers(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  const ending = pool;
  pool = [];
  await Promise.all(ending.map((p) => p.worker.terminate().catch(() => 0)));
}

/** The script scan workers run (undefined: scans stay in-thread) and the batches they answered so far. */
export function scanWorkerInfo(): { script: string | undefined; batches: number } {
  const src = workerSource();
  return { script: src ? (src.eval ? /require\("([^"]*)"\);$/.exec(src.source)?.[1] : src.source) : undefined, batches: workerBatches };
}

/**
 * For tests: resolve the worker script as if this module ran from `file` (e.g. the built
 * dist/skills.js), or from its own file again with undefined. Ends the current scan workers.
 */
export async function setScanWorkerHost(file: string | undefined): Promise<void> {
  await stopScanWorkers();
  hostFile = file ?? __filename;
  disabled = false;
}

function armIdleTimer(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => void stopScanWorkers(), IDLE_MS);
  idleTimer.unref();
}

/**
 * Scans `files` with the calling thread and the scan workers, or returns undefined when the scan
 * should stay in-thread (small, workers: 0, no worker script, workers failed before).
 */
export async function scanTreeParallel(root: string, files: readonly string[], options: TreeScanOptions): Promise<TreeScanResult | undefined> {
  const wanted = options.workers ?? 'auto';
  const count = wanted === 'auto' ? poolSize() : Math.max(0, Math.min(8, Math.floor(wanted)));
  if (count === 0 || disabled || files.length < 2 || !workerSource()) return undefined;
  const sizes = files.map((f) => {
    try {
      return statSync(path.join(root, f)).size;
    } catch {
      return 0;
    }
  });
  const total = sizes.reduce((a, b) => a + b, 0);
  if (wanted === 'auto' && total < PARALLEL_MIN_BYTES) return undefined;
  let workers: PoolWorker[];
  try {
    workers = ensurePool(count);
  } catch {
    disabled = true;
    return undefined;
  }
  if (idleTimer) clearTimeout(idleTimer);

  const { signal, files: _f, workers: _w, ...portable } = options;
  const result: TreeScanResult = { findings: [], suppressed: [], filesConsidered: files.length, filesScanned: 0, bytesScanned: 0, skipped: [] };
  let next = 0;
  /** Files handed back by a worker that failed, scanned by this thread. */
  const returned: number[] = [];
  let outstanding = 0;
  let wake: (() => void) | undefined;
  const settle = () => { const w = wake; wake = undefined; w?.(); };

  const dispatch = (p: PoolWorker): void => {
    if (p.broken || p.busy || signal?.aborted || next >= files.length) return;
    const start = next;
    let bytes = 0;
    while (next < files.length && (next === start || bytes + sizes[next]! <= BATCH_BYTES)) bytes += sizes[next++]!;
    const req: BatchRequest = { id: nextId++, root, files: [], options: portable };
    for (let i = start; i < next; i++) req.files.push({ file: files[i]!, size: sizes[i]! });
    p.busy = req;
    outstanding++;
    waiting.set(req.id, (reply) => {
      outstanding--;
      if (reply) {
        for (const o of reply.outcomes) addOutcome(result, o);
        dispatch(p);
      } else {
        for (let i = start; i < start + req.files.length; i++) returned.push(i);
      }
      settle();
    });
    p.worker.ref();
    p.worker.postMessage(req);
  };
  for (const p of workers) dispatch(p);

  try {
    // This thread takes one file at a time and yields about every 512 KiB so that replies are seen.
    let sinceYield = 0;
    for (;;) {
      signal?.throwIfAborted();
      const i = returned.length ? returned.pop()! : next < files.length ? next++ : -1;
      if (i === -1) {
        if (outstanding === 0 && returned.length === 0) break;
        await new Promise<void>((r) => { wake = r; });
        continue;
      }
      addOutcome(result, scanFile(root, files[i]!, portable, sizes[i]));
      sinceYield += sizes[i]!;
      if (sinceYield >= 512 * 1024) {
        sinceYield = 0;
        await new Promise<void>((r) => setImmediate(r));
      }
    }
  } finally {
    armIdleTimer();
  }
  if (workers.length && workers.every((p) => p.broken)) disabled = true;
  return finishTreeResult(result);
}
