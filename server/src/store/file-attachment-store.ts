/**
 * The AttachmentStore port over files: `<dataDir>/attachments/<executionId>/<name>`, written
 * atomically and durably (temp, fsync, rename, directory fsync) before the record that refers to it
 * is checkpointed, so a record never points at a missing file.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { AttachmentRef, AttachmentStore } from '../engine/ports';
import { writeFileDurably } from './durable-file';

const SAFE_ID = /^[a-z]{2,8}_[0-9a-f]{8,64}$/;
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const PREVIEW_CHARS = 2_000;

export class FileAttachmentStore implements AttachmentStore {
  constructor(readonly dir: string) {}

  private file(executionId: string, name: string): string {
    // Names come from the engine, but a path must never leave the attachments directory.
    if (!SAFE_ID.test(executionId)) throw new Error(`not an execution id: ${executionId}`);
    if (!SAFE_NAME.test(name) || name.includes('..')) throw new Error(`not an attachment name: ${name}`);
    return path.join(this.dir, executionId, name);
  }

  async put(executionId: string, name: string, content: string): Promise<AttachmentRef> {
    const file = this.file(executionId, name);
    const data = Buffer.from(content, 'utf8');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileDurably(file, data);
    return {
      attachment: `${executionId}/${name}`,
      bytes: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
      preview: content.slice(0, PREVIEW_CHARS),
    };
  }

  async get(executionId: string, name: string): Promise<string | null> {
    try {
      return await readFile(this.file(executionId, name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
