/**
 * The configuration file's schema (`.cadre.yaml`, else `$CADRE_HOME/config.yaml`): the contract's
 * sections `agents.<agent_id>` and `integrations.*`, plus Cadre's own `defaults` section.
 * Every key is documented in docs/configuration.md; keep both in step.
 *
 * Objects are strict (an unknown key is an error, which catches typos); the free-form maps are
 * `integrations.incident_management.routing`, `integrations.tracker.projects.mapping` and
 * `integrations.tracker.templates`. Secret values arrive here already resolved from the
 * environment (see `interpolate.ts`), so they are plain optional strings.
 */
import { z } from 'zod';
import { ACMF_MODES, INTELLIGENCE_TIERS, SCOPES } from '../engine/catalog/enums';
import { COMMERCIAL_TIERS, PRODUCT_IDS } from '../engine/catalog/subscription';
import { KNOWN_AGENT_IDS } from './agent-ids';

const text = z.string().min(1, { message: 'must not be empty' });
const textList = z.array(text);
const ratio = z.number().min(0).max(1);
const count = z.number().int().min(0);
const secret = z.string().optional();

const httpUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}, { message: 'must be an http(s) URL' });

// ---------------------------------------------------------------------------------------------
// agents.<agent_id>

/** Progression thresholds as written in an agent section: every key optional (falls back to defaults). */
const thresholdsOverride = z.strictObject({
  success_rate: ratio.optional(),
  min_tasks: count.optional(),
  consecutive_success: count.optional(),
});

const autonomousOverride = z.strictObject({
  enabled: z.boolean().optional(),
  success_rate: ratio.optional(),
  min_tasks: count.optional(),
  consecutive_success: count.optional(),
});

export const agentConfigSchema = z.strictObject({
  acmf_mode: z.enum(ACMF_MODES).optional(),
  capabilities: textList.optional(),
  approval_required_for: textList.optional(),
  progression: z.strictObject({
    to_assisted: thresholdsOverride.optional(),
    to_autonomous: autonomousOverride.optional(),
  }).optional(),
});
export type AgentConfig = z.output<typeof agentConfigSchema>;

// ---------------------------------------------------------------------------------------------
// integrations.*

/** A rule of the form "when enabled, these keys must be set"; paths are relative to the integration. */
function requireWhenEnabled<T extends { enabled: boolean }>(paths: string[][]) {
  return (value: T, ctx: z.RefinementCtx) => {
    if (!value.enabled) return;
    for (const path of paths) {
      let cur: unknown = value;
      for (const seg of path) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
      if (cur === undefined || cur === '') {
        ctx.addIssue({ code: 'custom', path, message: 'is required when the integration is enabled' });
      }
    }
  };
}

export const cloudMonitoringSchema = z.strictObject({
  enabled: z.boolean().default(false),
  region: text.optional(),
  credentials: z.strictObject({
    access_key_id: secret,
    secret_access_key: secret,
  }).optional(),
  metrics: z.strictObject({
    namespaces: textList.default(() => []),
    period: z.number().int().min(1).default(300),
  }).prefault({}),
  logs: z.strictObject({
    groups: textList.default(() => []),
  }).prefault({}),
  alarms: z.strictObject({
    sync_existing: z.boolean().default(false),
    create_alarms: z.boolean().default(false),
    notification_topic: text.optional(),
  }).prefault({}),
}).superRefine(requireWhenEnabled([['region']]));

export const INCIDENT_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export const INCIDENT_DEDUP_STRATEGIES = ['deployment_id', 'alert_type', 'custom'] as const;
export const INCIDENT_WEBHOOK_EVENTS = ['incident.triggered', 'incident.acknowledged', 'incident.resolved'] as const;

