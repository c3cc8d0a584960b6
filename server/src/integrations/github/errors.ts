/**
 * What can go wrong with a GitHub integration, as one error with a `reason` the doors map (422 on
 * HTTP, one line in the CLI, a red row in the editor). Messages name the secret, the field, the
 * permission or the branch; never a secret's value (a PEM, a token, a webhook secret).
 */
export type IntegrationErrorReason =
  | 'secret_not_found'
  | 'secret_not_json'
  | 'snake_case_fields'
  | 'missing_field'
  | 'bad_id'
  | 'malformed_pem'
  | 'bad_webhook_secret'
  | 'installation_mismatch'
  | 'auth_failed'
  | 'installation_not_found'
  | 'missing_permissions'
  | 'repository_not_found'
  | 'branch_protection'
  | 'github_error';

export class IntegrationError extends Error {
  override readonly name = 'IntegrationError';
  constructor(readonly reason: IntegrationErrorReason, message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
}

export function isIntegrationError(err: unknown): err is IntegrationError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'IntegrationError' && typeof (err as { reason?: unknown }).reason === 'string';
}
