/**
 * Durable file writes shared by the store's parts (snapshot, journal, archives, attachments): a file
 * is written to a temp name, fsynced, renamed over its target, and the directory fsynced so the
 * rename survives a crash.
 */
import { open, rename } from 'node:fs/promises';
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
