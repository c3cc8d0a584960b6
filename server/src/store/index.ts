/** The embedded store (lowdb): repositories of named collections behind the engine's `Repository<T>` port. */
export { AtomicJsonFileAdapter } from './atomic-file-adapter';
export {
  openStore,
  storeFilePath,
  STORE_FILE_NAME,
  type Durability,
  type Store,
  type StoreOptions,
  type StoreStats,
} from './lowdb-store';
export { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration, type StoreData, type StoredCollection } from './migrations';
