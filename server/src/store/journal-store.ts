/**
 * The journal store: the `Repository<T>` collections of the engine, kept in memory (reads are
 * synchronous) and made durable by appending each group of mutations to a journal, so the cost of
 * an acknowledged mutation depends on the size of its batch, not on the size of the store.
 *
 * Files, next to each other in the data directory:
 * - `store.json` — the snapshot: `{ schemaVersion, journalSeq, compactedAt, collections }`, written
 *   atomically (temp file, fsync, rename, directory fsync). A store.json of the previous design (no
 *   `journalSeq`) is a valid snapshot at sequence 0: existing data opens as it is.
 * - `store.journal-<gen>.jsonl` — one line per group commit: `{"s":<seq>,"o":[op,...]}` with
 *   `["p",collection,record]` (put), `["u",collection,id,changes]` (what changed since the record's
 *   previous journal line, record-delta.ts) or `["d",collection,id]` (delete). A record's first line
 *   after the store opened or after a compaction's copy carries it whole, so a delta always applies
 *   to the version it was computed from; replaying a batch whose effect the snapshot already holds
 *   changes nothing.
 *
 * Durability: a mutation changes memory at once and joins the pending batch; at most one append is in
 * flight; everything made meanwhile goes out in the next append (one write + one fdatasync). A
 * mutation's promise resolves when its batch is on disk. A failed append is cut back to the previous
 * record boundary, rejects the mutations it carried and keeps them for the next append.
 *
 * Compaction: when the journal outgrows max(`compactMinBytes`, the snapshot's size) — so its cost per
 * mutation stays constant however large the store grows — new batches go to a new journal generation,
 * the collections are copied (references; records are replaced, never changed in place) and written
 * as a new snapshot in slices that yield to the event loop; once it is durable the older generations
 * are deleted. A crash at any point leaves a snapshot plus journals that replay to a state holding
 * every acknowledged mutation.
 *
 * Tiers: a collection declared tiered (`tier(name, tiering)`: the executions) keeps its cold records
 * (ended executions) in cold segments (cold-segments.ts) with only a summary and a location in memory.
 * A record that went cold is journalled as any other, then moved within `coldDelayMs` together with
 * the others that went cold meanwhile: their records are appended to the current segment (one durable
 * write), then one journal line carries `["c",collection,id,seg,off,len,summary]` for each; the
 * snapshot keeps the locations under `cold`. `get` reads a cold record from its
 * segment; `summaries` answers from memory; `list` reads every cold record (avoid it on big ones).
 *
 * Open: a torn last journal line (a write cut by a crash: never acknowledged) is truncated with a
 * logged line; an unreadable line followed by valid ones, or a snapshot that does not parse, refuses
 * the open (ERR_STORE) and nothing is overwritten. Records failing a collection's validator are moved
 * to `quarantine/<collection>.jsonl` (one logged line naming file, collection, id and field).
 */
import { appendFile, copyFile, mkdir, open, readdir, readFile, rename, stat, truncate, unlink } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { ColdSegments, coldEntryFromJson, coldEntryToJson, type ColdEntry, type ColdIndex } from './cold-segments';
import * as path from 'node:path';
import { AppendOnlyFile, fsyncDirectory } from './durable-file';
import { EngineError } from '../engine/errors';
import type { Identified, Repository, Tiering, WriteOptions, WriteUnit } from '../engine/ports';
import { AtomicJsonFileAdapter } from './atomic-file-adapter';
import { storedForm } from './stored-form';
import { applyDelta, deltaProblem, recordDelta, type DeltaChange } from './record-delta';
import { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration, type StoreData, type StoredCollection } from './migrations';
import {
  asStoreError, checkId, corruptError, errnoCode, handled, migrate, newerVersionError, noop, nullProto,
  validateShape, type AuditJournal, type CompactionResult, type Durability, type SideRecords, type SideRecordSource, type Store, type StoreStats,
} from './store-shape';

/** Default floor of the journal size that triggers a compaction. */
export const DEFAULT_COMPACT_MIN_BYTES = 8 * 1024 * 1024;
/** Records serialised per slice of a compaction before yielding to the event loop. */
const COMPACT_SLICE = 2_000;
/** Records moved to the cold segments per group commit when a tier is declared over existing data. */
const COLD_MIGRATION_SLICE = 500;

/** Returns a one-line problem naming the field (e.g. `steps: expected array`), or null when the record is valid. */
export type RecordValidator = (record: unknown) => string | null;

export interface JournalStoreOptions {
  /** The snapshot file, normally `<dataDir>/store.json`. Journals live next to it. */
  file: string;
  migrations?: readonly Migration[];
  schemaVersion?: number;
  /** 'group' (default) or 'per-mutation' (one append + fsync per mutation: the benchmark baseline). */
  durability?: 'group' | 'per-mutation';
  /** Called once per failed write. */
  onWriteError?: (err: EngineError) => void;
  /** One line per repair or quarantine made while opening, and per compaction failure. */
  log?: (line: string) => void;
  /** Journal size that triggers a compaction, at least (default 8 MB; the snapshot's size when larger). */
  compactMinBytes?: number;
  /** Validators per collection, run on every record at open; failing records go to quarantine. */
  validators?: Record<string, RecordValidator>;
  /** Test hook: called between the steps of a compaction (the crash tests kill the process there). */
  onCompactionStep?: (step: 'copied' | 'written' | 'renamed' | 'pruned') => void;
  /** Test hook: called after a batch's cold records are durable in their segment, before its journal line. */
  onColdWritten?: () => void;
  /** Size at which a cold segment is closed and the next one started (default 64 MB). */
  coldSegmentMaxBytes?: number;
  /**
   * How long a record that went cold stays in memory (journalled like any record) before it moves to
   * a cold segment with the others that went cold meanwhile (default 1,000 ms; 0: at its own write).
   * Moving one record costs its own segment write (an fsync) before its journal line; moving them in
   * groups costs one per group. At most COLD_GROUP records wait.
   */
  coldDelayMs?: number;
}

/** Records that went cold waiting for their move to a segment, at most (then they move at once). */
const COLD_GROUP = 64;
const DEFAULT_COLD_DELAY_MS = 1_000;

/**
 * Journal ops: put (`p`; a 4th element `true` in memory only: the record goes cold when written),
 * delete (`d`), and cold (`c`: the record is in a cold segment at seg/off/len, with its summary).
 */
type Op = ['p', string, Identified] | ['p', string, Identified, true] | ['d', string, string] | ['c', string, string, number, number, number, Identified]
  | ['u', string, string, DeltaChange[]];

/** The cold indexes of a store, per collection. */
type ColdIndexes = Record<string, ColdIndex>;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface Batch {
  ops: Op[];
  waiters: Waiter[];
  /** Audit records riding this journal record (see AuditJournal), taken when the batch was cut. */
  side?: SideRecords | null;
}


