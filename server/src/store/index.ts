/** The embedded store: repositories of named collections behind the engine's `Repository<T>` port. */
export { AtomicJsonFileAdapter } from './atomic-file-adapter';
export {
  openStore,
  openWholeFileStore,
  storeFilePath,
  STORE_FILE_NAME,
  type CompactionResult,
  type Durability,
  type Store,
  type StoreOptions,
  type StoreStats,
} from './lowdb-store';
export { openJournalStore, listJournals, DEFAULT_COMPACT_MIN_BYTES, type JournalStoreOptions, type RecordValidator } from './journal-store';
export { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration, type StoreData, type StoredCollection } from './migrations';
