/**
 * evolve-ai's inputs (checked before Research, published as EvolveAiAssessInput / EvolveAiPlanInput)
 * and artifact data (docs/api.md, "evolve-ai actions"), checked by the artifact-schema gate.
 */
import { z } from 'zod';
import { integerField, pathsField } from '../input-fields';

export const evolveInputSchema = z.looseObject({
  paths: pathsField.optional().describe('Workspace folders to assess (default the whole workspace); top-level files and .github/ stay in view'),
  assessment: z.union([z.looseObject({}), z.string().min(1)]).optional().describe('plan: the data of evolve-ai assess (or its JSON text) to plan from; default: a previous assess step, else assessed now'),
  limit: integerField.optional().describe('plan: at most this many improvements (default all)'),
});

const located = z.object({ file: z.string().min(1), line: z.number().int().min(1).optional(), detail: z.string() });
const check = z.object({ id: z.string(), title: z.string(), points: z.number().int().min(0), earned: z.number().int().min(0).nullable(), evidence: z.array(located), missing: z.string().optional() });
const criterion = z.object({ id: z.string(), title: z.string(), weight: z.number().min(0), score: z.number().min(0).max(100).nullable(), checks: z.array(check).min(1), evidence: z.array(located), missing: z.array(z.string()) });

export const assessmentSchema = z.object({
  score: z.number().int().min(0).max(100),
  level: z.number().int().min(1).max(5),
  levelName: z.string(),
  meaning: z.string(),
  ecosystems: z.array(z.enum(['js', 'python', 'go', 'java'])),
  manifests: z.array(z.string()),
  git: z.object({ repository: z.boolean(), tags: z.array(z.string()), note: z.string().optional() }),
  criteria: z.array(criterion).length(7),
  examined: z.object({ files: z.number().int().min(0) }),
});

export const assessDataSchema = assessmentSchema.nullable();

export const planDataSchema = z.object({
  from: z.object({ score: z.number().min(0).max(100), level: z.number().int(), levelName: z.string(), source: z.enum(['assessed', 'input', 'previous step']) }),
  items: z.array(z.object({
    rank: z.number().int().min(1), criterion: z.string(), check: z.string(), title: z.string(), value: z.number().int().min(1).max(5), effort: z.number().int().min(1).max(5),
    priority: z.number().positive(), gain: z.number().min(0), missing: z.string(), steps: z.array(z.string()).min(1), files: z.array(z.string()),
  })),
  projected: z.object({ score: z.number().min(0).max(100), level: z.number().int(), levelName: z.string() }),
  assessment: assessmentSchema.optional(),
}).nullable();
