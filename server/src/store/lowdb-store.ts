/**
 * `openStore` opens the journal store (journal-store.ts): the default since the whole-file rewrite
 * made every commit as slow as the store is large. This module also keeps the previous design,
 * `durability: 'whole-file'` (or a custom `adapter`), as the benchmark baseline:
 * one lowdb document (`<dataDir>/store.json`) holding named collections, each
 * exposed as a `Repository<T>` (the engine's port). Reads are synchronous from memory.
 *
 * Durability ('group', the default): a mutation changes memory at once and joins the pending group
 * commit; every mutation made in the same tick goes out in ONE atomic file write, and each mutation's
 * promise resolves when that write is on disk. At most one write is in flight; mutations made
 * meanwhile accumulate and go out together in the next write. A failed write rejects the promises of
 * the mutations it carried; memory keeps them and the next write (next mutation, flush() or close())
 * retries the whole current state. 'per-mutation' (one awaited write per mutation) exists as the
 * benchmark baseline.
 */
import type { Adapter, Low as LowType } from 'lowdb' with { 'resolution-mode': 'import' };
import { copyFile, mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError } from '../engine/errors';
import type { Identified, Repository } from '../engine/ports';
import { AtomicJsonFileAdapter } from './atomic-file-adapter';
import { openJournalStore, type RecordValidator } from './journal-store';
import { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration, type StoreData, type StoredCollection } from './migrations';
import {
  asStoreError, handled, migrate, newerVersionError, noop, nullProto, toStored, validateShape,
  type Durability, type Store, type StoreStats,
} from './store-shape';

export type { CompactionResult, Durability, Store, StoreStats } from './store-shape';

export const STORE_FILE_NAME = 'store.json';

/** `<dataDir>/store.json`. */
export function storeFilePath(dataDir: string): string {
  return path.join(dataDir, STORE_FILE_NAME);
}

export interface StoreOptions {
  /** The store file, normally `storeFilePath(dataDir)`. Its directory is created if missing. */
  file: string;
  /** Default `MIGRATIONS`. */
  migrations?: readonly Migration[];
  /** Schema version the code expects; default `CURRENT_SCHEMA_VERSION` (tests raise it to exercise migrations). */
  schemaVersion?: number;
  /** Default 'group' (journal store). 'whole-file' opens the previous design (benchmark baseline). */
  durability?: Durability;
  /** Replaces the atomic file adapter (tests count or fail writes). It must serialise synchronously in `write`. */
  adapter?: Adapter<StoreData>;
  /** Called once per failed write (callers that do not await their mutation still get it logged). */
  onWriteError?: (err: EngineError) => void;
  /** Journal store: one line per repair, quarantine or failed compaction. */
  log?: (line: string) => void;
  /** Journal store: journal size that triggers a compaction, at least (default 8 MB). */
  compactMinBytes?: number;
  /** Journal store: validators per collection run at open; failing records are quarantined. */
  validators?: Record<string, RecordValidator>;
  /** Journal store test hook, see JournalStoreOptions. */
  onCompactionStep?: (step: 'copied' | 'written' | 'renamed' | 'pruned') => void;
  /** Journal store test hook, see JournalStoreOptions. */
  onColdWritten?: () => void;
  /** Journal store: size at which a cold segment is closed (default 64 MB). */
  coldSegmentMaxBytes?: number;
  /** Journal store: how long a record that went cold waits to move to a segment with others (see JournalStoreOptions). */
  coldDelayMs?: number;
}

/** Opens (or creates) the store: the journal store, or the whole-file store for 'whole-file' or a custom adapter. */
export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.durability === 'whole-file' || opts.adapter) return openWholeFileStore(opts);
  const { adapter: _a, durability, ...rest } = opts;
  return openJournalStore({ ...rest, ...(durability === 'group' || durability === 'per-mutation' ? { durability } : {}) });
}

