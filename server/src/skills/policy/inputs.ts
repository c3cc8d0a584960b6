/**
 * The `input` of policy-ai's actions (checked before Research, published in the skills manifest and
 * the OpenAPI document as PolicyAiCheckInput / PolicyAiEnforceInput). Loose objects like the
 * OPERATE ones (operate-inputs.ts); `settings` is the engine's (the config's `policy` section) and a
 * request's own value is replaced. The filters are `ruleIds` and `minSeverity`, not `rules` and
 * `severity`: a workflow's steps share one input, and observe-ai's `rules` (alert rules, or a file of
 * them) in the Compliance Audit Automation template would otherwise filter policy-ai down to nothing.
 */
import { z } from 'zod';
import { pathsField } from '../input-fields';

export const POLICY_INPUT_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

export const policyInputSchema = z.looseObject({
  paths: pathsField.optional().describe('Workspace files or folders to check (default: the whole workspace): Kubernetes YAML, Helm-rendered output, Dockerfiles, Compose files'),
  ruleIds: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional()
    .describe('Only these rules: ids (k8s.privileged) or prefixes ending in "." or "*" (k8s., compose.*); a list or comma-separated text'),
  minSeverity: z.enum(POLICY_INPUT_SEVERITIES).optional().describe('Only rules of this severity or higher'),
});
