/**
 * How a control is checked: each probe is one practice a repository (or the audit trail) can evidence,
 * shared by every framework control that asks for it (SOC2 CC7.2, HIPAA 164.312(b) and PCI-DSS 10.2 all
 * ask for audit logging). A probe is a list of signals; each signal names what counts, where it was
 * looked for, and finds the file and line that shows it. All signals found: met; some: partial; none:
 * missing. A contrary signal found (TLS verification turned off, a volume declared unencrypted, a
 * secret committed) keeps the probe from `met` and is reported with its file and line.
 *
 * Probes that depend on where the system runs (encryption at rest, backups) are not assessable in a
 * repository that holds no infrastructure definition: the repository cannot show them either way.
 */
import type { Located, RepoIndex } from '../../evolve/repo-index';
import {
  CI_FILE, CI_LOOKED_FOR, CI_RUNS_SECURITY_SCAN, CI_RUNS_TESTS, CODEOWNERS_FILE, CODEOWNERS_LOOKED_FOR, DEP_UPDATE_FILE, DEP_UPDATE_LOOKED_FOR,
  LOCK_FILE, LOCK_LOOKED_FOR, SECURITY_POLICY_FILE, SECURITY_POLICY_LOOKED_FOR,
} from '../../evolve/repo-index';

export type ControlStatus = 'met' | 'partial' | 'missing' | 'not_assessable';

/** Evidence not found: what was looked for and where. */
export interface Looked {
  what: string;
  where: string;
}

export interface ProbeResult {
  status: ControlStatus;
  found: Located[];
  missing: Looked[];
  /** Evidence against the control (file and line). */
  contrary: Located[];
  /** Why not assessable, or a note on the result. */
  why?: string;
}

/** Facts the engine (or the request) gives about the audit trail; absent: audit-evidenced probes are not assessable. */
export interface AuditFacts {
  /** Records examined. */
  records?: number;
  /** The hash chain verified from its first record to its last. */
  chainVerified?: boolean;
  /** The first tampered record when the chain does not verify (seq or a description). */
  tampered?: string;
  /** Approval decisions in the trail: how many, and how many a person made (not an automatic mode). */
  approvals?: { decided?: number; byPerson?: number };
}

/** What probes share besides the repository: the secret scan (run once) and the audit facts. */
export interface ProbeFacts {
  secrets: { findings: Array<{ file: string; line: number; ruleId: string; snippet?: string }>; filesScanned: number };
  audit?: AuditFacts;
}

interface Signal {
  what: string;
  where: string;
  find(idx: RepoIndex): Located | undefined;
}

export interface Probe {
  id: string;
  /** How it is checked, one sentence (published with every control that uses it). */
  how: string;
  signals?: Signal[];
  contrary?: Signal[];
  /** When no file matches, the probe is not assessable (with this reason). */
  applicable?: { files: RegExp; why: string };
  /** Probes that do not fit the signal shape (secrets, audit facts). */
  custom?: (idx: RepoIndex, facts: ProbeFacts) => ProbeResult;
}

/** Files whose lines may state configuration or code (not lock files, not media). */
const CONFIG_OR_CODE = /\.(ya?ml|json|json5|toml|ini|cfg|conf|properties|tf|tfvars|hcl|env\.example|xml|gradle|kts|js|mjs|cjs|ts|tsx|jsx|py|go|java|kt|rb|php|cs|rs|sh|nginx)$|(^|\/)(Dockerfile|nginx\.conf|Caddyfile|Procfile)$/i;
/** Manifests where a library is declared. */
const MANIFEST = /(^|\/)(package\.json|requirements[^/]*\.txt|pyproject\.toml|Pipfile|setup\.py|setup\.cfg|go\.mod|pom\.xml|build\.gradle(\.kts)?)$/;
/** Infrastructure definitions: where encryption at rest and backups are configured. */
const INFRA = /\.(tf|tf\.json)$|(^|\/)(docker-compose[^/]*\.ya?ml|compose\.ya?ml|serverless\.ya?ml|template\.ya?ml|cloudformation[^/]*\.(ya?ml|json)|Chart\.yaml|kustomization\.ya?ml)$|(^|\/)(k8s|kubernetes|manifests|deploy|helm|charts|infra|terraform)\//i;
const INFRA_WHY = 'no infrastructure definition (Terraform, CloudFormation, Kubernetes, Helm, Compose) in the repository: this is configured where the data is stored, not visible here';
/** Content signals read at most this many candidate files (large monorepos: the first ones in path order). */
const MAX_CANDIDATES = 3000;

const fileSignal = (what: string, where: string, re: RegExp): Signal => ({
  what, where, find: (idx) => { const f = idx.find(re)[0]; return f ? { file: f, detail: 'present' } : undefined; },
});

