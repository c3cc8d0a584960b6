/**
 * Store benchmarks, each against a baseline measured in the same run:
 *
 * 1. Throughput: durable task inserts per second, group commit vs one write per mutation, both
 *    against a store already holding 10,000 realistic task records (~300 bytes each).
 * 2. Growth: the latency of one awaited commit (2 KB record) with the store holding 1k, 5k, 20k and
 *    50k records, and the ratio last / first (goal < 1.5x: the cost of a commit does not depend on
 *    the size of the store), for the journal store and for the previous whole-file store.
 *
 *   node --import tsx bench/store.ts [--seed 10000] [--inserts 2000] [--concurrency 64] [--baseline-seconds 3]
 *   node --import tsx bench/store.ts --growth [--sizes 1000,5000,20000,50000] [--commits 40]
 *
 * Load shape (both modes): `concurrency` callers, each inserting one task and awaiting its
 * durability before issuing the next, like an HTTP server answering 202s under load.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openStore, storeFilePath, type Durability, type Store } from '../server/src/store';

export interface StoreBenchOptions {
  /** Records in the store before measuring (default 10,000). */
  seedRecords?: number;
  /** Inserts measured with group commit (default 2,000). */
  groupInserts?: number;
  /** Concurrent callers in both modes (default 64). */
  concurrency?: number;
  /** Measuring window of the per-mutation baseline, seconds (default 3). */
  baselineSeconds?: number;
  /** Parent of the temp directories (default the OS temp dir). */
  tmpRoot?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface StoreModeResult {
  durability: Durability;
  inserts: number;
  seconds: number;
  perSecond: number;
  /** File writes during the measurement. */
  writes: number;
  /** Mean inserts per file write. */
  avgBatch: number;
}

export interface StoreBenchResult {
  seedRecords: number;
  /** Mean size of one seeded record as JSON, bytes. */
  recordBytes: number;
  /** Store file size after seeding, bytes. */
  fileBytes: number;
  concurrency: number;
  groupCommit: StoreModeResult;
  perMutation: StoreModeResult;
  /** groupCommit.perSecond / perMutation.perSecond */
  ratio: number;
  goal: number;
  ok: boolean;
  /** The one-line summary. */
  summary: string;
}

