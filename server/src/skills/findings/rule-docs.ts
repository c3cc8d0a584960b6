/**
 * Where a rule is documented. Every rule of the documented analyzers (secrets, IaC) has an anchor
 * `<a id="…">` in docs/skills.md (a test checks each one exists), and the help link of a finding
 * (SARIF `helpUri`, the LSP diagnostic's `codeDescription`) points at it. Rules without an anchor get
 * no link rather than one to a page that does not exist.
 */
export const RULE_DOCS_PAGE = 'https://github.com/cadre/cadre/blob/main/docs/skills.md';

/** The anchor of a rule id: lower case, every run of other characters a `-` (`k8s/privileged` → `k8s-privileged`). */
export function ruleAnchor(ruleId: string): string {
  return ruleId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export function ruleHelpUri(ruleId: string): string {
  return `${RULE_DOCS_PAGE}#${ruleAnchor(ruleId)}`;
}
