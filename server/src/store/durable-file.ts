/**
 * Durable file writes shared by the store's parts (snapshot, journal, archives, attachments): a file
 * is written to a temp name, fsynced, renamed over its target, and the directory fsynced so the
 * rename survives a crash.
 */
import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/** Makes a rename in `dir` durable. Windows cannot open a directory for fsync (NTFS journals the rename). */
export async function fsyncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch (err) {
    // Some file systems (certain network/FUSE mounts) reject fsync on a directory; the data is already fsynced.
    const code = errnoCode(err);
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EISDIR') throw err;
  } finally {
    await fh.close();
  }
}

/** Writes `data` to `file` (mode 0600) so that after a crash it is either the old content or all of the new. */
export async function writeFileDurably(file: string, data: Buffer): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  await fsyncDirectory(path.dirname(file));
}

/**
 * One file of a numbered series of append-only files (the store's journal generations, its cold
 * segments), kept open between appends and reopened when the generation changes. An append writes
 * the whole buffer durably; if that fails the file is cut back to where the append began
 * (so the next one starts a clean line), and if even that fails the handle is dropped: the next open
 * finds the torn tail, which readers of these files skip.
 */
/**
 * Flags of an append-only file: with O_DSYNC each write returns once its data is on disk, one
 * thread-pool round trip per append where write + fdatasync took two (measured on this project's
 * 2-core machine: 0.40 vs 0.50 ms wall and 0.20 vs 0.28 ms CPU per 8 KB append). Where the platform
 * has no O_DSYNC (Windows) the append is followed by an fdatasync.
 */
const DSYNC = constants.O_DSYNC;
const APPEND_FLAGS = DSYNC ? constants.O_APPEND | constants.O_CREAT | constants.O_WRONLY | DSYNC : 'a';

export class AppendOnlyFile {
  private fh: FileHandle | null = null;
  /** The generation open, -1 when none. */
  gen = -1;
  /** Bytes in the open file. */
  size = 0;

  /**
   * Opens generation `gen` at `file` unless it is the one open. `opened(size)` runs when another file
   * was opened (size 0: created), before any append to it, e.g. to fsync the directory entry.
   */
  async open(gen: number, file: string, opened?: (size: number) => Promise<void> | void): Promise<void> {
    if (this.fh && this.gen === gen) return;
    await this.close();
    const fh = await open(file, APPEND_FLAGS, 0o600);
    const size = (await fh.stat()).size;
    try {
      await opened?.(size);
    } catch (err) {
      await fh.close();
      throw err;
    }
    this.fh = fh;
    this.gen = gen;
    this.size = size;
  }

  /** Appends `buf` durably; resolves with the offset it starts at. */
  async append(buf: Buffer): Promise<number> {
    const fh = this.fh;
    if (!fh) throw new Error('no file is open for appending');
    const before = this.size;
    try {
      for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off, null)).bytesWritten;
      this.size += buf.length;
      if (!DSYNC) await fh.datasync();
      return before;
    } catch (err) {
      try {
        await fh.truncate(before);
        this.size = before;
      } catch {
        await this.close().catch(() => undefined);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    this.gen = -1;
    if (fh) await fh.close();
  }
}
