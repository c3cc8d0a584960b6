/**
 * The shapes of billing-ai's artifact data (docs/api.md, "billing-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const count = z.object({ key: z.string(), executions: z.number().int().min(0), tokens: z.number().min(0) });
const window = z.object({ since: z.string().nullable(), until: z.string().nullable() });
const common = {
  asOf: z.string(), window,
  unknown: z.object({ executions: z.number().int().min(0), note: z.string().nullable() }),
  excluded: z.object({ self: z.string().nullable(), outsideWindow: z.number().int().min(0) }),
};

export const usageDataSchema = z.object({
  ...common,
  executions: z.object({ total: z.number().int().min(0), byStatus: z.array(count), byKind: z.array(count) }),
  byAgent: z.array(count), byTier: z.array(count), byCapability: z.array(count), byProject: z.array(count), byOwner: z.array(count),
  tokens: z.object({ total: z.number().min(0), executionsWithModel: z.number().int().min(0), notReported: z.number().int().min(0) }),
}).nullable();

export const analyticsDataSchema = z.object({
  ...common,
  total: z.number().int().min(0),
  daily: z.array(z.object({ day: z.string(), executions: z.number().int().min(0), completed: z.number().int().min(0), failed: z.number().int().min(0), tokens: z.number().min(0) })),
  weekly: z.array(z.object({ week: z.string().regex(/^\d{4}-W\d\d$/), executions: z.number().int().min(0), tokens: z.number().min(0) })),
  weeklyByAgent: z.array(z.object({ agent: z.string(), weeks: z.array(z.object({ week: z.string(), executions: z.number().int().min(0) })) })),
  trend: z.object({
    direction: z.enum(['rising', 'falling', 'flat']), perDay: z.number(), lastWeek: z.number().nullable(), weekBefore: z.number().nullable(), weekOverWeek: z.number().nullable(),
  }).nullable(),
  forecast: z.object({
    method: z.string().min(1), horizonDays: z.number().int().min(1),
    fit: z.object({ slope: z.number(), intercept: z.number(), n: z.number().int().min(3), r2: z.number().nullable(), residualStdError: z.number().min(0) }),
    points: z.array(z.object({ day: z.string(), executions: z.number().min(0), low: z.number().min(0), high: z.number().min(0) })),
    heldOut: z.object({ days: z.number().int().min(1), mae: z.number().min(0) }).nullable(),
  }).nullable(),
  forecastNote: z.string().nullable(),
}).nullable();
