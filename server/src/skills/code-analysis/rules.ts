/**
 * The code-analysis rules: ids, severities, CWE and the one-line rationale shown in SARIF and
 * docs/skills.md (each id has an anchor there, `code-<name>`, so help links resolve).
 * Taint rules need a request input reaching the sink; pattern rules need only the code's shape.
 * The four `review/*` pattern rules are review-ai's historical ids (kept so existing suppressions
 * still apply); they now fire only on non-constant arguments that the taint rules did not already report.
 */
import type { RuleInfo, Severity } from '../findings/finding';

export type CodeRuleId =
  | 'code/sql-injection' | 'code/nosql-injection' | 'code/command-injection' | 'code/code-injection'
  | 'code/path-traversal' | 'code/ssrf' | 'code/open-redirect' | 'code/xss' | 'code/prototype-pollution'
  | 'code/regex-injection' | 'code/weak-hash' | 'code/weak-cipher' | 'code/hardcoded-jwt-secret'
  | 'code/insecure-cookie' | 'code/redos'
  | 'review/eval' | 'review/shell-injection' | 'review/sql-concatenation' | 'review/tls-disabled';

export interface CodeRule extends RuleInfo {
  id: CodeRuleId;
  cwe: string;
  /** Taint rules report a request input reaching a sink; pattern rules a dangerous shape. */
  kind: 'taint' | 'pattern';
  /** One-line rationale (docs/skills.md and SARIF). */
  description: string;
}

/** The docs anchor of a rule id: `code/sql-injection` → `code-sql-injection`. */
export function ruleAnchor(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export const CODE_DOCS = 'https://github.com/cadre/cadre/blob/main/docs/skills.md';

const rule = (id: CodeRuleId, severity: Severity, cwe: string, kind: CodeRule['kind'], description: string): CodeRule =>
  ({ id, severity, cwe, kind, family: 'security', description, helpUri: `${CODE_DOCS}#${ruleAnchor(id)}` });

export const CODE_ANALYSIS_RULES: readonly CodeRule[] = [
  rule('code/sql-injection', 'critical', 'CWE-89', 'taint', 'A request input is built into the text of an SQL query: use placeholders and pass the values separately.'),
  rule('code/nosql-injection', 'high', 'CWE-943', 'taint', 'A request input reaches a MongoDB filter as an object (operator injection such as {"$ne": null}) or a $where JavaScript string.'),
  rule('code/command-injection', 'critical', 'CWE-78', 'taint', 'A request input reaches a shell command (exec, execSync, spawn with shell: true, sh -c).'),
  rule('code/code-injection', 'critical', 'CWE-94', 'taint', 'A request input is evaluated as code (eval, Function, vm.run*, setTimeout with a string).'),
  rule('code/path-traversal', 'high', 'CWE-22', 'taint', 'A request input names a file for fs or sendFile; path.join does not stop ../ (use path.basename or resolve and check the prefix).'),
  rule('code/ssrf', 'high', 'CWE-918', 'taint', 'A request input decides the URL of an outbound request (fetch, axios, http.get, got, request): the server can be made to call internal hosts.'),
  rule('code/open-redirect', 'medium', 'CWE-601', 'taint', 'A request input is the target of a redirect: users can be sent to any site under this site\'s name.'),
  rule('code/xss', 'high', 'CWE-79', 'taint', 'A request input is written into an HTML response or the DOM (res.send, innerHTML, dangerouslySetInnerHTML) without escaping.'),
  rule('code/prototype-pollution', 'high', 'CWE-1321', 'taint', 'Request-controlled keys or objects are merged deeply or assigned by nested computed keys: __proto__ reaches Object.prototype.'),
  rule('code/regex-injection', 'medium', 'CWE-1333', 'taint', 'A request input is compiled as a regular expression (new RegExp): a crafted pattern can hang the event loop.'),
  rule('code/weak-hash', 'high', 'CWE-328', 'pattern', 'MD5 or SHA-1 hashes a password or secret: use bcrypt, scrypt or argon2.'),
  rule('code/weak-cipher', 'high', 'CWE-327', 'pattern', 'createCipher (no IV), DES, RC4, Blowfish or ECB mode: use AES-GCM with createCipheriv and a random IV.'),
  rule('code/hardcoded-jwt-secret', 'high', 'CWE-798', 'pattern', 'jwt.sign / jwt.verify with a secret written in the code: anyone with the source can forge tokens.'),
  rule('code/insecure-cookie', 'medium', 'CWE-614', 'pattern', 'A session cookie without httpOnly or secure (or with them set to false) can be read by scripts or sent over plain HTTP.'),
  rule('code/redos', 'medium', 'CWE-1333', 'pattern', 'A regular expression with nested quantifiers ((a+)+, (.*)*) backtracks exponentially on crafted input.'),
  rule('review/eval', 'high', 'CWE-95', 'pattern', 'eval() or new Function() runs code built from a non-constant string.'),
  rule('review/shell-injection', 'high', 'CWE-78', 'pattern', 'child_process exec/execSync with a command built by a template literal or concatenation.'),
  rule('review/sql-concatenation', 'high', 'CWE-89', 'pattern', 'SQL built by concatenation or a template literal passed to a query/execute call.'),
  rule('review/tls-disabled', 'high', 'CWE-295', 'pattern', 'TLS certificate verification disabled (rejectUnauthorized: false, NODE_TLS_REJECT_UNAUTHORIZED=0).'),
];

export const CODE_RULE_BY_ID: ReadonlyMap<string, CodeRule> = new Map(CODE_ANALYSIS_RULES.map((r) => [r.id, r]));