/** The previous design: removes a stale temp file, validates, migrates and writes back if older. */
export async function openWholeFileStore(opts: StoreOptions): Promise<Store> {
  const file = path.resolve(opts.file);
  const target = opts.schemaVersion ?? CURRENT_SCHEMA_VERSION;
  const migrations = opts.migrations ?? MIGRATIONS;
  let adapter = opts.adapter;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    if (!adapter) {
      const fileAdapter = new AtomicJsonFileAdapter<StoreData>(file);
      await fileAdapter.removeStaleTemp();
      adapter = fileAdapter;
    }
  } catch (err) {
    throw asStoreError(err, `Cannot prepare store file ${file}`, file);
  }

  const { Low } = await import('lowdb');
  const db = new Low<StoreData>(adapter, { schemaVersion: target, collections: {} });
  let raw: StoreData | null;
  try {
    raw = await adapter.read();
  } catch (err) {
    throw asStoreError(err, `Cannot read store file ${file}`, file);
  }
  let migratedFrom: number | undefined;
  if (raw !== null) {
    const data = validateShape(raw, file);
    if (data.schemaVersion > target) {
      throw newerVersionError(file, data.schemaVersion, target);
    }
    if (data.schemaVersion < target) {
      migratedFrom = data.schemaVersion;
      db.data = migrate(data, target, migrations, file);
    } else {
      db.data = data;
    }
  }
  db.data.collections = nullProto(db.data.collections);
  for (const name of Object.keys(db.data.collections)) {
    db.data.collections[name] = nullProto(db.data.collections[name]!);
  }

  if (migratedFrom !== undefined) {
    // Keep the pre-migration file next to the store, then persist the migrated document before use.
    if (!opts.adapter) await copyFile(file, `${file}.v${migratedFrom}.bak`);
    try {
      await db.write();
    } catch (err) {
      throw asStoreError(err, `Cannot write migrated store file ${file}`, file);
    }
  }
  return new LowdbStore(db, file, opts.durability === 'per-mutation' ? 'per-mutation' : 'whole-file', opts.onWriteError);
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

class LowdbStore implements Store {
  readonly schemaVersion: number;
  private readonly repos = new Map<string, LowdbRepository<Identified>>();
  private pending: Waiter[] = [];
  private inFlight: Promise<void> | null = null;
  private scheduled = false;
  /** Memory holds changes not covered by a started write. */
  private dirty = false;
  /** Tail of the per-mutation write chain. */
  private serial: Promise<void> = Promise.resolve();
  private isClosed = false;
  private readonly counters: StoreStats = { writes: 0, failedWrites: 0, mutations: 0, maxBatch: 0, lastWriteMs: 0 };