const JOURNAL_RE = /^(.+)\.journal-(\d{6,})\.jsonl$/;

function journalName(base: string, gen: number): string {
  return `${base}.journal-${String(gen).padStart(6, '0')}.jsonl`;
}

/** `store.json` -> `store`: the prefix of the journal files. */
function baseOf(file: string): string {
  return path.basename(file).replace(/\.json$/, '');
}

export interface JournalFile {
  gen: number;
  path: string;
}

/** The journal generations of the store whose snapshot is `file`, synchronously (start-up checks). */
export function listJournalsSync(file: string): JournalFile[] {
  const base = baseOf(file);
  let names: string[];
  try {
    names = readdirSync(path.dirname(file));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const m = JOURNAL_RE.exec(n);
    return m && m[1] === base ? [{ gen: Number(m[2]), path: path.join(path.dirname(file), n) }] : [];
  }).sort((a, b) => a.gen - b.gen);
}

/** Journal generations of the store whose snapshot is `file`, oldest first. */
export async function listJournals(file: string): Promise<JournalFile[]> {
  const dir = path.dirname(file);
  const base = baseOf(file);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
  const out: JournalFile[] = [];
  for (const n of names) {
    const m = JOURNAL_RE.exec(n);
    if (m && m[1] === base) out.push({ gen: Number(m[2]), path: path.join(dir, n) });
  }
  return out.sort((a, b) => a.gen - b.gen);
}

interface SnapshotMeta {
  journalSeq: number;
  compactedAt: string | null;
}

/** The snapshot's `cold` section: per collection, per id, `[seg, off, len, summary]`. */
function readColdSection(raw: unknown, file: string): ColdIndexes {
  const out: ColdIndexes = Object.create(null) as ColdIndexes;
  if (raw === undefined) return out;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corruptError(file, 'invalid "cold"');
  for (const [name, entries] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) throw corruptError(file, `"cold.${name}" is not an object`);
    const index: ColdIndex = new Map();
    for (const [id, v] of Object.entries(entries as Record<string, unknown>)) {
      const e = coldEntryFromJson(v);
      if (typeof e === 'string') throw corruptError(file, `cold.${name}.${id}: ${e}`);
      index.set(id, e);
    }
    out[name] = index;
  }
  return out;
}

/** Opens (or creates) the journal store. */
export async function openJournalStore(opts: JournalStoreOptions): Promise<Store> {
  const file = path.resolve(opts.file);
  const target = opts.schemaVersion ?? CURRENT_SCHEMA_VERSION;
  const migrations = opts.migrations ?? MIGRATIONS;
  const log = opts.log ?? noop;
  const snapshotAdapter = new AtomicJsonFileAdapter<StoreData & Partial<SnapshotMeta>>(file);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await snapshotAdapter.removeStaleTemp();
  } catch (err) {
    throw asStoreError(err, `Cannot prepare store file ${file}`, file);
  }
  let raw: (StoreData & Partial<SnapshotMeta>) | null;
  let snapshotBytes = 0;
  try {
    raw = await snapshotAdapter.read();
    if (raw !== null) snapshotBytes = (await stat(file)).size;
  } catch (err) {
    throw asStoreError(err, `Cannot read store file ${file}`, file);
  }
  let data: StoreData = { schemaVersion: target, collections: {} };
  const meta: SnapshotMeta = { journalSeq: 0, compactedAt: null };
  if (raw !== null) {
    data = validateShape(raw, file);
    if (data.schemaVersion > target) throw newerVersionError(file, data.schemaVersion, target);
    if (raw.journalSeq !== undefined) {
      if (!Number.isInteger(raw.journalSeq) || raw.journalSeq < 0) throw corruptError(file, 'invalid "journalSeq"');
      meta.journalSeq = raw.journalSeq;
    }
    if (typeof raw.compactedAt === 'string') meta.compactedAt = raw.compactedAt;
    delete (data as Partial<SnapshotMeta>).journalSeq;
    delete (data as Partial<SnapshotMeta>).compactedAt;
  }
  const cold = readColdSection((raw as { cold?: unknown } | null)?.cold, file);
  if (raw !== null) delete (data as { cold?: unknown }).cold;
  const collections = nullProto(data.collections);
  for (const name of Object.keys(collections)) collections[name] = nullProto(collections[name]!);

  // Replay the journals over the snapshot. The data's schema version is the snapshot's: journals are
  // always folded into a snapshot before a migration, so they hold records of that version.
  const journals = await listJournals(file);
  // Sequences increase strictly across generations; generations a crash kept after a compaction hold
  // only sequences the snapshot covers, and are skipped.
  let lastSeq = 0;
  let journalBytes = 0;
  const side: unknown[] = [];
  for (let i = 0; i < journals.length; i++) {
    const j = journals[i]!;
    const r = await replayJournal(j.path, i === journals.length - 1, lastSeq, meta.journalSeq, collections, log, false, cold, side);
    lastSeq = r.lastSeq;
    journalBytes += r.bytes;
  }
  lastSeq = Math.max(lastSeq, meta.journalSeq);

  const fileVersion = data.schemaVersion;
  let migrated = false;
  if (fileVersion < target) {
    const current: StoreData = { schemaVersion: fileVersion, collections };
    const next = migrate(current, target, migrations, file);
    const entries = Object.entries(next.collections); // a migration may return its argument's object
    for (const name of Object.keys(collections)) delete collections[name];
    for (const [name, coll] of entries) collections[name] = nullProto(coll);
    migrated = true;
  }

  const store = new JournalStore(file, target, opts, collections, cold, meta, lastSeq, journals, journalBytes, snapshotBytes, log, side);
  if (migrated) {
    // Keep the pre-migration snapshot and journals, then fold everything into a snapshot of the new version.
    try {
      if (raw !== null) await copyFile(file, `${file}.v${fileVersion}.bak`);
      for (const j of journals) await copyFile(j.path, `${j.path}.v${fileVersion}.bak`);
      await store.compact();
    } catch (err) {
      throw asStoreError(err, `Cannot write migrated store file ${file}`, file);
    }
  }
  await store.quarantineInvalid();
  return store;
}

/**
 * The collections of the store whose snapshot is `file`, read without changing anything (no repair,
 * no migration): for the CLI while another process owns the store. Null when there is no store.
 */
export async function readStoreReadOnly(file: string, side?: unknown[]): Promise<Record<string, StoredCollection> | null> {
  const resolved = path.resolve(file);
  const raw = await new AtomicJsonFileAdapter<StoreData & Partial<SnapshotMeta>>(resolved).read();
  const journals = await listJournals(resolved);
  if (raw === null && journals.length === 0) return null;
  const data = raw === null ? { schemaVersion: CURRENT_SCHEMA_VERSION, collections: {} } : validateShape(raw, resolved);
  const collections = nullProto(data.collections);
  for (const name of Object.keys(collections)) collections[name] = nullProto(collections[name]!);
  const snapshotSeq = raw?.journalSeq ?? 0;
  let lastSeq = 0;
  for (let i = 0; i < journals.length; i++) {
    // `side`: the audit records the journals carry (a trail whose files lag its journal, after a crash).
    lastSeq = (await replayJournal(journals[i]!.path, i === journals.length - 1, lastSeq, snapshotSeq, collections, noop, true, undefined, side)).lastSeq;
  }
  return collections;
}

