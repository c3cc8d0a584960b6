/**
 * security-ai secret rules. Each `source` is written in the common subset of JavaScript and Rust
 * (ripgrep) regex syntax so that the benchmark can run exactly the same patterns in both.
 */
import type { RuleInfo, Severity } from '../findings/finding';

export type SecretFamily = 'cloud' | 'github' | 'gitlab' | 'slack' | 'stripe' | 'private-key' | 'jwt' | 'cadre' | 'generic';

export interface SecretRuleDef extends RuleInfo {
  family: SecretFamily;
  severity: Severity;
  /** Pattern source (JS/Rust common subset, no flags). */
  source: string;
  /** Length of the fixed prefix not judged for randomness (AKIA, ghp_...). */
  prefixLength: number;
  /** Environment variable suggested by the fix. */
  envName: string;
}

const ci = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/** Keywords that make an assignment a generic secret candidate (matched case-insensitively). */
export const GENERIC_KEYWORDS = ['key', 'secret', 'token', 'passwd', 'password', 'pwd', 'credential'];

const GENERIC_SOURCE = `(?:${ci('key')}|${ci('secret')}|${ci('token')}|${ci('passw')}(?:${ci('or')})?${ci('d')}|${ci('pwd')}|${ci('credential')})`
  + `[A-Za-z0-9_.-]{0,30}["']?[ \\t]{0,4}(?:=|:=|:|=>)[ \\t]{0,4}["'\`]?[A-Za-z0-9+/=_.~@#$%^&*!-]{8,200}`;

const HELP = 'https://github.com/cadre/cadre/blob/main/docs/security.md#';

function rule(id: string, family: SecretFamily, severity: Severity, description: string, source: string, prefixLength: number, envName: string): SecretRuleDef {
  return { id, family, severity, description, source, prefixLength, envName, helpUri: `${HELP}${id}` };
}

export const SECRET_RULE_DEFS: readonly SecretRuleDef[] = [
  rule('aws-access-key-id', 'cloud', 'critical', 'AWS access key id', '\\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\\b', 4, 'AWS_ACCESS_KEY_ID'),
  rule('gcp-api-key', 'cloud', 'high', 'Google Cloud API key', '\\bAIza[0-9A-Za-z_-]{35}', 4, 'GOOGLE_API_KEY'),
  rule('github-token', 'github', 'critical', 'GitHub token (classic, OAuth, app or fine-grained)', '\\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\\b|\\bgithub_pat_[A-Za-z0-9_]{82}\\b', 4, 'GITHUB_TOKEN'),
  rule('gitlab-token', 'gitlab', 'critical', 'GitLab personal access token', '\\bglpat-[A-Za-z0-9_-]{20,}', 6, 'GITLAB_TOKEN'),
  rule('slack-token', 'slack', 'high', 'Slack token', '\\bxox[abposr]-[A-Za-z0-9-]{10,}', 5, 'SLACK_TOKEN'),
  rule('slack-webhook', 'slack', 'high', 'Slack incoming webhook URL', 'https://hooks\\.slack\\.com/services/T[A-Za-z0-9]{8,}/B[A-Za-z0-9]{8,}/[A-Za-z0-9]{24}', 29, 'SLACK_WEBHOOK_URL'),
  rule('stripe-secret-key', 'stripe', 'critical', 'Stripe live secret or restricted key', '\\b[sr]k_live_[A-Za-z0-9]{24,}\\b', 8, 'STRIPE_SECRET_KEY'),
  rule('private-key', 'private-key', 'critical', 'PEM private key block', '-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----', 0, 'PRIVATE_KEY'),
  rule('jwt', 'jwt', 'medium', 'JSON Web Token', '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{16,}', 0, 'JWT'),
  rule('cadre-api-key', 'cadre', 'critical', 'Cadre API key', '\\bcadre_[A-Za-z0-9_-]{43}\\b', 6, 'CADRE_API_KEY'),
  rule('generic-secret', 'generic', 'high', 'Hard-coded high-entropy secret assigned to a key/secret/token/password name', GENERIC_SOURCE, 0, 'SECRET'),
];

export const SECRET_RULE_BY_ID: ReadonlyMap<string, SecretRuleDef> = new Map(SECRET_RULE_DEFS.map((r) => [r.id, r]));

export const SECRET_FAMILIES: readonly SecretFamily[] = ['cloud', 'github', 'gitlab', 'slack', 'stripe', 'private-key', 'jwt', 'cadre', 'generic'];
