import { strict as assert } from 'node:assert';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CreateSecretCommand, GetSecretValueCommand, PutSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { parseGithubCredential } from '../../../server/src/integrations/github/credentials';
import { isIntegrationError } from '../../../server/src/integrations/github/errors';
import { AwsSecretsManagerStore } from '../../../server/src/secrets/aws-secrets-manager-store';
import { LocalSecretStore, SECRETS_FILE } from '../../../server/src/secrets/local-secret-store';
import { integrationSecretName } from '../../../server/src/secrets/secret-store';
import { rsaKeyPair } from './github-standin';

const tmp = (p: string) => mkdtempSync(path.join(tmpdir(), p));
const WEBHOOK = 'a'.repeat(64);

function reason(fn: () => unknown): { reason: string; message: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(isIntegrationError(err), String(err));
    return { reason: err.reason, message: err.message };
  }
  throw new Error('no error');
}

describe('github: the credential secret', () => {
  const { privateKeyPem } = rsaKeyPair();
  const good = { AppID: 12345, InstallationID: 678, PrivateKeyPEM: privateKeyPem, WebhookSecret: WEBHOOK };

  it('reads the PascalCase fields (ids as numbers or digit strings, the PEM parsed as an RSA key)', () => {
    const c = parseGithubCredential(JSON.stringify({ ...good, AppID: '12345' }), 's');
    assert.deepEqual([c.appId, c.installationId, c.webhookSecret], [12345, 678, WEBHOOK]);
    assert.match(c.privateKeyPem, /BEGIN RSA PRIVATE KEY/);
  });

  it('refuses snake_case field names with the contract\'s explanation instead of reading AppID=0', () => {
    const e = reason(() => parseGithubCredential(JSON.stringify({ app_id: 12345, installation_id: 678, private_key_pem: privateKeyPem, webhook_secret: WEBHOOK }), 'cadre/integrations/acme/github'));
    assert.equal(e.reason, 'snake_case_fields');
    assert.match(e.message, /app_id, installation_id, private_key_pem, webhook_secret/);
    assert.match(e.message, /MUST be PascalCase \(AppID, InstallationID, PrivateKeyPEM, WebhookSecret\)/);
    assert.match(e.message, /AppID=0 and InstallationID=0/);
    assert.ok(!e.message.includes('MII'), 'no key material in the message');
  });

  it('refuses a malformed PEM, a truncated one and a non-RSA key, naming PrivateKeyPEM and never echoing the key', () => {
    const noHeader = reason(() => parseGithubCredential(JSON.stringify({ ...good, PrivateKeyPEM: 'MIIEpAIBAAKCAQEA' }), 's'));
    assert.equal(noHeader.reason, 'malformed_pem');
    const lines = privateKeyPem.split('\n');
    const truncated = [...lines.slice(0, 5), ...lines.slice(-2)].join('\n');
    const t = reason(() => parseGithubCredential(JSON.stringify({ ...good, PrivateKeyPEM: truncated }), 's'));
    assert.equal(t.reason, 'malformed_pem');
    assert.match(t.message, /PrivateKeyPEM does not parse/);
    for (const l of lines.slice(1, -2)) assert.ok(!t.message.includes(l), 'a line of the key reached the message');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.match(reason(() => parseGithubCredential(JSON.stringify({ ...good, PrivateKeyPEM: ec }), 's')).message, /ec key; GitHub App keys are RSA/);
  });

  it('accepts a PEM whose newlines were escaped as \\n (a common copy-paste), and refuses a WebhookSecret that is not 64 hex characters', () => {
    assert.equal(parseGithubCredential(JSON.stringify({ ...good, PrivateKeyPEM: privateKeyPem.replace(/\n/g, '\\n') }), 's').appId, 12345);
    const e = reason(() => parseGithubCredential(JSON.stringify({ ...good, WebhookSecret: 'hunter2' }), 's'));
    assert.equal(e.reason, 'bad_webhook_secret');
    assert.match(e.message, /64 hexadecimal characters.*it has 7 characters, not all hexadecimal/);
  });

  it('names missing fields and zero ids', () => {
    assert.equal(reason(() => parseGithubCredential(JSON.stringify({ AppID: 1 }), 's')).reason, 'missing_field');
    assert.equal(reason(() => parseGithubCredential(JSON.stringify({ ...good, AppID: 0 }), 's')).reason, 'bad_id');
    assert.equal(reason(() => parseGithubCredential('not json', 's')).reason, 'secret_not_json');
  });
});