export const incidentManagementSchema = z.strictObject({
  enabled: z.boolean().default(false),
  routing_key: secret,
  routing: z.record(z.string(), z.strictObject({
    severity: z.enum(INCIDENT_SEVERITIES),
    class: text.optional(),
  })).default(() => ({})),
  dedup_strategy: z.enum(INCIDENT_DEDUP_STRATEGIES).default('deployment_id'),
  webhooks: z.strictObject({
    enabled: z.boolean().default(false),
    endpoint: httpUrl.optional(),
    events: z.array(z.enum(INCIDENT_WEBHOOK_EVENTS)).default(() => [...INCIDENT_WEBHOOK_EVENTS]),
    /** Signing secret of the provider's webhooks (`${ENV}` only), verified by /webhooks/pagerduty. */
    secret,
  }).prefault({}),
}).superRefine(requireWhenEnabled([['routing_key']])).superRefine((v, ctx) => {
  if (v.enabled && v.webhooks.enabled && !v.webhooks.endpoint) {
    ctx.addIssue({ code: 'custom', path: ['webhooks', 'endpoint'], message: 'is required when webhooks are enabled' });
  }
});

export const apmSchema = z.strictObject({
  enabled: z.boolean().default(false),
  api_key: secret,
  app_key: secret,
  site: text.optional(),
  metrics: z.strictObject({
    enabled: z.boolean().default(false),
    prefix: text.optional(),
    tags: textList.default(() => []),
  }).prefault({}),
  apm: z.strictObject({
    enabled: z.boolean().default(false),
    service_name: text.optional(),
  }).prefault({}),
  logs: z.strictObject({
    enabled: z.boolean().default(false),
    source: text.optional(),
    service: text.optional(),
  }).prefault({}),
  events: z.strictObject({
    enabled: z.boolean().default(false),
    aggregation_key: text.optional(),
  }).prefault({}),
  opentelemetry: z.strictObject({
    enabled: z.boolean().default(false),
    endpoint: httpUrl.optional(),
    headers: secret,
  }).prefault({}),
}).superRefine(requireWhenEnabled([['api_key']])).superRefine((v, ctx) => {
  if (v.enabled && v.opentelemetry.enabled && !v.opentelemetry.endpoint) {
    ctx.addIssue({ code: 'custom', path: ['opentelemetry', 'endpoint'], message: 'is required when OpenTelemetry export is enabled' });
  }
});

export const TRACKER_WEBHOOK_EVENTS = ['issue_created', 'issue_updated', 'sprint_started', 'sprint_closed'] as const;

export const trackerSchema = z.strictObject({
  enabled: z.boolean().default(false),
  base_url: httpUrl.optional(),
  auth: z.strictObject({
    account: text.optional(),
    api_token: secret,
  }).optional(),
  projects: z.strictObject({
    default: text.optional(),
    mapping: z.record(z.string(), text).default(() => ({})),
  }).prefault({}),
  webhooks: z.strictObject({
    endpoint: httpUrl.optional(),
    events: z.array(z.enum(TRACKER_WEBHOOK_EVENTS)).default(() => []),
    /** Signing secret of the tracker's webhooks (`${ENV}` only), verified by /webhooks/jira. */
    secret,
  }).prefault({}),
  templates: z.record(z.string(), z.strictObject({
    project: text.optional(),
    issuetype: text.optional(),
    priority: text.optional(),
  })).default(() => ({})),
}).superRefine(requireWhenEnabled([['base_url'], ['auth', 'api_token']]));

export const chatSchema = z.strictObject({
  enabled: z.boolean().default(false),
  channels: z.strictObject({
    alerts: text.optional(),
    approvals: text.optional(),
    deployments: text.optional(),
  }).prefault({}),
  notifications: z.array(z.strictObject({
    type: text,
    channel: text,
    mention: text.optional(),
  })).default(() => []),
});

export const integrationsSchema = z.strictObject({
  cloud_monitoring: cloudMonitoringSchema.prefault({}),
  incident_management: incidentManagementSchema.prefault({}),
  apm: apmSchema.prefault({}),
  tracker: trackerSchema.prefault({}),
  chat: chatSchema.prefault({}),
});
export const INTEGRATION_NAMES = ['cloud_monitoring', 'incident_management', 'apm', 'tracker', 'chat'] as const;
export type IntegrationName = (typeof INTEGRATION_NAMES)[number];

