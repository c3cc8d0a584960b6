/**
 * A minimal POSIX tar (ustar, with pax extended headers for long paths and large sizes) writer and
 * reader, enough for backup-ai's archives: regular files only, gzip through node:zlib by the caller.
 * Written here rather than taken from npm because the format needed is small and fixed (POSIX.1-2001)
 * and the reader must be strict with hostile archives: an entry whose path is absolute or climbs out
 * with `..` is reported, never written (see restore.ts).
 *
 * Any `tar -xzf` reads what the writer makes; the reader reads what GNU tar and bsdtar make for
 * regular files (other entry types are listed as skipped).
 */

const BLOCK = 512;

function octal(n: number, width: number): string {
  // width - 1 digits and a NUL: the ustar numeric field.
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function put(buf: Buffer, off: number, width: number, s: string): void {
  buf.write(s, off, Math.min(width, Buffer.byteLength(s)), 'utf8');
}

/** A pax record: `<len> key=value\n`, where len counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function header(name: string, size: number, mtime: number, type: '0' | 'x', mode = 0o644): Buffer {
  const h = Buffer.alloc(BLOCK);
  put(h, 0, 100, name);
  put(h, 100, 8, octal(mode, 8));
  put(h, 108, 8, octal(0, 8));
  put(h, 116, 8, octal(0, 8));
  put(h, 124, 12, octal(size, 12));
  put(h, 136, 12, octal(Math.max(0, Math.floor(mtime)), 12));
  h.fill(' ', 148, 156); // checksum computed over spaces
  put(h, 156, 1, type);
  put(h, 257, 6, 'ustar\0');
  put(h, 263, 2, '00');
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i]!;
  put(h, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

const MAX_OCTAL_SIZE = 0o77777777777; // 8 GiB - 1: larger sizes go in a pax record

/** The blocks of one regular file entry: [pax header + data], header, content, padding. */
export function tarEntry(name: string, content: Buffer, mtimeSec: number, mode = 0o644): Buffer[] {
  const out: Buffer[] = [];
  const nameBytes = Buffer.byteLength(name);
  const records = [
    ...(nameBytes > 100 || /[^\x20-\x7e]/.test(name) ? [paxRecord('path', name)] : []),
    ...(content.length > MAX_OCTAL_SIZE ? [paxRecord('size', String(content.length))] : []),
  ];
  if (records.length) {
    const pax = Buffer.from(records.join(''), 'utf8');
    out.push(header(`PaxHeader/${name.replace(/[^\x20-\x7e]/g, '_').slice(-80)}`, pax.length, mtimeSec, 'x'), pax, padding(pax.length));
  }
  out.push(header(nameBytes > 100 ? name.replace(/[^\x20-\x7e]/g, '_').slice(-100) : name, Math.min(content.length, MAX_OCTAL_SIZE), mtimeSec, '0', mode), content, padding(content.length));
  return out;
}

function padding(n: number): Buffer {
  const r = n % BLOCK;
  return Buffer.alloc(r ? BLOCK - r : 0);
}

/** The end of an archive: two zero blocks. */
export function tarEnd(): Buffer {
  return Buffer.alloc(BLOCK * 2);
}

export interface TarEntry {
  name: string;
  type: string;
  size: number;
  mode: number;
  /** Byte offset of the entry's header in the (uncompressed) archive. */
  offset: number;
}

export class TarError extends Error {
  override name = 'TarError';
}

function str(buf: Buffer, off: number, len: number): string {
  const s = buf.subarray(off, off + len);
  const nul = s.indexOf(0);
  return s.subarray(0, nul === -1 ? len : nul).toString('utf8');
}

function num(buf: Buffer, off: number, len: number, what: string, at: number): number {
  const raw = str(buf, off, len).trim();
  if (!raw) return 0;
  if (!/^[0-7]+$/.test(raw)) throw new TarError(`bad ${what} field in the header at byte ${at}`);
  return parseInt(raw, 8);
}

function parsePax(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const sp = text.indexOf(' ', i);
    if (sp === -1) break;
    const len = Number(text.slice(i, sp));
    if (!(len > 0)) break;
    const rec = Buffer.from(text.slice(i)).subarray(0, len).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq !== -1) out[rec.slice(rec.indexOf(' ') + 1, eq)] = rec.slice(eq + 1).replace(/\n$/, '');
    i += rec.length;
  }
  return out;
}