interface TaskRecord {
  id: string;
  projectId: string;
  agentId: string;
  title: string;
  description: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  priority: 'low' | 'normal' | 'high';
  executionId: string | null;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

const AGENTS = ['code-reviewer', 'test-engineer', 'security-auditor', 'doc-writer', 'refactoring-specialist', 'devops-engineer'];
const VERBS = ['Refactor', 'Add tests for', 'Review', 'Document', 'Harden', 'Profile'];
const AREAS = ['payment module', 'auth middleware', 'webhook dispatcher', 'rate limiter', 'SSE stream', 'CLI parser'];
const STATUSES: TaskRecord['status'][] = ['queued', 'running', 'completed', 'failed'];
const PRIORITIES: TaskRecord['priority'][] = ['low', 'normal', 'high'];

function makeTask(n: number): TaskRecord {
  const at = new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString();
  const verb = VERBS[n % VERBS.length]!;
  const area = AREAS[(n >> 2) % AREAS.length]!;
  return {
    id: `task_${randomBytes(8).toString('hex')}`,
    projectId: `proj_${(n % 7).toString().padStart(4, '0')}`,
    agentId: AGENTS[n % AGENTS.length]!,
    title: `${verb} the ${area}`,
    description: `${verb} the ${area} (#${n}).`,
    status: STATUSES[n % STATUSES.length]!,
    priority: PRIORITIES[n % PRIORITIES.length]!,
    executionId: n % 2 === 0 ? `exec_${randomBytes(6).toString('hex')}` : null,
    tags: [n % 2 === 0 ? 'quality' : 'security'],
    createdAt: at,
    updatedAt: at,
  };
}

async function seed(file: string, records: number): Promise<void> {
  const store = await openStore({ file });
  const tasks = store.collection<TaskRecord>('tasks');
  const puts: Promise<void>[] = [];
  for (let i = 0; i < records; i++) puts.push(tasks.put(makeTask(i)));
  await Promise.all(puts);
  await store.close();
}

/** `concurrency` callers insert until `total` inserts were issued or `deadline` (ms, performance.now) passed. */
async function measure(
  file: string,
  durability: Durability,
  concurrency: number,
  limit: { total?: number; deadline?: number },
  firstSeq: number,
): Promise<StoreModeResult> {
  const store = await openStore({ file, durability });
  const tasks = store.collection<TaskRecord>('tasks');
  const writesBefore = store.stats().writes;
  let issued = 0;
  let done = 0;
  const start = performance.now();
  const deadline = limit.deadline === undefined ? Infinity : start + limit.deadline;
  const total = limit.total ?? Infinity;
  const caller = async (): Promise<void> => {
    while (issued < total && performance.now() < deadline) {
      const n = firstSeq + issued++;
      await tasks.put(makeTask(n));
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const seconds = (performance.now() - start) / 1000;
  const writes = store.stats().writes - writesBefore;
  await store.close();
  return { durability, inserts: done, seconds, perSecond: done / seconds, writes, avgBatch: writes ? done / writes : 0 };
}

export async function runStoreBench(opts: StoreBenchOptions = {}): Promise<StoreBenchResult> {
  const seedRecords = opts.seedRecords ?? 10_000;
  const groupInserts = opts.groupInserts ?? 2_000;
  const concurrency = opts.concurrency ?? 64;
  const baselineSeconds = opts.baselineSeconds ?? 3;
  const log = opts.log ?? (() => undefined);
  const goal = 20;

  const root = await mkdtemp(path.join(opts.tmpRoot ?? tmpdir(), 'cadre-bench-store-'));
  try {
    const groupFile = storeFilePath(path.join(root, 'group'));
    const baselineFile = storeFilePath(path.join(root, 'per-mutation'));
    log(`seeding two stores with ${seedRecords} task records...`);
    await seed(groupFile, seedRecords);
    await seed(baselineFile, seedRecords);
    const fileBytes = await storeBytes(groupFile);
    let sample = 0;
    for (let i = 0; i < 100; i++) sample += JSON.stringify(makeTask(i)).length;
    const recordBytes = Math.round(sample / 100);
    log(`store file ${(fileBytes / 1e6).toFixed(2)} MB, ~${recordBytes} bytes per record`);

    log(`group commit: ${groupInserts} inserts, ${concurrency} concurrent callers...`);
    const groupCommit = await measure(groupFile, 'group', concurrency, { total: groupInserts }, seedRecords);
    log(`  ${groupCommit.perSecond.toFixed(0)}/s (${groupCommit.writes} writes, ${groupCommit.avgBatch.toFixed(1)} inserts per write)`);

    log(`per-mutation: ${concurrency} concurrent callers for ~${baselineSeconds} s...`);
    const perMutation = await measure(baselineFile, 'per-mutation', concurrency, { deadline: baselineSeconds * 1000 }, seedRecords);
    log(`  ${perMutation.perSecond.toFixed(0)}/s (${perMutation.inserts} inserts, ${perMutation.writes} writes)`);

    const ratio = groupCommit.perSecond / perMutation.perSecond;
    const ok = ratio >= goal;
    const summary = `store: group-commit ${groupCommit.perSecond.toFixed(0)}/s, per-mutation ${perMutation.perSecond.toFixed(0)}/s, ` +
      `ratio ${ratio.toFixed(1)}x (goal >= ${goal}x)`;
    return { seedRecords, recordBytes, fileBytes, concurrency, groupCommit, perMutation, ratio, goal, ok, summary };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Bytes of the snapshot and journals of the store whose snapshot is `file`. */
async function storeBytes(file: string): Promise<number> {
  const dir = path.dirname(file);
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.startsWith('store.')) total += (await stat(path.join(dir, name))).size;
  }
  return total;
}

export interface GrowthPoint {
  records: number;
  /** Median latency of one awaited commit, ms. */
  journalMs: number;
  wholeFileMs: number | null;
}

export interface GrowthBenchResult {
  points: GrowthPoint[];
  /** journal last / first */
  journalRatio: number;
  /** whole-file last / first (the previous design), when measured */
  wholeFileRatio: number | null;
  goal: number;
  ok: boolean;
  summary: string;
}

export interface GrowthBenchOptions {
  sizes?: number[];
  /** Awaited commits measured per size for the journal store (default 40). */
  commits?: number;
  /** Awaited commits per size for the whole-file baseline (default 8; each rewrites the whole file). */
  baselineCommits?: number;
  /** Skip the whole-file baseline (default false). */
  noBaseline?: boolean;
  recordBytes?: number;
  tmpRoot?: string;
  log?: (line: string) => void;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function commitLatencies(store: Store, commits: number, pad: string, tag: string): Promise<number[]> {
  const rows = store.collection<{ id: string; pad: string }>('rows');
  const out: number[] = [];
  for (let i = 0; i < commits; i++) {
    const t0 = performance.now();
    await rows.put({ id: `${tag}-${i}`, pad });
    out.push(performance.now() - t0);
  }
  return out;
}

/** Commit latency against store size: journal store vs the whole-file store, same records, same run. */
export async function runGrowthBench(opts: GrowthBenchOptions = {}): Promise<GrowthBenchResult> {
  const sizes = opts.sizes ?? [1_000, 5_000, 20_000, 50_000];
  const commits = opts.commits ?? 40;
  const baselineCommits = opts.baselineCommits ?? 8;
  const pad = 'x'.repeat(opts.recordBytes ?? 2_048);
  const log = opts.log ?? (() => undefined);
  const goal = 1.5;
  const root = await mkdtemp(path.join(opts.tmpRoot ?? tmpdir(), 'cadre-bench-growth-'));
  try {
    const file = storeFilePath(path.join(root, 'journal'));
    const points: GrowthPoint[] = [];
    let seeded = 0;
    // The journal series runs first for every size; the whole-file baseline runs afterwards on copies
    // of the same snapshots, so its large writes (and the disk's write-back of them) cannot slow the
    // fsyncs of the series under test.
    for (const size of sizes) {
      const store = await openStore({ file });
      const rows = store.collection<{ id: string; pad: string }>('rows');
      const puts: Promise<void>[] = [];
      for (; seeded < size; seeded++) puts.push(rows.put({ id: `seed-${seeded}`, pad }));
      await Promise.all(puts);
      await store.compact!(); // measure from a compacted state, as after a long quiet period
      const journalMs = median(await commitLatencies(store, commits, pad, `j${size}`));
      await store.close();
      if (!opts.noBaseline) {
        const baseDir = path.join(root, `whole-${size}`);
        await mkdir(baseDir, { recursive: true });
        await copyFile(file, storeFilePath(baseDir));
      }
      points.push({ records: size, journalMs, wholeFileMs: null });
      log(`  ${String(size).padStart(6)} records: journal ${journalMs.toFixed(2)} ms/commit`);
    }
    if (!opts.noBaseline) {
      for (const point of points) {
        // The same snapshot, opened by the previous design: every commit rewrites it whole.
        const baseDir = path.join(root, `whole-${point.records}`);
        const whole = await openStore({ file: storeFilePath(baseDir), durability: 'whole-file' });
        point.wholeFileMs = median(await commitLatencies(whole, baselineCommits, pad, `w${point.records}`));
        await whole.close();
        await rm(baseDir, { recursive: true, force: true });
        log(`  ${String(point.records).padStart(6)} records: whole-file ${point.wholeFileMs.toFixed(2)} ms/commit (baseline)`);
      }
    }
    const first = points[0]!;
    const last = points[points.length - 1]!;
    const journalRatio = last.journalMs / first.journalMs;
    const wholeFileRatio = first.wholeFileMs !== null && last.wholeFileMs !== null ? last.wholeFileMs / first.wholeFileMs : null;
    const ok = journalRatio < goal;
    const summary = `store growth: commit latency ${last.records}/${first.records} records = ${journalRatio.toFixed(2)}x (goal < ${goal}x)` +
      (wholeFileRatio !== null ? `; whole-file baseline ${wholeFileRatio.toFixed(1)}x` : '');
    return { points, journalRatio, wholeFileRatio, goal, ok, summary };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function numberFlag(args: string[], name: string): number | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} needs a positive number`);
  return value;
}

if (require.main === module && process.argv.includes('--growth')) {
  const args = process.argv.slice(2);
  const sizesArg = args[args.indexOf('--sizes') + 1];
  runGrowthBench({
    ...(args.includes('--sizes') && sizesArg ? { sizes: sizesArg.split(',').map(Number) } : {}),
    commits: numberFlag(args, '--commits'),
    noBaseline: args.includes('--no-baseline'),
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
} else if (require.main === module) {
  const args = process.argv.slice(2);
  runStoreBench({
    seedRecords: numberFlag(args, '--seed'),
    groupInserts: numberFlag(args, '--inserts'),
    concurrency: numberFlag(args, '--concurrency'),
    baselineSeconds: numberFlag(args, '--baseline-seconds'),
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
