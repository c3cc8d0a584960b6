/**
 * The audit chain's head as the store remembers it: last seq, last hash, record count and the file
 * holding the last record. A hash chain alone proves nothing about records dropped from its END or
 * whole files deleted (what remains still links up), so the store keeps this anchor, written right
 * after each durable group of audit records (in journaled mode: in the same journal record as the
 * group, see jsonl-audit-trail.ts), and the trail compares itself with it at open and in
 * every verification. Problems found are kept in the anchor (`alerts`) so a restart does not forget
 * them while the trail grows again over the gap.
 */
import type { AuditVerification } from '../engine/ports';

export interface AuditAnchor {
  seq: number;
  hash: string;
  count: number;
  /** File name (inside the audit directory) of the record `seq`. */
  file: string;
  /** ISO time of the last update. */
  at: string;
  /** Tamper evidence found so far; sticky until an operator clears it (see docs/configuration.md). */
  alerts?: string[];
}

/** Where the anchor lives: a record of the store (collection `meta`, id `audit-head`). */
export interface AuditAnchorPort {
  read(): AuditAnchor | null;
  /** Persists the new anchor (joins the store's next group commit). */
  write(anchor: AuditAnchor): void;
}

export const AUDIT_ANCHOR_COLLECTION = 'meta';
export const AUDIT_ANCHOR_ID = 'audit-head';

/** Validates an anchor read from the store (a hand-edited one must not crash the check). */
export function asAnchor(value: unknown): AuditAnchor | null {
  if (typeof value !== 'object' || value === null) return null;
  const a = value as Partial<AuditAnchor>;
  if (!Number.isSafeInteger(a.seq) || typeof a.hash !== 'string' || typeof a.file !== 'string') return null;
  return { seq: a.seq!, hash: a.hash, count: Number.isSafeInteger(a.count) ? a.count! : a.seq!, file: a.file, at: String(a.at ?? ''),
    ...(Array.isArray(a.alerts) ? { alerts: a.alerts.map(String) } : {}) };
}

/**
 * What the trail's recovered head says against the anchor: [] when consistent. `head` is the last
 * record found in the files (null when there is none); `files` the day files present.
 */
export function compareWithAnchor(anchor: AuditAnchor | null, head: { seq: number; hash: string } | null, files: string[]): string[] {
  if (!anchor || anchor.seq === 0) return [];
  if (head === null) {
    return [`missing files: the store's anchor records ${anchor.seq} audit records up to ${anchor.file}, but the audit directory holds no record` +
      (files.length === 0 ? ' (no audit file at all)' : '')];
  }
  if (head.seq < anchor.seq) {
    const fileGone = !files.includes(anchor.file);
    return [`missing tail: the store's anchor records ${anchor.seq} audit records (last in ${anchor.file}), the trail ends at seq ${head.seq}` +
      ` (${anchor.seq - head.seq} record(s) dropped from its end${fileGone ? `; ${anchor.file} is missing` : ''})`];
  }
  if (head.seq === anchor.seq && head.hash !== anchor.hash) {
    return [`tampered: the last record (seq ${head.seq}) does not have the hash the store's anchor recorded`];
  }
  return [];
}

/**
 * Folds the anchor into a chain verification: a chain that is intact but shorter than the anchor,
 * or whose record at the anchor's seq has another hash, is reported broken; so are sticky alerts.
 * `hashAt` is the hash of the verified record at `anchor.seq` (null when the chain did not reach it).
 */
export function withAnchor(v: AuditVerification, anchor: AuditAnchor | null, lastSeq: number, hashAt: string | null): AuditVerification {
  if (!v.ok || !anchor) return v;
  if (lastSeq < anchor.seq) {
    return { ok: false, checked: v.checked, firstBroken: { file: anchor.file, line: 0, seq: lastSeq + 1,
      reason: `truncated: the store's anchor records ${anchor.seq} records (last in ${anchor.file}); the trail ends at seq ${lastSeq}` } };
  }
  if (anchor.seq > 0 && hashAt !== null && hashAt !== anchor.hash) {
    return { ok: false, checked: v.checked, firstBroken: { file: anchor.file, line: 0, seq: anchor.seq,
      reason: `tampered: the record seq ${anchor.seq} does not have the hash the store's anchor recorded` } };
  }
  if (anchor.alerts && anchor.alerts.length > 0) {
    return { ok: false, checked: v.checked, firstBroken: { file: anchor.file, line: 0, seq: null, reason: `alert: ${anchor.alerts[0]}` } };
  }
  return v;
}
