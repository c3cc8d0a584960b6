/**
 * Retention: what the server keeps live is bounded, whatever the history. Terminal executions older
 * than `maxAgeDays`, or beyond the newest `maxExecutions` terminal ones, leave the store (and so the
 * server's memory) for compressed archives under `<dataDir>/archive/`, together with their event
 * logs; audit day files older than the cut-off are compressed in place (`audit-<day>.jsonl.gz`),
 * where the chain verification still reads them, so it stays verifiable across the boundary.
 *
 * Order of a pass (crash-safe at every step): write and fsync the archive (temp + rename), then
 * delete the records from the store (awaited: durable), then delete the event logs. A crash in
 * between leaves records both archived and live: the next pass archives them again and readers keep
 * the newest copy by id. Audit: gzip to a temp, fsync, rename, then delete the original; a day found
 * in both forms is read from the archive only.
 *
 * The probe tenants of tenant-ai check-isolation (marked deleted when their check ended, kept so their
 * executions stay attributable to the probe) go once none of their executions is live any more: two
 * records per check would otherwise pile up forever.
 *
 * Time comes from an injected clock (tests drive it).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { writeFileDurably } from './durable-file';
import { promisify } from 'node:util';
import { gunzipSync, gzip } from 'node:zlib';

/** Compression off the event loop (the thread pool): a chunk of 8 MB took the main thread ~0.1 s with gzipSync. */
const gzipAsync = promisify(gzip);
import { archivedAuditFileName, auditFileName, listArchivedAuditDays, listAuditDays } from '../audit/jsonl-audit-trail';
import { summarizeExecution, TERMINAL_STATUSES, type ExecutionRecord, type ExecutionSummary } from '../engine/executions/records';
import { COLLECTIONS, systemClock, type Clock, type Repository } from '../engine/ports';
import type { TenantRecord } from '../engine/tenants/records';
import { TENANTS_COLLECTION } from '../engine/tenants/tenant-service';
import type { Store } from './store-shape';

export const DEFAULT_RETENTION_DAYS = 90;
export const DEFAULT_RETENTION_EXECUTIONS = 10_000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  store: Store;
  dataDir: string;
  clock?: Clock;
  /** Terminal executions (and audit days) older than this many days are archived (default 90). */
  maxAgeDays?: number;
  /** At most this many terminal executions stay live, the newest ones (default 10,000). */
  maxExecutions?: number;
  log?: (line: string) => void;
}

export interface RetentionResult {
  archivedExecutions: number;
  archivedEventLogs: number;
  archivedAuditDays: number;
  /** Deleted probe tenants removed (no live execution of theirs left). */
  purgedProbeTenants: number;
  /** The archive file written, or null when nothing was archived. */
  archive: string | null;
}

/** One archived execution: its record and its event log. */
export interface ArchivedExecution {
  record: ExecutionRecord;
  events: unknown[];
  archivedAt: string;
}

export function archiveDir(dataDir: string): string {
  return path.join(dataDir, 'archive');
}

function endOf(rec: ExecutionSummary): string {
  return rec.completedAt ?? rec.updatedAt ?? rec.createdAt;
}

/** One retention pass. */
export async function applyRetention(opts: RetentionOptions): Promise<RetentionResult> {
  const clock = opts.clock ?? systemClock;
  const now = clock.now();
  const maxAgeDays = opts.maxAgeDays ?? DEFAULT_RETENTION_DAYS;
  const maxExecutions = opts.maxExecutions ?? DEFAULT_RETENTION_EXECUTIONS;
  const cutoff = new Date(now - maxAgeDays * DAY_MS).toISOString();
  const executions = opts.store.collection<ExecutionRecord>(COLLECTIONS.executions);

  // Newest first: the first `maxExecutions` terminal ones younger than the cut-off stay. Chosen from the
  // summaries (memory), so a pass reads from disk only the records that leave.
  const summaries = executions.summaries?.(summarizeExecution) ?? executions.list().map(summarizeExecution);
  const terminal = summaries.filter((r) => TERMINAL_STATUSES.has(r.status)).sort((a, b) => (endOf(b) < endOf(a) ? -1 : endOf(b) > endOf(a) ? 1 : 0));
  const leavingIds = terminal.filter((r, i) => i >= maxExecutions || endOf(r) < cutoff).map((r) => r.id);

  // In chunks, one archive file each: memory holds one chunk, however many leave at once (a first pass over
  // a large history, or a lowered limit). A chunk ends at RETENTION_CHUNK records or RETENTION_CHUNK_BYTES of
  // archive text, whichever comes first: records are read from the cold segments one at a time and kept as
  // their archive line only (1,000 records of ~100 KB held as objects took the server to 1.2 GB, session 15).
  let archive: string | null = null;
  let archivedEventLogs = 0;
  let archivedExecutions = 0;
  let chunk: ArchiveEntry[] = [];
  let chunkBytes = 0;
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const r = await archiveChunk(opts, executions, chunk, now);
    archive = r.archive;
    archivedEventLogs += r.eventLogs;
    archivedExecutions += chunk.length;
    chunk = [];
    chunkBytes = 0;
  };
  for (const id of leavingIds) {
    const record = executions.get(id);
    if (!record) continue;
    const entry = await archiveEntry(opts.dataDir, record, now);
    chunk.push(entry);
    chunkBytes += entry.line.length;
    if (chunk.length >= RETENTION_CHUNK || chunkBytes >= RETENTION_CHUNK_BYTES) await flush();
  }
  await flush();
  if (archivedExecutions > 0) opts.log?.(`retention: archived ${archivedExecutions} execution(s) and ${archivedEventLogs} event log(s) under ${archiveDir(opts.dataDir)}`);

  const archivedAuditDays = await archiveAuditDays(path.join(opts.dataDir, 'audit'), cutoff.slice(0, 10), opts.log);
  const purgedProbeTenants = await purgeProbeTenants(opts.store, executions);
  if (purgedProbeTenants > 0) opts.log?.(`retention: removed ${purgedProbeTenants} probe tenant(s) of ended isolation checks`);
  return { archivedExecutions, archivedEventLogs, archivedAuditDays, purgedProbeTenants, archive };
}

