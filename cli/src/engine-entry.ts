/**
 * What the CLI needs of the server's code only when it runs the engine or reads its files: a bundle
 * of its own (dist/cli-engine.js, esbuild.mjs), loaded on first use by `engine()` (engine.ts). The
 * engine's composition (HTTP door, agent workers, integrations and their SDKs) is most of the code;
 * a command that only talks HTTP does not parse it at start.
 */
export { startRuntime } from '../../server/src/host/runtime';
export { runStandalone } from '../../server/src/host/standalone';
export { verifyAuditDir } from '../../server/src/audit/jsonl-audit-trail';
export { asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID } from '../../server/src/audit/audit-anchor';
export { readStoreReadOnly } from '../../server/src/store/journal-store';
export { openStore, storeFilePath } from '../../server/src/store/lowdb-store';
export { readArchivedExecution } from '../../server/src/store/retention';
