/**
 * JsonlAuditTrail: the AuditTrail port over append-only JSON Lines files, one per UTC day
 * (`<dir>/audit-YYYY-MM-DD.jsonl`), hash-chained across files (see `engine/audit/chain.ts`).
 *
 * - Appends are serialised in call order; the seq and hashes are assigned when the batch is written.
 *   All appends queued while the previous write is in flight, or made in the same tick, go to disk
 *   with one appendFile + one fsync per day file (group commit). `append` resolves when its record
 *   is durable.
 * - A record goes to the file of its timestamp's UTC day, but never to a file older than the newest
 *   one (if the clock steps back over midnight the record stays in the newest file), so reading the
 *   files in name order always reads the chain in order.
 * - Opening recovers the last seq and hash from the tail of the newest non-empty file. A final line
 *   without its newline is a write torn by a crash, never an acknowledged record: when it does not
 *   parse as a valid record it is truncated (warning `torn_tail_truncated`); when it is a complete,
 *   valid record only the newline is added (warning `missing_newline_repaired`). A last complete
 *   line that does not parse refuses the open with ERR_AUDIT_BROKEN: the chain cannot be continued.
 * - One process owns a directory at a time (the data-directory lock sees to that).
 *
 * Journaled mode (`journal`, the server's default): the records ride the store's journal instead of
 * being fsynced here. Records handed over (an append, or the commit of the unit holding it) are chained
 * and serialised when the store cuts its next journal record, go into it (with the anchor), and are
 * durable with the store's mutations of that group commit: one fsync for a step's audit records, ACMF
 * counters and checkpoint, shared with every concurrent step. Once durable they are appended to the day
 * file without an fsync of their own; the file is fsynced before a store compaction drops the journal
 * generations holding them, at a day change and at close. At open, records the journals hold beyond the
 * files' last one (a crash before they reached the file) are appended to the files (warning
 * `journal_records_restored`). `verifyAuditDir` takes the journals' records too.
 */