// ---------------------------------------------------------------------------------------------
// defaults (Cadre's own)

export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  '.github/workflows/**',
  'infra/**',
  '**/*.tf',
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'Dockerfile',
];

export const DEFAULT_APPROVAL_REQUIRED_FOR: readonly string[] = ['production_changes', 'security_sensitive'];

export const policySchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, { message: 'must be a lowercase slug (a-z, 0-9, ".", "_", "-")' }),
  description: text.optional(),
  deny_paths: textList.optional(),
  max_changed_lines: z.number().int().min(1).optional(),
}).superRefine((p, ctx) => {
  if ((p.deny_paths === undefined || p.deny_paths.length === 0) && p.max_changed_lines === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'a policy needs deny_paths and/or max_changed_lines' });
  }
});
export type PolicyRule = z.output<typeof policySchema>;

// ---------------------------------------------------------------------------------------------
// policy (policy-ai's rules over deployment configurations; docs/configuration.md "policy")

export const POLICY_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const POLICY_OPS = ['equals', 'not_equals', 'exists', 'absent', 'matches', 'not_matches', 'gte', 'lte', 'in', 'not_in'] as const;
/** Ids of the built-in baseline live under these prefixes: a configured rule may not take one. */
export const POLICY_BASELINE_PREFIXES = ['k8s.', 'docker.', 'compose.'] as const;
/**
 * A path into an object: `spec.replicas`, `metadata.labels["app.kubernetes.io/name"]`, `spec.template.spec.containers[*].image`,
 * `$pod.hostNetwork` (the pod spec of any workload kind), `$containers.securityContext.runAsNonRoot` (every container).
 */
export const POLICY_PATH_RE = /^(?:\$pod|\$containers|[A-Za-z0-9_-]+|\["[^"\]]+"\])(?:\[(?:\*|\d+)\])*(?:(?:\.[A-Za-z0-9_-]+|\["[^"\]]+"\])(?:\[(?:\*|\d+)\])*)*$/;

export const policyRuleSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, { message: 'must be a lowercase slug (a-z, 0-9, ".", "_", "-")' })
    .refine((id) => !POLICY_BASELINE_PREFIXES.some((p) => id.startsWith(p)), { message: `ids under ${POLICY_BASELINE_PREFIXES.join(', ')} belong to the built-in baseline; choose another id` }),
  severity: z.enum(POLICY_SEVERITIES),
  kinds: z.array(text).min(1, 'name at least one kind (Deployment, Pod, ..., or ComposeService)'),
  path: z.string().regex(POLICY_PATH_RE, { message: 'must be a dotted path (a.b[*].c, a["x.y"], $pod.x, $containers.x)' }),
  op: z.enum(POLICY_OPS),
  value: z.unknown().optional(),
  message: text,
  fix: text.optional(),
}).superRefine((r, ctx) => {
  const none = r.op === 'exists' || r.op === 'absent';
  if (none && r.value !== undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${r.op} takes no value` });
  if (!none && r.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${r.op} needs a value` });
  if ((r.op === 'gte' || r.op === 'lte') && r.value !== undefined && typeof r.value !== 'number') ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${r.op} needs a number` });
  if ((r.op === 'in' || r.op === 'not_in') && r.value !== undefined && !Array.isArray(r.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${r.op} needs a list` });
  if (r.op === 'matches' || r.op === 'not_matches') {
    if (typeof r.value !== 'string') ctx.addIssue({ code: 'custom', path: ['value'], message: `op ${r.op} needs a regular expression (text)` });
    else {
      try { new RegExp(r.value, 'u'); } catch (e) { ctx.addIssue({ code: 'custom', path: ['value'], message: `not a valid regular expression: ${(e as Error).message}` }); }
    }
  }
});
export type PolicyConfigRule = z.output<typeof policyRuleSchema>;

