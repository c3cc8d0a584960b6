/**
 * Shape of the store file and its schema migrations.
 *
 * File: `<dataDir>/store.json` = `{ "schemaVersion": N, "collections": { "<name>": { "<id>": record } } }`.
 * A migration with `version: N` turns a version N-1 document into a version N document; on open,
 * a file older than the code is migrated step by step and written back before the store is used.
 */

/** Schema version the code writes. Bump it together with a new entry in `MIGRATIONS`. */
export const CURRENT_SCHEMA_VERSION = 1;

/** A collection as stored: records keyed by id (O(1) get). */
export type StoredCollection = Record<string, Record<string, unknown>>;

/** The whole store document. */
export interface StoreData {
  schemaVersion: number;
  collections: Record<string, StoredCollection>;
}

export interface Migration {
  /** The schema version this step produces (it receives a document at `version - 1`). */
  version: number;
  /** One line for logs: what the step changes. */
  description?: string;
  /** Returns the migrated document (may mutate and return its argument). `schemaVersion` is set by the store. */
  migrate(data: StoreData): StoreData;
}

/** Migrations of the embedded store, ascending by version. Empty while the schema is at version 1. */
export const MIGRATIONS: readonly Migration[] = [];
