/**
 * govern-ai `audit-trail`: its input (validated at submission, published in OpenAPI) and the shape of
 * its result (checked by the artifact-schema gate; docs/api.md "govern-ai audit-trail").
 */
import { z } from 'zod';
import { integerField, timeField } from '../input-fields';

export const auditTrailInputSchema = z.looseObject({
  executionId: z.string().min(1).optional().describe('Only records of this execution'),
  agentId: z.string().min(1).optional().describe('Only records of this agent'),
  kind: z.string().min(1).optional().describe('Only records of this event kind (gate.result, approval.decided, acmf.mode_changed, ...)'),
  since: timeField.optional().describe('Only records at or after this time (ISO 8601 or epoch ms)'),
  until: timeField.optional().describe('Only records at or before this time (ISO 8601 or epoch ms)'),
  limit: integerField.optional().describe('At most this many records, the newest (1..1000, default 200)'),
  governance: z.unknown().optional().describe('Handed in by the engine: the records and the verification (a request\'s own value is replaced)'),
});

const row = z.object({ key: z.string(), count: z.number().int().min(0) });

export const auditTrailDataSchema = z.object({
  asOf: z.string(),
  filter: z.object({
    executionId: z.string().nullable(), agentId: z.string().nullable(), kind: z.string().nullable(),
    since: z.string().nullable(), until: z.string().nullable(), limit: z.number().int().min(1).max(1000),
  }),
  matched: z.number().int().min(0),
  returned: z.number().int().min(0),
  byKind: z.array(row),
  byAgent: z.array(row),
  records: z.array(z.object({
    seq: z.number().int().min(1), ts: z.string(), kind: z.string(), executionId: z.string().nullable(), agentId: z.string().nullable(),
    actor: z.string(), data: z.record(z.string(), z.unknown()), hash: z.string(), verified: z.boolean(),
  })),
  verification: z.object({
    status: z.enum(['intact', 'broken']),
    checked: z.number().int().min(0),
    firstBroken: z.object({
      seq: z.number().int().nullable(), file: z.string(), line: z.number().int().min(0), problem: z.string(), reason: z.string(), ofThisTenant: z.boolean().nullable(),
    }).nullable(),
  }),
}).nullable();