export const policyConfigSchema = z.strictObject({
  /** Rules added to the built-in baseline. */
  rules: z.array(policyRuleSchema).default(() => []).superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate rule id "${r.id}"` });
      seen.add(r.id);
    });
  }),
  /** Violations accepted on purpose: still reported, as waived, with the reason. */
  waivers: z.array(z.strictObject({
    rule: text,
    file: text.optional().describe('a glob of workspace paths; absent: every file'),
    object: text.optional().describe('Kind/name of the object (or the compose service); absent: every object'),
    reason: text,
  })).default(() => []),
  /** Baseline rule ids turned off: honoured only from $CADRE_HOME/config.yaml (a repository may waive, never disable). */
  disable: textList.default(() => []),
  /** What enforce may write when a fix needs a value: limits for containers without them, digests of image references. */
  enforce: z.strictObject({
    limits: z.strictObject({ cpu: text.optional(), memory: text.optional() }).prefault({}),
    digests: z.record(z.string().min(1), z.string().regex(/^sha256:[a-f0-9]{64}$/, { message: 'must be sha256:<64 hex digits>' })).default(() => ({})),
  }).prefault({}),
});
export type PolicyConfig = z.output<typeof policyConfigSchema>;

const hostName = z.string().regex(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/, {
  message: 'must be a host name, optionally with :port (no scheme, no path)',
});

const origin = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === s;
  } catch {
    return false;
  }
}, { message: 'must be an origin such as https://example.com (scheme://host[:port], no path, no "*")' });

export const defaultsSchema = z.strictObject({
  acmf_mode: z.enum(ACMF_MODES).default('LEARNING'),
  approval_required_for: textList.default(() => [...DEFAULT_APPROVAL_REQUIRED_FOR]),
  progression: z.strictObject({
    to_assisted: z.strictObject({
      success_rate: ratio.default(0.9),
      min_tasks: count.default(10),
      consecutive_success: count.default(5),
    }).prefault({}),
    to_autonomous: z.strictObject({
      enabled: z.boolean().default(false),
      success_rate: ratio.default(0.98),
      min_tasks: count.default(50),
      consecutive_success: count.default(20),
    }).prefault({}),
  }).prefault({}),
  intelligence: z.enum(INTELLIGENCE_TIERS).default('core'),
  scope: z.enum(SCOPES).default('mvp'),
  protected_paths: textList.default(() => [...DEFAULT_PROTECTED_PATHS]),
  policies: z.array(policySchema).default(() => []).superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((p, i) => {
      if (seen.has(p.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate policy id "${p.id}"` });
      seen.add(p.id);
    });
  }),
  denied_licenses: textList.default(() => []),
  server: z.strictObject({
    port: z.number().int().min(0).max(65535).default(7450),
    allowed_hosts: z.array(hostName).default(() => []),
    cors_origins: z.array(origin).default(() => []),
  }).prefault({}),
});

// ---------------------------------------------------------------------------------------------
// llm (Cadre's own): the language-model provider of generative agents