const lineSignal = (what: string, where: string, files: RegExp, line: RegExp): Signal => ({
  what, where, find: (idx) => idx.grepFiles(idx.find(files).filter((f) => !LOCK_FILE.test(f)).slice(0, MAX_CANDIDATES), line),
});

const anySignal = (what: string, where: string, ...alternatives: Signal[]): Signal => ({
  what, where, find: (idx) => { for (const a of alternatives) { const hit = a.find(idx); if (hit) return hit; } return undefined; },
});

const ci = fileSignal('a CI pipeline configuration', CI_LOOKED_FOR, CI_FILE);
const ciTests = lineSignal('a CI step that runs the tests', 'the CI configuration files', CI_FILE, CI_RUNS_TESTS);
const ciSecurityScan = lineSignal('a security scanner in CI (CodeQL, Snyk, Trivy, npm audit, pip-audit, govulncheck, gosec, Semgrep, gitleaks ...)', 'the CI configuration files', CI_FILE, CI_RUNS_SECURITY_SCAN);
const codeowners = fileSignal('a CODEOWNERS file (review by the owners)', CODEOWNERS_LOOKED_FOR, CODEOWNERS_FILE);
const branchProtection = lineSignal('branch protection requiring reviews as code', '.github/settings.yml, .github/rulesets/*.json',
  /^\.github\/(settings\.ya?ml|rulesets\/[^/]+\.json)$/, /required_(pull_request_reviews|approving_review_count)|"pull_request"|require_code_owner_review/);
