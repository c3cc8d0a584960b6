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
 */
import { mkdir, open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { EngineError } from '../engine/errors';
import { chainRecord, ChainVerifier, hashRecord, recordShapeProblem } from '../engine/audit/chain';
import { asAnchor, compareWithAnchor, withAnchor, type AuditAnchor, type AuditAnchorPort } from './audit-anchor';
import { systemClock, type AuditEntry, type AuditQueryFilter, type AuditRecord, type AuditTrail, type AuditVerification, type Clock } from '../engine/ports';

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

export function auditFileName(day: string): string {
  return `audit-${day}.jsonl`;
}

export interface AuditOpenWarning {
  code: 'torn_tail_truncated' | 'missing_newline_repaired';
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
}

export type AuditQuery = AuditQueryFilter;

export interface JsonlAuditTrail extends AuditTrail {
  query(filter?: AuditQuery): Promise<AuditRecord[]>;
  /** Verifies the whole trail, or from `fromSeq` on (still checking the link to the record before it). */
  verify(opts?: { fromSeq?: number }): Promise<AuditVerification>;
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
  data: Record<string, unknown>;
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

class Trail implements JsonlAuditTrail {
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

  constructor(opts: OpenAuditTrailOptions) {
    this.dir = opts.dir;
    this.clock = opts.clock ?? systemClock;
    this.durable = opts.durable ?? true;
    this.onWarning = opts.onWarning;
    this.anchor = opts.anchor;
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
    const previous = asAnchor(this.anchor.read());
    const head = this.last;
    const keepOld = previous && (!head || head.seq < previous.seq);
    const next: AuditAnchor = keepOld
      ? { ...previous, alerts: [...this.alerts] }
      : { seq: head?.seq ?? 0, hash: head?.hash ?? '', count: head?.seq ?? 0, file: auditFileName(this.newestDay ?? '0000-00-00'), at: new Date(this.clock.now()).toISOString(),
        ...(this.alerts.length > 0 ? { alerts: [...this.alerts] } : {}) };
    try {
      this.anchor.write(next);
    } catch {
      // the store reports its own write failures; the next batch writes the anchor again
    }
  }

  // ---------------------------------------------------------------------------------------------
  // append

  append(entry: AuditEntry): Promise<AuditRecord> {
    if (this.closed) return Promise.reject(new EngineError('ERR_INTERNAL', 'the audit trail is closed'));
    if (this.poisoned) return Promise.reject(this.poisoned);
    let data: Record<string, unknown>;
    try {
      data = validateEntry(entry);
    } catch (err) {
      return Promise.reject(err);
    }
    const ts = new Date(this.clock.now()).toISOString();
    this.counters.appends++;
    return new Promise<AuditRecord>((resolve, reject) => {
      this.queue.push({ entry, data, ts, resolve, reject });
      this.schedule();
    });
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
    const groups: Array<{ day: string; items: Array<{ p: Pending; rec: AuditRecord }> }> = [];
    let prev = this.last;
    let floorDay = this.newestDay;
    for (const p of batch) {
      const rec = chainRecord(prev, {
        ts: p.ts,
        kind: p.entry.kind,
        ...(p.entry.executionId !== undefined ? { executionId: p.entry.executionId } : {}),
        ...(p.entry.agentId !== undefined ? { agentId: p.entry.agentId } : {}),
        ...(p.entry.tenantId !== undefined ? { tenantId: p.entry.tenantId } : {}),
        actor: p.entry.actor,
        data: p.data,
      });
      prev = rec;
      const recDay = p.ts.slice(0, 10);
      const day = floorDay !== null && recDay < floorDay ? floorDay : recDay;
      floorDay = day;
      const g = groups[groups.length - 1];
      if (g && g.day === day) g.items.push({ p, rec });
      else groups.push({ day, items: [{ p, rec }] });
    }

    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!;
      const buf = Buffer.from(g.items.map((it) => `${JSON.stringify(it.rec)}\n`).join(''), 'utf8');
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
    await this.flush();
    const anchor = this.anchor ? asAnchor(this.anchor.read()) : null;
    const result = await verifyLines(this.lines(), opts, anchor);
    const known = (reason: string): boolean => reason.startsWith('alert:') ||
      (reason.startsWith('truncated:') && this.alerts.some((a) => a.startsWith('missing tail') || a.startsWith('missing files') || a.startsWith('truncated')));
    if (!result.ok && result.firstBroken && !known(result.firstBroken.reason)) {
      const b = result.firstBroken;
      this.alert(`${b.reason} (${b.file}${b.line ? `:${b.line}` : ''})`);
    }
    return result;
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
    if (!this.running && !this.scheduled && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
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
export async function verifyAuditDir(dir: string, opts: { fromSeq?: number; anchor?: AuditAnchor | null } = {}): Promise<AuditVerification> {
  return verifyLines(readAuditLines(dir), opts, opts.anchor ?? null);
}

/** Chain verification of `lines`, then the anchor's checks (missing tail, hash at the anchor, alerts). */
async function verifyLines(lines: AsyncIterable<AuditLine>, opts: { fromSeq?: number }, anchor: AuditAnchor | null): Promise<AuditVerification> {
  const v = new ChainVerifier(opts);
  let hashAt: string | null = null;
  for await (const line of lines) {
    if (!v.push(line)) break;
    if (anchor && v.last?.seq === anchor.seq) hashAt = v.last.hash;
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

function validateEntry(entry: AuditEntry): Record<string, unknown> {
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
  // Store (and hash) the JSON form, so the returned record equals what is read back later.
  let json: string;
  try {
    json = JSON.stringify(entry.data);
  } catch (err) {
    return bad('data', `is not JSON-serialisable (${(err as Error).message})`);
  }
  return JSON.parse(json) as Record<string, unknown>;
}