/**
 * Applies the lines of one journal file with a seq above `snapshotSeq`. The unreadable tail of the
 * newest file is a torn write and is cut off; anything unreadable before a readable line is corruption.
 */
async function replayJournal(
  file: string,
  newest: boolean,
  prevSeq: number,
  snapshotSeq: number,
  collections: Record<string, StoredCollection>,
  log: (line: string) => void,
  readOnly = false,
  cold?: ColdIndexes,
  side?: unknown[],
): Promise<{ lastSeq: number; bytes: number }> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (err) {
    throw asStoreError(err, `Cannot read store journal ${file}`, file);
  }
  let pos = 0;
  let lineNo = 0;
  let lastSeq = prevSeq;
  let goodEnd = 0;
  let badAt: { offset: number; line: number; why: string } | null = null;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl < 0 ? buf.length : nl;
    lineNo++;
    const text = buf.subarray(pos, end).toString('utf8');
    const parsed = parseBatch(text);
    if (typeof parsed === 'string' || nl < 0) {
      // A complete, valid record missing only its newline is kept (the newline is added below).
      if (typeof parsed !== 'string' && nl < 0) {
        if (badAt) throw corruptError(file, `line ${badAt.line}: ${badAt.why}, followed by valid records`);
        if (parsed.s <= lastSeq) throw corruptError(file, `line ${lineNo}: sequence ${parsed.s} after ${lastSeq}`);
        if (parsed.s > snapshotSeq) applyOpsOf(file, lineNo, parsed.o, collections, cold);
        // Side records are not in the snapshot: every line still present carries them (see compaction).
        if (parsed.a && side) side.push(...parsed.a);
        lastSeq = parsed.s;
        if (readOnly) return { lastSeq, bytes: buf.length };
        await appendFile(file, '\n');
        log(`store: ${path.basename(file)}: the last record (seq ${parsed.s}) lacked its newline; added it`);
        return { lastSeq, bytes: buf.length + 1 };
      }
      badAt ??= { offset: pos, line: lineNo, why: typeof parsed === 'string' ? parsed : 'no newline' };
    } else {
      if (badAt) throw corruptError(file, `line ${badAt.line}: ${badAt.why}, followed by valid records`);
      if (parsed.s <= lastSeq) throw corruptError(file, `line ${lineNo}: sequence ${parsed.s} after ${lastSeq}`);
      if (parsed.s > snapshotSeq) applyOpsOf(file, lineNo, parsed.o, collections, cold);
      if (parsed.a && side) side.push(...parsed.a);
      lastSeq = parsed.s;
      goodEnd = end + 1;
    }
    pos = nl < 0 ? buf.length : nl + 1;
  }
  if (badAt) {
    if (!newest) throw corruptError(file, `line ${badAt.line}: ${badAt.why} (not the newest journal)`);
    if (readOnly) return { lastSeq, bytes: goodEnd };
    await truncate(file, goodEnd);
    log(`store: ${path.basename(file)}: dropped a torn last record of ${buf.length - goodEnd} bytes at line ${badAt.line} ` +
      '(a write cut by a crash, never acknowledged)');
    return { lastSeq, bytes: goodEnd };
  }
  return { lastSeq, bytes: buf.length };
}

function parseBatch(text: string): { s: number; o: Op[]; a?: unknown[] } | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof v !== 'object' || v === null) return 'not an object';
  const { s, o, a } = v as { s?: unknown; o?: unknown; a?: unknown };
  if (typeof s !== 'number' || !Number.isInteger(s) || s < 1) return 'missing or invalid "s"';
  if (!Array.isArray(o)) return 'missing or invalid "o"';
  if (a !== undefined && !Array.isArray(a)) return 'invalid "a"';
  for (const op of o) {
    const problem = opProblem(op);
    if (problem) return problem;
  }
  return a === undefined ? { s, o: o as Op[] } : { s, o: o as Op[], a };
}

/** Why a journalled op is not one, or null. */
function opProblem(op: unknown): string | null {
  if (!Array.isArray(op) || typeof op[1] !== 'string') return 'an invalid op';
  if (op[0] === 'p') {
    if (typeof op[2] !== 'object' || op[2] === null || typeof (op[2] as Identified).id !== 'string') return 'an invalid put';
  } else if (op[0] === 'c') {
    if (typeof op[2] !== 'string' || typeof coldEntryFromJson(op.slice(3)) === 'string') return 'an invalid cold op';
  } else if (op[0] === 'u') {
    if (typeof op[2] !== 'string' || op.length !== 4) return 'an invalid update op';
    const problem = deltaProblem(op[3]);
    if (problem) return `an invalid update op (${problem})`;
  } else if (op[0] !== 'd' || typeof op[2] !== 'string') return 'an invalid op';
  return null;
}

/** applyOps for the journal line `line` of `file`: an update that does not apply is corruption. */
function applyOpsOf(file: string, line: number, ops: Op[], collections: Record<string, StoredCollection>, cold?: ColdIndexes): void {
  const problem = applyOps(ops, collections, cold);
  if (problem) throw corruptError(file, `line ${line}: ${problem}`);
}

/** Replays ops: a record is hot (in `collections`) or cold (in `cold`), never both. Returns why an update did not apply, or null. */
function applyOps(ops: Op[], collections: Record<string, StoredCollection>, cold?: ColdIndexes): string | null {
  for (const op of ops) {
    const coll = (collections[op[1]] ??= Object.create(null) as StoredCollection);
    if (op[0] === 'u') {
      // Journalled only after a whole version of the record in this journal or the snapshot (see nextBatch).
      const rec = coll[op[2]];
      if (rec === undefined) return `an update of ${op[1]} "${op[2]}", which no earlier record holds`;
      const next = applyDelta(rec, op[3]);
      if (typeof next === 'string') return `an update of ${op[1]} "${op[2]}" that does not apply: ${next}`;
      coll[op[2]] = next;
    } else if (op[0] === 'p') {
      coll[op[2].id] = op[2] as unknown as Record<string, unknown>;
      cold?.[op[1]]?.delete(op[2].id);
    } else if (op[0] === 'c') {
      delete coll[op[2]];
      if (cold) (cold[op[1]] ??= new Map()).set(op[2], coldEntryFromJson(op.slice(3)) as ColdEntry);
    } else {
      delete coll[op[2]];
      cold?.[op[1]]?.delete(op[2]);
    }
  }
  return null;
}