import { mkdir, open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { EngineError } from '../engine/errors';
import { isoTime } from '../engine/iso-time';
import { canonicalData, chainRecordJson, ChainVerifier, hashRecord, recordShapeProblem } from '../engine/audit/chain';
import { asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID, compareWithAnchor, withAnchor, type AuditAnchor, type AuditAnchorPort } from './audit-anchor';
import { systemClock, type AuditEntry, type AuditQueryFilter, type AuditRecord, type AuditTrail, type AuditVerification, type Clock, type WriteOptions } from '../engine/ports';
import type { AuditJournal, SideRecords, SideRecordSource } from '../store/store-shape';
import { IncrementalVerifier } from './verified-prefix';

const FILE_RE = /^audit-(\d{4}-\d{2}-\d{2})\.jsonl$/;
/** A day file compressed by retention (store/retention.ts): still part of the chain, read before the live files. */
const ARCHIVE_RE = /^audit-(\d{4}-\d{2}-\d{2})\.jsonl\.gz$/;

export function archivedAuditFileName(day: string): string {
  return `audit-${day}.jsonl.gz`;
}

/** Days whose file was archived (`audit-<day>.jsonl.gz`), oldest first. */
export async function listArchivedAuditDays(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.map((n) => ARCHIVE_RE.exec(n)?.[1]).filter((d): d is string => d !== undefined).sort();
}
const NL = 0x0a;
/** Journaled mode: how long durable records may wait for their day-file write, and how much of them (see scheduleFileWrite). */
const DAY_FILE_DELAY_MS = 200;
const DAY_FILE_EARLY_BYTES = 256 * 1024;

export function auditFileName(day: string): string {
  return `audit-${day}.jsonl`;
}

export interface AuditOpenWarning {
  code: 'torn_tail_truncated' | 'missing_newline_repaired' | 'journal_records_restored';
  /** File name inside the audit directory. */
  file: string;
  /** Bytes removed (torn tail) or added (newline). */
  bytes: number;
  message: string;
}

export interface OpenAuditTrailOptions {
  dir: string;
  clock?: Clock;
  /** Called for each repair made while opening (also kept in `trail.warnings`). */
  onWarning?: (warning: AuditOpenWarning) => void;
  /** fsync each group write and each new day file's directory entry (default true; tests may turn it off). */
  durable?: boolean;
  /**
   * The chain's head as the store remembers it: compared at open and in verify() (a missing tail or
   * missing files become `alerts`), and updated after each durable group of records.
   */
  anchor?: AuditAnchorPort;
  /** The store's journal as the records' carrier (journaled mode, see above); absent: the trail fsyncs its own files. */
  journal?: AuditJournal;
}

export type AuditQuery = AuditQueryFilter;

export interface JsonlAuditTrail extends AuditTrail {
  query(filter?: AuditQuery): Promise<AuditRecord[]>;
  /** Verifies the whole trail, or from `fromSeq` on (still checking the link to the record before it). */
  verify(opts?: { fromSeq?: number }): Promise<AuditVerification>;
  /** Verifies only the records appended since the last verification of this kind (verified-prefix.ts); `checked` counts them all. */
  verifyNew(): Promise<AuditVerification>;
  /** Repairs made while opening. */
  readonly warnings: readonly AuditOpenWarning[];
  /** Tamper evidence (missing tail, missing files, broken chain), kept across restarts through the anchor. */
  readonly alerts: readonly string[];
  /** Seq of the last durable record (0 when the trail is empty). */
  readonly lastSeq: number;
  /** Counters since open: appends accepted, group writes, fsyncs. */
  stats(): { appends: number; writes: number; fsyncs: number };
  /** Resolves when everything appended so far is durable (or failed). */
  flush(): Promise<void>;
  /** Flushes, then closes the file; later appends reject. Idempotent. */
  close(): Promise<void>;
}

interface Pending {
  entry: AuditEntry;
  /** The data in its JSON form, and its canonical JSON (hashed, and written as part of the line). */
  data: Record<string, unknown>;
  canon: string;
  ts: string;
  resolve: (r: AuditRecord) => void;
  reject: (e: unknown) => void;
}

/** Opens (creating the directory if needed) and recovers the chain's tail. */
export async function openAuditTrail(opts: OpenAuditTrailOptions): Promise<JsonlAuditTrail> {
  const trail = new Trail(opts);
  await trail.init();
  return trail;
}

class Trail implements JsonlAuditTrail, SideRecordSource {
  readonly warnings: AuditOpenWarning[] = [];
  readonly alerts: string[] = [];
  private readonly anchor: AuditAnchorPort | undefined;
  private readonly dir: string;
  private readonly clock: Clock;
  private readonly durable: boolean;
  private readonly onWarning: ((w: AuditOpenWarning) => void) | undefined;

  private last: { seq: number; hash: string } | null = null;
  /** Day of the newest file, and its durable size in bytes. */
  private newestDay: string | null = null;
  private newestSize = 0;
  private fh: FileHandle | null = null;
  private fhDay: string | null = null;

  private queue: Pending[] = [];
  private scheduled = false;
  private running = false;
  private idleWaiters: Array<() => void> = [];
  private poisoned: EngineError | null = null;
  private closed = false;
  private counters = { appends: 0, writes: 0, fsyncs: 0 };

  /** Journaled mode: the store's journal carries the records; the files follow. */
  private readonly journal: AuditJournal | undefined;
  /** Journaled mode: day of the last durable record (the floor of the next records' day). */
  private headDay: string | null = null;
  /** Journaled mode: durable records not yet appended to their day file, in chain order. */
  private unwritten: Array<{ day: string; text: string; last: { seq: number; hash: string } }> = [];
  /** Bytes (UTF-16 units) of `unwritten`, to write early when they pile up. */
  private unwrittenSize = 0;
  private fileTimer: NodeJS.Timeout | null = null;
  private fileWrites: Promise<void> = Promise.resolve();
  /** Journaled mode: the open file has appends not fsynced yet. */
  private unsynced = false;

  constructor(opts: OpenAuditTrailOptions) {
    this.dir = opts.dir;
    this.clock = opts.clock ?? systemClock;
    this.durable = opts.durable ?? true;
    this.onWarning = opts.onWarning;
    this.anchor = opts.anchor;
    this.journal = opts.journal;
  }

  get lastSeq(): number {
    return this.last?.seq ?? 0;
  }

  stats(): { appends: number; writes: number; fsyncs: number } {
    return { ...this.counters };
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const days = await this.listDays();
    if (days.length > 0) {
      this.newestDay = days[days.length - 1]!;
      for (let i = days.length - 1; i >= 0; i--) {
        const tail = await this.recoverTail(days[i]!);
        if (i === days.length - 1) this.newestSize = tail.size;
        if (tail.last) {
          this.last = tail.last;
          break;
        }
      }
    }
    if (this.journal) {
      await this.restoreFromJournal(this.journal.replayed());
      this.headDay = this.newestDay;
      this.journal.attach(this);
    }
    if (this.anchor) {
      const anchor = asAnchor(this.anchor.read());
      this.alerts.push(...(anchor?.alerts ?? []));
      const found = compareWithAnchor(anchor, this.last, days.map(auditFileName));
      if (found.length > 0) {
        for (const a of found) this.alert(a);
      } else if (!anchor && this.last && this.newestDay) {
        this.writeAnchor(); // a trail from before anchors: start anchoring it now
      }
    }
  }

  /** Records tamper evidence: kept in memory, logged as a warning and persisted in the anchor. */
  private alert(reason: string): void {
    if (this.alerts.includes(reason)) return;
    this.alerts.push(reason);
    this.writeAnchor();
  }

  /** Head of the chain + alerts -> the store (keeps the anchor's seq when the trail fell behind it). */
  private writeAnchor(): void {
    if (!this.anchor) return;
    try {
      this.anchor.write(this.nextAnchor(this.last, this.newestDay));
    } catch {
      // the store reports its own write failures; the next batch writes the anchor again
    }
  }

  private nextAnchor(head: { seq: number; hash: string } | null, day: string | null): AuditAnchor {
    const previous = this.anchor ? asAnchor(this.anchor.read()) : null;
    const keepOld = previous && (!head || head.seq < previous.seq);
    return keepOld
      ? { ...previous, alerts: [...this.alerts] }
      : { seq: head?.seq ?? 0, hash: head?.hash ?? '', count: head?.seq ?? 0, file: auditFileName(day ?? '0000-00-00'), at: new Date(this.clock.now()).toISOString(),
        ...(this.alerts.length > 0 ? { alerts: [...this.alerts] } : {}) };
  }

  // ---------------------------------------------------------------------------------------------
  // append

  append(entry: AuditEntry, opts?: WriteOptions): Promise<AuditRecord> {
    if (this.closed) return Promise.reject(new EngineError('ERR_INTERNAL', 'the audit trail is closed'));
    if (this.poisoned) return Promise.reject(this.poisoned);
    let data: { data: Record<string, unknown>; canon: string };
    try {
      data = validateEntry(entry);
    } catch (err) {
      return Promise.reject(err);
    }
    const ts = isoTime(this.clock.now());
    this.counters.appends++;
    return new Promise<AuditRecord>((resolve, reject) => {
      const p: Pending = { entry, data: data.data, canon: data.canon, ts, resolve, reject };
      // In a unit the record waits for the unit's commit; its seq is given when it is written.
      if (opts?.unit) opts.unit.onCommit(() => this.enqueue(p));
      else this.enqueue(p);
    });
  }

  private enqueue(p: Pending): void {
    if (this.poisoned) {
      p.reject(this.poisoned);
      return;
    }
    this.queue.push(p);
    if (this.journal) this.journal.requestWrite();
    else this.schedule();
  }

  // ---------------------------------------------------------------------------------------------
  // journaled mode (SideRecordSource: called by the store when it cuts a journal record)

  /** Chains and serialises the records waiting, with the anchor of the new head; the store writes them. */
  take(): SideRecords | null {
    if (this.queue.length === 0) return null;
    const batch = this.queue.splice(0);
    if (this.poisoned) {
      for (const p of batch) p.reject(this.poisoned);
      return null;
    }
    const items = this.chain(batch, this.last, this.headDay);
    const lines = items.map((it) => it.json);
    const lastItem = items[items.length - 1]!;
    const head = { seq: lastItem.rec.seq, hash: lastItem.rec.hash };
    const puts: SideRecords['puts'] = this.anchor ? [[AUDIT_ANCHOR_COLLECTION, { id: AUDIT_ANCHOR_ID, ...this.nextAnchor(head, lastItem.day) }]] : [];
    return {
      lines,
      puts,
      settle: (err) => {
        if (err) {
          const failure = new EngineError('ERR_STORE', `audit trail: the journal record holding ${items.length} audit record(s) was not written: ${(err as Error).message}`, { cause: err, retryable: true });
          for (const it of items) it.p.reject(failure);
          // The anchor put in memory pointed at records never written: back to the durable head.
          this.writeAnchor();
          return;
        }
        this.last = head;
        this.headDay = lastItem.day;
        this.counters.writes++;
        // Durable now: to the day files (consecutive runs of one day), in chain order, no fsync of their own.
        for (let i = 0; i < items.length;) {
          const day = items[i]!.day;
          let j = i;
          let text = '';
          while (j < items.length && items[j]!.day === day) text += `${items[j++]!.json}\n`;
          const last = items[j - 1]!.rec;
          this.unwritten.push({ day, text, last: { seq: last.seq, hash: last.hash } });
          this.unwrittenSize += text.length;
          i = j;
        }
        for (const it of items) it.p.resolve(it.rec);
        this.scheduleFileWrite();
      },
    };
  }

  /** Chains `batch` after `prev`: each record, its JSON (serialised once) and its day file. */
  private chain(batch: Pending[], prev: { seq: number; hash: string } | null, floorDay: string | null): Array<{ p: Pending; rec: AuditRecord; json: string; day: string }> {
    const out: Array<{ p: Pending; rec: AuditRecord; json: string; day: string }> = [];
    for (const p of batch) {
      // The data's canonical JSON was made once at append (validateEntry): hashed and written as it is.
      const { record: rec, json } = chainRecordJson(prev, {
        ts: p.ts,
        kind: p.entry.kind,
        ...(p.entry.executionId !== undefined ? { executionId: p.entry.executionId } : {}),
        ...(p.entry.agentId !== undefined ? { agentId: p.entry.agentId } : {}),
        ...(p.entry.tenantId !== undefined ? { tenantId: p.entry.tenantId } : {}),
        actor: p.entry.actor,
        data: p.data,
      }, p.canon);
      prev = rec;
      const recDay = p.ts.slice(0, 10);
      const day = floorDay !== null && recDay < floorDay ? floorDay : recDay;
      floorDay = day;
      out.push({ p, rec, json, day });
    }
    return out;
  }

  /**
   * The day files follow the journal (where the records are durable) a little later: a write every
   * DAY_FILE_DELAY_MS, or at once past DAY_FILE_EARLY_BYTES, so a step's end does not wait behind a
   * file write of its own (each one a thread-pool round trip), and one write carries many steps'
   * records. Readers (query, verify, flush, sync before a compaction, close) write what is waiting
   * first. A failed file write keeps its records in `unwritten` (the journal still holds them): the
   * next write, sync() before a compaction, or the next open's restore retries them.
   */
  private scheduleFileWrite(): void {
    if (this.unwrittenSize >= DAY_FILE_EARLY_BYTES) {
      if (this.fileTimer) clearTimeout(this.fileTimer);
      this.fileTimer = null;
      this.fileWrites = this.fileWrites.then(() => this.writeUnwritten()).catch(() => undefined);
      return;
    }
    if (this.fileTimer) return;
    this.fileTimer = setTimeout(() => {
      this.fileTimer = null;
      this.fileWrites = this.fileWrites.then(() => this.writeUnwritten()).catch(() => undefined);
    }, DAY_FILE_DELAY_MS);
    this.fileTimer.unref();
  }

  /** Appends the durable records still missing from the day files (journaled mode). */
  private async writeUnwritten(): Promise<void> {
    if (this.fileTimer) clearTimeout(this.fileTimer);
    this.fileTimer = null;
    // Consecutive groups of one day go out in one write.
    while (this.unwritten.length > 1 && this.unwritten[1]!.day === this.unwritten[0]!.day) {
      const [a, b] = this.unwritten.splice(0, 2) as [typeof this.unwritten[0], typeof this.unwritten[0]];
      this.unwritten.unshift({ day: a.day, text: a.text + b.text, last: b.last });
    }
    while (this.unwritten.length > 0) {
      const g = this.unwritten[0]!;
      const buf = Buffer.from(g.text, 'utf8');
      const fh = await this.handleFor(g.day);
      const before = g.day === this.newestDay ? this.newestSize : (await fh.stat()).size;
      try {
        // One write call per group (appendFile added a stat and options handling around it); no fsync here:
        // the journal holds these records durably. Never a synchronous write on the event loop: under disk
        // pressure one measured up to 144 ms (a write that extends a file can wait for the file system's journal).
        for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off, null)).bytesWritten;
      } catch (err) {
        await fh.truncate(before).catch(() => undefined);
        throw err;
      }
      this.unsynced = true;
      this.newestDay = g.day;
      this.newestSize = before + buf.length;
      this.unwritten.shift();
      this.unwrittenSize -= g.text.length;
    }
  }

  /** Every record handed to the journal is in its day file and fsynced (before a compaction prunes journals). */
  async sync(): Promise<void> {
    await this.fileWrites;
    await this.writeUnwritten();
    if (this.fh && this.unsynced && this.durable) {
      this.unsynced = false;
      await this.fh.sync();
      this.counters.fsyncs++;
    }
  }

  /** Records the journals hold beyond the files' last one (a crash came before they reached the files). */
  private async restoreFromJournal(records: unknown[]): Promise<void> {
    const next: AuditRecord[] = [];
    let prev = this.last;
    for (const value of records) {
      const problem = recordShapeProblem(value);
      const rec = value as AuditRecord;
      if (problem === null && rec.seq <= (prev?.seq ?? 0)) continue; // in the files already
      const why = problem ?? (hashRecord(rec) !== rec.hash ? `record ${rec.seq}: its hash does not recompute`
        : rec.seq !== (prev?.seq ?? 0) + 1 || rec.prevHash !== (prev?.hash ?? '0'.repeat(64)) ? `record ${rec.seq} does not follow the trail's last record ${prev?.seq ?? 0}` : null);
      if (why) {
        this.alert(`the store journal holds audit records that do not continue the trail (${why}); they were not restored`);
        break;
      }
      next.push(rec);
      prev = { seq: rec.seq, hash: rec.hash };
    }
    if (next.length === 0) return;
    let floorDay = this.newestDay;
    for (const rec of next) {
      const recDay = rec.ts.slice(0, 10);
      const day = floorDay !== null && recDay < floorDay ? floorDay : recDay;
      floorDay = day;
      const text = `${JSON.stringify(rec)}\n`;
      this.unwritten.push({ day, text, last: { seq: rec.seq, hash: rec.hash } });
      this.unwrittenSize += text.length;
    }
    await this.sync();
    this.last = prev;
    this.warn({ code: 'journal_records_restored', file: auditFileName(this.newestDay!), bytes: 0,
      message: `restored ${next.length} audit record(s) (seq ${next[0]!.seq}-${prev!.seq}) from the store journal into the day files (a crash came before they were written there)` });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          await this.writeBatch(batch);
        } catch (err) {
          // Not expected (writeBatch settles its own failures); never leave an append hanging.
          const failure = new EngineError('ERR_INTERNAL', `audit trail: ${(err as Error).message}`, { cause: err });
          for (const p of batch) p.reject(failure);
        }
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.schedule();
      else for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    if (this.poisoned) {
      for (const p of batch) p.reject(this.poisoned);
      return;
    }
    // Chain the records and group them by target file (consecutive runs of the same day).
    const groups: Array<{ day: string; items: Array<{ p: Pending; rec: AuditRecord; json: string }> }> = [];
    for (const it of this.chain(batch, this.last, this.newestDay)) {
      const g = groups[groups.length - 1];
      if (g && g.day === it.day) g.items.push(it);
      else groups.push({ day: it.day, items: [it] });
    }

    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!;
      const buf = Buffer.from(g.items.map((it) => `${it.json}\n`).join(''), 'utf8');
      let before = 0;
      let fh: FileHandle | null = null;
      try {
        fh = await this.handleFor(g.day);
        before = g.day === this.newestDay ? this.newestSize : (await fh.stat()).size;
        await fh.appendFile(buf);
        this.counters.writes++;
        if (this.durable) {
          await fh.sync();
          this.counters.fsyncs++;
        }
      } catch (err) {
        const failure = new EngineError('ERR_STORE', `audit trail: cannot write ${auditFileName(g.day)}: ${(err as Error).message}`, {
          cause: err,
          retryable: true,
        });
        // Undo a partial write so the file still ends on a record boundary; if that fails too,
        // refuse further appends until the trail is reopened (open repairs a torn tail).
        if (fh) {
          try {
            await fh.truncate(before);
            if (this.durable) await fh.sync();
          } catch (undoErr) {
            this.poisoned = new EngineError('ERR_AUDIT_BROKEN', `audit trail: a failed write to ${auditFileName(g.day)} could not be undone; reopen the trail to repair it`, { cause: undoErr });
          }
        }
        for (let gj = gi; gj < groups.length; gj++) for (const it of groups[gj]!.items) it.p.reject(failure);
        return;
      }
      this.newestDay = g.day;
      this.newestSize = before + buf.length;
      const lastRec = g.items[g.items.length - 1]!.rec;
      this.last = { seq: lastRec.seq, hash: lastRec.hash };
      for (const it of g.items) it.p.resolve(it.rec);
    }
    this.writeAnchor();
  }

  private async handleFor(day: string): Promise<FileHandle> {
    if (this.fh && this.fhDay === day) return this.fh;
    if (this.fh) {
      const old = this.fh;
      this.fh = null;
      this.fhDay = null;
      // Journaled mode: a day file left behind holds records the journal may drop at its next compaction.
      if (this.unsynced && this.durable) {
        this.unsynced = false;
        await old.sync();
        this.counters.fsyncs++;
      }
      await old.close();
    }
    const file = this.filePath(day);
    const existed = await stat(file).then(() => true, () => false);
    const fh = await open(file, 'a');
    if (!existed && this.durable) await this.syncDir();
    this.fh = fh;
    this.fhDay = day;
    if (this.newestDay !== day) {
      this.newestDay = day;
      this.newestSize = (await fh.stat()).size;
    }
    return fh;
  }

  private async syncDir(): Promise<void> {
    let dh: FileHandle | undefined;
    try {
      dh = await open(this.dir, 'r');
      await dh.sync();
      this.counters.fsyncs++;
    } catch {
      // Not supported everywhere (Windows); the file's own fsync still holds its data.
    } finally {
      await dh?.close().catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // reading

  async query(filter: AuditQuery = {}): Promise<AuditRecord[]> {
    await this.flush();
    const limit = filter.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw new EngineError('ERR_VALIDATION', 'limit must be a non-negative integer', { details: { field: 'limit' } });
    }
    if (limit === 0) return [];
    const instant = (field: 'since' | 'until'): number | null => {
      const v = filter[field];
      if (v === undefined) return null;
      const t = Date.parse(v);
      if (Number.isNaN(t)) throw new EngineError('ERR_VALIDATION', `${field} is not an ISO 8601 time: ${v}`, { details: { field } });
      return t;
    };
    const since = instant('since');
    const until = instant('until');
    const out: AuditRecord[] = [];
    for await (const { text } of this.lines()) {
      let rec: AuditRecord;
      try {
        rec = JSON.parse(text) as AuditRecord;
      } catch {
        continue; // verify reports it
      }
      if (recordShapeProblem(rec) !== null) continue;
      if (filter.executionId !== undefined && rec.executionId !== filter.executionId) continue;
      if (filter.agentId !== undefined && rec.agentId !== filter.agentId) continue;
      if (filter.kind !== undefined && rec.kind !== filter.kind) continue;
      if (since !== null || until !== null) {
        // Records are in chain order, which a clock stepping back may not keep: each is compared, none skipped.
        const t = Date.parse(rec.ts);
        if (since !== null && !(t >= since)) continue;
        if (until !== null && !(t <= until)) continue;
      }
      if (filter.match && !filter.match(rec)) continue;
      out.push(rec);
      if (limit !== undefined && out.length > limit) out.shift();
    }
    return out;
  }

  async verify(opts: { fromSeq?: number } = {}): Promise<AuditVerification> {
    // The anchor as of now, read before the flush: every record it counts is in the files once the flush
    // is done (in journaled mode the anchor moves when a journal record is cut, before its records reach
    // the day file, so an anchor read after the flush could count records of a later cut: a false truncation).
    const anchor = this.anchor ? asAnchor(this.anchor.read()) : null;
    await this.flush();
    const result = await verifyLines(this.lines(), opts, anchor);
    const known = (reason: string): boolean => reason.startsWith('alert:') ||
      (reason.startsWith('truncated:') && this.alerts.some((a) => a.startsWith('missing tail') || a.startsWith('missing files') || a.startsWith('truncated')));
    if (!result.ok && result.firstBroken && !known(result.firstBroken.reason)) {
      const b = result.firstBroken;
      this.alert(`${b.reason} (${b.file}${b.line ? `:${b.line}` : ''})`);
    }
    return result;
  }

  private incremental: IncrementalVerifier | null = null;

  verifyNew(): Promise<AuditVerification> {
    this.incremental ??= new IncrementalVerifier({
      dir: this.dir, fileName: auditFileName, liveDays: () => this.listDays(),
      anchor: () => (this.anchor ? asAnchor(this.anchor.read()) : null),
      flush: () => this.flush(),
      newest: () => (this.newestDay === null ? null : { day: this.newestDay, size: this.newestSize }),
      allLines: (upTo) => readAuditLines(this.dir, { newestDay: upTo.day, newestSize: upTo.size }),
      full: () => this.verify(),
    });
    return this.incremental.verify();
  }

  /**
   * Every line of every day file in order, as of now: the newest file is read only up to its
   * durable size, so a write in flight is never seen half-done.
   */
  private lines(): AsyncGenerator<AuditLine> {
    if (this.newestDay === null) return emptyLines();
    return readAuditLines(this.dir, { newestDay: this.newestDay, newestSize: this.newestSize });
  }

  async flush(): Promise<void> {
    if (this.journal) {
      if (this.queue.length > 0) this.journal.requestWrite();
      await this.journal.flush();
      await this.fileWrites;
      // A day-file write that failed is retried here (its records are durable in the journal meanwhile).
      if (this.unwritten.length > 0) await this.writeUnwritten();
      return;
    }
    if (!this.running && !this.scheduled && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    if (this.journal) await this.sync();
    if (this.fh) {
      const fh = this.fh;
      this.fh = null;
      this.fhDay = null;
      await fh.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // files and recovery

  private filePath(day: string): string {
    return path.join(this.dir, auditFileName(day));
  }

  private listDays(): Promise<string[]> {
    return listAuditDays(this.dir);
  }

  /** Repairs a torn tail of one day file and returns its last record's seq and hash (null when empty). */
  private async recoverTail(day: string): Promise<{ last: { seq: number; hash: string } | null; size: number }> {
    const name = auditFileName(day);
    const fh = await open(this.filePath(day), 'r+');
    try {
      let size = (await fh.stat()).size;
      if (size === 0) return { last: null, size };
      const lastByte = Buffer.alloc(1);
      await fh.read(lastByte, 0, 1, size - 1);
      if (lastByte[0] !== NL) {
        const start = await lineStart(fh, size);
        const text = await readRange(fh, start, size);
        const rec = validRecord(text);
        if (rec) {
          await fh.write(Buffer.from('\n'), 0, 1, size);
          await fh.sync();
          size += 1;
          this.warn({ code: 'missing_newline_repaired', file: name, bytes: 1, message: `${name}: the last record (seq ${rec.seq}) lacked its newline; added it` });
          return { last: { seq: rec.seq, hash: rec.hash }, size };
        }
        await fh.truncate(start);
        await fh.sync();
        this.warn({
          code: 'torn_tail_truncated',
          file: name,
          bytes: size - start,
          message: `${name}: removed a torn final line of ${size - start} bytes (a write interrupted by a crash; never acknowledged)`,
        });
        size = start;
        if (size === 0) return { last: null, size };
      }
      const start = await lineStart(fh, size - 1);
      const text = await readRange(fh, start, size - 1);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      const problem = value === undefined ? 'not valid JSON' : recordShapeProblem(value);
      if (problem) {
        throw new EngineError('ERR_AUDIT_BROKEN', `audit trail: the last line of ${name} is not a readable record (${problem}); the chain cannot be continued`, {
          details: { file: name },
        });
      }
      const rec = value as AuditRecord;
      return { last: { seq: rec.seq, hash: rec.hash }, size };
    } finally {
      await fh.close();
    }
  }

  private warn(w: AuditOpenWarning): void {
    this.warnings.push(w);
    this.onWarning?.(w);
  }
}

export interface AuditLine {
  /** File name inside the audit directory. */
  file: string;
  /** 1-based line number in that file. */
  line: number;
  text: string;
}

/** Days (`YYYY-MM-DD`) that have a file in `dir`, oldest first; [] when `dir` does not exist. */
export async function listAuditDays(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.map((n) => FILE_RE.exec(n)?.[1]).filter((d): d is string => d !== undefined).sort();
}

async function* emptyLines(): AsyncGenerator<AuditLine> {
  // nothing
}

/**
 * Every line of every day file of `dir`, in trail order. With `upTo`, files after `upTo.newestDay`
 * are ignored and that day's file is read only up to `newestSize` bytes. A final fragment without
 * its newline is yielded too (verification must see it).
 */
export async function* readAuditLines(dir: string, upTo?: { newestDay: string; newestSize: number }): AsyncGenerator<AuditLine> {
  // Live days listed before archived ones: retention writes a day's .gz before it unlinks the .jsonl,
  // so a day archived meanwhile is found in one form or the other (never skipped, which would read
  // as a broken chain). Retention archives only days older than every live file, so order holds.
  const live = await listAuditDays(dir);
  const archived = new Set(await listArchivedAuditDays(dir));
  const days = [...new Set([...archived, ...live])].sort();
  for (const day of days) {
    if (upTo && day > upTo.newestDay) break;
    let name = auditFileName(day);
    let buf: Buffer | null = null;
    if (!archived.has(day)) {
      try {
        buf = await readFile(path.join(dir, name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    if (buf === null) {
      name = archivedAuditFileName(day);
      buf = gunzipSync(await readFile(path.join(dir, name)));
    } else if (upTo && day === upTo.newestDay && buf.length > upTo.newestSize) {
      buf = buf.subarray(0, upTo.newestSize);
    }
    const parts = buf.toString('utf8').split('\n');
    if (parts[parts.length - 1] === '') parts.pop();
    for (let i = 0; i < parts.length; i++) yield { file: name, line: i + 1, text: parts[i]! };
  }
}

/**
 * Verifies the trail in `dir` without opening it for writing (nothing is repaired or changed): for
 * the CLI and for a trail owned by another process. A torn final line shows up as `unparsable`.
 */
export async function verifyAuditDir(dir: string, opts: { fromSeq?: number; anchor?: AuditAnchor | null; journal?: readonly unknown[] } = {}): Promise<AuditVerification> {
  return verifyLines(readAuditLines(dir), opts, opts.anchor ?? null, opts.journal);
}

/**
 * Chain verification of `lines`, then of the store journal's records beyond them (journaled mode: the
 * records a crash kept from the files, which the next open restores), then the anchor's checks
 * (missing tail, hash at the anchor, alerts).
 */
async function verifyLines(lines: AsyncIterable<AuditLine>, opts: { fromSeq?: number }, anchor: AuditAnchor | null, journal?: readonly unknown[]): Promise<AuditVerification> {
  const v = new ChainVerifier(opts);
  let hashAt: string | null = null;
  let ok = true;
  for await (const line of lines) {
    if (!(ok = v.push(line))) break;
    if (anchor && v.last?.seq === anchor.seq) hashAt = v.last.hash;
  }
  if (ok && journal) {
    for (let i = 0; i < journal.length; i++) {
      const seq = (journal[i] as { seq?: unknown } | null)?.seq;
      if (typeof seq === 'number' && seq <= (v.last?.seq ?? 0)) continue;
      if (!v.push({ file: 'store journal (audit records not yet in the day files)', line: i + 1, record: journal[i] })) break;
      if (anchor && v.last?.seq === anchor.seq) hashAt = v.last.hash;
    }
  }
  return withAnchor(v.result(), anchor, v.last?.seq ?? 0, hashAt);
}

/** A parsed, well-formed record whose hash recomputes, or null. */
function validRecord(text: string): AuditRecord | null {
  try {
    const v: unknown = JSON.parse(text);
    if (recordShapeProblem(v) !== null) return null;
    const rec = v as AuditRecord;
    return hashRecord(rec) === rec.hash ? rec : null;
  } catch {
    return null;
  }
}

/** Offset of the first byte of the line that ends at `end` (exclusive), reading backwards in chunks. */
async function lineStart(fh: FileHandle, end: number): Promise<number> {
  const CHUNK = 64 * 1024;
  const buf = Buffer.alloc(CHUNK);
  let pos = end;
  while (pos > 0) {
    const len = Math.min(CHUNK, pos);
    const from = pos - len;
    const { bytesRead } = await fh.read(buf, 0, len, from);
    const idx = buf.subarray(0, bytesRead).lastIndexOf(NL);
    if (idx >= 0) return from + idx + 1;
    pos = from;
  }
  return 0;
}

async function readRange(fh: FileHandle, start: number, end: number): Promise<string> {
  const buf = Buffer.alloc(end - start);
  let off = 0;
  while (off < buf.length) {
    const { bytesRead } = await fh.read(buf, off, buf.length - off, start + off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off).toString('utf8');
}

function validateEntry(entry: AuditEntry): { data: Record<string, unknown>; canon: string } {
  const bad = (field: string, msg: string): never => {
    throw new EngineError('ERR_VALIDATION', `audit entry: ${field} ${msg}`, { details: { field } });
  };
  if (!entry || typeof entry !== 'object') bad('entry', 'must be an object');
  if (typeof entry.kind !== 'string' || entry.kind === '') bad('kind', 'must be a non-empty string');
  if (typeof entry.actor !== 'string' || entry.actor === '') bad('actor', 'must be a non-empty string');
  if (entry.executionId !== undefined && typeof entry.executionId !== 'string') bad('executionId', 'must be a string');
  if (entry.agentId !== undefined && typeof entry.agentId !== 'string') bad('agentId', 'must be a string');
  if (entry.tenantId !== undefined && typeof entry.tenantId !== 'string') bad('tenantId', 'must be a string');
  if (entry.data === null || typeof entry.data !== 'object' || Array.isArray(entry.data)) bad('data', 'must be an object');
  // Store (and hash) the JSON form, so the returned record equals what is read back later. One walk
  // gives both the canonical JSON (hashed and written) and, parsed, the JSON form.
  try {
    return canonicalData(entry.data);
  } catch (err) {
    return bad('data', `is not JSON-serialisable (${(err as Error).message})`);
  }
}