/** Removes deleted probe tenants none of whose executions is live (see the module comment). */
async function purgeProbeTenants(store: Store, executions: Repository<ExecutionRecord>): Promise<number> {
  const tenants = store.collection<TenantRecord>(TENANTS_COLLECTION);
  const gone = tenants.list((t) => t.probe === true && t.deletedAt !== undefined);
  if (gone.length === 0) return 0;
  const live = new Set((executions.summaries?.(summarizeExecution) ?? executions.list().map(summarizeExecution)).map((r) => r.tenantId));
  const purge = gone.filter((t) => !live.has(t.id));
  await Promise.all(purge.map((t) => tenants.delete(t.id)));
  return purge.length;
}

/** At most this many executions per archive file. */
const RETENTION_CHUNK = 1_000;
/** An archive file closes past this much text (before compression): memory's bound for a pass. */
const RETENTION_CHUNK_BYTES = 8 * 1024 * 1024;

/** One leaving execution as its archive line (its record and event log), and its event file if it has one. */
interface ArchiveEntry {
  id: string;
  line: string;
  eventFile: string | null;
}

async function archiveEntry(dataDir: string, record: ExecutionRecord, now: number): Promise<ArchiveEntry> {
  const file = path.join(dataDir, 'events', `${record.id}.jsonl`);
  let events: unknown[] = [];
  let eventFile: string | null = null;
  try {
    events = (await readFile(file, 'utf8')).split('\n').flatMap((l) => {
      if (!l) return [];
      try {
        return [JSON.parse(l) as unknown];
      } catch {
        return []; // a torn last line: never an event anyone received in full
      }
    });
    eventFile = file;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const entry: ArchivedExecution = { record, events, archivedAt: new Date(now).toISOString() };
  return { id: record.id, line: JSON.stringify(entry), eventFile };
}

/** Archives one chunk: the archive file is durable before the records and event logs are deleted. */
async function archiveChunk(opts: RetentionOptions, executions: Repository<ExecutionRecord>, chunk: ArchiveEntry[], now: number): Promise<{ archive: string; eventLogs: number }> {
  const archivedAt = new Date(now).toISOString();
  const dir = archiveDir(opts.dataDir);
  await mkdir(dir, { recursive: true });
  // Unique even when the clock repeats or steps back: an archive is never overwritten.
  const archive = path.join(dir, `executions-${archivedAt.replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.jsonl.gz`);
  await writeFileDurably(archive, await gzipAsync(Buffer.from(`${chunk.map((e) => e.line).join('\n')}\n`, 'utf8')));
  await Promise.all(chunk.map((e) => executions.delete(e.id)));
  let eventLogs = 0;
  for (const e of chunk) {
    if (e.eventFile === null) continue;
    await unlink(e.eventFile).catch(() => undefined);
    eventLogs++;
  }
  return { archive, eventLogs };
}

/** Compresses audit day files older than `cutoffDay`, never the newest one (the trail appends there). */
async function archiveAuditDays(dir: string, cutoffDay: string, log?: (line: string) => void): Promise<number> {
  const days = await listAuditDays(dir);
  const archived = new Set(await listArchivedAuditDays(dir));
  let n = 0;
  for (const day of days.slice(0, -1)) {
    if (day >= cutoffDay) break;
    const live = path.join(dir, auditFileName(day));
    if (!archived.has(day)) await writeFileDurably(path.join(dir, archivedAuditFileName(day)), await gzipAsync(await readFile(live)));
    await unlink(live);
    n++;
  }
  if (n > 0) log?.(`retention: compressed ${n} audit day file(s) in ${dir}`);
  return n;
}


async function archiveNames(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(archiveDir(dataDir))).filter((n) => /^executions-.*\.jsonl\.gz$/.test(n)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Every archived execution by id (the copy archived last when a crash archived one twice). */
export async function readArchivedExecutions(dataDir: string, only?: (line: string) => boolean): Promise<Map<string, ArchivedExecution>> {
  const out = new Map<string, ArchivedExecution>();
  for (const name of await archiveNames(dataDir)) {
    const text = gunzipSync(await readFile(path.join(archiveDir(dataDir), name))).toString('utf8');
    for (const line of text.split('\n')) {
      if (!line || (only && !only(line))) continue;
      const entry = JSON.parse(line) as ArchivedExecution;
      const seen = out.get(entry.record.id);
      if (!seen || seen.archivedAt <= entry.archivedAt) out.set(entry.record.id, entry);
    }
  }
  return out;
}

/** An archived execution by id, or null. */
export async function readArchivedExecution(dataDir: string, id: string): Promise<ArchivedExecution | null> {
  return (await readArchivedExecutions(dataDir, (line) => line.includes(id))).get(id) ?? null;
}

/** Runs a pass now and then every `intervalMs` (host timer, unref'd); returns a stop function. */
export function scheduleRetention(opts: RetentionOptions & { intervalMs?: number }): () => void {
  let running = false;
  const pass = (): void => {
    if (running || opts.store.closed) return;
    running = true;
    applyRetention(opts).catch((err: unknown) => opts.log?.(`retention pass failed: ${(err as Error).message}`)).finally(() => (running = false));
  };
  pass();
  const timer = setInterval(pass, opts.intervalMs ?? 60 * 60 * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
