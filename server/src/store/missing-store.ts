/**
 * A data directory whose store is gone while its audit trail or event logs remain has lost its
 * history (deleted, or restored incompletely): starting would silently create an empty store and
 * break the link between the audit trail and what it records. The server refuses, with one line.
 */
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { listJournalsSync } from './journal-store';

export const NEW_STORE_ENV = 'CADRE_NEW_STORE';

function hasFiles(dir: string, re: RegExp): boolean {
  try {
    return readdirSync(dir).some((n) => re.test(n));
  } catch {
    return false;
  }
}

/** Throws one line of instructions when `store.json` and its journals are missing but audit or event files exist. */
export function assertStorePresent(storeFile: string, dataDir: string, env: NodeJS.ProcessEnv): void {
  if (existsSync(storeFile) || listJournalsSync(storeFile).length > 0) return;
  const audit = hasFiles(path.join(dataDir, 'audit'), /^audit-.*\.jsonl$/);
  const events = hasFiles(path.join(dataDir, 'events'), /\.jsonl$/);
  if (!audit && !events) return;
  if (env[NEW_STORE_ENV] === '1') return;
  const what = [audit ? 'audit records' : '', events ? 'event logs' : ''].filter(Boolean).join(' and ');
  throw new Error(`the store ${storeFile} is missing while ${what} remain in ${dataDir}: restore store.json (and any store.journal-*.jsonl) ` +
    `from a backup, or start with an empty store explicitly with ${NEW_STORE_ENV}=1`);
}
