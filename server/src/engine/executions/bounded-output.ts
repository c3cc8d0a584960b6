/**
 * Bounded execution records: a step output whose JSON exceeds MAX_INLINE_OUTPUT_BYTES is stored as
 * an attachment and the record keeps `{ attachment, bytes, sha256, preview }` instead, so one huge
 * result (50,000 untracked files) cannot make every later commit, status answer and replay carry it.
 */
import { MAX_INLINE_OUTPUT_BYTES, type AttachmentRef, type AttachmentStore } from '../ports';

export function isAttachmentRef(value: unknown): value is AttachmentRef {
  return typeof value === 'object' && value !== null && typeof (value as AttachmentRef).attachment === 'string' &&
    typeof (value as AttachmentRef).sha256 === 'string' && typeof (value as AttachmentRef).bytes === 'number';
}

/** `output` itself when small, else the reference of the attachment holding it. */
export async function boundOutput(store: AttachmentStore, executionId: string, step: number, output: unknown, limit = MAX_INLINE_OUTPUT_BYTES): Promise<unknown> {
  if (output === null || output === undefined) return output;
  const json = JSON.stringify(output);
  // Measured in UTF-16 code units (what JSON.stringify gives, no encoding pass): close enough for a bound.
  if (json.length <= limit) return output;
  return store.put(executionId, `step-${step}-output.json`, json);
}
