/**
 * Shapes the store checks at open, per collection: a record that would crash the engine later (e.g.
 * an execution whose `steps` is not an array: `rec.steps.map is not a function`) is quarantined
 * with a line naming its field instead. Only what the engine relies on is checked; other fields pass.
 */
import { z } from 'zod';
import { EXECUTION_KINDS, EXECUTION_STATUSES } from '../engine/executions/records';
import { COLLECTIONS } from '../engine/ports';
import type { RecordValidator } from './journal-store';

const nullableString = z.string().nullable();

const stepSchema = z.looseObject({
  step: z.number().int().nonnegative(),
  agentId: z.string(),
  action: z.string(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled']),
  attempts: z.number().int().nonnegative(),
  phases: z.array(z.looseObject({ phase: z.string(), status: z.string() })),
  gates: z.looseObject({ passed: z.number(), failed: z.number(), notApplicable: z.number(), failures: z.array(z.unknown()) }),
});

export const executionRecordSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(EXECUTION_KINDS),
  status: z.enum(EXECUTION_STATUSES),
  request: z.looseObject({
    prompt: z.string(),
    capabilities: z.array(z.string()),
    input: z.record(z.string(), z.unknown()),
  }),
  agents: z.array(z.string()),
  steps: z.array(stepSchema),
  createdAt: z.string(),
  startedAt: nullableString,
  completedAt: nullableString,
  updatedAt: z.string(),
  resumes: z.number().int().nonnegative(),
});

/** `steps.2.status: Invalid option ...` for the first problem, or null. */
export function zodProblem(schema: z.ZodType, record: unknown): string | null {
  const r = schema.safeParse(record);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  const at = issue.path.length > 0 ? issue.path.join('.') : '(record)';
  const others = [...new Set(r.error.issues.slice(1).map((i) => i.path.join('.') || '(record)'))];
  const more = others.length > 0 ? ` (also ${others.slice(0, 5).join(', ')}${others.length > 5 ? ', ...' : ''})` : '';
  return `field ${at}: ${issue.message}${more}`;
}

export const executionRecordProblem: RecordValidator = (record) => zodProblem(executionRecordSchema, record);

/** The validators the server opens its store with. */
export const STORE_VALIDATORS: Record<string, RecordValidator> = {
  [COLLECTIONS.executions]: executionRecordProblem,
};
