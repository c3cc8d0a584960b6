/**
 * Incremental verification of the audit chain: the trail remembers its verified prefix (the last
 * record a verification found intact, where its line starts, how many records it covers) and a later
 * verification hashes only the records appended since, starting at that line. A view refreshed often
 * (the dashboard, the RIGOR health probe) stays cheap however long the history is.
 *
 * What it does not see: a record INSIDE the verified prefix changed afterwards. A full verification
 * (`verify()`: at start-up, govern-ai's audit report, `cadre audit verify`) re-hashes everything and
 * finds it. The last prefix record itself is read again (its seq and hash must be unchanged), so a
 * truncation or rewrite of the file at the prefix's end is found here too, through a full pass.
 */
import { open, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { ChainVerifier } from '../engine/audit/chain';
import type { AuditVerification } from '../engine/ports';
import { withAnchor, type AuditAnchor } from './audit-anchor';

/** The verified prefix: its last record, where that record's line starts, and the records it covers. */
export interface VerifiedPrefix {
  seq: number;
  hash: string;
  day: string;
  file: string;
  offset: number;
  checked: number;
}

export interface IncrementalVerifierSource {
  dir: string;
  /** `audit-<day>.jsonl` */
  fileName(day: string): string;
  /** Live (not archived) days, oldest first. */
  liveDays(): Promise<string[]>;
  /** The store's anchor as of now (read before the flush), or null. */
  anchor(): AuditAnchor | null;
  flush(): Promise<void>;
  /** The newest day file and its durable size: the verification reads no further. */
  newest(): { day: string; size: number } | null;
  /** Every line of the trail (archived days too) up to `upTo`, in order. */
  allLines(upTo: { day: string; size: number }): AsyncIterable<{ file: string; line: number; text: string }>;
  /** A full verification (raises the trail's alerts when it finds a break). */
  full(): Promise<AuditVerification>;
}

interface PositionedLine {
  file: string;
  line: number;
  text: string;
  day: string;
  offset: number;
}

export class IncrementalVerifier {
  private prefix: VerifiedPrefix | null = null;

  constructor(private readonly src: IncrementalVerifierSource) {}

  /** The verified prefix as of the last verification (null: none yet, or the last one found a break). */
  get verified(): VerifiedPrefix | null {
    return this.prefix;
  }

  /** Verifies the records appended since the verified prefix (the whole trail the first time). */
  async verify(): Promise<AuditVerification> {
    const anchor = this.src.anchor();
    await this.src.flush();
    const upTo = this.src.newest();
    if (!upTo) return withAnchor({ ok: true, checked: 0 }, anchor, 0, null);
    const p = this.prefix;
    if (!p || p.day > upTo.day || (p.day === upTo.day && p.offset >= upTo.size)) return this.fullPass(anchor, upTo);
    const v = new ChainVerifier({ fromSeq: p.seq + 1 });
    let hashAt: string | null = anchor?.seq === p.seq ? p.hash : null;
    let last: PositionedLine | null = null;
    let first = true;
    for await (const line of this.linesFrom(p, upTo)) {
      if (first) {
        first = false;
        // The prefix's last record must still be there, unchanged; otherwise a full pass says what happened.
        if (!startsWith(line.text, p.seq, p.hash)) return this.fullPass(anchor, upTo);
      }
      if (!v.push(line)) return this.fullPass(anchor, upTo);
      if (anchor && v.last?.seq === anchor.seq) hashAt = v.last.hash;
      last = line;
    }
    if (first) return this.fullPass(anchor, upTo);
    const r = v.result();
    const result = withAnchor({ ok: r.ok, checked: p.checked + r.checked }, anchor, v.last?.seq ?? p.seq, hashAt);
    if (!result.ok) return this.fullPass(anchor, upTo);
    if (last && v.last) this.prefix = { seq: v.last.seq, hash: v.last.hash, day: last.day, file: last.file, offset: last.offset, checked: result.checked };
    return result;
  }

  /**
   * Every record up to `upTo` (the same snapshot as the incremental pass), keeping where the last line
   * starts as the new prefix. A break is reported by the trail's own full verification, which also
   * raises its alert.
   */
  private async fullPass(anchor: AuditAnchor | null, upTo: { day: string; size: number }): Promise<AuditVerification> {
    this.prefix = null;
    const v = new ChainVerifier();
    let hashAt: string | null = null;
    let last: { file: string; text: string } | null = null;
    for await (const line of this.src.allLines(upTo)) {
      if (!v.push(line)) return this.src.full();
      if (anchor && v.last?.seq === anchor.seq) hashAt = v.last.hash;
      last = line;
    }
    const result = withAnchor(v.result(), anchor, v.last?.seq ?? 0, hashAt);
    if (!result.ok) return this.src.full();
    // The newest file is read up to its durable size, which ends with the last line's newline.
    if (last && v.last && last.file === this.src.fileName(upTo.day)) {
      this.prefix = { seq: v.last.seq, hash: v.last.hash, day: upTo.day, file: last.file, offset: upTo.size - Buffer.byteLength(last.text, 'utf8') - 1, checked: result.checked };
    }
    return result;
  }

  /** Lines from the prefix's line on: the rest of its day file, then the later live days, up to `upTo`. */
  private async *linesFrom(p: VerifiedPrefix, upTo: { day: string; size: number }): AsyncGenerator<PositionedLine> {
    const days = (await this.src.liveDays()).filter((d) => d >= p.day && d <= upTo.day);
    if (days[0] !== p.day) return; // the prefix's file is gone (archived or removed): the caller does a full pass
    for (const day of days) {
      const file = this.src.fileName(day);
      const from = day === p.day ? p.offset : 0;
      const buf = await readRange(path.join(this.src.dir, file), from, day === upTo.day ? upTo.size : undefined);
      if (buf === null) return;
      let offset = from;
      let line = 0;
      let pos = 0;
      while (pos < buf.length) {
        const nl = buf.indexOf(0x0a, pos);
        const end = nl < 0 ? buf.length : nl;
        line++;
        // Line numbers inside a day file are counted from the prefix's line (1) for the first day: they name the break only as a hint.
        yield { file, line, text: buf.subarray(pos, end).toString('utf8'), day, offset };
        offset += end - pos + 1;
        pos = end + 1;
      }
    }
  }
}

function startsWith(text: string, seq: number, hash: string): boolean {
  const rec = parseHead(text);
  return rec !== null && rec.seq === seq && rec.hash === hash;
}

function parseHead(text: string): { seq: number; hash: string } | null {
  try {
    const v = JSON.parse(text) as { seq?: unknown; hash?: unknown };
    return typeof v.seq === 'number' && typeof v.hash === 'string' ? { seq: v.seq, hash: v.hash } : null;
  } catch {
    return null;
  }
}

/** Bytes `from`..`to` (exclusive; absent: the end) of `file`, or null when it does not exist. */
async function readRange(file: string, from: number, to?: number): Promise<Buffer | null> {
  let end: number;
  try {
    end = to ?? (await stat(file)).size;
  } catch {
    return null;
  }
  if (end <= from) return Buffer.alloc(0);
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return null;
  try {
    const buf = Buffer.alloc(end - from);
    let off = 0;
    while (off < buf.length) {
      const { bytesRead } = await fh.read(buf, off, buf.length - off, from + off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off);
  } finally {
    await fh.close();
  }
}
