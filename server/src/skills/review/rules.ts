/** review-ai's rules: ids, severities and descriptions (SARIF tool.driver.rules). */
import type { RuleInfo, Severity } from '../findings/finding';
import { CODE_ANALYSIS_RULES } from '../code-analysis/rules';

/** The rules review-ai checks itself; the security rules are code analysis's (server/src/skills/code-analysis). */
export type ReviewRuleId =
  | 'review/complexity'
  | 'review/long-function'
  | 'review/debug-statement'
  | 'review/dead-code'
  | 'review/missing-tests';

const OWN_RULES: readonly (RuleInfo & { id: ReviewRuleId })[] = [
  { id: 'review/complexity', severity: 'medium', family: 'maintainability', description: 'Function cyclomatic complexity above the threshold.' },
  { id: 'review/long-function', severity: 'low', family: 'maintainability', description: 'Function longer than the line limit.' },
  { id: 'review/debug-statement', severity: 'low', family: 'hygiene', description: 'Leftover debug statement (console.log / console.debug / debugger, print / pdb in Python).' },
  { id: 'review/dead-code', severity: 'low', family: 'hygiene', description: 'Unreachable code: statements after return/throw/break/continue, or an if (false) branch.' },
  { id: 'review/missing-tests', severity: 'low', family: 'tests', description: 'Changed source file with no changed or existing test file of the same base name.' },
];

export const REVIEW_RULES: readonly RuleInfo[] = [
  ...OWN_RULES.slice(0, 4),
  ...CODE_ANALYSIS_RULES.map(({ id, severity, family, description, helpUri }) => ({ id, severity, family, description, ...(helpUri ? { helpUri } : {}) })),
  OWN_RULES[4]!,
];

export const RULE_SEVERITY: Record<string, Severity> & Record<ReviewRuleId, Severity> = Object.fromEntries(REVIEW_RULES.map((r) => [r.id, r.severity])) as Record<ReviewRuleId, Severity>;

/** Rule id → family, for `cadre-ignore <family>: <why>` suppressions. */
export const RULE_FAMILIES: ReadonlyMap<string, string> = new Map(REVIEW_RULES.map((r) => [r.id, r.family!]));
