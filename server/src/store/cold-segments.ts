/**
 * Cold segments: where the journal store keeps the records of a tiered collection that went cold (an
 * ended execution), so that memory holds only their summary and a location. Files next to the
 * snapshot: `store.cold-<gen>.jsonl`, append-only, one record per line; a record is found by
 * (segment, offset, length), which the journal (`c` ops) and the snapshot (`cold`) keep.
 *
 * Order of a cold write (crash-safe): the records are appended to the current segment and
 * fdatasync'd; only then does the journal line that points at them get written. A crash in between
 * leaves bytes nothing points at (garbage), never a pointer to bytes that are not on disk. A segment
 * is appended to until it passes `maxBytes`, then the next one starts; a segment no live record
 * points at is deleted after a compaction made that durable (retention removes the oldest records,
 * so old segments empty out as a whole).
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { EngineError } from '../engine/errors';
import type { Identified } from '../engine/ports';
import { AppendOnlyFile, fsyncDirectory } from './durable-file';
import { errnoCode } from './store-shape';

/** Where a cold record is, and its summary (what lists need without reading it). */
export interface ColdEntry {
  seg: number;
  off: number;
  len: number;
  s: Identified;
}

/** The cold records of one collection, by id. */
export type ColdIndex = Map<string, ColdEntry>;

export const DEFAULT_SEGMENT_MAX_BYTES = 64 * 1024 * 1024;

const SEGMENT_RE = /^(.+)\.cold-(\d{6,})\.jsonl$/;

/** A `ColdEntry` as JSON (snapshot and journal): `[seg, off, len, summary]`. */
export type ColdEntryJson = [number, number, number, Identified];

export function coldEntryToJson(e: ColdEntry): ColdEntryJson {
  return [e.seg, e.off, e.len, e.s];
}

/** Parses `[seg, off, len, summary]`, or returns why it is not one. */
export function coldEntryFromJson(v: unknown): ColdEntry | string {
  if (!Array.isArray(v) || v.length !== 4) return 'a cold entry is not [segment, offset, length, summary]';
  const [seg, off, len, s] = v as unknown[];
  if (![seg, off, len].every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0) || (len as number) === 0) return 'a cold entry has an invalid location';
  if (typeof s !== 'object' || s === null || typeof (s as Identified).id !== 'string') return 'a cold entry has no summary';
  return { seg: seg as number, off: off as number, len: len as number, s: s as Identified };
}

export class ColdSegments {
  private gen: number;
  private readonly file = new AppendOnlyFile();
  /** Read descriptors per segment (positional reads never race the appends). */
  private readFds = new Map<number, number>();

  constructor(
    private readonly dir: string,
    private readonly base: string,
    private readonly maxBytes = DEFAULT_SEGMENT_MAX_BYTES,
  ) {
    const gens = this.gens();
    this.gen = gens.length ? gens[gens.length - 1]! : 1;
  }

  fileOf(gen: number): string {
    return path.join(this.dir, `${this.base}.cold-${String(gen).padStart(6, '0')}.jsonl`);
  }

  /** Existing segment generations, oldest first. */
  gens(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names.flatMap((n) => {
      const m = SEGMENT_RE.exec(n);
      return m && m[1] === this.base ? [Number(m[2])] : [];
    }).sort((a, b) => a - b);
  }

  /** Total bytes of the segment files (live records and garbage). */
  bytes(): number {
    let total = 0;
    for (const g of this.gens()) total += statSync(this.fileOf(g), { throwIfNoEntry: false })?.size ?? 0;
    return total;
  }

  /** Appends the records (already JSON-safe) and makes them durable; resolves with where each one is. */
  async append(records: Identified[]): Promise<Array<Omit<ColdEntry, 's'>>> {
    const gen = this.gen;
    // A new file's directory entry must be durable before a journal line points into it.
    await this.file.open(gen, this.fileOf(gen), (size) => (size === 0 ? fsyncDirectory(this.dir) : undefined));
    const out: Array<Omit<ColdEntry, 's'>> = [];
    const parts: Buffer[] = [];
    let off = 0;
    for (const r of records) {
      const b = Buffer.from(`${JSON.stringify(r)}\n`, 'utf8');
      out.push({ seg: gen, off, len: b.length - 1 });
      parts.push(b);
      off += b.length;
    }
    const start = await this.file.append(Buffer.concat(parts));
    for (const e of out) e.off += start;
    if (this.file.size >= this.maxBytes) {
      await this.file.close();
      this.gen++;
    }
    return out;
  }

  /** Reads one record back (synchronously: reads of the store are synchronous). */
  read(collection: string, id: string, e: ColdEntry): Identified {
    const file = this.fileOf(e.seg);
    try {
      let fd = this.readFds.get(e.seg);
      if (fd === undefined) {
        fd = openSync(file, 'r');
        this.readFds.set(e.seg, fd);
      }
      const buf = Buffer.allocUnsafe(e.len);
      let got = 0;
      while (got < e.len) {
        const n = readSync(fd, buf, got, e.len - got, e.off + got);
        if (n <= 0) break;
        got += n;
      }
      if (got !== e.len) throw new Error(`only ${got} of ${e.len} bytes at offset ${e.off}`);
      const rec = JSON.parse(buf.toString('utf8')) as Identified;
      if (rec?.id !== id) throw new Error(`the bytes at offset ${e.off} hold record "${String(rec?.id)}"`);
      return rec;
    } catch (err) {
      throw new EngineError('ERR_STORE', `Cannot read ${collection} record "${id}" from ${file}: ${(err as Error).message}`, {
        details: { file, collection, id },
      });
    }
  }

  /** Deletes the segments no live record points at (never the one being appended to). */
  async prune(live: ReadonlySet<number>): Promise<number[]> {
    const removed: number[] = [];
    for (const g of this.gens()) {
      if (live.has(g) || g >= this.gen) continue;
      const fd = this.readFds.get(g);
      if (fd !== undefined) {
        closeSync(fd);
        this.readFds.delete(g);
      }
      await unlink(this.fileOf(g)).catch((err: unknown) => {
        if (errnoCode(err) !== 'ENOENT') throw err;
      });
      removed.push(g);
    }
    if (removed.length) await fsyncDirectory(this.dir);
    return removed;
  }

  async close(): Promise<void> {
    await this.file.close();
    for (const fd of this.readFds.values()) closeSync(fd);
    this.readFds.clear();
  }
}
