/**
 * Help links of the documented rules (secrets, IaC, code analysis): each has an anchor in docs/skills.md. The LSP
 * diagnostics and SARIF use this; a rule that is not documented there gets no link.
 */
import { ruleHelpUri } from '../findings/rule-docs';
import { CODE_ANALYSIS_RULES } from '../code-analysis/rules';
import { IAC_RULES } from './iac';
import { SECRET_RULE_DEFS } from './rules';

/** Every rule id that has an anchor in docs/skills.md. */
export const DOCUMENTED_RULE_IDS: ReadonlySet<string> = new Set([...SECRET_RULE_DEFS, ...IAC_RULES, ...CODE_ANALYSIS_RULES].map((r) => r.id));

export function helpUriFor(ruleId: string): string | undefined {
  return DOCUMENTED_RULE_IDS.has(ruleId) ? ruleHelpUri(ruleId) : undefined;
}
