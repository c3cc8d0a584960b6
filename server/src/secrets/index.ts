/** The secret store the host uses: `CADRE_SECRETS_BACKEND=aws` for AWS Secrets Manager, else the local encrypted file. */
import { AwsSecretsManagerStore } from './aws-secrets-manager-store';
import { defaultKeyFile, LocalSecretStore } from './local-secret-store';
import type { SecretStore } from './secret-store';

export * from './secret-store';
export { LocalSecretStore, defaultKeyFile } from './local-secret-store';
export { AwsSecretsManagerStore } from './aws-secrets-manager-store';

export function openSecretStore(dataDir: string, env: NodeJS.ProcessEnv): SecretStore {
  const backend = env['CADRE_SECRETS_BACKEND']?.trim() || 'local';
  if (backend === 'aws') {
    const region = env['AWS_REGION']?.trim() || env['AWS_DEFAULT_REGION']?.trim();
    const endpoint = env['CADRE_SECRETS_ENDPOINT']?.trim();
    return new AwsSecretsManagerStore({ ...(region ? { region } : {}), ...(endpoint ? { endpoint } : {}) });
  }
  if (backend !== 'local') throw new Error(`CADRE_SECRETS_BACKEND must be local or aws, not ${JSON.stringify(backend)}`);
  return new LocalSecretStore({ dataDir, keyFile: defaultKeyFile(env) });
}
