/** Code analysis for JavaScript and TypeScript: taint from request inputs to sinks, pattern rules, vendored-file skipping. */
export { analyzeCode, parseSource, scriptKindOf, isRequestSource, type CodeAnalysis } from './analyzer';
export { CODE_ANALYSIS_RULES, CODE_RULE_BY_ID, ruleAnchor, type CodeRule, type CodeRuleId } from './rules';
export { includeVendored, INCLUDE_VENDORED_ENV, parseGitattributes, VendoredFiles, vendoredByContent, vendoredByPath, type VendoredReason } from './vendored';
export { redactSnippet } from './snippet';
