/**
 * The secret store port: named secrets (a JSON string each) kept outside the store and the audit
 * trail. Adapters: `LocalSecretStore` (an encrypted file, the default) and `AwsSecretsManagerStore`.
 * A secret's value never goes to a log line or an error message: errors name the secret, not its content.
 */

export interface SecretStore {
  /** `local` (encrypted file) or `aws` (AWS Secrets Manager). */
  readonly kind: string;
  /** The value, or null when no secret has this name (or ARN). */
  get(name: string): Promise<string | null>;
  /** Creates or replaces the secret. */
  put(name: string, value: string): Promise<void>;
  /** True when a secret was removed. */
  delete(name: string): Promise<boolean>;
}

/** What a secret name may be: path segments of letters, digits and `-_.+=@`, or an AWS Secrets Manager ARN. */
const NAME = /^[A-Za-z0-9_.+=@-]+(?:\/[A-Za-z0-9_.+=@-]+)*$/;
const ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;

export const MAX_SECRET_BYTES = 64 * 1024;

/** Null when `name` is a valid secret name or ARN, else why not (readable, for a 400 or a CLI line). */
export function secretNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > 512) return 'a secret name has 1 to 512 characters';
  if (name.startsWith('arn:')) return ARN.test(name) ? null : 'not an AWS Secrets Manager ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)';
  if (!NAME.test(name)) return 'a secret name is path segments of letters, digits and -_.+=@ separated by single slashes';
  return null;
}

/** The contract's name of a source-hosting credential secret: `<namespace>/integrations/<customer_id>/<host>`. */
export function integrationSecretName(namespace: string, customerId: string, host: string): string {
  return `${namespace}/integrations/${customerId}/${host}`;
}

/** The part of an ARN after `secret:` (what a local store files it under). */
export function nameOfArn(nameOrArn: string): string {
  const m = /^arn:aws[a-z-]*:secretsmanager:[^:]+:\d{12}:secret:(.+)$/.exec(nameOrArn);
  // Secrets Manager appends `-` and 6 random characters to the name in an ARN.
  return m ? m[1]!.replace(/-[A-Za-z0-9]{6}$/, '') : nameOrArn;
}