class JournalStore implements Store {
  readonly durability: Durability;
  private readonly repos = new Map<string, JournalRepository<Identified>>();
  private readonly dir: string;
  private readonly base: string;
  private readonly compactMinBytes: number;

  /** Ops not yet handed to a write, keyed by collection + id (the last op on a record wins). */
  private pendingOps = new Map<string, Op>();
  private pendingWaiters: Waiter[] = [];
  /** per-mutation mode: one batch per mutation, in order. */
  private queue: Batch[] = [];
  /** Ops of failed writes, retried first in the next write. */
  private retryOps: Op[] = [];
  private inFlight: Promise<void> | null = null;
  private scheduled = false;
  private isClosed = false;

  private gen: number;
  /** The journal generation being appended to. */
  private readonly journal = new AppendOnlyFile();
  private journalFiles: JournalFile[];
  private journalBytes: number;
  private compacting: Promise<CompactionResult> | null = null;
  private compactionWanted = false;
  private readonly counters: Required<StoreStats>;
  /** @internal The cold segments (read by the repositories). */
  readonly segments: ColdSegments;
  private readonly tiers = new Map<string, Tiering<Identified, Identified>>();
  /** The audit trail when it rides the journal (AuditJournal.attach). */
  private side: SideRecordSource | null = null;
  /** Side records were handed over since the last cut (requestWrite): another journal record is wanted. */
  private sideWaiting = false;
  /**
   * Per record (collection + id), the version its last journal line gave it since the store opened or
   * since the last compaction's copy: the base of the next line's delta (`u` op). A record missing here
   * is written whole. Holds references to hot records (shared with memory), dropped when one goes cold.
   */
  private lastCut = new Map<string, Identified>();
  /** Records that went cold, journalled hot, waiting to move to a segment (key -> collection, id). */
  private readonly coldDue = new Map<string, [string, string]>();
  /** Records whose next cut moves them to a segment (chosen by moveColdDue, or declared over old data). */
  private readonly moving = new Set<string>();
  private coldTimer: NodeJS.Timeout | null = null;
  private readonly coldDelayMs: number;
  /** Callers of compact() waiting for the write in flight to end (a compaction copies only between writes). */
  private compactWaiters: Array<{ resolve(r: CompactionResult): void; reject(err: unknown): void }> = [];

  constructor(
    readonly file: string,
    readonly schemaVersion: number,
    private readonly opts: JournalStoreOptions,
    private readonly collections: Record<string, StoredCollection>,
    private readonly cold: ColdIndexes,
    meta: SnapshotMeta,
    /** Seq of the last batch durable in a journal (or folded into the snapshot). */
    private lastSeq: number,
    journals: JournalFile[],
    journalBytes: number,
    snapshotBytes: number,
    private readonly log: (line: string) => void,
    /** Side records (audit) found in the journals at open, until the source takes them. */
    private replayedSide: unknown[] = [],
  ) {
    this.durability = opts.durability ?? 'group';
    this.dir = path.dirname(file);
    this.base = baseOf(file);
    this.compactMinBytes = opts.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES;
    this.coldDelayMs = opts.coldDelayMs ?? DEFAULT_COLD_DELAY_MS;
    this.journalFiles = journals;
    this.journalBytes = journalBytes;
    this.gen = journals.length > 0 ? journals[journals.length - 1]!.gen : 1;
    this.segments = new ColdSegments(this.dir, this.base, opts.coldSegmentMaxBytes);
    this.counters = {
      writes: 0, failedWrites: 0, mutations: 0, maxBatch: 0, lastWriteMs: 0, journalBytes, snapshotBytes,
      compactions: 0, lastCompactionAt: meta.compactedAt, lastCompactionMs: 0, quarantined: 0, coldRecords: 0, coldBytes: 0,
    };
  }

  get closed(): boolean {
    return this.isClosed;
  }

