/**
 * The shapes of optimize-ai's artifact data (docs/api.md, "optimize-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const share = z.number().min(0).max(1);
const fn = z.object({
  function: z.string(), location: z.string(), url: z.string(), line: z.number().int(),
  selfMs: z.number().min(0), totalMs: z.number().min(0), selfShare: share, totalShare: share, samples: z.number().int().min(0),
});

export const analyzeProfileDataSchema = z.object({
  threshold: z.number().gt(0).lt(1),
  hotSpots: z.array(fn.extend({ file: z.string().min(1), severity: z.enum(['high', 'medium', 'low']) })),
  profiles: z.array(z.object({
    file: z.string().min(1), format: z.enum(['cpuprofile', 'chrome-trace', 'prof-process']), samples: z.number().int().min(0),
    durationMs: z.number().min(0), busyMs: z.number().min(0), functions: z.array(fn),
    paths: z.array(z.object({ frames: z.array(z.string()), selfMs: z.number().min(0), share })), others: z.array(z.string()),
  })).min(1),
  examined: z.object({ files: z.number().int().min(1), samples: z.number().int().min(0), durationMs: z.number().min(0), busyMs: z.number().min(0) }),
}).nullable();

const stats = z.object({ runs: z.number().int().min(1), minMs: z.number().min(0), medianMs: z.number().min(0), maxMs: z.number().min(0), meanMs: z.number().min(0), stddevMs: z.number().min(0) })
  .refine((s) => s.minMs <= s.medianMs && s.medianMs <= s.maxMs, 'min <= median <= max');

export const benchmarkDataSchema = z.object({
  command: z.string().min(1), baseline: z.string().nullable(), runs: z.number().int().min(2), warmup: z.number().int().min(0), order: z.string(),
  commandStats: stats, baselineStats: stats.nullable(),
  comparison: z.object({ ratio: z.number().positive(), pValue: z.number().min(0).max(1), verdict: z.enum(['faster', 'slower', 'no significant difference']) }).nullable(),
  samplesMs: z.object({ command: z.array(z.number().min(0)), baseline: z.array(z.number().min(0)) }),
  workspaceChanged: z.array(z.string()),
}).nullable();
