/** review-ai's rules: ids, severities and descriptions (SARIF tool.driver.rules). */
import type { RuleInfo, Severity } from '../findings/finding';

export type ReviewRuleId =
  | 'review/complexity'
  | 'review/long-function'
  | 'review/debug-statement'
  | 'review/dead-code'
  | 'review/eval'
  | 'review/shell-injection'
  | 'review/sql-concatenation'
  | 'review/tls-disabled'
  | 'review/missing-tests';

export const REVIEW_RULES: readonly (RuleInfo & { id: ReviewRuleId })[] = [
  { id: 'review/complexity', severity: 'medium', family: 'maintainability', description: 'Function cyclomatic complexity above the threshold.' },
  { id: 'review/long-function', severity: 'low', family: 'maintainability', description: 'Function longer than the line limit.' },
  { id: 'review/debug-statement', severity: 'low', family: 'hygiene', description: 'Leftover debug statement (console.log / console.debug / debugger, print / pdb in Python).' },
  { id: 'review/dead-code', severity: 'low', family: 'hygiene', description: 'Unreachable code: statements after return/throw/break/continue, or an if (false) branch.' },
  { id: 'review/eval', severity: 'high', family: 'security', description: 'eval() or new Function() executes code built from strings.' },
  { id: 'review/shell-injection', severity: 'high', family: 'security', description: 'child_process exec/execSync with a command built by a template literal or concatenation.' },
  { id: 'review/sql-concatenation', severity: 'high', family: 'security', description: 'SQL built by concatenation or a template literal passed to a query/execute call.' },
  { id: 'review/tls-disabled', severity: 'high', family: 'security', description: 'TLS certificate verification disabled (rejectUnauthorized: false, NODE_TLS_REJECT_UNAUTHORIZED=0).' },
  { id: 'review/missing-tests', severity: 'low', family: 'tests', description: 'Changed source file with no changed or existing test file of the same base name.' },
];

export const RULE_SEVERITY: Record<ReviewRuleId, Severity> = Object.fromEntries(REVIEW_RULES.map((r) => [r.id, r.severity])) as Record<ReviewRuleId, Severity>;

/** Rule id → family, for `cadre-ignore <family>: <why>` suppressions. */
export const RULE_FAMILIES: ReadonlyMap<string, string> = new Map(REVIEW_RULES.map((r) => [r.id, r.family!]));
