/**
 * The embedded store: one lowdb document (`<dataDir>/store.json`) holding named collections, each
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
import { EngineError, isEngineError } from '../engine/errors';
import type { Identified, Repository } from '../engine/ports';
import { AtomicJsonFileAdapter } from './atomic-file-adapter';
import { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration, type StoreData, type StoredCollection } from './migrations';

export const STORE_FILE_NAME = 'store.json';

/** `<dataDir>/store.json`. */
export function storeFilePath(dataDir: string): string {
  return path.join(dataDir, STORE_FILE_NAME);
}

export type Durability = 'group' | 'per-mutation';

export interface StoreOptions {
  /** The store file, normally `storeFilePath(dataDir)`. Its directory is created if missing. */
  file: string;
  /** Default `MIGRATIONS`. */
  migrations?: readonly Migration[];
  /** Schema version the code expects; default `CURRENT_SCHEMA_VERSION` (tests raise it to exercise migrations). */
  schemaVersion?: number;
  /** Default 'group'. */
  durability?: Durability;
  /** Replaces the atomic file adapter (tests count or fail writes). It must serialise synchronously in `write`. */
  adapter?: Adapter<StoreData>;
  /** Called once per failed write (callers that do not await their mutation still get it logged). */
  onWriteError?: (err: EngineError) => void;
}

export interface StoreStats {
  /** Successful file writes. */
  writes: number;
  failedWrites: number;
  /** Mutations accepted (put/update/delete that changed memory). */
  mutations: number;
  /** Largest number of mutations carried by one write. */
  maxBatch: number;
  /** Duration of the last successful write, ms. */
  lastWriteMs: number;
}

export interface Store {
  readonly file: string;
  readonly schemaVersion: number;
  readonly durability: Durability;
  readonly closed: boolean;
  /** The repository of a named collection (created empty on first use; same instance per name). */
  collection<T extends Identified>(name: string): Repository<T>;
  collectionNames(): string[];
  /** Resolves when every mutation made before the call is on disk (retrying after a failed write). */
  flush(): Promise<void>;
  /** Refuses further mutations and flushes. Idempotent; calling again after a failed flush retries it. */
  close(): Promise<void>;
  stats(): StoreStats;
}

/** Opens (or creates) the store: removes a stale temp file, validates, migrates and writes back if older. */
export async function openStore(opts: StoreOptions): Promise<Store> {
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
      throw new EngineError(
        'ERR_STORE',
        `Store file ${file} has schema version ${data.schemaVersion}, newer than this version of Cadre supports ` +
          `(${target}); refusing to open it. Upgrade Cadre, or restore a backup made by the older version.`,
        { details: { file, fileVersion: data.schemaVersion, supportedVersion: target } },
      );
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
  return new LowdbStore(db, file, opts.durability ?? 'group', opts.onWriteError);
}

function validateShape(raw: unknown, file: string): StoreData {
  const corrupt = (why: string): EngineError =>
    new EngineError('ERR_STORE', `Store file ${file} is corrupt (${why}); refusing to open it. ` +
      'Restore it from a backup, or move it aside to start with an empty store.', { details: { file } });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corrupt('top level is not an object');
  const { schemaVersion, collections } = raw as Partial<StoreData>;
  if (typeof schemaVersion !== 'number' || !Number.isInteger(schemaVersion) || schemaVersion < 1) {
    throw corrupt('missing or invalid "schemaVersion"');
  }
  if (typeof collections !== 'object' || collections === null || Array.isArray(collections)) {
    throw corrupt('missing or invalid "collections"');
  }
  for (const [name, coll] of Object.entries(collections)) {
    if (typeof coll !== 'object' || coll === null || Array.isArray(coll)) throw corrupt(`collection "${name}" is not an object`);
  }
  return raw as StoreData;
}

function migrate(data: StoreData, target: number, migrations: readonly Migration[], file: string): StoreData {
  let current = data;
  for (let version = data.schemaVersion + 1; version <= target; version++) {
    const step = migrations.find((m) => m.version === version);
    if (!step) {
      throw new EngineError('ERR_STORE', `No migration to schema version ${version} for store file ${file}`, {
        details: { file, fileVersion: data.schemaVersion, missingVersion: version },
      });
    }
    try {
      current = step.migrate(current);
    } catch (err) {
      throw new EngineError('ERR_STORE', `Migration to schema version ${version} failed for store file ${file}: ${
        err instanceof Error ? err.message : String(err)}`, { cause: err, details: { file, version } });
    }
    current = validateShape(current, file);
    current.schemaVersion = version;
  }
  return current;
}

function nullProto<V>(obj: Record<string, V>): Record<string, V> {
  if (Object.getPrototypeOf(obj) === null) return obj;
  // Own "__proto__" keys (possible after JSON.parse) become plain own properties on a null-prototype object.
  return Object.assign(Object.create(null) as Record<string, V>, obj);
}

function asStoreError(err: unknown, message: string, file: string): EngineError {
  if (isEngineError(err)) return err;
  return new EngineError('ERR_STORE', `${message}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
    details: { file },
    retryable: true,
  });
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

const noop = (): void => {};

/** Marks a promise handled (callers may ignore a mutation's promise) and returns it unchanged. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(noop);
  return p;
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

/** JSON round-trip: memory holds exactly what a restart would read back (Dates become strings, undefined drops). */
function toStored<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
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
