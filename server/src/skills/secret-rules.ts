/**
 * The secrets-clean gate's view of the one secret rule table (security/rules.ts): the same rules
 * and the same judgement as security-ai's scanner (placeholders, documented examples and low-entropy
 * values are not secrets), so the gate and the scanner cannot diverge.
 */
import { SECRET_RULE_DEFS } from './security/rules';
import { scanText } from './security/scanner';

export interface SecretRule {
  id: string;
  description: string;
  pattern: RegExp;
}

/** The provider and structure rules as plain patterns (no generic name rule: its shape is a name, not a value). */
export const SECRET_RULES: readonly SecretRule[] = SECRET_RULE_DEFS
  .filter((r) => r.check !== 'generic')
  .map((r) => ({ id: r.id, description: r.description, pattern: new RegExp(r.source) }));

/**
 * Rule ids of the secrets in `text` (an artifact's report, summary, a file it writes), judged as the
 * scanner judges a configuration file: unquoted values count, inline `cadre-ignore` does not.
 */
export function findSecrets(text: string, file = 'artifact.txt'): string[] {
  return [...new Set(scanText(text, file, { suppressions: false }).map((f) => f.ruleId))];
}
