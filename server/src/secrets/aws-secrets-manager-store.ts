/**
 * AWS Secrets Manager as the secret store (the contract's deployment: the credential secret lives at
 * `<namespace>/integrations/<customer_id>/<host>` or the registration's `secrets_manager_arn`). The
 * SDK's default credential chain applies (environment, shared config, the container task's role),
 * so no AWS key is ever configured in Cadre.
 */
import {
  CreateSecretCommand, DeleteSecretCommand, GetSecretValueCommand, PutSecretValueCommand, ResourceNotFoundException, SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SecretStore } from './secret-store';

function notFound(err: unknown): boolean {
  return err instanceof ResourceNotFoundException || (err as { name?: string })?.name === 'ResourceNotFoundException';
}

export class AwsSecretsManagerStore implements SecretStore {
  readonly kind = 'aws';
  private readonly client: SecretsManagerClient;

  constructor(opts: { region?: string; endpoint?: string; client?: SecretsManagerClient } = {}) {
    this.client = opts.client ?? new SecretsManagerClient({ ...(opts.region ? { region: opts.region } : {}), ...(opts.endpoint ? { endpoint: opts.endpoint } : {}) });
  }

  async get(name: string): Promise<string | null> {
    try {
      const out = await this.client.send(new GetSecretValueCommand({ SecretId: name }));
      if (out.SecretString !== undefined) return out.SecretString;
      if (out.SecretBinary) return Buffer.from(out.SecretBinary).toString('utf8');
      return null;
    } catch (err) {
      if (notFound(err)) return null;
      // The SDK's message names the secret and the cause (access denied, throttled), never a value.
      throw new Error(`AWS Secrets Manager: reading ${name} failed: ${(err as Error).message}`);
    }
  }

  async put(name: string, value: string): Promise<void> {
    try {
      await this.client.send(new PutSecretValueCommand({ SecretId: name, SecretString: value }));
    } catch (err) {
      if (!notFound(err)) throw new Error(`AWS Secrets Manager: writing ${name} failed: ${(err as Error).message}`);
      await this.client.send(new CreateSecretCommand({ Name: name, SecretString: value }));
    }
  }

  async delete(name: string): Promise<boolean> {
    try {
      // The recovery window applies (Secrets Manager's default 30 days): a mistaken delete can be undone.
      await this.client.send(new DeleteSecretCommand({ SecretId: name }));
      return true;
    } catch (err) {
      if (notFound(err)) return false;
      throw new Error(`AWS Secrets Manager: deleting ${name} failed: ${(err as Error).message}`);
    }
  }
}