  collection<T extends Identified>(name: string): Repository<T> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new EngineError('ERR_VALIDATION', 'Collection name must be a non-empty string');
    }
    let repo = this.repos.get(name);
    if (!repo) {
      const records = (this.collections[name] ??= Object.create(null) as StoredCollection);
      const cold = (this.cold[name] ??= new Map());
      repo = new JournalRepository<Identified>(this, name, records as unknown as Record<string, Identified>, cold);
      this.repos.set(name, repo);
    }
    return repo as unknown as Repository<T>;
  }

  /**
   * Declares `name` tiered. Records already stored hot that are cold by `tiering` (a store written
   * before tiers, or ended while the tier was not declared) move to the cold segments in the
   * background, a slice per group commit.
   */
  tier<T extends Identified, S extends Identified>(name: string, tiering: Tiering<T, S>): void {
    const t = tiering as unknown as Tiering<Identified, Identified>;
    this.tiers.set(name, t);
    const repo = this.collection<Identified>(name) as unknown as JournalRepository<Identified>;
    repo.tiering = t;
    const records = this.collections[name] as unknown as Record<string, Identified>;
    const due = Object.keys(records).filter((id) => t.isCold(records[id]!));
    if (due.length === 0) return;
    void (async () => {
      for (let i = 0; i < due.length && !this.isClosed; i += COLD_MIGRATION_SLICE) {
        const slice = due.slice(i, i + COLD_MIGRATION_SLICE).flatMap((id) => {
          const rec = records[id];
          if (!rec || !t.isCold(rec)) return [];
          this.moving.add(`${name}\u0000${id}`); // already journalled: straight to a segment
          return [this.commit(['p', name, rec, true])];
        });
        await Promise.all(slice);
      }
      this.log(`store: moved ${due.length} ended ${name} record(s) out of memory to the cold segments`);
    })().catch((err: unknown) => this.log(`store: moving ${name} records to the cold segments stopped: ${(err as Error).message}`));
  }

  collectionNames(): string[] {
    return Object.keys(this.collections);
  }

  stats(): StoreStats {
    let coldRecords = 0;
    for (const name of Object.keys(this.cold)) coldRecords += this.cold[name]!.size;
    return { ...this.counters, journalBytes: this.journalBytes, coldRecords, coldBytes: this.segments.bytes() };
  }

  /** Moves records that fail their collection's validator to `quarantine/<collection>.jsonl`. */
  async quarantineInvalid(): Promise<void> {
    const validators = this.opts.validators ?? {};
    const moved: Promise<void>[] = [];
    for (const [name, validate] of Object.entries(validators)) {
      const coll = this.collections[name];
      if (!coll) continue;
      for (const id of Object.keys(coll)) {
        const problem = validate(coll[id]);
        if (problem === null) continue;
        const qdir = path.join(this.dir, 'quarantine');
        const qfile = path.join(qdir, `${name}.jsonl`);
        await mkdir(qdir, { recursive: true });
        const line = JSON.stringify({ at: new Date().toISOString(), file: this.file, collection: name, id, problem, record: coll[id] });
        const fh = await open(qfile, 'a', 0o600);
        try {
          await fh.appendFile(`${line}\n`);
          await fh.sync();
        } finally {
          await fh.close();
        }
        this.log(`store: ${this.file}: collection "${name}", record "${id}" is malformed (${problem}); moved it to ${qfile}`);
        this.counters.quarantined++;
        moved.push(this.collection(name).delete(id).then(noop));
      }
    }
    await Promise.all(moved);
  }

  flush(): Promise<void> {
    const dirty = this.pendingOps.size > 0 || this.queue.length > 0 || this.retryOps.length > 0 || this.sideWaiting;
    if (dirty) {
      if (this.durability === 'per-mutation') {
        const last = this.queue[this.queue.length - 1];
        if (last) return handled(new Promise<void>((resolve, reject) => last.waiters.push({ resolve, reject })));
      }
      return handled(this.enqueueWaiter());
    }
    if (this.inFlight) return handled(this.inFlight.catch(() => (this.retryOps.length > 0 ? this.flush() : undefined)));
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    // Records still waiting to move stay journalled hot; declaring the tier at the next open moves them.
    if (this.coldTimer) clearTimeout(this.coldTimer);
    this.coldTimer = null;
    try {
      await this.flush();
      // The write's own end (which may start a compaction a compact() caller waits for) runs after its waiters.
      while (this.inFlight) await this.inFlight.catch(noop);
      if (this.compacting) await this.compacting.catch(noop);
      await this.flush();
    } finally {
      // A last write that failed is reported to the caller; the files are closed all the same.
      await this.journal.close().catch(noop);
      await this.segments.close().catch(noop);
    }
  }

  /** @internal */
  assertOpen(): void {
    if (this.isClosed) throw new EngineError('ERR_STORE', `Store ${this.file} is closed`, { details: { file: this.file } });
  }

  /** A unit of writes that go out together in one journal record (see WriteUnit). */
  unit(): WriteUnit {
    return new JournalUnit(this);
  }

  /** The journal as the audit trail's carrier: its records ride the store's group commits. */
  auditJournal(): AuditJournal {
    return {
      attach: (source) => {
        if (this.side && this.side !== source) throw new Error('the store journal already carries another record source');
        this.side = source;
      },
      replayed: () => {
        const out = this.replayedSide;
        this.replayedSide = [];
        return out;
      },
      requestWrite: () => {
        this.sideWaiting = true;
        this.schedule();
      },
      flush: () => this.flush(),
    };
  }

  /** @internal Hands a unit's writes to the group commit: each record it touched, as memory holds it NOW. */
  commitUnit(unit: JournalUnit, hooks: Array<() => void>): Promise<void> {
    // Records of other logs (audit) first: their source adds them to what the next journal record takes.
    for (const h of hooks) h();
    // Memory is the newest state of each record; a put or delete made after the unit's (outside it) may
    // already be on disk, so the unit writes the current state, never its own older copy.
    let n = 0;
    for (const [name, id] of unit.keys.values()) {
      const op = this.opFromMemory(name, id);
      if (!op) continue;
      n++;
      if (this.durability === 'per-mutation') this.queue.push({ ops: [op], waiters: [] });
      else {
        const key = `${name}\u0000${id}`;
        this.pendingOps.delete(key);
        this.pendingOps.set(key, op);
      }
    }
    this.counters.mutations += n;
    return handled(this.enqueueWaiter());
  }

  private opFromMemory(name: string, id: string): Op | null {
    const rec = this.collections[name]?.[id] as unknown as Identified | undefined;
    if (rec !== undefined) return this.repos.get(name)?.tiering?.isCold(rec) ? ['p', name, rec, true] : ['p', name, rec];
    // Cold: a later version went cold and is durable already (records are demoted only once written).
    if (this.cold[name]?.has(id)) return null;
    return ['d', name, id];
  }

  /** @internal Called by a repository right after it changed memory; resolves when the change is durable. */
  commit(op: Op, opts?: WriteOptions): Promise<void> {
    const unit = opts?.unit;
    if (unit instanceof JournalUnit && unit.store === this && unit.hold(op[1], op[0] === 'p' ? op[2].id : op[2])) return unit.durable;
    this.counters.mutations++;
    if (this.durability === 'per-mutation') {
      return handled(new Promise<void>((resolve, reject) => {
        this.queue.push({ ops: [op], waiters: [{ resolve, reject }] });
        this.schedule();
      }));
    }
    const key = `${op[1]}\u0000${op[0] === 'p' ? op[2].id : op[2]}`;
    this.pendingOps.delete(key);
    this.pendingOps.set(key, op);
    return handled(this.enqueueWaiter());
  }

  private enqueueWaiter(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingWaiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Starts the next write after the current tick's mutations (setImmediate: after pending I/O callbacks too). */
  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startWrite();
    });
  }

  private nextBatch(): Batch | null {
    let batch: Batch | null = null;
    // Records of the audit trail waiting: they ride this journal record, whatever else it holds.
    let side: SideRecords | null = null;
    this.sideWaiting = false;
    try {
      side = this.side?.take() ?? null;
    } catch (err) {
      this.log(`store: the audit records of a group commit could not be prepared: ${(err as Error).message}`);
    }
    if (this.durability === 'per-mutation') {
      batch = this.queue.shift() ?? null;
      if (!batch && (this.retryOps.length > 0 || this.pendingWaiters.length > 0 || side)) {
        batch = { ops: [], waiters: this.pendingWaiters };
        this.pendingWaiters = [];
      }
    } else if (this.pendingOps.size > 0 || this.pendingWaiters.length > 0 || this.retryOps.length > 0 || side) {
      batch = { ops: [...this.pendingOps.values()], waiters: this.pendingWaiters };
      this.pendingOps = new Map();
      this.pendingWaiters = [];
    }
    if (batch) {
      batch.side = side;
      batch.ops = this.asJournalled(batch.ops);
    }
    if (batch && this.retryOps.length > 0) {
      batch.ops = [...this.retryOps, ...batch.ops];
      this.retryOps = [];
    }
    return batch;
  }

  /**
   * The ops of a batch as its journal line carries them: a put of a record whose previous line this
   * store wrote becomes an update with what changed since (record-delta.ts).
   */
  private asJournalled(ops: Op[]): Op[] {
    const out: Op[] = [];
    for (const op of ops) {
      const key = `${op[1]}\u0000${op[0] === 'p' ? op[2].id : op[2] as string}`;
      const move = this.moving.delete(key);
      if (op[0] === 'p' && op.length === 4 && !move && this.coldDelayMs > 0 && this.lastCut.has(key)) {
        // Gone cold after a life in this journal (an execution that ended): its last change is a small
        // delta, and the record moves to a segment later with others (moveColdDue). A record written
        // cold from the start (an import, a copy) goes to its segment at once: whole in the journal, it
        // would be parsed at every open until the next compaction.
        this.coldDue.set(key, [op[1], op[2].id]);
        this.armColdMove();
      } else if (op[0] !== 'p' || op.length === 4) {
        // Deleted or moving to a segment now: its next line, if any, carries it whole.
        this.coldDue.delete(key);
        this.lastCut.delete(key);
        out.push(op);
        continue;
      }
      const rec = op[2] as Identified;
      const base = this.lastCut.get(key);
      this.lastCut.set(key, rec);
      if (base === rec) continue; // written already, unchanged since (a unit re-writing what memory holds)
      const changes = base === undefined ? null : recordDelta(base, rec);
      out.push(changes === null ? ['p', op[1], rec] : ['u', op[1], rec.id, changes]);
    }
    return out;
  }

  private armColdMove(): void {
    if (this.coldTimer && this.coldDue.size < COLD_GROUP) return;
    if (this.coldTimer) clearTimeout(this.coldTimer);
    this.coldTimer = setTimeout(() => this.moveColdDue(), this.coldDue.size >= COLD_GROUP ? 0 : this.coldDelayMs);
    this.coldTimer.unref();
  }

  /** Moves the records that went cold since the last move to a segment, in the next group commit. */
  private moveColdDue(): void {
    this.coldTimer = null;
    if (this.isClosed) return;
    for (const [key, [name, id]] of this.coldDue) {
      const rec = this.collections[name]?.[id] as unknown as Identified | undefined;
      if (!rec || !this.tiers.get(name)?.isCold(rec)) continue;
      this.moving.add(key);
      // Its failure is the next write's: the record stays hot (journalled) and moves at the next open.
      void this.commit(['p', name, rec, true]).catch(noop);
    }
    this.coldDue.clear();
  }

  /** Between writes (none in flight, none to retry) memory holds no journal line's base that is not durable. */
  private atSafePoint(): boolean {
    return this.inFlight === null && this.retryOps.length === 0;
  }

  private startWrite(): void {
    if (this.inFlight) return;
    // Fire-and-forget: startCompaction logs its own failure (and returns a handled promise for callers that wait).
    // Before the cut: the copy must not be older than a delta the next line carries (see startCompaction).
    if (this.compactionWanted && !this.compacting && this.atSafePoint()) void this.startCompaction();
    const batch = this.nextBatch();
    if (!batch) return;
    const write = batch.ops.length > 0 || batch.side ? this.append(batch) : Promise.resolve();
    this.inFlight = write;
    write.then(
      () => {
        for (const w of batch.waiters) w.resolve();
      },
      (err: unknown) => {
        this.retryOps = [...batch.ops, ...this.retryOps];
        for (const w of batch.waiters) w.reject(err);
      },
    ).finally(() => {
      this.inFlight = null;
      if (this.journalBytes > Math.max(this.compactMinBytes, this.counters.snapshotBytes) && !this.compacting) {
        this.compactionWanted = true;
      }
      if (this.pendingOps.size > 0 || this.pendingWaiters.length > 0 || this.queue.length > 0 || (this.retryOps.length > 0 && this.pendingWaiters.length > 0) || this.sideWaiting) this.schedule();
      else if (this.compactionWanted && !this.compacting && !this.isClosed && this.atSafePoint()) void this.startCompaction(); // logs its own failure
      else if (this.compactWaiters.length > 0 && this.atSafePoint()) void this.startCompaction();
    });
  }

  /** One journal record: serialised synchronously (the batch is a snapshot of those ops), appended, fdatasync'd. */
  private async append(batch: Batch): Promise<void> {
    const seq = this.lastSeq + 1;
    const started = performance.now();
    let demote: Array<[string, Identified, ColdEntry]> = [];
    try {
      // Records going cold: into their segment first (durable), then the journal line that points at them.
      const ops: Op[] = batch.ops;
      const coldAt: number[] = [];
      for (let i = 0; i < ops.length; i++) if (ops[i]![0] === 'p' && ops[i]!.length === 4) coldAt.push(i);
      let lineOps: Op[] = ops;
      if (coldAt.length > 0) {
        const locs = await this.segments.append(coldAt.map((i) => ops[i]![2] as Identified));
        this.opts.onColdWritten?.();
        lineOps = ops.slice();
        coldAt.forEach((i, k) => {
          const [, name, rec] = ops[i] as ['p', string, Identified, true];
          const t = this.tiers.get(name);
          const entry: ColdEntry = { ...locs[k]!, s: t ? t.summary(rec) : { id: rec.id } };
          lineOps[i] = ['c', name, rec.id, entry.seg, entry.off, entry.len, entry.s];
          demote.push([name, rec, entry]);
        });
      }
      // The side records' puts (the audit anchor) are written with them but not retried after a failure:
      // their source writes the anchor again from what is durable (settle).
      const side = batch.side;
      if (side && side.puts.length > 0) {
        if (lineOps === ops) lineOps = ops.slice();
        for (const [name, rec] of side.puts) {
          (this.collection(name) as unknown as JournalRepository<Identified>).setQuiet(rec);
          lineOps.push(['p', name, rec]);
          this.lastCut.delete(`${name}\u0000${rec.id}`); // written whole here: not the base of a delta cut earlier
        }
      }
      // Side records are JSON already (serialised once by their source, which writes the same text to its files).
      const a = side && side.lines.length > 0 ? `,"a":[${side.lines.join(',')}]` : '';
      let o = '';
      for (let i = 0; i < lineOps.length; i++) o += (i > 0 ? ',' : '') + opJson(lineOps[i]!);
      const buf = Buffer.from(`{"s":${seq},"o":[${o}]${a}}\n`, 'utf8');
      await this.openJournal();
      // Cut back to the last record boundary on failure (AppendOnlyFile), so the next append starts a clean line.
      await this.journal.append(buf);
      this.lastSeq = seq;
      this.journalBytes += buf.length;
      if (side) {
        batch.side = null;
        settleSide(side, null, this.log);
      }
      this.counters.writes++;
      this.counters.lastWriteMs = performance.now() - started;
      if (batch.ops.length > this.counters.maxBatch) this.counters.maxBatch = batch.ops.length;
      // Durable: the cold records leave memory, unless a newer version replaced one meanwhile.
      for (const [name, rec, entry] of demote) (this.repos.get(name) as JournalRepository<Identified> | undefined)?.demote(rec, entry);
      demote = [];
    } catch (err) {
      this.counters.failedWrites++;
      const error = asStoreError(err, `Write of store journal ${journalName(this.base, this.gen)} failed`, this.file);
      if (batch.side) {
        const side = batch.side;
        batch.side = null;
        settleSide(side, error, this.log);
      }
      if (this.opts.onWriteError) {
        try {
          this.opts.onWriteError(error);
        } catch {
          // a logging hook must not change the outcome
        }
      }
      throw error;
    }
  }

  /** The current generation's journal, opened (and its directory entry made durable) when new. */
  private async openJournal(): Promise<void> {
    const gen = this.gen;
    const p = path.join(this.dir, journalName(this.base, gen));
    await this.journal.open(gen, p, async () => {
      if (this.journalFiles.some((j) => j.gen === gen)) return;
      this.journalFiles.push({ gen, path: p });
      await fsyncDirectory(this.dir);
    });
  }

  /** Folds the journal into a new snapshot; concurrent calls share the running compaction. */
  compact(): Promise<CompactionResult> {
    if (this.compacting) return this.compacting;
    if (this.atSafePoint()) return this.startCompaction();
    // A write is in flight (or failed and waits for a retry): the compaction starts when it has ended.
    return handled(new Promise<CompactionResult>((resolve, reject) => this.compactWaiters.push({ resolve, reject })));
  }

  /**
   * Starts a compaction: copies the collections as memory holds them and writes them as a snapshot.
   * Only at a safe point (atSafePoint): every journal line cut so far is durable and covered by the copy,
   * so no line replayed over the snapshot carries a delta computed against an older version than the
   * copy holds; the deltas' bases are forgotten, so every record's next line carries it whole.
   */
  private startCompaction(): Promise<CompactionResult> {
    this.compactionWanted = false;
    this.lastCut = new Map();
    // Everything cut from now on goes to the next generation. The snapshot covers every batch up to
    // `lastSeq` (durable); the batch in flight, if any, is replayed over it (its ops are in memory already).
    const coveredSeq = this.lastSeq;
    const oldGens = this.journalFiles.map((j) => j.gen);
    this.gen = Math.max(this.gen, ...oldGens) + 1;
    const copy: Array<[string, Array<[string, unknown]>]> = [];
    for (const name of Object.keys(this.collections)) copy.push([name, Object.entries(this.collections[name]!)]);
    const coldCopy: Array<[string, Array<[string, ColdEntry]>]> = [];
    for (const name of Object.keys(this.cold)) if (this.cold[name]!.size > 0) coldCopy.push([name, [...this.cold[name]!]]);
    this.opts.onCompactionStep?.('copied');
    const p = this.writeSnapshot(copy, coldCopy, coveredSeq, oldGens);
    this.compacting = p;
    const waiters = this.compactWaiters;
    this.compactWaiters = [];
    for (const w of waiters) p.then(w.resolve, w.reject);
    p.then(noop, (err: unknown) => this.log(`store: compaction of ${this.file} failed: ${(err as Error).message}`)).finally(() => {
      this.compacting = null;
    });
    return handled(p);
  }

  private async writeSnapshot(copy: Array<[string, Array<[string, unknown]>]>, coldCopy: Array<[string, Array<[string, ColdEntry]>]>, journalSeq: number, oldGens: number[]): Promise<CompactionResult> {
    const started = performance.now();
    const at = new Date().toISOString();
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    let bytes = 0;
    try {
      let parts: string[] = [`{"schemaVersion":${this.schemaVersion},"journalSeq":${journalSeq},"compactedAt":${JSON.stringify(at)},"collections":{`];
      let n = 0;
      const flushParts = async (): Promise<void> => {
        const buf = Buffer.from(parts.join(''), 'utf8');
        parts = [];
        for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off, null)).bytesWritten;
        bytes += buf.length;
      };
      for (let c = 0; c < copy.length; c++) {
        const [name, entries] = copy[c]!;
        parts.push(`${c > 0 ? ',' : ''}${JSON.stringify(name)}:{`);
        for (let i = 0; i < entries.length; i++) {
          const [id, rec] = entries[i]!;
          parts.push(`${i > 0 ? ',' : ''}${JSON.stringify(id)}:${JSON.stringify(rec)}`);
          if (++n % COMPACT_SLICE === 0) {
            await flushParts();
            await new Promise((r) => setImmediate(r));
          }
        }
        parts.push('}');
      }
      parts.push('}');
      // Where the cold records are: the snapshot replaces the journal's `c` ops it covers.
      if (coldCopy.length > 0) {
        parts.push(',"cold":{');
        for (let c = 0; c < coldCopy.length; c++) {
          const [name, entries] = coldCopy[c]!;
          parts.push(`${c > 0 ? ',' : ''}${JSON.stringify(name)}:{`);
          for (let i = 0; i < entries.length; i++) {
            const [id, e] = entries[i]!;
            parts.push(`${i > 0 ? ',' : ''}${JSON.stringify(id)}:${JSON.stringify(coldEntryToJson(e))}`);
            if (++n % COMPACT_SLICE === 0) {
              await flushParts();
              await new Promise((r) => setImmediate(r));
            }
          }
          parts.push('}');
        }
        parts.push('}');
      }
      parts.push('}');
      await flushParts();
      await fh.sync();
    } finally {
      await fh.close();
    }
    this.opts.onCompactionStep?.('written');
    await rename(tmp, this.file);
    await fsyncDirectory(this.dir);
    this.opts.onCompactionStep?.('renamed');
    // The older generations are covered by the snapshot now. Wait for an append still going to one of them.
    if (this.inFlight) await this.inFlight.catch(noop);
    // The audit records they carry are in no snapshot: their own files must hold them durably first.
    if (this.side) await this.side.sync();
    if (oldGens.includes(this.journal.gen)) await this.journal.close();
    for (const gen of oldGens) {
      await unlink(path.join(this.dir, journalName(this.base, gen))).catch((err: unknown) => {
        if (errnoCode(err) !== 'ENOENT') throw err;
      });
    }
    this.journalFiles = this.journalFiles.filter((j) => !oldGens.includes(j.gen));
    // Segments no record of the snapshot points at (later journal lines point only at the current one).
    const liveSegments = new Set<number>();
    for (const [, entries] of coldCopy) for (const [, e] of entries) liveSegments.add(e.seg);
    for (const name of Object.keys(this.cold)) for (const e of this.cold[name]!.values()) liveSegments.add(e.seg);
    await this.segments.prune(liveSegments);
    let remaining = 0;
    for (const j of this.journalFiles) remaining += await stat(j.path).then((s) => s.size, () => 0);
    this.journalBytes = remaining;
    this.opts.onCompactionStep?.('pruned');
    const ms = performance.now() - started;
    this.counters.compactions++;
    this.counters.lastCompactionAt = at;
    this.counters.lastCompactionMs = ms;
    this.counters.snapshotBytes = bytes;
    return { journalSeq, snapshotBytes: bytes, ms, at };
  }
}


