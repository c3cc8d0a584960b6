/**
 * govern-ai compliance: the shape of its `input` (checked before Research, published in the OpenAPI
 * document as GovernAiComplianceInput) and of its artifact data (docs/api.md, "govern-ai actions").
 */
import { z } from 'zod';
import { integerField, pathsField } from '../input-fields';

const auditFacts = z.looseObject({
  records: integerField.optional(),
  chainVerified: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
  tampered: z.string().optional(),
  approvals: z.looseObject({ decided: integerField.optional(), byPerson: integerField.optional() }).optional(),
});

export const complianceInputSchema = z.looseObject({
  framework: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional()
    .describe('soc2, hipaa, pci-dss (or a list, or "soc2,hipaa"); default all three'),
  paths: pathsField.optional().describe('Workspace folders to judge (default the whole workspace); top-level files and .github/ stay in view'),
  audit: auditFacts.optional().describe('Audit-trail facts {records, chainVerified, tampered, approvals: {decided, byPerson}}; without them audit-evidenced controls are not_assessable'),
});

const status = z.enum(['met', 'partial', 'missing', 'not_assessable']);
const located = z.object({ file: z.string().min(1), line: z.number().int().min(1).optional(), detail: z.string() });

export const complianceDataSchema = z.object({
  frameworks: z.array(z.object({
    framework: z.enum(['soc2', 'hipaa', 'pci-dss']),
    name: z.string(),
    score: z.number().min(0).max(1).nullable(),
    met: z.number().int().min(0), partial: z.number().int().min(0), missing: z.number().int().min(0), notAssessable: z.number().int().min(0), assessable: z.number().int().min(0),
    controls: z.array(z.object({
      id: z.string().min(1), title: z.string().min(1), evidence: z.string(), how: z.string(), status, why: z.string().optional(),
      found: z.array(located), missing: z.array(z.object({ what: z.string(), where: z.string() })), contrary: z.array(located),
      checks: z.array(z.object({ probe: z.string(), status, why: z.string().optional() })),
    })).min(1),
  })).min(1),
  examined: z.object({ files: z.number().int().min(0), scope: z.array(z.string()), secretsScanned: z.number().int().min(0), audit: z.boolean() }),
}).nullable();
