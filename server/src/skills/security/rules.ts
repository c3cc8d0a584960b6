/**
 * The one secret rule table: security-ai's scanner, the secrets-clean gate (skills/secret-rules.ts)
 * and the benchmark all read it. Each `source` is written in the common subset of JavaScript and
 * Rust (ripgrep) regex syntax (no look-around, no back-references) so that the benchmark can run
 * exactly the same patterns in both.
 *
 * Formats come from the providers' documentation and from the published rule sets of gitleaks and
 * trufflehog (read, not copied: the patterns below are ours and are tested on our own corpus).
 * Provider rules start with a fixed literal so that the combined pattern stays cheap.
 */
import type { RuleInfo, Severity } from '../findings/finding';
import { ruleHelpUri } from '../findings/rule-docs';

export type SecretFamily = 'cloud' | 'github' | 'gitlab' | 'slack' | 'stripe' | 'ai' | 'saas' | 'registry' | 'connection'
  | 'private-key' | 'jwt' | 'cadre' | 'generic';

/**
 * How a match is judged before it is reported:
 * - `random`: the part after the provider prefix must not be a placeholder (few distinct characters,
 *   low entropy, EXAMPLE / xxxx / <...> shapes, documented example keys);
 * - `mixed`: `random`, and it mixes character classes (letters and digits, or both cases);
 * - `password`: a password in a URL or connection string: not a template, placeholder or a well-known
 *   default (`postgres:postgres`, `guest:guest`, `password`, the user name again);
 * - `pem`, `jwt`, `generic`: see the scanner.
 */
export type SecretCheck = 'random' | 'mixed' | 'password' | 'pem' | 'jwt' | 'generic';

export interface SecretRuleDef extends RuleInfo {
  family: SecretFamily;
  severity: Severity;
  /** Pattern source (JS/Rust common subset, no flags). */
  source: string;
  /** Regex source (anchored at the match's end) whose group 1 is the secret inside the match; default the whole match. */
  secret?: string;
  /** Regex source of the fixed prefix not judged for randomness (ghp_, AKIA, glpat-...). */
  prefix?: string;
  check: SecretCheck;
  /** A provider token found as this rule's secret (a GitHub token as a URL password) is reported under its provider instead. */
  defer?: boolean;
  /** Characters that may not come right before the match (it would be part of a longer name). */
  notAfter?: string;
  /** Environment variable suggested by the fix. */
  envName: string;
  /** One line: why this is worth a finding (docs/skills.md). */
  rationale: string;
}

const ci = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/** Keywords that make an assignment a generic secret candidate (matched case-insensitively). */
export const GENERIC_KEYWORDS = ['key', 'secret', 'token', 'pass', 'passwd', 'password', 'pwd', 'credential'];

const GENERIC_SOURCE = `(?:${ci('key')}|${ci('secret')}|${ci('token')}|${ci('pass')}(?:${ci('w')}(?:${ci('or')})?${ci('d')})?|${ci('pwd')}|${ci('credential')})`
  + `[A-Za-z0-9_.-]{0,30}["']?[ \\t]{0,4}(?:=|:=|:|=>)[ \\t]{0,4}["'\`]?[A-Za-z0-9+/=_.~@#$%^&*!-]{8,200}`;

/** `name = "value"`, `name: value`, `"name": "value"` around a value pattern (for context rules). */
const assign = (name: string, value: string) => `${name}["']?[ \\t]{0,4}(?:=|:=|:|=>)[ \\t]{0,4}["']?${value}`;

const PASSWORD_WORD = '(?:[Pp]assword|PASSWORD|[Pp]wd|PWD)';

interface RuleSpec {
  family: SecretFamily;
  severity: Severity;
  description: string;
  source: string;
  envName: string;
  rationale: string;
  check?: SecretCheck;
  secret?: string;
  prefix?: string;
  defer?: boolean;
  notAfter?: string;
}

function rule(id: string, spec: RuleSpec): SecretRuleDef {
  const { check = 'random', ...rest } = spec;
  return { id, ...rest, check, helpUri: ruleHelpUri(id) };
}

