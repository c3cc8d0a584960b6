/**
 * The shapes of maintain-ai's artifact data (docs/api.md, "maintain-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const severity = z.enum(['low', 'medium', 'high', 'critical']);
const bump = z.enum(['patch', 'minor', 'major']);
const line = z.number().int().min(1).nullable();

export const healthDataSchema = z.object({
  findings: z.array(z.object({
    kind: z.enum(['lock-missing', 'lock-unsatisfied', 'lock-stale-range', 'lock-extraneous', 'no-lockfile', 'go-sum-missing', 'engines-running', 'engines-pinned', 'engines-pins-disagree']),
    severity, file: z.string().min(1), line, ecosystem: z.enum(['npm', 'pip', 'go', 'node']), package: z.string().nullable(), message: z.string().min(1),
  })),
  examined: z.object({ files: z.array(z.string()), directDependencies: z.number().int().min(0), notCompared: z.array(z.string()) }),
  node: z.object({ running: z.string(), engines: z.string().nullable(), pinned: z.array(z.object({ file: z.string(), version: z.string() })) }),
}).nullable();

const update = z.object({
  name: z.string(), from: z.string(), to: z.string(), range: z.string(), newRange: z.string().nullable(), file: z.string(), line, deprecatedNow: z.boolean(),
});
const batch = z.object({ bump, updates: z.array(update).min(1), risk: z.string().min(1) });
const plan = z.object({
  dependencies: z.array(z.object({
    name: z.string(), section: z.string(), range: z.string(), file: z.string(), line, current: z.string(), currentFrom: z.enum(['lock', 'range']),
    latest: z.string().nullable(), wanted: z.string().nullable(), outdated: z.boolean(), deprecated: z.string().nullable(),
    targets: z.object({ patch: z.string().optional(), minor: z.string().optional(), major: z.string().optional() }), registry: z.string(),
  })),
  batches: z.array(batch),
  notJudged: z.array(z.string()),
});

export const dependenciesDataSchema = plan.extend({ registry: z.string(), lockFile: z.string().nullable() }).nullable();

export const fixDataSchema = z.object({
  mode: z.enum(['branch', 'proposal', 'none']),
  batch: bump,
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  diff: z.string(),
  registry: z.string(),
  plan,
  risk: z.string().optional(),
  applied: z.array(update).optional(),
  skipped: z.array(z.string()).optional(),
  base: z.string().nullable().optional(),
  lockNote: z.string().optional(),
}).nullable();
