/**
 * adapt-ai's inputs (validated at submission, published in OpenAPI) and result shapes (artifact-schema
 * gate; docs/api.md "adapt-ai actions").
 */
import { z } from 'zod';

export const feedbackInputSchema = z.looseObject({
  executionId: z.string().min(1).describe('The execution whose result is rated'),
  step: z.union([z.number().int().min(0), z.string().regex(/^\s*\d+\s*$/, 'expected a step index')]).optional().describe('The step rated (index from 0); absent: the execution'),
  finding: z.string().min(1).max(200).optional().describe('The finding rated: its fingerprint or id, as in the step\'s output'),
  rating: z.union([z.enum(['up', 'down']), z.number().int().min(1).max(5), z.string().regex(/^\s*[1-5]\s*$/, 'expected up, down or 1..5')]).describe('up or down, or 1 to 5 stars (4 and 5 count as good)'),
  reason: z.string().max(1000).optional().describe('Why (at most 1000 characters)'),
  governance: z.unknown().optional().describe('Handed in by the engine: the rating as recorded (a request\'s own value is replaced)'),
});

export const evaluateInputSchema = z.looseObject({
  agentId: z.string().min(1).optional().describe('Only this agent'),
  apply: z.union([z.literal('all'), z.array(z.string().min(1)).min(1).max(50)]).optional()
    .describe("Proposal ids to apply (or 'all'): each becomes an action of kind tune_agent / suppress_finding that ACMF allows or asks a person about; what it lets through is applied when the execution ends"),
  governance: z.unknown().optional().describe('Handed in by the engine: ACMF state, feedback and recent steps (a request\'s own value is replaced)'),
});

const rating = z.union([z.object({ scale: z.literal('thumbs'), value: z.enum(['up', 'down']) }), z.object({ scale: z.literal('stars'), value: z.number().int().min(1).max(5) })]);

export const feedbackDataSchema = z.object({
  recorded: z.object({
    id: z.string(), executionId: z.string(), step: z.number().int().nullable(), agentId: z.string().nullable(), agents: z.array(z.string()),
    finding: z.object({ fingerprint: z.string().nullable(), id: z.string().nullable(), ruleId: z.string().nullable(), file: z.string().nullable(), severity: z.string().nullable() }).nullable(),
    rating, good: z.boolean(), reason: z.string().nullable(), by: z.string(), at: z.string(), replayed: z.boolean(),
  }),
  sameTarget: z.object({ up: z.number().int().min(0), down: z.number().int().min(0), total: z.number().int().min(0) }),
}).nullable();

const effect = z.union([
  z.object({ gate: z.string(), threshold: z.number() }), z.object({ mode: z.string() }), z.object({ fingerprint: z.string() }),
]);
const proposal = z.object({
  id: z.string(), kind: z.enum(['tune_agent', 'suppress_finding']), agentId: z.string().nullable(), target: z.string(), change: z.string(), why: z.string(),
  evidence: z.record(z.string(), z.unknown()), status: z.literal('proposed'),
  effect: effect.nullable().describe('What applying it changes (null: nothing machine-applicable, a person decides)'),
});
const applying = z.object({
  id: z.string(), kind: z.enum(['tune_agent', 'suppress_finding']), agentId: z.string().nullable(), change: z.string(), effect: effect.nullable(),
  status: z.enum(['allowed', 'denied', 'not_proposed']), by: z.string().nullable(),
});
const adaptation = z.object({
  id: z.string(), proposalId: z.string(), kind: z.enum(['tune_agent', 'suppress_finding']), agentId: z.string().nullable(), effect,
  change: z.string(), executionId: z.string(), tenantId: z.string(), by: z.string(), appliedAt: z.string(),
});

export const evaluateDataSchema = z.object({
  asOf: z.string(),
  scope: z.string(),
  agents: z.array(z.object({
    agentId: z.string(), mode: z.string(), quality: z.number(), tasks: z.number().int().min(0), successRate: z.number().nullable(), recentFailures: z.number().int().min(0),
    stricterGates: z.array(z.object({ gate: z.string(), base: z.number(), effective: z.number() })),
    modeChanges: z.array(z.object({ at: z.string(), from: z.string(), to: z.string(), reason: z.string(), by: z.string() })),
    feedback: z.object({ up: z.number().int().min(0), down: z.number().int().min(0), total: z.number().int().min(0), goodRatio: z.number().nullable() }),
    steps: z.object({ count: z.number().int().min(0), passed: z.number().int().min(0), meanConfidence: z.number().nullable(), goodShare: z.number().nullable(), gap: z.number().nullable() }),
  })),
  calibration: z.object({
    samples: z.number().int().min(0),
    buckets: z.array(z.object({ from: z.number(), to: z.number(), steps: z.number().int().min(0), meanConfidence: z.number().nullable(), goodShare: z.number().nullable(), rated: z.number().int().min(0), gap: z.number().nullable() })),
    meanAbsoluteGap: z.number().nullable(),
  }),
  falsePositives: z.array(z.object({
    key: z.string(), fingerprint: z.string().nullable(), ruleId: z.string().nullable(), file: z.string().nullable(), agentId: z.string().nullable(), down: z.number().int(), up: z.number().int(), reasons: z.array(z.string()),
  })),
  proposals: z.array(proposal),
  applying: z.array(applying).describe('The proposals asked to be applied, with what ACMF decided; allowed ones are applied when the execution ends'),
  inForce: z.array(adaptation).describe('Adaptations applied earlier and in force for this tenant'),
  applied: z.boolean(),
  note: z.string(),
}).nullable();
