/**
 * Ports: the narrow interfaces through which the engine reaches the outside world. Adapters live
 * outside `engine/` and are named after their technology (LowdbStore, JsonlAuditTrail, ...).
 */

/** Wall clock, injectable so tests can drive time. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A record kept by a repository: anything JSON-serialisable with a string id. */
export interface Identified {
  id: string;
}

/**
 * Writes that become durable together. Store mutations and audit appends made with `{ unit }` change
 * memory at once, as any mutation, but reach the disk only when the unit is committed, and then all in
 * ONE durable write (one journal record, one fsync shared with whatever else is in that group
 * commit): after a crash all of them are on disk or none. A RIGOR step's audit records, ACMF counters
 * and checkpoint are one unit. A unit must always be committed (an uncommitted unit is never durable).
 */
export interface WriteUnit {
  /** Hands the unit's writes to the next group commit; resolves when they are durable. Idempotent. */
  commit(): Promise<void>;
  /** For adapters: `hook` runs when the unit is committed, just before its writes join the group commit. */
  onCommit(hook: () => void): void;
}

export interface WriteOptions {
  /** Holds the write until the unit is committed (see WriteUnit). */
  unit?: WriteUnit;
}

/**
 * One collection of the store. Mutations change the in-memory view at once (reads see them
 * immediately) and return a promise that resolves when the group commit holding them is on disk.
 * A caller that needs durability (a 202, an acknowledged approval) awaits it; others may not.
 */
export interface Repository<T extends Identified> {
  get(id: string): T | undefined;
  list(filter?: (record: T) => boolean): T[];
  count(): number;
  /** Insert or replace. */
  put(record: T, opts?: WriteOptions): Promise<void>;
  /** Shallow-merge `patch` into an existing record; rejects with ERR_NOT_FOUND when absent. */
  update(id: string, patch: Partial<T>, opts?: WriteOptions): Promise<T>;
  delete(id: string, opts?: WriteOptions): Promise<boolean>;
  /**
   * The summary of every record, from memory: `summarize` of each record in memory, and the summary
   * stored with each cold record of a tiered collection (see `Tiering`), which is not read from disk.
   * Pass the tiering's own `summary`. Absent in stores without tiers (callers summarise `list()`).
   */
  summaries?<S extends Identified>(summarize: (record: T) => S): S[];
}

/**
 * How a collection splits into hot records (in memory) and cold ones (on disk, only their summary in
 * memory), so that what the server holds does not grow with history. A cold record is still read by
 * `get` (from disk) and by `list` (which then reads every cold record: use `summaries` to filter).
 */
export interface Tiering<T extends Identified, S extends Identified> {
  /** True when the record will not change often any more (an ended execution). */
  isCold(record: T): boolean;
  /** The fields lists and scans need, kept in memory for a cold record. */
  summary(record: T): S;
}

/** An audit-trail record as stored: hash-chained, append-only. */
export interface AuditRecord {
  /** Monotonic sequence number over the whole trail (1-based). */
  seq: number;
  /** ISO 8601 UTC timestamp. */
  ts: string;
  /** What happened, e.g. `gate.result`, `phase.completed`, `acmf.mode_changed`, `approval.decided`. */
  kind: string;
  executionId?: string;
  agentId?: string;
  /**
   * Tenant the record belongs to (tenants/tenant-id.ts): stamped by the engine from the execution, or
   * by the door for a tenant's own act. Absent: recorded before tenants, or install-wide (the default tenant).
   */
  tenantId?: string;
  /** Who caused it: `engine`, an agent id, or a person (`user:<name>`). */
  actor: string;
  data: Record<string, unknown>;
  /** SHA-256 (hex) of the previous record's canonical form; 64 zeros for the first record. */
  prevHash: string;
  /** SHA-256 (hex) of this record's canonical form (every field but `hash`). */
  hash: string;
}

export type AuditEntry = Pick<AuditRecord, 'kind' | 'actor' | 'data'> & Partial<Pick<AuditRecord, 'executionId' | 'agentId' | 'tenantId'>>;

export interface AuditVerification {
  ok: boolean;
  /** Records checked. */
  checked: number;
  /** The first broken link, when `ok` is false. */
  firstBroken?: { file: string; line: number; seq: number | null; reason: string };
}

/** Which audit records a query returns (all given conditions hold). */
export interface AuditQueryFilter {
  executionId?: string;
  agentId?: string;
  kind?: string;
  /** Only records at or after this instant (ISO 8601, compared as instants). */
  since?: string;
  /** Only records at or before this instant (ISO 8601). */
  until?: string;
  /** Only records this predicate keeps (a tenant's, resolved by the caller), applied before `limit`. */
  match?: (record: AuditRecord) => boolean;
  /** At most this many records: the newest matches, still returned oldest first. */
  limit?: number;
}

/** The append-only, hash-chained audit trail. */
export interface AuditTrail {
  /** Appends and resolves when the record is durable (with a unit: when the unit is, after its commit). */
  append(entry: AuditEntry, opts?: WriteOptions): Promise<AuditRecord>;
  /** Records matching the filter, oldest first. */
  query(filter?: AuditQueryFilter): Promise<AuditRecord[]>;
  verify(): Promise<AuditVerification>;
  /** Verifies only what was appended since its last call (a view refreshed often); absent: `verify`. A change inside the verified prefix shows only in `verify`. */
  verifyNew?(): Promise<AuditVerification>;
}

/** The store as the engine sees it: named collections. */
export interface CollectionStore {
  collection<T extends Identified>(name: string): Repository<T>;
  /** Declares `name` tiered; stores that keep everything in memory ignore it (optional). */
  tier?<T extends Identified, S extends Identified>(name: string, tiering: Tiering<T, S>): void;
  /** A new write unit (absent: the store cannot group writes; callers write without one). */
  unit?(): WriteUnit;
}

/** Collection names the engine uses. */
export const COLLECTIONS = {
  agents: 'agents',
  approvals: 'approvals',
  apiKeys: 'apiKeys',
  tasks: 'tasks',
  executions: 'executions',
  workflows: 'workflows',
} as const;

/** Where a step's output too large for its execution record goes (files under the data directory). */
export interface AttachmentStore {
  /** Stores `content` durably as `<executionId>/<name>` and resolves with its reference. */
  put(executionId: string, name: string, content: string): Promise<AttachmentRef>;
  /** The content of an attachment, or null when it does not exist. */
  get(executionId: string, name: string): Promise<string | null>;
}

/** What the execution record keeps in place of a large output. */
export interface AttachmentRef {
  /** Path relative to the attachments directory: `<executionId>/<name>`. */
  attachment: string;
  bytes: number;
  sha256: string;
  /** The first characters of the JSON, for the status views. */
  preview: string;
}

/** A step output whose JSON is larger than this goes to an attachment (the execution record stays bounded). */
export const MAX_INLINE_OUTPUT_BYTES = 64 * 1024;