/**
 * Streams a tar: feed it chunks of the uncompressed archive; `onEntry` is called for each entry's
 * header, `onData` with its content in pieces, `onEnd` when it is complete. Throws TarError on a
 * damaged header (bad checksum, bad number) naming its byte offset.
 */
export class TarReader {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private state: { kind: 'header' } | { kind: 'data'; entry: TarEntry; left: number; pad: number; pax?: Buffer[] } = { kind: 'header' };
  private pax: Record<string, string> = {};
  private longName: string | undefined;
  ended = false;

  constructor(private readonly on: { entry(e: TarEntry): void; data(chunk: Buffer): void; end(e: TarEntry): void }) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.ended) return;
      if (this.state.kind === 'header') {
        if (this.buf.length < BLOCK) return;
        const h = this.buf.subarray(0, BLOCK);
        const at = this.pos;
        this.take(BLOCK);
        if (h.every((b) => b === 0)) { this.ended = true; return; }
        const stored = num(h, 148, 8, 'checksum', at);
        let sum = 0;
        for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
        if (sum !== stored) throw new TarError(`header checksum mismatch at byte ${at}: the archive is damaged`);
        const type = str(h, 156, 1) || '0';
        let size = num(h, 124, 12, 'size', at);
        const prefix = str(h, 345, 155);
        let name = prefix ? `${prefix}/${str(h, 0, 100)}` : str(h, 0, 100);
        if (this.pax['path']) name = this.pax['path'];
        if (this.longName) name = this.longName;
        if (this.pax['size']) size = Number(this.pax['size']);
        const entry: TarEntry = { name, type, size, mode: num(h, 100, 8, 'mode', at), offset: at };
        const meta = type === 'x' || type === 'g' || type === 'L';
        if (!meta) { this.pax = {}; this.longName = undefined; this.on.entry(entry); }
        this.state = { kind: 'data', entry, left: size, pad: (BLOCK - (size % BLOCK)) % BLOCK, ...(meta ? { pax: [] } : {}) };
      } else {
        const st = this.state;
        if (st.left > 0) {
          if (!this.buf.length) return;
          const n = Math.min(st.left, this.buf.length);
          const piece = this.buf.subarray(0, n);
          if (st.pax) st.pax.push(Buffer.from(piece)); else this.on.data(piece);
          this.take(n);
          st.left -= n;
          if (st.left > 0) return;
        }
        if (this.buf.length < st.pad) return;
        this.take(st.pad);
        if (st.pax) {
          const body = Buffer.concat(st.pax).toString('utf8');
          if (st.entry.type === 'x') this.pax = parsePax(body);
          else if (st.entry.type === 'L') this.longName = body.replace(/\0+$/, '');
        } else this.on.end(st.entry);
        this.state = { kind: 'header' };
      }
    }
  }

  /** After the last chunk: a truncated archive is an error naming where it stops. */
  finish(): void {
    if (this.ended) return;
    if (this.state.kind === 'data') throw new TarError(`archive truncated in the content of ${this.state.entry.name} (header at byte ${this.state.entry.offset})`);
    if (this.buf.length) throw new TarError(`archive truncated at byte ${this.pos}`);
    // No end-of-archive blocks: GNU tar accepts it too; every entry was complete.
    this.ended = true;
  }

  private take(n: number): void {
    this.buf = this.buf.subarray(n);
    this.pos += n;
  }
}