export const LLM_PROVIDERS = ['none', 'openai-compatible', 'editor'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

export const llmSchema = z.strictObject({
  provider: z.enum(LLM_PROVIDERS).default('none'),
  base_url: httpUrl.optional(),
  model: text.optional(),
  api_key: secret,
  timeout_ms: z.number().int().min(1).default(120_000),
  max_retries: z.number().int().min(0).max(10).default(2),
}).superRefine((v, ctx) => {
  if (v.provider !== 'openai-compatible') return;
  for (const key of ['base_url', 'model'] as const) {
    if (v[key] === undefined || v[key] === '') ctx.addIssue({ code: 'custom', path: [key], message: 'is required when provider is openai-compatible' });
  }
});
export type LlmConfig = z.output<typeof llmSchema>;

// ---------------------------------------------------------------------------------------------
// the whole file

export const cadreConfigSchema = z.strictObject({
  /** Schema version of the file; only 1 exists. Optional. */
  version: z.literal(1).optional(),
  agents: z.partialRecord(z.enum(KNOWN_AGENT_IDS), agentConfigSchema).default(() => ({})),
  integrations: integrationsSchema.prefault({}),
  defaults: defaultsSchema.prefault({}),
  llm: llmSchema.prefault({}),
  /** Separation of duties (docs/decisions.md): may an execution's own key approve its high-risk actions? Unset: only when one key exists. */
  security: z.strictObject({
    self_approval: z.boolean().optional(),
    /**
     * Folders outside the workspace that skills may read (a shared advisories or rules folder). Absolute
     * paths; honoured only from the user's own config ($CADRE_HOME/config.yaml), never from a workspace's
     * .cadre.yaml (a repository must not widen what Cadre reads); protected paths stay unreadable.
     */
    read_paths: z.array(z.string().refine((p) => /^(\/|[A-Za-z]:[\\/])/.test(p), { message: 'must be an absolute path' })).default(() => []),
  }).prefault({}),
  /**
   * What this install (later: a tenant) has bought: products and the commercial tier of [PRO] / [ULTRA]
   * agents. Absent: a local install owns everything (docs/decisions.md, "Products and tiers").
   */
  subscription: z.strictObject({
    products: z.array(z.enum(PRODUCT_IDS)).min(1, 'name at least one product'),
    tier: z.enum(COMMERCIAL_TIERS).describe('trial: [PRO] and [ULTRA] answer as previews; pro: [PRO] enabled; ultra: both'),
  }).optional(),
  /**
   * observe-ai (docs/configuration.md "observe"): `urls` are the URL prefixes it may fetch metrics or logs
   * from (honoured only from $CADRE_HOME/config.yaml, and fetched only when ACMF allows http_request);
   * `alert_rules` are evaluated by `alerts` when a request gives none.
   */
  observe: z.strictObject({
    urls: z.array(httpUrl).default(() => []),
    alert_rules: z.array(z.looseObject({ name: z.string().min(1) })).default(() => []),
  }).prefault({}),
  /** policy-ai (docs/configuration.md "policy"): rules added to the built-in baseline, waivers, baseline rules turned off ($CADRE_HOME only), fix values. */
  policy: policyConfigSchema.prefault({}),
  /** Code analysis (security-ai scan, review-ai): vendored, minified and generated files are skipped unless include_vendored. */
  analysis: z.strictObject({
    include_vendored: z.boolean().default(false),
  }).prefault({}),
  /** Retention of the store (docs/configuration.md): older terminal executions, their events and audit days are archived. */
  store: z.strictObject({
    retention_days: z.number().int().min(1).default(90),
    retention_executions: z.number().int().min(1).default(10_000),
  }).prefault({}),
  /** Outbound webhooks (docs/configuration.md "webhooks"): SSRF guard exceptions, retries, disabling, the security threshold. */
  webhooks: z.strictObject({
    allow_loopback: z.boolean().default(false),
    allow_private: z.boolean().default(false),
    allow_http: z.boolean().default(false),
    disable_after_days: z.number().positive().default(3),
    retry_window_hours: z.number().positive().max(24 * 7).default(24),
    retry_base_delay_ms: z.number().int().min(100).max(3_600_000).default(30_000),
    timeout_ms: z.number().int().min(100).max(120_000).default(10_000),
    concurrency_per_subscription: z.number().int().min(1).max(64).default(4),
    concurrency_total: z.number().int().min(1).max(1024).default(64),
    retention_per_subscription: z.number().int().min(10).default(1_000),
    severity_threshold: z.enum(['critical', 'high', 'medium', 'low', 'info']).default('high'),
  }).prefault({}),
});

export type CadreConfig = z.output<typeof cadreConfigSchema>;
export type CadreConfigInput = z.input<typeof cadreConfigSchema>;
export type IntegrationsConfig = CadreConfig['integrations'];
export type DefaultsConfig = CadreConfig['defaults'];

/** Deep-freezes a plain JSON-like value in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** The configuration used when no file exists (the empty file, validated like any other). */
export const DEFAULT_CONFIG: CadreConfig = deepFreeze(cadreConfigSchema.parse({}));