/** An op as JSON (a put's record is serialised here, once per version written: memory holds the stored form, not its text). */
function opJson(op: Op): string {
  if (op[0] === 'p') return op.length === 4 ? `["p",${JSON.stringify(op[1])},${JSON.stringify(op[2])}]` : JSON.stringify(op);
  return JSON.stringify(op);
}

/**
 * The stored copy of a record (its JSON form, what a restart reads back), sharing the objects of
 * `previous` (the stored version it replaces, stored-form.ts): an update copies what it changed.
 */
function storedCopy<T extends Identified>(collection: string, record: T, previous: T | undefined): T {
  try {
    return storedForm(record, previous);
  } catch (err) {
    throw new EngineError('ERR_VALIDATION', `A ${collection} record is not JSON-serialisable: ${
      err instanceof Error ? err.message : String(err)}`, { cause: err, details: { collection } });
  }
}

/** Settles a journal record's side records; their source's hook must not change the store's outcome. */
function settleSide(side: SideRecords, err: unknown, log: (line: string) => void): void {
  try {
    side.settle(err);
  } catch (e) {
    log(`store: settling the audit records of a group commit failed: ${(e as Error).message}`);
  }
}

/**
 * A unit of writes (WriteUnit): the records it touched are written when it is committed, as memory
 * holds them then, all in the same journal record with the side records (audit) its hooks hand over.
 */
