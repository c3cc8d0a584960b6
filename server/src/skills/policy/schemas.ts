/**
 * The shapes of policy-ai's artifact data (docs/api.md, "policy-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const severity = z.enum(['low', 'medium', 'high', 'critical']);
const violation = z.object({
  rule: z.string().min(1), severity, file: z.string().min(1), line: z.number().int().min(1), column: z.number().int().min(1),
  object: z.string().nullable(), kind: z.string().nullable(), name: z.string().nullable(), container: z.string().nullable(), source: z.string().nullable(),
  message: z.string().min(1), fix: z.string().min(1), fixable: z.enum(['auto', 'needs-value', 'manual']), fixNote: z.string().optional(),
});
const counts = z.object({
  violations: z.number().int().min(0), waived: z.number().int().min(0),
  bySeverity: z.object({ critical: z.number().int(), high: z.number().int(), medium: z.number().int(), low: z.number().int() }),
  byRule: z.record(z.string(), z.number().int()),
});
const report = z.object({
  violations: z.array(violation),
  waived: z.array(violation.extend({ waiver: z.object({ reason: z.string().min(1), file: z.string().optional(), object: z.string().optional() }) })),
  problems: z.array(z.object({ file: z.string().min(1), line: z.number().int().min(1).nullable(), message: z.string().min(1) })),
  examined: z.object({ kubernetes: z.array(z.string()), dockerfiles: z.array(z.string()), compose: z.array(z.string()), objects: z.number().int().min(0) }),
  rules: z.array(z.object({ id: z.string(), severity, origin: z.enum(['baseline', 'config']), state: z.enum(['on', 'disabled', 'filtered']) })),
  counts,
  notes: z.array(z.string()),
});

export const checkDataSchema = report.nullable();

export const enforceDataSchema = report.extend({
  mode: z.enum(['written', 'proposed', 'none']),
  before: counts,
  after: counts,
  fixed: z.array(z.object({ rule: z.string(), file: z.string(), line: z.number().int().min(1), object: z.string().nullable(), container: z.string().nullable() })),
  notFixed: z.array(z.object({ rule: z.string(), file: z.string(), line: z.number().int().min(1), object: z.string().nullable(), container: z.string().nullable(), fixable: z.enum(['needs-value', 'manual']), why: z.string() })),
  files: z.array(z.string()),
  diff: z.string(),
  snapshot: z.string().nullable(),
}).nullable();
