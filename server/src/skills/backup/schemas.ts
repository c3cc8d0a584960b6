/**
 * The shapes of backup-ai's artifact data (docs/api.md, "backup-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const snapshotDataSchema = z.object({
  archive: z.string().min(1), manifest: z.string().min(1), archiveSha256: sha256, archiveBytes: z.number().int().min(1), fileCount: z.number().int().min(1),
  files: z.array(z.object({ path: z.string().min(1), size: z.number().int().min(0), sha256, mode: z.number().int() })),
  totalBytes: z.number().int().min(0), source: z.array(z.string()), skipped: z.array(z.string()), createdAt: z.string(), store: z.string(),
}).nullable();

export const verifyDataSchema = z.object({
  archive: z.string().min(1), manifestFrom: z.string().min(1), verified: z.boolean(),
  files: z.number().int().min(0), matched: z.number().int().min(0), bytes: z.number().int().min(0), restoredTo: z.string(),
  findings: z.array(z.object({
    kind: z.enum(['changed', 'missing', 'unexpected', 'unsafe-path', 'archive-changed', 'archive-unreadable']),
    severity: z.enum(['medium', 'high', 'critical']), file: z.string(), message: z.string().min(1), expected: z.string().optional(), actual: z.string().optional(),
  })),
  skippedEntries: z.array(z.string()),
}).refine((d) => d.verified === (d.findings.length === 0), 'verified is true exactly when nothing was found').nullable();