export const SECRET_RULE_DEFS: readonly SecretRuleDef[] = [
  // ---- cloud
  rule('aws-access-key-id', { family: 'cloud', severity: 'critical', description: 'AWS access key id', envName: 'AWS_ACCESS_KEY_ID',
    source: '\\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\\b', prefix: '[A-Z]{4}',
    rationale: 'AKIA (long-term) and ASIA (temporary) ids are half of an AWS credential; the secret is rarely far away.' }),
  rule('aws-secret-access-key', { family: 'cloud', severity: 'critical', description: 'AWS secret access key (40 characters next to an aws…secret name)', envName: 'AWS_SECRET_ACCESS_KEY',
    source: assign(`${ci('aws')}[A-Za-z0-9_.-]{0,20}${ci('secret')}[A-Za-z0-9_.-]{0,20}`, '[A-Za-z0-9/+]{40}'), secret: '([A-Za-z0-9/+]{40})$', check: 'mixed',
    rationale: 'The secret half of an AWS key pair has no prefix, so it is found by its name (aws_secret_access_key) and its exact 40-character shape.' }),
  rule('gcp-api-key', { family: 'cloud', severity: 'high', description: 'Google Cloud API key', envName: 'GOOGLE_API_KEY',
    source: '\\bAIza[0-9A-Za-z_-]{35}', prefix: 'AIza',
    rationale: 'Google API keys (AIza…) are billed to the owner and often unrestricted.' }),
  rule('gcp-oauth-client-secret', { family: 'cloud', severity: 'high', description: 'Google OAuth client secret', envName: 'GOOGLE_CLIENT_SECRET',
    source: '\\bGOCSPX-[A-Za-z0-9_-]{28}\\b', prefix: 'GOCSPX-',
    rationale: 'GOCSPX- client secrets let anyone impersonate the OAuth application.' }),
  rule('azure-storage-key', { family: 'cloud', severity: 'critical', description: 'Azure storage account key (AccountKey= in a connection string)', envName: 'AZURE_STORAGE_CONNECTION_STRING',
    source: 'AccountKey=[A-Za-z0-9+/]{86}==', secret: 'AccountKey=([A-Za-z0-9+/=]+)$',
    rationale: 'An AccountKey gives full read/write access to every container of the storage account.' }),
  rule('azure-sas-key', { family: 'cloud', severity: 'high', description: 'Azure Service Bus / Event Hubs shared access key', envName: 'AZURE_SERVICEBUS_CONNECTION_STRING',
    source: 'SharedAccessKey=[A-Za-z0-9+/]{42,44}=', secret: 'SharedAccessKey=([A-Za-z0-9+/=]+)$',
    rationale: 'A SharedAccessKey signs tokens for the namespace or entity it belongs to.' }),
  rule('alibaba-access-key-id', { family: 'cloud', severity: 'high', description: 'Alibaba Cloud AccessKey id', envName: 'ALIBABA_CLOUD_ACCESS_KEY_ID',
    source: '\\bLTAI[A-Za-z0-9]{20}\\b', prefix: 'LTAI', check: 'mixed',
    rationale: 'LTAI ids are half of an Alibaba Cloud credential.' }),
  rule('digitalocean-token', { family: 'cloud', severity: 'critical', description: 'DigitalOcean personal, OAuth or refresh token', envName: 'DIGITALOCEAN_TOKEN',
    source: '\\bdo[opr]_v1_[a-f0-9]{64}\\b', prefix: 'do[opr]_v1_',
    rationale: 'dop_v1_ tokens control droplets, databases and DNS.' }),
  rule('hashicorp-vault-token', { family: 'cloud', severity: 'critical', description: 'HashiCorp Vault service token', envName: 'VAULT_TOKEN',
    source: '\\bhvs\\.[A-Za-z0-9_-]{90,}', prefix: 'hvs\\.',
    rationale: 'A Vault token reads every secret its policies allow.' }),
  rule('terraform-cloud-token', { family: 'cloud', severity: 'high', description: 'Terraform Cloud / Enterprise API token', envName: 'TF_TOKEN',
    source: '\\b[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}\\b', check: 'mixed',
    rationale: 'atlasv1 tokens run plans and applies against real infrastructure.' }),
  // ---- source forges
  rule('github-token', { family: 'github', severity: 'critical', description: 'GitHub token (classic, OAuth, app or fine-grained)', envName: 'GITHUB_TOKEN',
    source: '\\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\\b|\\bgithub_pat_[A-Za-z0-9_]{82}\\b', prefix: '(?:gh[opusr]_|github_pat_)',
    rationale: 'GitHub tokens reach code, packages and workflows with the owner\'s rights.' }),
  rule('gitlab-token', { family: 'gitlab', severity: 'critical', description: 'GitLab token (personal, deploy, runner, pipeline trigger, feed, OAuth, CI job, incoming mail, agent)', envName: 'GITLAB_TOKEN',
    source: '\\b(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|glimt|glagent|gloas|glffct)-[A-Za-z0-9_-]{20,}|\\bGR1348941[A-Za-z0-9_-]{20,}', prefix: '(?:[a-z]+-|GR1348941)',
    rationale: 'Every GitLab token prefix (glpat-, gldt-, glrt-, glptt-, GR1348941…) grants API, registry or runner access.' }),
  // ---- chat
  rule('slack-token', { family: 'slack', severity: 'high', description: 'Slack token', envName: 'SLACK_TOKEN',
    source: '\\bxox[abposre]-[A-Za-z0-9-]{10,}|\\bxapp-[0-9]-[A-Za-z0-9-]{10,}', prefix: 'x[a-z]{3}-', check: 'mixed',
    rationale: 'Bot, user and app-level Slack tokens read and post in the workspace.' }),
  rule('slack-webhook', { family: 'slack', severity: 'high', description: 'Slack incoming webhook URL', envName: 'SLACK_WEBHOOK_URL',
    source: 'https://hooks\\.slack\\.com/services/T[A-Za-z0-9]{8,}/B[A-Za-z0-9]{8,}/[A-Za-z0-9]{24}', prefix: 'https://hooks\\.slack\\.com/services/',
    rationale: 'Anyone with the URL can post to the channel as the integration.' }),
  rule('discord-webhook', { family: 'slack', severity: 'medium', description: 'Discord webhook URL', envName: 'DISCORD_WEBHOOK_URL',
    source: 'https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}', secret: '/([A-Za-z0-9_-]{60,68})$',
    rationale: 'The webhook token lets anyone post to the channel.' }),
  rule('telegram-bot-token', { family: 'slack', severity: 'high', description: 'Telegram bot token', envName: 'TELEGRAM_BOT_TOKEN',
    source: '\\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\\b', prefix: '[0-9]+:AA', check: 'mixed',
    rationale: 'A bot token controls the bot and reads its chats.' }),
  // ---- payments
  rule('stripe-secret-key', { family: 'stripe', severity: 'critical', description: 'Stripe live secret or restricted key', envName: 'STRIPE_SECRET_KEY',
    source: '\\b[sr]k_live_[A-Za-z0-9]{24,}\\b', prefix: '[sr]k_live_',
    rationale: 'Live Stripe keys move money; test keys (sk_test_) are not reported.' }),
  rule('stripe-webhook-secret', { family: 'stripe', severity: 'high', description: 'Stripe webhook signing secret', envName: 'STRIPE_WEBHOOK_SECRET',
    source: '\\bwhsec_[A-Za-z0-9]{32,}\\b', prefix: 'whsec_', check: 'mixed',
    rationale: 'With the signing secret anyone can forge Stripe events to the endpoint.' }),
  rule('square-token', { family: 'stripe', severity: 'critical', description: 'Square access token or OAuth secret', envName: 'SQUARE_ACCESS_TOKEN',
    source: '\\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}\\b', prefix: 'sq0[a-z]{3}-', check: 'mixed',
    rationale: 'Square tokens take payments and read customer data.' }),
  rule('shopify-token', { family: 'stripe', severity: 'high', description: 'Shopify access token or shared secret', envName: 'SHOPIFY_ACCESS_TOKEN',
    source: '\\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\\b', prefix: 'shp[a-z]{2}_',
    rationale: 'Shopify admin tokens read orders and customers.' }),
  // ---- AI
  rule('openai-api-key', { family: 'ai', severity: 'critical', description: 'OpenAI API key (project, service account, admin or legacy)', envName: 'OPENAI_API_KEY',
    source: '\\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\\b|\\bsk-[A-Za-z0-9]{48}\\b', prefix: 'sk-(?:[a-z]+-)?', check: 'mixed',
    rationale: 'OpenAI keys are billed per token to the owner; leaked ones are abused within hours.' }),
  rule('anthropic-api-key', { family: 'ai', severity: 'critical', description: 'Anthropic API or admin key', envName: 'ANTHROPIC_API_KEY',
    source: '\\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}', prefix: 'sk-ant-[a-z]+[0-9]{2}-', check: 'mixed',
    rationale: 'sk-ant- keys are billed to the owner and reach the organisation\'s workspaces.' }),
  rule('huggingface-token', { family: 'ai', severity: 'high', description: 'Hugging Face access token', envName: 'HF_TOKEN',
    source: '\\b(?:hf_|api_org_)[A-Za-z0-9]{34}\\b', prefix: '(?:hf_|api_org_)', check: 'mixed',
    rationale: 'hf_ tokens read private models and datasets and, with write scope, push to them.' }),
  // ---- SaaS
  rule('sendgrid-api-key', { family: 'saas', severity: 'high', description: 'SendGrid API key', envName: 'SENDGRID_API_KEY',
    source: '\\bSG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}\\b', prefix: 'SG\\.',
    rationale: 'A SendGrid key sends mail as the account (phishing from a trusted domain).' }),
  rule('twilio-api-key', { family: 'saas', severity: 'high', description: 'Twilio API key SID', envName: 'TWILIO_API_KEY',
    source: '\\bSK[0-9a-f]{32}\\b', prefix: 'SK',
    rationale: 'SK… API keys (with their secret) call Twilio as the account; account SIDs (AC…) alone are identifiers, so only an auth token next to one is reported.' }),
  rule('twilio-auth-token', { family: 'saas', severity: 'critical', description: 'Twilio auth token (32 hex next to a twilio…token name)', envName: 'TWILIO_AUTH_TOKEN',
    source: assign(`${ci('twilio')}[A-Za-z0-9_.-]{0,20}${ci('token')}`, '[0-9a-f]{32}\\b'), secret: '([0-9a-f]{32})$',
    rationale: 'The auth token is the account password for the API.' }),
  rule('mailgun-api-key', { family: 'saas', severity: 'high', description: 'Mailgun API key', envName: 'MAILGUN_API_KEY',
    // Not after `-` or `_` (cache-key-<md5>, api_key-<hash> are names with a digest, not Mailgun keys);
    // checked beside the pattern so that it keeps its literal start (ripgrep and V8 skip ahead on it).
    source: '\\bkey-[0-9a-f]{32}\\b', notAfter: '-_', prefix: 'key-',
    rationale: 'A Mailgun key sends mail and reads logs for every domain of the account.' }),
  rule('mailchimp-api-key', { family: 'saas', severity: 'medium', description: 'Mailchimp API key', envName: 'MAILCHIMP_API_KEY',
    source: '\\b[0-9a-f]{32}-us[0-9]{1,2}\\b',
    rationale: 'A Mailchimp key exports audiences (personal data) and sends campaigns.' }),
  rule('databricks-token', { family: 'saas', severity: 'high', description: 'Databricks personal access token', envName: 'DATABRICKS_TOKEN',
    source: '\\bdapi[a-f0-9]{32}(?:-[0-9])?\\b', prefix: 'dapi',
    rationale: 'dapi tokens run jobs and read tables in the workspace.' }),
  rule('doppler-token', { family: 'saas', severity: 'high', description: 'Doppler token', envName: 'DOPPLER_TOKEN',
    source: '\\bdp\\.(?:pt|st|sa|ct|scim|audit)\\.[A-Za-z0-9]{40,44}\\b', prefix: 'dp\\.[a-z]+\\.', check: 'mixed',
    rationale: 'A Doppler token reads the secrets it was made to protect.' }),
  rule('linear-api-key', { family: 'saas', severity: 'medium', description: 'Linear API key', envName: 'LINEAR_API_KEY',
    source: '\\blin_api_[A-Za-z0-9]{40}\\b', prefix: 'lin_api_', check: 'mixed',
    rationale: 'A Linear key reads and edits the workspace\'s issues.' }),
  rule('newrelic-user-key', { family: 'saas', severity: 'medium', description: 'New Relic user API key', envName: 'NEW_RELIC_API_KEY',
    source: '\\bNRAK-[A-Z0-9]{27}\\b', prefix: 'NRAK-',
    rationale: 'A user key queries all telemetry of the account.' }),
  rule('postman-api-key', { family: 'saas', severity: 'medium', description: 'Postman API key', envName: 'POSTMAN_API_KEY',
    source: '\\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\\b', prefix: 'PMAK-',
    rationale: 'Postman collections often hold further credentials.' }),
  rule('grafana-token', { family: 'saas', severity: 'high', description: 'Grafana service account or Cloud token', envName: 'GRAFANA_TOKEN',
    source: '\\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\\b|\\bglc_[A-Za-z0-9+/]{32,400}={0,2}', prefix: 'gl[a-z]{1,2}_', check: 'mixed',
    rationale: 'Grafana tokens read dashboards and data sources (with their credentials).' }),
  rule('sentry-token', { family: 'saas', severity: 'medium', description: 'Sentry organisation or user auth token', envName: 'SENTRY_AUTH_TOKEN',
    source: '\\bsntry[su]_[A-Za-z0-9+/=_-]{40,}', prefix: 'sntry[su]_', check: 'mixed',
    rationale: 'Sentry auth tokens upload releases and read events (which can hold personal data).' }),
  rule('pulumi-token', { family: 'saas', severity: 'high', description: 'Pulumi access token', envName: 'PULUMI_ACCESS_TOKEN',
    source: '\\bpul-[a-f0-9]{40}\\b', prefix: 'pul-',
    rationale: 'A Pulumi token reads stack state, which holds the stack\'s secrets.' }),
  rule('age-secret-key', { family: 'saas', severity: 'critical', description: 'age encryption secret key', envName: 'AGE_SECRET_KEY',
    source: '\\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\\b', prefix: 'AGE-SECRET-KEY-1',
    rationale: 'An age identity decrypts every file encrypted to it (SOPS files included).' }),
  // ---- package registries
  rule('npm-token', { family: 'registry', severity: 'critical', description: 'npm access token', envName: 'NPM_TOKEN',
    source: '\\bnpm_[A-Za-z0-9]{36}\\b', prefix: 'npm_', check: 'mixed',
    rationale: 'npm tokens publish packages: a supply-chain attack on every user.' }),
  rule('npmrc-auth-token', { family: 'registry', severity: 'high', description: 'Registry auth token in .npmrc (_authToken / _auth)', envName: 'NPM_TOKEN',
    source: ':_auth(?:Token)?[ \\t]{0,2}=[ \\t]{0,2}[A-Za-z0-9_+/=.-]{20,}', secret: '=[ \\t]*([A-Za-z0-9_+/=.-]+)$', defer: true,
    rationale: 'A registry credential in .npmrc publishes or reads private packages; use ${NPM_TOKEN}.' }),
  rule('pypi-token', { family: 'registry', severity: 'critical', description: 'PyPI / TestPyPI API token', envName: 'PYPI_TOKEN',
    source: '\\bpypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}', prefix: 'pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)', check: 'mixed',
    rationale: 'PyPI tokens upload releases of the owner\'s projects.' }),
  // ---- credentials in connection strings and URLs
  rule('url-credentials', { family: 'connection', severity: 'high', description: 'Password in a URL or database URI (postgres, mysql, mongodb(+srv), redis, amqp, …)', envName: 'DATABASE_URL',
    source: '\\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver|cockroachdb|clickhouse|nats|kafka|s?ftp|smtps?|ldaps?|https?)://[^\\s:@/"\'<>]{0,64}:[^\\s@/"\'<>]{1,128}@',
    secret: ':([^\\s:@/"\'<>][^\\s@/"\'<>]*)@$', check: 'password', defer: true,
    rationale: 'A user:password@ URL (DATABASE_URL, REDIS_URL, a git remote) is a full credential; read it from the environment.' }),
  rule('jdbc-password', { family: 'connection', severity: 'high', description: 'Password parameter in a JDBC URL', envName: 'JDBC_PASSWORD',
    source: `\\bjdbc:[a-z0-9]+:[^\\s"'<>]{1,200}[?&;]${PASSWORD_WORD}=[^&;\\s"'<>]{1,128}`, secret: '=([^&;\\s"\'<>=]+)$', check: 'password', defer: true,
    rationale: 'jdbc:…?password=… puts the database password in configuration files and logs.' }),
  rule('connection-string-password', { family: 'connection', severity: 'high', description: 'Password in an ADO.NET / ODBC connection string (Server=…;Password=…)', envName: 'CONNECTION_STRING',
    source: `(?:[Ss]erver|SERVER|Data Source|[Hh]ost|HOST|Address|Addr)[ \\t]{0,2}=[^;"'\\n]{1,200};[^"'\\n]{0,300}${PASSWORD_WORD}[ \\t]{0,2}=[ \\t]{0,2}[^;"'\\n]{1,128}`,
    secret: `${PASSWORD_WORD}[ \\t]*=[ \\t]*([^;"'\\n]+)$`, check: 'password', defer: true,
    rationale: 'Server=…;Password=… connection strings (SQL Server, ODBC, Npgsql) carry the database password.' }),
  // ---- keys and tokens by structure
  rule('private-key', { family: 'private-key', severity: 'critical', description: 'PEM private key block (also written on one line with \\n escapes)', envName: 'PRIVATE_KEY',
    source: '-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED |SSH2 ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----', check: 'pem',
    rationale: 'A private key (TLS, SSH, a GCP service account\'s private_key) is the identity itself.' }),
  rule('jwt', { family: 'jwt', severity: 'medium', description: 'JSON Web Token', envName: 'JWT',
    source: '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{16,}', check: 'jwt',
    rationale: 'A signed JWT is a bearer credential until it expires (often never for service tokens).' }),
  rule('cadre-api-key', { family: 'cadre', severity: 'critical', description: 'Cadre API key', envName: 'CADRE_API_KEY',
    source: '\\bcadre_[A-Za-z0-9_-]{43}\\b', prefix: 'cadre_', check: 'mixed',
    rationale: 'Cadre keys start executions and read their results.' }),
  rule('generic-secret', { family: 'generic', severity: 'high', description: 'Hard-coded high-entropy secret assigned to a key/secret/token/password name', envName: 'SECRET',
    source: GENERIC_SOURCE, check: 'generic',
    rationale: 'Any high-entropy value assigned to a key/secret/token/password name (code, YAML, JSON, .env, docker-compose, Kubernetes Secret data).' }),
];

export const SECRET_RULE_BY_ID: ReadonlyMap<string, SecretRuleDef> = new Map(SECRET_RULE_DEFS.map((r) => [r.id, r]));

export const SECRET_FAMILIES: readonly SecretFamily[] = ['cloud', 'github', 'gitlab', 'slack', 'stripe', 'ai', 'saas', 'registry', 'connection', 'private-key', 'jwt', 'cadre', 'generic'];