class JournalUnit implements WriteUnit {
  /** Records touched, by collection + id. */
  readonly keys = new Map<string, [string, string]>();
  private hooks: Array<() => void> = [];
  private committed: Promise<void> | null = null;
  private settle!: { resolve(): void; reject(err: unknown): void };
  /** Resolves when the unit's journal record is durable. */
  readonly durable: Promise<void>;

  constructor(readonly store: JournalStore) {
    this.durable = handled(new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    }));
  }

  /** Takes a write into the unit; false once committed (the write then goes out on its own). */
  hold(collection: string, id: string): boolean {
    if (this.committed) return false;
    this.keys.set(`${collection}\u0000${id}`, [collection, id]);
    return true;
  }

  onCommit(hook: () => void): void {
    if (this.committed) hook();
    else this.hooks.push(hook);
  }

  commit(): Promise<void> {
    if (!this.committed) {
      const hooks = this.hooks;
      this.hooks = [];
      let p: Promise<void>;
      try {
        this.store.assertOpen();
        p = this.store.commitUnit(this, hooks);
      } catch (err) {
        p = Promise.reject(err);
      }
      p.then(this.settle.resolve, this.settle.reject);
      this.committed = this.durable;
    }
    return this.committed;
  }
}

/** Parsed cold records kept for repeated reads (a client polling an ended execution). */
const COLD_CACHE_SIZE = 64;

