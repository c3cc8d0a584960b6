/**
 * A project with one freshly generated secret for every secret rule (random per run, so no value can
 * exist anywhere before the test plants it), in the shapes users write them: .env, YAML, JSON, code,
 * .npmrc, a GCP service-account JSON with a one-line `\n`-escaped key, a multi-line PEM.
 */
import { randomInt } from 'node:crypto';
import { SECRET_RULE_DEFS } from '../../../server/src/skills/security/rules';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function rnd(n: number, alphabet = ALNUM): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}

export interface Planted {
  rule: string;
  /** The secret as it must never appear in any output. */
  value: string;
}

export interface PlantedProject {
  files: Record<string, string>;
  planted: Planted[];
}

export function plantedProject(): PlantedProject {
  const planted: Planted[] = [];
  const plant = (rule: string, value: string) => {
    planted.push({ rule, value });
    return value;
  };
  const pemBody = Array.from({ length: 10 }, () => rnd(64, B64));
  const saBody = Array.from({ length: 10 }, () => rnd(64, B64));
  plant('private-key', pemBody.join('\n'));
  plant('private-key', saBody.join('\\n'));
  const env = [
    `AWS_ACCESS_KEY_ID=${plant('aws-access-key-id', `AKIA${rnd(16, UPPER)}`)}`,
    `AWS_SECRET_ACCESS_KEY=${plant('aws-secret-access-key', rnd(40, B64))}`,
    `OPENAI_API_KEY=${plant('openai-api-key', `sk-proj-${rnd(64)}`)}`,
    `ANTHROPIC_API_KEY=${plant('anthropic-api-key', `sk-ant-api03-${rnd(95)}AA`)}`,
    `HF_TOKEN=${plant('huggingface-token', `hf_${rnd(34)}`)}`,
    `SENDGRID_API_KEY=${plant('sendgrid-api-key', `SG.${rnd(22)}.${rnd(43)}`)}`,
    `TWILIO_API_KEY=${plant('twilio-api-key', `SK${rnd(32, HEX)}`)}`,
    `TWILIO_AUTH_TOKEN=${plant('twilio-auth-token', rnd(32, HEX))}`,
    `GITLAB_TOKEN=${plant('gitlab-token', `glpat-${rnd(20)}`)}`,
    `SLACK_BOT=${plant('slack-token', `xoxb-${rnd(12, '0123456789')}-${rnd(24)}`)}`,
    `SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T${rnd(10, UPPER)}/B${rnd(10, UPPER)}/${plant('slack-webhook', rnd(24))}`,
    `DISCORD_WEBHOOK=https://discord.com/api/webhooks/${rnd(18, '0123456789')}/${plant('discord-webhook', rnd(68))}`,
    `TELEGRAM=${plant('telegram-bot-token', `${rnd(9, '123456789')}:AA${rnd(33)}`)}`,
    `DATABASE_URL=postgres://app:${plant('url-credentials', rnd(18))}@db.internal:5432/app`,
    `SESSION_SECRET=${plant('generic-secret', `${rnd(12)}.${rnd(6)}~${rnd(4)}!`)}`,
    `ADMIN_PASS=p#${plant('generic-secret', rnd(14))}~9@x`,
  ];
  const code = [
    `export const gcp = '${plant('gcp-api-key', `AIza${rnd(35)}`)}';`,
    `export const oauth = '${plant('gcp-oauth-client-secret', `GOCSPX-${rnd(28)}`)}';`,
    `export const alibaba = '${plant('alibaba-access-key-id', `LTAI${rnd(20)}`)}';`,
    `export const digitalOcean = '${plant('digitalocean-token', `dop_v1_${rnd(64, HEX)}`)}';`,
    `export const vault = '${plant('hashicorp-vault-token', `hvs.${rnd(94)}`)}';`,
    `export const tfc = '${plant('terraform-cloud-token', `${rnd(14)}.atlasv1.${rnd(66)}`)}';`,
    `export const github = '${plant('github-token', `ghp_${rnd(36)}`)}';`,
    `export const stripe = '${plant('stripe-secret-key', `sk_live_${rnd(32)}`)}';`,
    `export const stripeHook = '${plant('stripe-webhook-secret', `whsec_${rnd(32)}`)}';`,
    `export const square = '${plant('square-token', `sq0csp-${rnd(43)}`)}';`,
    `export const shopify = '${plant('shopify-token', `shpss_${rnd(32, HEX)}`)}';`,
    `export const mailgun = '${plant('mailgun-api-key', `key-${rnd(32, HEX)}`)}';`,
    `export const mailchimp = '${plant('mailchimp-api-key', `${rnd(32, HEX)}-us6`)}';`,
    `export const databricks = '${plant('databricks-token', `dapi${rnd(32, HEX)}`)}';`,
    `export const doppler = '${plant('doppler-token', `dp.pt.${rnd(43)}`)}';`,
    `export const linear = '${plant('linear-api-key', `lin_api_${rnd(40)}`)}';`,
    `export const newRelic = '${plant('newrelic-user-key', `NRAK-${rnd(27, UPPER)}`)}';`,
    `export const postman = '${plant('postman-api-key', `PMAK-${rnd(24, HEX)}-${rnd(34, HEX)}`)}';`,
    `export const grafana = '${plant('grafana-token', `glsa_${rnd(32)}_${rnd(8, HEX)}`)}';`,
    `export const sentry = '${plant('sentry-token', `sntrys_${rnd(64)}`)}';`,
    `export const pulumi = '${plant('pulumi-token', `pul-${rnd(40, HEX)}`)}';`,
    `export const age = '${plant('age-secret-key', `AGE-SECRET-KEY-1${rnd(58, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L')}`)}';`,
    `export const jwt = '${plant('jwt', `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(`{"sub":"${rnd(12)}"}`).toString('base64url')}.${rnd(43)}`)}';`,
    `export const cadre = '${plant('cadre-api-key', `cadre_${rnd(43)}`)}';`,
    `export const apiKey = "${plant('generic-secret', rnd(32))}";`,
  ];
  const files: Record<string, string> = {
    '.env': `${env.join('\n')}\n`,
    'src/keys.ts': `${code.join('\n')}\n`,
    '.npmrc': `//registry.npmjs.org/:_authToken=${plant('npm-token', `npm_${rnd(36)}`)}\n//npm.corp.internal/:_authToken=${plant('npmrc-auth-token', rnd(36))}\n`,
    '.pypirc': `[pypi]\nusername = __token__\npassword = ${plant('pypi-token', `pypi-AgEIcHlwaS5vcmc${rnd(80)}`)}\n`,
    'config/application.properties': `spring.datasource.url=jdbc:postgresql://db:5432/orders?user=orders&password=${plant('jdbc-password', rnd(16))}\n`,
    'config/appsettings.json': `${JSON.stringify({
      ConnectionStrings: {
        Sql: `Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=app;Password=${plant('connection-string-password', rnd(16))};`,
        Storage: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${plant('azure-storage-key', `${rnd(86, B64)}==`)};EndpointSuffix=core.windows.net`,
        Bus: `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${plant('azure-sas-key', `${rnd(43, B64)}=`)}`,
      },
    }, null, 2)}\n`,
    'docker-compose.yml': `services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: ${plant('generic-secret', `${rnd(12)}@${rnd(6)}`)}\n      MONGO_URL: mongodb+srv://admin:${plant('url-credentials', rnd(20))}@cluster0.mongodb.net/app\n`,
    'keys/id_rsa': `-----BEGIN RSA PRIVATE KEY-----\n${pemBody.join('\n')}\n-----END RSA PRIVATE KEY-----\n`,
    'gcp/service-account.json': `{\n  "type": "service_account",\n  "project_id": "p-1",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n${saBody.join('\\n')}\\n-----END PRIVATE KEY-----\\n",\n  "client_email": "x@p-1.iam.gserviceaccount.com"\n}\n`,
    'Dockerfile': 'FROM node:20-alpine@sha256:0f2b5a1c9b1c4bd1f0f2c3a1d5b1e0c9d9f1a2b3c4d5e6f708192a3b4c5d6e7f\nUSER node\n',
  };
  const missing = SECRET_RULE_DEFS.filter((r) => !planted.some((p) => p.rule === r.id)).map((r) => r.id);
  if (missing.length) throw new Error(`no planted secret for ${missing.join(', ')}`);
  return { files, planted };
}

/** What must not appear for a planted value: the value, and (for long ones) any 12-character slice past its 4-character prefix. */
export function needlesOf(value: string): string[] {
  const out = [value];
  for (const line of value.split(/\\n|\n/)) {
    for (let at = 4; at + 12 <= line.length; at += 12) out.push(line.slice(at, at + 12));
  }
  return [...new Set(out.filter((n) => n.length >= 8))];
}
