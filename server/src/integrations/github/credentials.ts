/**
 * The stored credential secret of a GitHub App (contract, "Stored credential secret"): a JSON object
 * with PascalCase fields AppID, InstallationID, PrivateKeyPEM, WebhookSecret. A secret written with
 * snake_case names (app_id, private_key_pem, ...) is refused with the contract's explanation instead
 * of being read as AppID=0 and failing later as an authentication error nobody can explain.
 * The PEM is parsed here (node:crypto) so a broken key is reported at registration, not at the first PR.
 */
import { createPrivateKey } from 'node:crypto';
import { IntegrationError } from './errors';

export interface GithubAppCredential {
  appId: number;
  installationId: number;
  /** Never logged, never in an error, never stored outside the secret store. */
  privateKeyPem: string;
  webhookSecret: string;
}

const FIELDS = ['AppID', 'InstallationID', 'PrivateKeyPEM', 'WebhookSecret'] as const;
/** Lower-case, no separators: `app_id`, `appId`, `APP_ID` and `AppID` all become `appid`. */
const squash = (k: string) => k.replace(/[^A-Za-z0-9]/g, '').toLowerCase();

function positiveId(v: unknown, field: string, secret: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new IntegrationError('bad_id', `secret ${secret}: ${field} must be a positive integer (the numeric id GitHub shows), got ${typeof v === 'string' ? JSON.stringify(v.slice(0, 20)) : String(v)}`, { field });
  }
  return n;
}

/** Parses and checks the secret's JSON. Every error names the secret and the field, never a value of the key. */
export function parseGithubCredential(raw: string, secretName: string): GithubAppCredential {
  let obj: unknown;
  try {
    obj = JSON.parse(raw);
  } catch {
    throw new IntegrationError('secret_not_json', `secret ${secretName} is not a JSON object with the fields ${FIELDS.join(', ')}`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new IntegrationError('secret_not_json', `secret ${secretName} is not a JSON object with the fields ${FIELDS.join(', ')}`);
  }
  const rec = obj as Record<string, unknown>;
  // A field spelled another way (app_id, private_key_pem, appId): the contract's named failure.
  const misnamed = Object.keys(rec).filter((k) => !(FIELDS as readonly string[]).includes(k) && FIELDS.some((f) => squash(f) === squash(k)) || /^(app|installation)_id$|^private_key(_pem)?$|^webhook_secret$/i.test(k));
  if (misnamed.length > 0) {
    throw new IntegrationError('snake_case_fields',
      `secret ${secretName} uses the field names ${misnamed.join(', ')}; the credential secret's fields MUST be PascalCase (${FIELDS.join(', ')}): ` +
      'with snake_case names the app reads AppID=0 and InstallationID=0 and GitHub refuses to authenticate it. Rename the fields and store the secret again.',
      { fields: misnamed, expected: [...FIELDS] });
  }
  const missing = FIELDS.filter((f) => rec[f] === undefined || rec[f] === null || rec[f] === '');
  if (missing.length > 0) throw new IntegrationError('missing_field', `secret ${secretName} lacks ${missing.join(', ')} (fields: ${FIELDS.join(', ')})`, { fields: missing });
  const appId = positiveId(rec['AppID'], 'AppID', secretName);
  const installationId = positiveId(rec['InstallationID'], 'InstallationID', secretName);
  const pem = rec['PrivateKeyPEM'];
  if (typeof pem !== 'string') throw new IntegrationError('malformed_pem', `secret ${secretName}: PrivateKeyPEM must be a string holding the PEM file`, { field: 'PrivateKeyPEM' });
  const privateKeyPem = checkPem(pem, secretName);
  const ws = rec['WebhookSecret'];
  if (typeof ws !== 'string' || !/^[0-9a-fA-F]{64}$/.test(ws)) {
    throw new IntegrationError('bad_webhook_secret',
      `secret ${secretName}: WebhookSecret must be 64 hexadecimal characters (32 random bytes, e.g. \`openssl rand -hex 32\`), set to the same value in the GitHub App's settings` +
      `${typeof ws === 'string' ? `; it has ${ws.length} characters${/[^0-9a-fA-F]/.test(ws) ? ', not all hexadecimal' : ''}` : ''}`, { field: 'WebhookSecret' });
  }
  return { appId, installationId, privateKeyPem, webhookSecret: ws.toLowerCase() };
}

/** The PEM, checked with node:crypto: complete header and footer lines, an RSA private key (GitHub signs app JWTs with RS256). */
function checkPem(pem: string, secretName: string): string {
  const text = pem.includes('\\n') && !pem.includes('\n') ? pem.replace(/\\n/g, '\n') : pem;
  if (!/-----BEGIN (RSA )?PRIVATE KEY-----/.test(text) || !/-----END (RSA )?PRIVATE KEY-----/.test(text)) {
    throw new IntegrationError('malformed_pem', `secret ${secretName}: PrivateKeyPEM is not a PEM private key: it must be the whole .pem file GitHub generated, with its -----BEGIN ... PRIVATE KEY----- and -----END ... PRIVATE KEY----- lines`, { field: 'PrivateKeyPEM' });
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(text).asymmetricKeyType;
  } catch (err) {
    // node:crypto's reason (a decoder code) carries nothing of the key.
    throw new IntegrationError('malformed_pem', `secret ${secretName}: PrivateKeyPEM does not parse as a private key (${(err as { code?: string }).code ?? 'unreadable'}); download a new private key from the GitHub App's settings`, { field: 'PrivateKeyPEM' });
  }
  if (type !== 'rsa') throw new IntegrationError('malformed_pem', `secret ${secretName}: PrivateKeyPEM is a ${type} key; GitHub App keys are RSA (app tokens are signed RS256)`, { field: 'PrivateKeyPEM' });
  return text;
}