const review = anySignal('required review: CODEOWNERS or branch protection as code', `${CODEOWNERS_LOOKED_FOR}; .github/settings.yml, .github/rulesets/*.json`, codeowners, branchProtection);
const depUpdates = fileSignal('automated dependency updates (Dependabot or Renovate)', DEP_UPDATE_LOOKED_FOR, DEP_UPDATE_FILE);
const lockFile = fileSignal('a dependency lock file', LOCK_LOOKED_FOR, LOCK_FILE);
const securityPolicy = fileSignal('a security policy (how to report a vulnerability)', SECURITY_POLICY_LOOKED_FOR, SECURITY_POLICY_FILE);
const incidentDoc = anySignal('an incident response procedure', 'docs or top-level .md files named incident, runbook, on-call, playbook, postmortem; an incident section in SECURITY.md',
  fileSignal('', '', /(^|\/)[^/]*(incident|runbook|on-?call|playbook|postmortem|disaster[-_]?recovery)[^/]*\.(md|rst|txt|adoc)$/i),
  lineSignal('', '', SECURITY_POLICY_FILE, /^#+.*\b(incident|response|disclosure process)\b/i));
const loggingLibrary = lineSignal('a logging library declared', 'package.json, requirements*.txt, pyproject.toml, go.mod, pom.xml, build.gradle', MANIFEST,
  /["'\s:=/]?(winston|pino|bunyan|log4js|morgan|structlog|loguru|logrus|go\.uber\.org\/zap|zerolog|log4j|logback|slf4j)\b/i);
const auditLog = lineSignal('an audit log or trail in code or configuration (audit log, audit trail, Kubernetes audit policy, CloudTrail)', 'configuration and source files',
  CONFIG_OR_CODE, /audit[_-]?(log|trail|event|record)|auditLog|AuditLog|audit\.k8s\.io|aws_cloudtrail|google_logging_project_sink|azurerm_monitor_diagnostic_setting/);
const authLibrary = lineSignal('an authentication or authorisation library declared', 'package.json, requirements*.txt, pyproject.toml, go.mod, pom.xml, build.gradle', MANIFEST,
  /["'\s]?(passport|next-auth|@auth\/|express-jwt|jsonwebtoken|\bjose\b|keycloak|@okta\/|auth0|casbin|\boso\b|flask-login|flask-jwt|authlib|fastapi-users|python-jose|djangorestframework-simplejwt|spring-boot-starter-security|spring-security|shiro|golang-jwt|coreos\/go-oidc|oauth2)/i);
const rbacConfig = anySignal('access rules as configuration (Kubernetes RBAC, OPA/Rego, Casbin model)', 'Kubernetes manifests, *.rego, Casbin .conf files',
  lineSignal('', '', /\.ya?ml$/i, /^\s*kind:\s*(Cluster)?Role(Binding)?\s*$/),
  fileSignal('', '', /\.rego$|(^|\/)(rbac|casbin)[^/]*\.(conf|csv|ya?ml|json)$/i));
const accessControl = anySignal('access control: an auth library or access rules as configuration', 'manifests; Kubernetes RBAC, *.rego, Casbin files', authLibrary, rbacConfig);
const mfa = lineSignal('multi-factor authentication (TOTP, WebAuthn, MFA)', 'configuration and source files', CONFIG_OR_CODE, /\b(mfa|totp|webauthn|two[-_ ]?factor|2fa|multi[-_ ]?factor|otplib|speakeasy|pyotp)\b/i);
const tlsOn = lineSignal('TLS enforced or configured (HSTS, https server, TLS certificates, sslmode=require, minimum TLS version)', 'configuration and source files',
  CONFIG_OR_CODE, /ssl_certificate\b|^\s*tls:\s*$|\btls\.(crt|key)\b|https\.createServer|Strict-Transport-Security|\bhsts\b|helmet\(|sslmode=(require|verify-full|verify-ca)|force_ssl|SECURE_SSL_REDIRECT|cert-manager\.io|ssl_protocols|min(imum)?_tls_version|ListenAndServeTLS|requireTLS|ssl-redirect/i);
const tlsOff = lineSignal('TLS verification turned off', 'configuration and source files',
  CONFIG_OR_CODE, /rejectUnauthorized\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*[=:]\s*['"]?0|verify\s*=\s*False|InsecureSkipVerify\s*:\s*true|sslmode=disable|ssl_verify\s*[=:]\s*false|--insecure\b/);
const encryptedAtRest = lineSignal('storage declared encrypted (encrypted = true, KMS key, server-side encryption, EncryptionConfiguration)', 'infrastructure definitions',
  INFRA, /encrypted\s*[=:]\s*true|storage_encrypted\s*=\s*true|kms_key_(id|arn)|server_side_encryption|sse_algorithm|kind:\s*EncryptionConfiguration|StorageEncrypted\s*:\s*['"]?true|disk_encryption|customer_managed_key|encryption_at_rest/i);
const unencrypted = lineSignal('storage declared unencrypted', 'infrastructure definitions', INFRA, /(storage_)?encrypted\s*[=:]\s*['"]?false|StorageEncrypted\s*:\s*['"]?false/i);
const backupConfig = anySignal('backups configured (retention, backup plan, point-in-time recovery, Velero schedule, a backup script)', 'infrastructure definitions; files named backup',
  lineSignal('', '', INFRA, /backup_retention_period|aws_backup_(plan|vault|selection)|point_in_time_recovery|PointInTimeRecovery|BackupRetentionPeriod|velero|backup_configuration|backup[_-]?schedule|snapshot_retention/i),
  fileSignal('', '', /(^|\/)backups?[^/]*\.(sh|ya?ml|json|tf|py|md)$/i));
const envIgnored = lineSignal('.env files ignored by git', '.gitignore', /^\.gitignore$/, /^\s*\*?\.env(\*|\.\*|\.local)?\s*$/);

/** The probes, by id (the control tables refer to them). */
export const PROBES: Readonly<Record<string, Probe>> = {
  'change-management': { id: 'change-management', how: 'CI configuration that runs the tests, and review required by CODEOWNERS or branch protection as code', signals: [ci, ciTests, review] },
  'required-review': { id: 'required-review', how: 'CODEOWNERS or branch protection requiring reviews, as files of the repository', signals: [review] },
  'vulnerability-management': { id: 'vulnerability-management', how: 'Dependabot or Renovate configuration, a lock file, and a security scanner run in CI', signals: [depUpdates, lockFile, ciSecurityScan] },
  'patching': { id: 'patching', how: 'Dependabot or Renovate configuration and a lock file (updates proposed and pinned)', signals: [depUpdates, lockFile] },
  'security-scanning': { id: 'security-scanning', how: 'a security scanner (SAST, dependency or secret scanning) run in CI', signals: [ci, ciSecurityScan] },
  'secure-development': { id: 'secure-development', how: 'review required (CODEOWNERS or branch protection), tests and a security scanner run in CI', signals: [review, ciTests, ciSecurityScan] },
  'security-policy': { id: 'security-policy', how: 'a SECURITY.md saying how to report a vulnerability', signals: [securityPolicy] },
  'incident-response': { id: 'incident-response', how: 'a security policy and an incident response procedure (runbook, incident doc or an incident section)', signals: [securityPolicy, incidentDoc] },
  'audit-logging': { id: 'audit-logging', how: 'a logging library declared and an audit log or trail in code or configuration', signals: [loggingLibrary, auditLog] },
  'access-control': { id: 'access-control', how: 'an authentication or authorisation library, or access rules as configuration (RBAC, Rego, Casbin)', signals: [accessControl] },
  'authentication': { id: 'authentication', how: 'an authentication library and multi-factor authentication in code or configuration', signals: [authLibrary, mfa] },
  'encryption-in-transit': { id: 'encryption-in-transit', how: 'TLS configured or enforced, and TLS verification never turned off', signals: [tlsOn], contrary: [tlsOff] },
  'encryption-at-rest': { id: 'encryption-at-rest', how: 'storage declared encrypted in the infrastructure definitions, none declared unencrypted', signals: [encryptedAtRest], contrary: [unencrypted], applicable: { files: INFRA, why: INFRA_WHY } },
  'backups': { id: 'backups', how: 'backups configured in the infrastructure definitions or a backup script', signals: [backupConfig], applicable: { files: INFRA, why: INFRA_WHY } },
  'secrets': {
    id: 'secrets',
    how: 'no secret in the repository (the one secret rule table of security-ai) and .env files ignored by git',
    custom: (idx, facts) => {
      const found: Located[] = [];
      const missing: Looked[] = [];
      const contrary = facts.secrets.findings.slice(0, 20).map((f) => ({ file: f.file, line: f.line, detail: `${f.ruleId}${f.snippet ? `: ${f.snippet}` : ''}` }));
      if (!facts.secrets.findings.length) found.push({ file: '.', detail: `no secret found in ${facts.secrets.filesScanned} file(s) scanned` });
      const env = envIgnored.find(idx);
      if (env) found.push(env); else missing.push({ what: envIgnored.what, where: envIgnored.where });
      const status: ControlStatus = contrary.length ? 'missing' : env ? 'met' : 'partial';
      return { status, found, missing, contrary, ...(contrary.length ? { why: `${facts.secrets.findings.length} secret(s) committed` } : {}) };
    },
  },
  'audit-integrity': {
    id: 'audit-integrity',
    how: "the audit trail's hash chain verifies (audit facts: chainVerified, records)",
    custom: (_idx, facts) => {
      const a = facts.audit;
      if (!a || a.chainVerified === undefined) return { status: 'not_assessable', found: [], missing: [{ what: 'audit facts: chainVerified', where: 'input.audit' }], contrary: [], why: 'evidenced by the audit trail, and no audit facts were given (input.audit)' };
      // An empty trail verifies vacuously: it shows nothing about how audit records are protected.
      if (a.chainVerified && a.records === 0) return { status: 'not_assessable', found: [], missing: [], contrary: [], why: 'the audit trail holds no record of this tenant yet' };
      if (a.chainVerified) return { status: 'met', found: [{ file: 'audit trail', detail: `hash chain verified${a.records !== undefined ? ` over ${a.records} record(s)` : ''}` }], missing: [], contrary: [] };
      return { status: 'missing', found: [], missing: [], contrary: [{ file: 'audit trail', detail: `hash chain broken${a.tampered ? `: ${a.tampered}` : ''}` }], why: 'the audit trail does not verify' };
    },
  },
  'approved-changes': {
    id: 'approved-changes',
    how: 'approvals in the audit trail decided by a person (audit facts: approvals.decided, approvals.byPerson)',
    custom: (_idx, facts) => {
      const ap = facts.audit?.approvals;
      if (!ap || ap.decided === undefined) return { status: 'not_assessable', found: [], missing: [{ what: 'audit facts: approvals.decided, approvals.byPerson', where: 'input.audit' }], contrary: [], why: 'evidenced by the audit trail, and no audit facts were given (input.audit)' };
      if (!ap.decided) return { status: 'not_assessable', found: [], missing: [], contrary: [], why: 'no approval was decided in the audit trail examined' };
      const byPerson = ap.byPerson ?? 0;
      const detail = `${byPerson} of ${ap.decided} approval decision(s) made by a person`;
      const status: ControlStatus = byPerson >= ap.decided ? 'met' : byPerson > 0 ? 'partial' : 'missing';
      return { status, found: byPerson ? [{ file: 'audit trail', detail }] : [], missing: [], contrary: byPerson < ap.decided ? [{ file: 'audit trail', detail }] : [] };
    },
  },
};

/** Runs one probe on the repository. */
export function runProbe(probe: Probe, idx: RepoIndex, facts: ProbeFacts): ProbeResult {
  if (probe.applicable && !idx.find(probe.applicable.files).length) {
    return { status: 'not_assessable', found: [], missing: [], contrary: [], why: probe.applicable.why };
  }
  if (probe.custom) return probe.custom(idx, facts);
  const found: Located[] = [];
  const missing: Looked[] = [];
  for (const s of probe.signals ?? []) {
    const hit = s.find(idx);
    if (hit) found.push({ ...hit, detail: `${s.what}: ${hit.detail}` }); else missing.push({ what: s.what, where: s.where });
  }
  const contrary: Located[] = [];
  for (const s of probe.contrary ?? []) {
    const hit = s.find(idx);
    if (hit) contrary.push({ ...hit, detail: `${s.what}: ${hit.detail}` });
  }
  const n = probe.signals?.length ?? 0;
  let status: ControlStatus = found.length === n ? 'met' : found.length ? 'partial' : 'missing';
  if (contrary.length && status === 'met') status = 'partial';
  return { status, found, missing, contrary };
}
