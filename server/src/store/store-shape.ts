/**
 * What both store engines share: the store's public interface, shape validation of a store document,
 * step-by-step migration, and the small helpers around errors and promises.
 */
import { EngineError, isEngineError } from '../engine/errors';
import type { Identified, Repository, Tiering, WriteUnit } from '../engine/ports';
import type { Migration, StoreData } from './migrations';

/**
 * 'group' (default): one durable write per group of mutations made while the previous write was in flight.
 * 'per-mutation': one durable write per mutation (benchmark baseline).
 * 'whole-file': the previous design, the whole store.json rewritten per group commit (benchmark baseline).
 */
export type Durability = 'group' | 'per-mutation' | 'whole-file';

export interface StoreStats {
  /** Successful durable writes (journal appends, or whole-file writes). */
  writes: number;
  failedWrites: number;
  /** Mutations accepted (put/update/delete that changed memory). */
  mutations: number;
  /** Largest number of mutations carried by one write. */
  maxBatch: number;
  /** Duration of the last successful write, ms. */
  lastWriteMs: number;
  /** Bytes of the journal files not yet folded into the snapshot (0 for the whole-file store). */
  journalBytes?: number;
  /** Size of the snapshot (store.json) when last read or written, bytes. */
  snapshotBytes?: number;
  /** Compactions finished since open. */
  compactions?: number;
  /** ISO time of the last finished compaction (from the snapshot, so it survives restarts), or null. */
  lastCompactionAt?: string | null;
  /** Duration of the last compaction, ms. */
  lastCompactionMs?: number;
  /** Records moved to quarantine files at open. */
  quarantined?: number;
  /** Records of tiered collections kept on disk only (journal store). */
  coldRecords?: number;
  /** Bytes of the cold segment files, live records and garbage (journal store). */
  coldBytes?: number;
}

export interface CompactionResult {
  journalSeq: number;
  snapshotBytes: number;
  ms: number;
  at: string;
}

/**
 * Records of another log carried by the store's journal records (the audit trail's, see
 * `AuditJournal`): they become durable with the store's mutations of the same group commit.
 */
export interface SideRecords {
  /** Each record's JSON, as it goes into the journal record's `a` array. */
  lines: string[];
  /** Store records to write in the same journal record (the audit anchor). */
  puts: Array<[string, Identified]>;
  /** Called once the journal record is durable (null) or failed (the error). */
  settle(err: unknown): void;
}

/** What carries its records in the store's journal (the audit trail). */
export interface SideRecordSource {
  /** Records waiting to be written, chained and serialised now; null when none wait. */
  take(): SideRecords | null;
  /**
   * Makes every record it was handed durable in its own files: called before a compaction deletes the
   * journal generations holding them.
   */
  sync(): Promise<void>;
}

/** The store's side of the audit trail's journaled mode (see jsonl-audit-trail `journal`). */
export interface AuditJournal {
  /** Registers the source whose records each journal record carries (one per store). */
  attach(source: SideRecordSource): void;
  /** The side records found in the journals at open, oldest first (parsed JSON; to reconcile the trail's files). */
  replayed(): unknown[];
  /** Cuts a journal record soon (the source has records waiting). */
  requestWrite(): void;
  /** Resolves when everything handed over so far is durable (or failed). */
  flush(): Promise<void>;
}

export interface Store {
  readonly file: string;
  readonly schemaVersion: number;
  readonly durability: Durability;
  readonly closed: boolean;
  /** The repository of a named collection (created empty on first use; same instance per name). */
  collection<T extends Identified>(name: string): Repository<T>;
  collectionNames(): string[];
  /** Declares a collection tiered: its cold records live on disk with only a summary in memory (journal store). */
  tier?<T extends Identified, S extends Identified>(name: string, tiering: Tiering<T, S>): void;
  /** Resolves when every mutation made before the call is on disk (retrying after a failed write). */
  flush(): Promise<void>;
  /** Refuses further mutations and flushes. Idempotent; calling again after a failed flush retries it. */
  close(): Promise<void>;
  stats(): StoreStats;
  /** Folds the journal into a new snapshot now (journal store); the whole-file store has nothing to fold. */
  compact?(): Promise<CompactionResult>;
  /** A unit of writes durable together (journal store). */
  unit?(): WriteUnit;
  /** The journal as the carrier of the audit trail's records (journal store). */
  auditJournal?(): AuditJournal;
}

export function corruptError(file: string, why: string): EngineError {
  return new EngineError('ERR_STORE', `Store file ${file} is corrupt (${why}); refusing to open it. ` +
    'Restore it from a backup, or move it aside to start with an empty store.', { details: { file } });
}

export function validateShape(raw: unknown, file: string): StoreData {
  const corrupt = (why: string): EngineError => corruptError(file, why);
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

export function newerVersionError(file: string, fileVersion: number, target: number): EngineError {
  return new EngineError(
    'ERR_STORE',
    `Store file ${file} has schema version ${fileVersion}, newer than this version of Cadre supports ` +
      `(${target}); refusing to open it. Upgrade Cadre, or restore a backup made by the older version.`,
    { details: { file, fileVersion, supportedVersion: target } },
  );
}

export function migrate(data: StoreData, target: number, migrations: readonly Migration[], file: string): StoreData {
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

export function nullProto<V>(obj: Record<string, V>): Record<string, V> {
  if (Object.getPrototypeOf(obj) === null) return obj;
  // Own "__proto__" keys (possible after JSON.parse) become plain own properties on a null-prototype object.
  return Object.assign(Object.create(null) as Record<string, V>, obj);
}

export function asStoreError(err: unknown, message: string, file: string): EngineError {
  if (isEngineError(err)) return err;
  return new EngineError('ERR_STORE', `${message}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
    details: { file },
    retryable: true,
  });
}

export const noop = (): void => {};

/** Marks a promise handled (callers may ignore a mutation's promise) and returns it unchanged. */
export function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(noop);
  return p;
}

/** JSON round-trip: memory holds exactly what a restart would read back (Dates become strings, undefined drops). */
export function toStored<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function serialisable<T>(collection: string, record: T): T {
  try {
    return toStored(record);
  } catch (err) {
    throw new EngineError('ERR_VALIDATION', `A ${collection} record is not JSON-serialisable: ${
      err instanceof Error ? err.message : String(err)}`, { cause: err, details: { collection } });
  }
}

export function checkId(collection: string, record: unknown): void {
  if (typeof record !== 'object' || record === null || typeof (record as Identified).id !== 'string' || (record as Identified).id.length === 0) {
    throw new EngineError('ERR_VALIDATION', `A ${collection} record needs a non-empty string id`, {
      details: { collection },
    });
  }
}

export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? ((err as { code?: unknown }).code as string | undefined) : undefined;
}