class JournalRepository<T extends Identified> implements Repository<T> {
  private hotSize: number;
  /** Set by `tier()`: which records go cold and what of them stays in memory. */
  tiering: Tiering<T, Identified> | null = null;
  private readonly cache = new Map<string, { entry: ColdEntry; rec: T }>();

  constructor(
    private readonly store: JournalStore,
    readonly name: string,
    private readonly records: Record<string, T>,
    private readonly cold: ColdIndex,
  ) {
    this.hotSize = Object.keys(records).length;
  }

  get(id: string): T | undefined {
    return this.records[id] ?? this.readCold(id);
  }

  private readCold(id: string): T | undefined {
    const entry = this.cold.get(id);
    if (!entry) return undefined;
    const hit = this.cache.get(id);
    if (hit && hit.entry === entry) {
      this.cache.delete(id);
      this.cache.set(id, hit);
      return hit.rec;
    }
    const rec = this.store.segments.read(this.name, id, entry) as T;
    this.cache.set(id, { entry, rec });
    if (this.cache.size > COLD_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return rec;
  }

  /** Every record, cold ones read from disk: O(history) for a tiered collection (filter `summaries()` instead). */
  list(filter?: (record: T) => boolean): T[] {
    const out: T[] = [];
    for (const id in this.records) {
      const record = this.records[id]!;
      if (!filter || filter(record)) out.push(record);
    }
    for (const id of this.cold.keys()) {
      const record = this.readCold(id)!;
      if (!filter || filter(record)) out.push(record);
    }
    return out;
  }

  summaries<S extends Identified>(summarize: (record: T) => S): S[] {
    const out: S[] = [];
    for (const id in this.records) out.push(summarize(this.records[id]!));
    for (const e of this.cold.values()) out.push(e.s as S);
    return out;
  }

  count(): number {
    return this.hotSize + this.cold.size;
  }

  /** @internal The record was written to a cold segment: it leaves memory unless replaced meanwhile. */
  demote(rec: Identified, entry: ColdEntry): void {
    if (this.records[rec.id] !== rec) return;
    delete this.records[rec.id];
    this.hotSize--;
    this.cold.set(rec.id, entry);
    // The record just ended is the one most likely read next (its terminal event's listeners, a client
    // polling its status): it enters the bounded cache of cold records as it is, not read back from disk.
    this.cache.delete(rec.id);
    this.cache.set(rec.id, { entry, rec: rec as T });
    if (this.cache.size > COLD_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
  }

  /** @internal A record written by the store itself in a journal record it is cutting (the audit anchor). */
  setQuiet(record: T): void {
    this.setHot(record.id, record);
  }

  /** Memory holds the newest version: a put over a cold record takes it out of the cold index at once. */
  private setHot(id: string, record: T): void {
    if (!(id in this.records)) this.hotSize++;
    this.records[id] = record;
    if (this.cold.delete(id)) this.cache.delete(id);
  }

  put(record: T, opts?: WriteOptions): Promise<void> {
    let stored: T;
    try {
      this.store.assertOpen();
      checkId(this.name, record);
      stored = storedCopy(this.name, record, this.records[record.id]);
      this.setHot(record.id, stored);
    } catch (err) {
      return handled(Promise.reject(err));
    }
    return this.store.commit(this.tiering?.isCold(stored) ? ['p', this.name, stored, true] : ['p', this.name, stored], opts);
  }

  update(id: string, patch: Partial<T>, opts?: WriteOptions): Promise<T> {
    let next: T;
    try {
      this.store.assertOpen();
      const current = this.get(id);
      if (current === undefined) {
        throw new EngineError('ERR_NOT_FOUND', `No ${this.name} record with id "${id}"`, {
          details: { collection: this.name, id },
        });
      }
      next = storedCopy(this.name, { ...current, ...patch, id } as T, current);
      this.setHot(id, next);
    } catch (err) {
      return handled(Promise.reject(err));
    }
    return handled(this.store.commit(this.tiering?.isCold(next) ? ['p', this.name, next, true] : ['p', this.name, next], opts).then(() => next));
  }

  delete(id: string, opts?: WriteOptions): Promise<boolean> {
    try {
      this.store.assertOpen();
    } catch (err) {
      return handled(Promise.reject(err));
    }
    if (!(id in this.records) && !this.cold.has(id)) {
      // Nothing to change, but the absence the caller observed may itself still be in flight.
      return handled(this.store.flush().then(() => false));
    }
    if (id in this.records) {
      delete this.records[id];
      this.hotSize--;
    }
    if (this.cold.delete(id)) this.cache.delete(id);
    return handled(this.store.commit(['d', this.name, id], opts).then(() => true));
  }
}
