/**
 * govern-ai `approval`: its input (validated at submission, published in OpenAPI) and the shape of
 * its result (artifact-schema gate; docs/api.md "govern-ai approval").
 */
import { z } from 'zod';

export const approvalInputSchema = z.looseObject({
  decide: z.object({
    approvalId: z.string().min(1).describe('The pending approval to decide'),
    decision: z.enum(['approve', 'deny']).describe('approve or deny'),
    reason: z.string().max(1000).optional().describe('Why (kept with the decision and in the audit trail)'),
  }).optional().describe('A decision to make as the key that started this execution (needs the approver role); absent: only list'),
  governance: z.unknown().optional().describe('Handed in by the engine: the pending approvals and the decision applied (a request\'s own value is replaced)'),
});

const risk = z.enum(['none', 'low', 'medium', 'high', 'critical']);

export const approvalDataSchema = z.object({
  asOf: z.string(),
  pending: z.array(z.object({
    id: z.string(), executionId: z.string(), agentId: z.string(), action: z.object({ kind: z.string(), description: z.string() }),
    risk, reasons: z.array(z.string()), requestedAt: z.string(), expiresAt: z.string().nullable(), ageMs: z.number().min(0), age: z.string(),
  })),
  byRisk: z.array(z.object({ key: z.string(), count: z.number().int().min(0) })),
  oldest: z.object({ id: z.string(), age: z.string() }).nullable(),
  decision: z.object({
    approvalId: z.string(), decision: z.enum(['approve', 'deny']), status: z.enum(['approved', 'denied']), by: z.string(), at: z.string(), reason: z.string().nullable(),
    selfApproved: z.boolean(), replayed: z.boolean(), agentId: z.string(), executionId: z.string(), risk, actionKind: z.string(),
  }).nullable(),
}).nullable();
