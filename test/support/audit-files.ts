/**
 * The audit day files of a data directory, read as a user would read them (`audit/audit-<day>.jsonl`)
 * while the server runs. The files follow the store's journal, where the records are durable, by up
 * to 200 ms (jsonl-audit-trail.ts, DAY_FILE_DELAY_MS): a test that looks for a record it just caused
 * waits for it with `auditRecordsUntil`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface AuditFileRecord {
  seq: number;
  kind: string;
  actor: string;
  executionId?: string;
  agentId?: string;
  tenantId?: string;
  data: Record<string, unknown>;
  [key: string]: unknown;
}

/** Every record of the live day files, in file order (compressed archives are not read). */
export function readAuditFiles(dataDir: string): AuditFileRecord[] {
  const dir = path.join(dataDir, 'audit');
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditFileRecord));
}

/** The day files' records once `ready(records)` holds; throws naming `what` after `timeoutMs`. */
export async function auditRecordsUntil(dataDir: string, what: string, ready: (records: AuditFileRecord[]) => boolean, timeoutMs = 5_000): Promise<AuditFileRecord[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const records = readAuditFiles(dataDir);
    if (ready(records)) return records;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} in the audit day files of ${dataDir}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