describe('secrets: the local encrypted file store', () => {
  it('round-trips a value; the file (0600) holds no plaintext; the key file (0600) lives outside the data directory', async () => {
    const data = tmp('cadre-sec-data-');
    const keyFile = path.join(tmp('cadre-sec-key-'), 'cadre', 'secret.key');
    const store = new LocalSecretStore({ dataDir: data, keyFile });
    const name = integrationSecretName('cadre', 'acme', 'github');
    assert.equal(name, 'cadre/integrations/acme/github');
    await store.put(name, '{"PrivateKeyPEM":"-----BEGIN PLANTED-----"}');
    assert.equal(await store.get(name), '{"PrivateKeyPEM":"-----BEGIN PLANTED-----"}');
    assert.equal(await store.get('cadre/integrations/other/github'), null);
    const file = path.join(data, SECRETS_FILE);
    assert.ok(!readFileSync(file, 'utf8').includes('PLANTED'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    // A second store with the same key reads it (a restart).
    assert.equal(await new LocalSecretStore({ dataDir: data, keyFile }).get(name), '{"PrivateKeyPEM":"-----BEGIN PLANTED-----"}');
    assert.equal(await store.delete(name), true);
    assert.equal(await store.get(name), null);
  });

  it('an entry moved to another name does not decrypt (the name is authenticated), nor with another key', async () => {
    const data = tmp('cadre-sec-data-');
    const keyFile = path.join(tmp('cadre-sec-key-'), 'k');
    const store = new LocalSecretStore({ dataDir: data, keyFile });
    await store.put('a/one', 'first');
    await store.put('a/two', 'second');
    const file = path.join(data, SECRETS_FILE);
    const json = JSON.parse(readFileSync(file, 'utf8')) as { secrets: Record<string, unknown> };
    json.secrets['a/two'] = json.secrets['a/one'];
    writeFileSync(file, JSON.stringify(json));
    await assert.rejects(store.get('a/two'), /does not decrypt/);
    await assert.rejects(new LocalSecretStore({ dataDir: data, keyFile: path.join(tmp('cadre-sec-key-'), 'k2') }).get('a/one'), /does not decrypt/);
  });

  it('refuses a key file inside the data directory, and one other users can read', async () => {
    const data = tmp('cadre-sec-data-');
    assert.throws(() => new LocalSecretStore({ dataDir: data, keyFile: path.join(data, 'secret.key') }), /inside the data directory/);
    const keyFile = path.join(tmp('cadre-sec-key-'), 'k');
    writeFileSync(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o644 });
    await assert.rejects(new LocalSecretStore({ dataDir: data, keyFile }).put('x', 'y'), /readable by other users/);
  });
});

describe('secrets: AWS Secrets Manager adapter (aws-sdk-client-mock)', () => {
  const mock = mockClient(SecretsManagerClient);
  afterEach(() => mock.reset());

  it('reads SecretString by name or ARN, answers null for a missing secret, and creates one that PutSecretValue does not find', async () => {
    const store = new AwsSecretsManagerStore({ client: new SecretsManagerClient({ region: 'us-east-1' }) });
    mock.on(GetSecretValueCommand, { SecretId: 'cadre/integrations/acme/github' }).resolves({ SecretString: '{"AppID":1}' });
    mock.on(GetSecretValueCommand, { SecretId: 'missing' }).rejects(new ResourceNotFoundException({ message: 'Secrets Manager can\'t find the specified secret.', $metadata: {} }));
    assert.equal(await store.get('cadre/integrations/acme/github'), '{"AppID":1}');
    assert.equal(await store.get('missing'), null);
    mock.on(PutSecretValueCommand).rejects(new ResourceNotFoundException({ message: 'not found', $metadata: {} }));
    mock.on(CreateSecretCommand).resolves({ Name: 'new/secret' });
    await store.put('new/secret', '{"a":1}');
    const created = mock.commandCalls(CreateSecretCommand);
    assert.equal(created.length, 1);
    assert.deepEqual(created[0]!.args[0].input, { Name: 'new/secret', SecretString: '{"a":1}' });
  });

  it('an access error names the secret and the cause', async () => {
    const store = new AwsSecretsManagerStore({ client: new SecretsManagerClient({ region: 'us-east-1' }) });
    mock.on(GetSecretValueCommand).rejects(Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), { name: 'AccessDeniedException' }));
    await assert.rejects(store.get('cadre/integrations/acme/github'), /reading cadre\/integrations\/acme\/github failed: User is not authorized/);
  });
});
