/**
 * lowdb adapter that writes the store file atomically and durably:
 * temp file in the same directory -> write -> fsync -> rename over the target -> fsync the directory.
 * A SIGKILL or power loss at any point leaves either the previous or the new complete file
 * (plus, at worst, a stale `<file>.tmp`, which `removeStaleTemp()` deletes on open).
 */
import type { Adapter } from 'lowdb' with { 'resolution-mode': 'import' };
import { open, readFile, rename, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { fsyncDirectory } from './durable-file';
import { EngineError } from '../engine/errors';

const RENAME_RETRIES = 5;

function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? ((err as { code?: unknown }).code as string | undefined) : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads and writes one JSON document. `write` serialises its argument synchronously, before its
 * first await, so the written file is a consistent snapshot of the data at the moment of the call
 * (the store relies on this: mutations made while a write is in flight belong to the next write).
 */
export class AtomicJsonFileAdapter<T> implements Adapter<T> {
  readonly file: string;
  readonly tempFile: string;

  constructor(file: string, private readonly opts: { mode?: number } = {}) {
    this.file = path.resolve(file);
    this.tempFile = `${this.file}.tmp`;
  }

  /** The parsed document, or null when the file does not exist. Refuses (ERR_STORE) a file that does not parse. */
  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return null;
      throw new EngineError('ERR_STORE', `Cannot read store file ${this.file}: ${messageOf(err)}`, {
        cause: err,
        details: { file: this.file },
      });
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new EngineError(
        'ERR_STORE',
        `Store file ${this.file} is corrupt (not valid JSON: ${messageOf(err)}); refusing to open it. ` +
          'Restore it from a backup, or move it aside to start with an empty store.',
        { cause: err, details: { file: this.file } },
      );
    }
  }

  write(data: T): Promise<void> {
    let text: string;
    try {
      text = JSON.stringify(data); // compact, synchronous: this is the snapshot
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writeText(text);
  }

  /** Deletes a temp file left by a process killed mid-write. Returns true when one was removed. */
  async removeStaleTemp(): Promise<boolean> {
    try {
      await unlink(this.tempFile);
      return true;
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return false;
      throw err;
    }
  }

  private async writeText(text: string): Promise<void> {
    const fh = await open(this.tempFile, 'w', this.opts.mode ?? 0o600);
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await renameWithRetry(this.tempFile, this.file);
    await fsyncDirectory(path.dirname(this.file));
  }
}

/** Windows may refuse a rename briefly while another process (indexer, antivirus) holds the target. */
async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (err) {
      const code = errnoCode(err);
      const transient = process.platform === 'win32' && (code === 'EPERM' || code === 'EACCES' || code === 'EBUSY');
      if (!transient || attempt >= RENAME_RETRIES) throw err;
      await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
    }
  }
}