  constructor(
    private readonly db: LowType<StoreData>,
    readonly file: string,
    readonly durability: Durability,
    private readonly onWriteError: ((err: EngineError) => void) | undefined,
  ) {
    this.schemaVersion = db.data.schemaVersion;
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
      const collections = this.db.data.collections;
      const records = (collections[name] ??= Object.create(null) as StoredCollection);
      repo = new LowdbRepository<Identified>(this, name, records as unknown as Record<string, Identified>);
      this.repos.set(name, repo);
    }
    return repo as unknown as Repository<T>;
  }

  collectionNames(): string[] {
    return Object.keys(this.db.data.collections);
  }

  stats(): StoreStats {
    return { ...this.counters };
  }

  flush(): Promise<void> {
    if (this.durability === 'per-mutation') {
      const p = this.serial.catch(noop).then(() => (this.dirty ? this.writeNow(1) : undefined));
      this.serial = p;
      return handled(p);
    }
    if (this.dirty) return handled(this.enqueue());
    if (this.inFlight) return handled(this.inFlight);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.isClosed = true;
    return this.flush();
  }

  /** @internal Throws ERR_STORE when closed; called by repositories before touching memory. */
  assertOpen(): void {
    if (this.isClosed) throw new EngineError('ERR_STORE', `Store ${this.file} is closed`, { details: { file: this.file } });
  }

  /** @internal Called by a repository right after it changed memory; resolves when the change is durable. */
  commit(): Promise<void> {
    this.dirty = true;
    this.counters.mutations++;
    if (this.durability === 'per-mutation') {
      const p = this.serial.catch(noop).then(() => this.writeNow(1));
      this.serial = p;
      return handled(p);
    }
    return handled(this.enqueue());
  }

  private enqueue(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Starts the next write after the current tick's mutations (setImmediate: after pending I/O callbacks too). */
  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startGroupWrite();
    });
  }

  private startGroupWrite(): void {
    if (this.inFlight || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const write = this.writeNow(batch.length); // snapshots memory synchronously
    this.inFlight = write;
    write.then(
      () => {
        for (const w of batch) w.resolve();
      },
      (err: unknown) => {
        for (const w of batch) w.reject(err);
      },
    ).finally(() => {
      this.inFlight = null;
      if (this.pending.length > 0) this.schedule();
    });
  }

  /** One file write of the whole current state. The adapter serialises before its first await. */
  private writeNow(batchSize: number): Promise<void> {
    this.dirty = false;
    const started = performance.now();
    let p: Promise<void>;
    try {
      p = this.db.write();
    } catch (err) {
      p = Promise.reject(err);
    }
    return p.then(
      () => {
        this.counters.writes++;
        this.counters.lastWriteMs = performance.now() - started;
        if (batchSize > this.counters.maxBatch) this.counters.maxBatch = batchSize;
      },
      (err: unknown) => {
        this.dirty = true;
        this.counters.failedWrites++;
        const error = asStoreError(err, `Write of store file ${this.file} failed`, this.file);
        if (this.onWriteError) {
          try {
            this.onWriteError(error);
          } catch {
            // a logging hook must not change the outcome
          }
        }
        throw error;
      },
    );
  }
}

class LowdbRepository<T extends Identified> implements Repository<T> {
  private size: number;

  constructor(
    private readonly store: LowdbStore,
    readonly name: string,
    private readonly records: Record<string, T>,
  ) {
    this.size = Object.keys(records).length;
  }

  get(id: string): T | undefined {
    return this.records[id];
  }

  list(filter?: (record: T) => boolean): T[] {
    const out: T[] = [];
    for (const id in this.records) {
      const record = this.records[id]!;
      if (!filter || filter(record)) out.push(record);
    }
    return out;
  }

  count(): number {
    return this.size;
  }

  put(record: T): Promise<void> {
    try {
      this.store.assertOpen();
      if (typeof record !== 'object' || record === null || typeof record.id !== 'string' || record.id.length === 0) {
        throw new EngineError('ERR_VALIDATION', `A ${this.name} record needs a non-empty string id`, {
          details: { collection: this.name },
        });
      }
      const stored = this.serialisable(record);
      if (!(record.id in this.records)) this.size++;
      this.records[record.id] = stored;
    } catch (err) {
      return handled(Promise.reject(err));
    }
    return this.store.commit();
  }

  update(id: string, patch: Partial<T>): Promise<T> {
    let next: T;
    try {
      this.store.assertOpen();
      const current = this.records[id];
      if (current === undefined) {
        throw new EngineError('ERR_NOT_FOUND', `No ${this.name} record with id "${id}"`, {
          details: { collection: this.name, id },
        });
      }
      next = this.serialisable({ ...current, ...patch, id } as T);
      this.records[id] = next;
    } catch (err) {
      return handled(Promise.reject(err));
    }
    return handled(this.store.commit().then(() => next));
  }

  delete(id: string): Promise<boolean> {
    try {
      this.store.assertOpen();
    } catch (err) {
      return handled(Promise.reject(err));
    }
    if (!(id in this.records)) {
      // Nothing to change, but the absence the caller observed may itself still be in flight.
      return handled(this.store.flush().then(() => false));
    }
    delete this.records[id];
    this.size--;
    return handled(this.store.commit().then(() => true));
  }

  private serialisable(record: T): T {
    try {
      return toStored(record);
    } catch (err) {
      throw new EngineError('ERR_VALIDATION', `A ${this.name} record is not JSON-serialisable: ${
        err instanceof Error ? err.message : String(err)}`, { cause: err, details: { collection: this.name } });
    }
  }
}
