/**
 * What the host reports about its store and audit trail, and the store side of the audit anchor:
 * small adapters so the composition root only wires them.
 */
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID, type AuditAnchor, type AuditAnchorPort } from '../audit/audit-anchor';
import type { Store } from './store-shape';

/** The audit anchor as a record of the store (collection `meta`, id `audit-head`). */
export function storeAnchorPort(store: Store): AuditAnchorPort {
  const meta = store.collection<AuditAnchor & { id: string }>(AUDIT_ANCHOR_COLLECTION);
  return {
    read: () => asAnchor(meta.get(AUDIT_ANCHOR_ID)),
    write: (anchor) => void meta.put({ id: AUDIT_ANCHOR_ID, ...anchor }),
  };
}

export interface StoreReport {
  file: string;
  schemaVersion: number;
  durability: string;
  snapshotBytes: number;
  journalBytes: number;
  lastCompactionAt: string | null;
  lastCompactionMs: number;
  compactions: number;
  writes: number;
  failedWrites: number;
  quarantined: number;
  /** Ended executions kept on disk only (the cold segments), and the bytes of those files. */
  coldRecords: number;
  coldBytes: number;
  collections: Array<{ name: string; count: number; oldest: string | null }>;
  /** Bytes of the data directory's event logs and audit files (not held in memory). */
  eventLogBytes: number;
  auditBytes: number;
  archives: number;
  /** The server process's memory when the report was made. */
  memory: { rssBytes: number; heapUsedBytes: number };
}

function dirBytes(dir: string, re: RegExp): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  try {
    for (const n of readdirSync(dir)) {
      if (!re.test(n)) continue;
      try {
        bytes += statSync(path.join(dir, n)).size;
        files++;
      } catch {
        // removed meanwhile
      }
    }
  } catch {
    // no such directory yet
  }
  return { bytes, files };
}

/** Oldest `createdAt` (or `at`) of a collection's records, ISO; null when none has one. */
function oldestOf(records: Array<Record<string, unknown>>): string | null {
  let oldest: string | null = null;
  for (const r of records) {
    const t = typeof r['createdAt'] === 'string' ? r['createdAt'] : typeof r['at'] === 'string' ? r['at'] : null;
    if (t && (oldest === null || t < oldest)) oldest = t;
  }
  return oldest;
}

/** Sizes, counts per collection, oldest record, journal size, last compaction, archives. */
export function storeReport(store: Store, dataDir: string): StoreReport {
  const st = store.stats();
  const collections = store.collectionNames().sort().map((name) => {
    const repo = store.collection<{ id: string } & Record<string, unknown>>(name);
    // Summaries: a tiered collection's cold records are not read from disk for a report.
    return { name, count: repo.count(), oldest: oldestOf(repo.summaries?.((r) => r) ?? repo.list()) };
  });
  return {
    file: store.file,
    schemaVersion: store.schemaVersion,
    durability: store.durability,
    snapshotBytes: st.snapshotBytes ?? 0,
    journalBytes: st.journalBytes ?? 0,
    lastCompactionAt: st.lastCompactionAt ?? null,
    lastCompactionMs: Math.round(st.lastCompactionMs ?? 0),
    compactions: st.compactions ?? 0,
    writes: st.writes,
    failedWrites: st.failedWrites,
    quarantined: st.quarantined ?? 0,
    coldRecords: st.coldRecords ?? 0,
    coldBytes: st.coldBytes ?? 0,
    collections,
    eventLogBytes: dirBytes(path.join(dataDir, 'events'), /\.jsonl$/).bytes,
    auditBytes: dirBytes(path.join(dataDir, 'audit'), /^audit-.*\.jsonl$/).bytes,
    archives: dirBytes(path.join(dataDir, 'archive'), /\.gz$/).files,
    memory: { rssBytes: process.memoryUsage.rss(), heapUsedBytes: process.memoryUsage().heapUsed },
  };
}

/** The store's line in /v1/health: size and last compaction. */
export function storeHealth(store: Store): { status: 'ok' | 'degraded'; detail: string } {
  if (store.closed) return { status: 'degraded', detail: 'closed' };
  const st = store.stats();
  const mb = (((st.snapshotBytes ?? 0) + (st.journalBytes ?? 0)) / 1e6).toFixed(1);
  return { status: 'ok', detail: `${mb} MB (journal ${((st.journalBytes ?? 0) / 1e6).toFixed(1)} MB), last compaction ${st.lastCompactionAt ?? 'never'}` };
}

/** The audit trail's line in /v1/health: degraded, with the reason, while tamper evidence stands. */
export function auditHealth(audit: { lastSeq: number; alerts: readonly string[] }): { status: 'ok' | 'degraded'; detail: string } {
  if (audit.alerts.length > 0) return { status: 'degraded', detail: `${audit.alerts[0]}${audit.alerts.length > 1 ? ` (+${audit.alerts.length - 1} more)` : ''}` };
  return { status: 'ok', detail: `${audit.lastSeq} records` };
}
