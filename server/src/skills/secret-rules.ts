/**
 * High-confidence secret formats used by the secrets-clean gate. security-ai's full rule set
 * (entropy, allow-lists, inline ignores) builds on these.
 */
export interface SecretRule {
  id: string;
  description: string;
  pattern: RegExp;
}

export const SECRET_RULES: readonly SecretRule[] = [
  { id: 'aws-access-key-id', description: 'AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { id: 'github-token', description: 'GitHub token', pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{82}\b/ },
  { id: 'gitlab-token', description: 'GitLab personal access token', pattern: /\bglpat-[A-Za-z0-9_-]{20}\b/ },
  { id: 'slack-token', description: 'Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/ },
  { id: 'stripe-secret-key', description: 'Stripe secret key', pattern: /\b[sr]k_live_[A-Za-z0-9]{24,}\b/ },
  { id: 'private-key', description: 'PEM private key', pattern: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----/ },
  { id: 'cadre-api-key', description: 'Cadre API key', pattern: /\bcadre_[A-Za-z0-9_-]{43}\b/ },
];

/** Rule ids that match somewhere in `text`. */
export function findSecrets(text: string): string[] {
  return SECRET_RULES.filter((r) => r.pattern.test(text)).map((r) => r.id);
}
