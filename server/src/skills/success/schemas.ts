/**
 * success-ai's inputs (validated at submission, published in OpenAPI) and result shapes
 * (artifact-schema gate; docs/api.md "success-ai actions").
 */
import { z } from 'zod';
import { integerField } from '../input-fields';

export const healthInputSchema = z.looseObject({
  days: integerField.optional().describe('The window scored, in days back from now (1..366, default 30)'),
  governance: z.unknown().optional().describe('Handed in by the engine: the tenant\'s executions, approvals and feedback (a request\'s own value is replaced)'),
});

export const engagementInputSchema = z.looseObject({
  weeks: integerField.optional().describe('Weeks of trend, back from now (1..52, default 8)'),
  governance: z.unknown().optional().describe('Handed in by the engine: the tenant\'s executions, approvals and feedback (a request\'s own value is replaced)'),
});

const component = z.object({
  name: z.enum(['usage', 'failures', 'approvals', 'feedback']), weight: z.number().min(0).max(1), score: z.number().min(0).max(100).nullable(),
  data: z.record(z.string(), z.unknown()), reason: z.string(),
});

export const healthDataSchema = z.object({
  asOf: z.string(), since: z.string(), days: z.number().int().min(1),
  score: z.number().min(0).max(100), status: z.enum(['healthy', 'at risk', 'unhealthy', 'inactive']),
  components: z.array(component), reasons: z.array(z.string()),
}).nullable();

const trend = z.object({ direction: z.enum(['rising', 'falling', 'flat']), perWeek: z.number(), first: z.number(), last: z.number() }).nullable();

export const engagementDataSchema = z.object({
  asOf: z.string(), since: z.string(), weeks: z.number().int().min(1), firstActivity: z.string().nullable(),
  enoughHistory: z.boolean(), note: z.string().nullable(),
  series: z.array(z.object({
    from: z.string(), to: z.string(), beforeFirstActivity: z.boolean(), executions: z.number().int().min(0), agents: z.number().int().min(0),
    failed: z.number().int().min(0), failureRate: z.number().nullable(), approvals: z.number().int().min(0), ratings: z.number().int().min(0), goodRatings: z.number().int().min(0),
  })),
  trends: z.object({ executions: trend, agents: trend, failureRate: trend, approvals: trend, ratings: trend }),
}).nullable();
