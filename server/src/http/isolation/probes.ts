/**
 * The tenant boundary, route by route: what a key of one tenant (the intruder) sends against another
 * tenant's objects (the owner's), and what it must get back. One table for tenant-ai `check-isolation`
 * (which runs it over loopback HTTP between two probe tenants) and for the isolation test
 * (test/integration/http/tenant-isolation.test.ts), which also fails when a route of the live OpenAPI
 * document has no row here.
 *
 * Every write aims at the owner's objects or carries a body the route would refuse, so that a broken
 * boundary shows as a wrong answer and never changes anything outside the two probe tenants: the
 * install routes (`install_only` is decided before the body is read) get invalid bodies, the tenant
 * routes name the owner probe tenant, the secret routes the owner's own secret.
 */

/** What the owner holds, one object of each kind, made through the API with the owner's key. */
export interface OwnedObjects {
  /** The owner's tenant id. */
  tenant: string;
  /** A directory requests may name as `source` (the check's own empty workspace). */
  workspace: string;
  task: string; workflow: string; rigor: string; action: string; custom: string; approval: string;
  project: string; prediction: string; remediation: string; webhook: string; delivery: string;
  integration: string; keyId: string;
  /** The secret the owner's GitHub integration reads. */
  secret: string;
}

/** The owned object ids (what must never appear in the intruder's answers). */
export const OWNED_ID_FIELDS = [
  'task', 'workflow', 'rigor', 'action', 'custom', 'approval', 'project', 'prediction', 'remediation', 'webhook', 'delivery', 'integration', 'keyId',
] as const satisfies ReadonlyArray<keyof OwnedObjects>;

/**
 * 404: the owner's object is not found (like a missing one); 403: the install's own route (`install_only`);
 * 'excludes': 200 and none of the owner's ids in the answer; 'own': the intruder acts in its own tenant
 * (any answer that names nothing of the owner's).
 */
export type ProbeExpectation = 404 | 403 | 'excludes' | 'own';

export interface ProbeRequest { method: string; path: string; body?: unknown }

export interface IsolationProbe {
  req(o: OwnedObjects): ProbeRequest;
  expect: ProbeExpectation;
}

const q = encodeURIComponent;
const SECRET = 'tenant-isolation-probe-secret-0123456789abcdef';

/** Keyed `METHOD /path` exactly as the OpenAPI document spells the route. */
export const ISOLATION_PROBES: Readonly<Record<string, IsolationProbe>> = {
  'POST /api/session': { req: () => ({ method: 'POST', path: '/api/session' }), expect: 'own' },
  'DELETE /api/session': { req: () => ({ method: 'DELETE', path: '/api/session' }), expect: 'own' },
  'POST /v1/admin/keys': { req: () => ({ method: 'POST', path: '/v1/admin/keys', body: { label: 'isolation probe', role: 'operator' } }), expect: 'own' },
  'GET /v1/admin/keys': { req: () => ({ method: 'GET', path: '/v1/admin/keys' }), expect: 'excludes' },
  'GET /v1/admin/keys/{id}': { req: (o) => ({ method: 'GET', path: `/v1/admin/keys/${o.keyId}` }), expect: 404 },
  'DELETE /v1/admin/keys/{id}': { req: (o) => ({ method: 'DELETE', path: `/v1/admin/keys/${o.keyId}` }), expect: 404 },
  'POST /v1/admin/tenants': { req: () => ({ method: 'POST', path: '/v1/admin/tenants', body: { name: '' } }), expect: 403 },
  'GET /v1/admin/tenants': { req: () => ({ method: 'GET', path: '/v1/admin/tenants' }), expect: 403 },
  'GET /v1/admin/tenants/{tenant_id}': { req: (o) => ({ method: 'GET', path: `/v1/admin/tenants/${o.tenant}` }), expect: 403 },
  'PATCH /v1/admin/tenants/{tenant_id}': { req: (o) => ({ method: 'PATCH', path: `/v1/admin/tenants/${o.tenant}`, body: { name: 42 } }), expect: 403 },
  'DELETE /v1/admin/tenants/{tenant_id}': { req: (o) => ({ method: 'DELETE', path: `/v1/admin/tenants/${o.tenant}` }), expect: 403 },
  'POST /v1/admin/tenants/{tenant_id}/keys': { req: (o) => ({ method: 'POST', path: `/v1/admin/tenants/${o.tenant}/keys`, body: { label: 42 } }), expect: 403 },
  'GET /v1/tenant': { req: () => ({ method: 'GET', path: '/v1/tenant' }), expect: 'own' },
  'POST /v1/agents/tasks': { req: (o) => ({ method: 'POST', path: '/v1/agents/tasks', body: { task: 'check the secrets', capabilities: ['SECURE'], source: o.workspace } }), expect: 'own' },
  'GET /v1/agents/tasks/{taskId}': { req: (o) => ({ method: 'GET', path: `/v1/agents/tasks/${o.task}` }), expect: 404 },
  'POST /api/agents/tasks': { req: (o) => ({ method: 'POST', path: '/api/agents/tasks', body: { task: 'check the secrets', capabilities: ['SECURE'], source: o.workspace } }), expect: 'own' },
  'GET /api/agents/tasks/{taskId}': { req: (o) => ({ method: 'GET', path: `/api/agents/tasks/${o.task}` }), expect: 404 },
  'POST /api/workflows/invoke': { req: (o) => ({ method: 'POST', path: '/api/workflows/invoke', body: { capability: 'SECURE', workflow: 'secure', input: { prompt: 'probe', source: o.workspace } } }), expect: 'own' },
  'GET /api/workflows/{id}/status': { req: (o) => ({ method: 'GET', path: `/api/workflows/${o.workflow}/status` }), expect: 404 },
  'GET /api/workflows': { req: () => ({ method: 'GET', path: '/api/workflows?limit=100' }), expect: 'excludes' },
  'POST /api/workflows/cancel/{id}': { req: (o) => ({ method: 'POST', path: `/api/workflows/cancel/${o.action}` }), expect: 404 },
  'POST /v1/admin/rigor/invoke/{agentId}': { req: (o) => ({ method: 'POST', path: '/v1/admin/rigor/invoke/security-ai', body: { prompt: 'probe', source: o.workspace } }), expect: 'own' },
  'POST /api/v1/rigor/invoke/{agentId}': { req: (o) => ({ method: 'POST', path: '/api/v1/rigor/invoke/security-ai', body: { prompt: 'probe', source: o.workspace } }), expect: 'own' },
  'GET /v1/admin/rigor/status/{executionId}': { req: (o) => ({ method: 'GET', path: `/v1/admin/rigor/status/${o.rigor}` }), expect: 404 },
  'GET /api/v1/rigor/status/{executionId}': { req: (o) => ({ method: 'GET', path: `/api/v1/rigor/status/${o.action}` }), expect: 404 },
  'GET /v1/admin/rigor/health': { req: () => ({ method: 'GET', path: '/v1/admin/rigor/health' }), expect: 'excludes' },
  'POST /v1/customer/workflow': {
    req: (o) => ({ method: 'POST', path: '/v1/customer/workflow', body: { name: 'probe', pattern: 'sequential', steps: [{ id: 's', agent: 'security-ai', action: 'scan' }], input: { prompt: 'probe', source: o.workspace } } }),
    expect: 'own',
  },
  'GET /v1/customer/workflow/{id}': { req: (o) => ({ method: 'GET', path: `/v1/customer/workflow/${o.custom}` }), expect: 404 },
  'GET /v1/customer/workflow/{id}/status': { req: (o) => ({ method: 'GET', path: `/v1/customer/workflow/${o.custom}/status` }), expect: 404 },
  'GET /v1/agents/{id}/status': { req: () => ({ method: 'GET', path: '/v1/agents/coder-ai/status' }), expect: 'excludes' },
  'GET /v1/agents/orchestrator/coordination': { req: () => ({ method: 'GET', path: '/v1/agents/orchestrator/coordination' }), expect: 'excludes' },
  'POST /api/agents/{id}/{action}': { req: (o) => ({ method: 'POST', path: '/api/agents/security-ai/scan', body: { prompt: 'probe', source: o.workspace } }), expect: 'own' },
  'GET /api/agents/{id}/{action}': { req: () => ({ method: 'GET', path: '/api/agents/req-ai/analyze?prompt=probe' }), expect: 'own' },
  'GET /api/admin/events/stream': { req: (o) => ({ method: 'GET', path: `/api/admin/events/stream?execution_id=${o.action}` }), expect: 404 },
  'GET /v1/approvals': { req: () => ({ method: 'GET', path: '/v1/approvals?status=all' }), expect: 'excludes' },
  'POST /v1/approvals/{id}/decision': { req: (o) => ({ method: 'POST', path: `/v1/approvals/${o.approval}/decision`, body: { approved: true } }), expect: 404 },
  // An invalid mode: a broken boundary answers 400 instead of changing an agent of the install.
  'POST /v1/agents/{id}/acmf': { req: () => ({ method: 'POST', path: '/v1/agents/coder-ai/acmf', body: { mode: 'NOT_A_MODE', reason: 'isolation probe' } }), expect: 403 },
  'POST /v1/webhooks': { req: () => ({ method: 'POST', path: '/v1/webhooks', body: { url: 'http://127.0.0.1:9/probe', events: ['code.reviewed'], secret: SECRET } }), expect: 'own' },
  'GET /v1/webhooks': { req: () => ({ method: 'GET', path: '/v1/webhooks' }), expect: 'excludes' },
  'GET /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'GET', path: `/v1/webhooks/${o.webhook}` }), expect: 404 },
  'PATCH /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'PATCH', path: `/v1/webhooks/${o.webhook}`, body: { enabled: false } }), expect: 404 },
  'DELETE /v1/webhooks/{webhook_id}': { req: (o) => ({ method: 'DELETE', path: `/v1/webhooks/${o.webhook}` }), expect: 404 },
  'POST /v1/webhooks/{webhook_id}/test': { req: (o) => ({ method: 'POST', path: `/v1/webhooks/${o.webhook}/test` }), expect: 404 },
  'GET /v1/webhooks/{webhook_id}/deliveries': { req: (o) => ({ method: 'GET', path: `/v1/webhooks/${o.webhook}/deliveries` }), expect: 404 },
  'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': { req: (o) => ({ method: 'POST', path: `/v1/webhooks/${o.webhook}/deliveries/${o.delivery}/redeliver` }), expect: 404 },
  'GET /v1/admin/store': { req: () => ({ method: 'GET', path: '/v1/admin/store' }), expect: 403 },
  'POST /v1/admin/store/compact': { req: () => ({ method: 'POST', path: '/v1/admin/store/compact' }), expect: 403 },
  'GET /v1/projects': { req: () => ({ method: 'GET', path: '/v1/projects?limit=100' }), expect: 'excludes' },
  'POST /v1/projects': { req: (o) => ({ method: 'POST', path: '/v1/projects', body: { name: 'probe-shop', repository: { type: 'local', url: o.workspace } } }), expect: 'own' },
  'GET /v1/projects/{project_id}': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}` }), expect: 404 },
  'PATCH /v1/projects/{project_id}': { req: (o) => ({ method: 'PATCH', path: `/v1/projects/${o.project}`, body: { name: 'taken' } }), expect: 404 },
  'DELETE /v1/projects/{project_id}': { req: (o) => ({ method: 'DELETE', path: `/v1/projects/${o.project}` }), expect: 404 },
  'POST /v1/projects/{project_id}/metrics': { req: (o) => ({ method: 'POST', path: `/v1/projects/${o.project}/metrics`, body: { limits: { up: 2 } } }), expect: 404 },
  'GET /v1/projects/{project_id}/metrics': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}/metrics` }), expect: 404 },
  'POST /v1/projects/{project_id}/predictions/detect': { req: (o) => ({ method: 'POST', path: `/v1/projects/${o.project}/predictions/detect` }), expect: 404 },
  'GET /v1/projects/{project_id}/predictions': { req: (o) => ({ method: 'GET', path: `/v1/projects/${o.project}/predictions` }), expect: 404 },
  'GET /v1/predictions/{prediction_id}': { req: (o) => ({ method: 'GET', path: `/v1/predictions/${o.prediction}` }), expect: 404 },
  'POST /v1/predictions/{prediction_id}/remediate': { req: (o) => ({ method: 'POST', path: `/v1/predictions/${o.prediction}/remediate`, body: { action: 'apply', mode: 'automatic' } }), expect: 404 },
  'GET /v1/remediations/{remediation_id}': { req: (o) => ({ method: 'GET', path: `/v1/remediations/${o.remediation}` }), expect: 404 },
  // Registering with the owner's secret: refused (422), a tenant may only use its own secrets.
  'POST /api/v1/integrations/github': {
    req: (o) => ({ method: 'POST', path: '/api/v1/integrations/github', body: { integration_name: 'probe', github_repo: 'acme/probe', github_installation_id: 7, secrets_manager_arn: o.secret, verify: false, config: { agents: ['coder-ai'], require_review: true } } }),
    expect: 'own',
  },
  'GET /api/v1/integrations/github': { req: () => ({ method: 'GET', path: '/api/v1/integrations/github' }), expect: 'excludes' },
  'GET /api/v1/integrations/github/{integration_id}': { req: (o) => ({ method: 'GET', path: `/api/v1/integrations/github/${o.integration}` }), expect: 404 },
  'DELETE /api/v1/integrations/github/{integration_id}': { req: (o) => ({ method: 'DELETE', path: `/api/v1/integrations/github/${o.integration}` }), expect: 404 },
  'POST /api/v1/integrations/github/{integration_id}/verify': { req: (o) => ({ method: 'POST', path: `/api/v1/integrations/github/${o.integration}/verify` }), expect: 404 },
  'GET /api/v1/integrations/github/{integration_id}/pulls': { req: (o) => ({ method: 'GET', path: `/api/v1/integrations/github/${o.integration}/pulls` }), expect: 404 },
  'PUT /api/v1/secrets/{name}': { req: (o) => ({ method: 'PUT', path: `/api/v1/secrets/${q(o.secret)}`, body: { note: 'overwrite' } }), expect: 'own' },
  'DELETE /api/v1/secrets/{name}': { req: (o) => ({ method: 'DELETE', path: `/api/v1/secrets/${q(o.secret)}` }), expect: 'own' },
  'POST /mcp': {
    req: (o) => ({ method: 'POST', path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'cadre_get_execution', arguments: { executionId: o.action } } } }),
    expect: 'own',
  },
};

/** Routes that answer the same for every tenant (no tenant data) or take no key at all: nothing to probe. */
export const SHARED_ROUTES: ReadonlySet<string> = new Set([
  'GET /v1/health', 'GET /v1/info', 'GET /v1/openapi.json', 'GET /v1/agents/list', 'GET /v1/agents/fleet/schedule', 'POST /webhooks/{provider}', 'POST /api/webhooks/github',
]);

/** Concrete action documents (`/api/agents/security-ai/scan`) are the generic action route's. */
export function isConcreteActionPath(p: string): boolean {
  return /^\/api\/agents\/[a-z]+-ai\/[a-z-]+$/.test(p);
}

export interface ProbeAnswer { status: number; text: string }

export type ProbeVerdict = 'isolated' | 'leak' | 'inconclusive';

/**
 * Judges one answer of the intruder. An id the request itself named may be echoed (a 404's
 * `instance`); any other id of the owner's in the answer is a leak, whatever the status.
 */
export function judgeProbe(probe: IsolationProbe, sent: ProbeRequest, answer: ProbeAnswer, owned: OwnedObjects): { verdict: ProbeVerdict; why: string } {
  const echoed = sent.path + JSON.stringify(sent.body ?? null);
  const leaked = OWNED_ID_FIELDS.map((f) => owned[f]).filter((id) => id && answer.text.includes(id) && !echoed.includes(id));
  if (leaked.length > 0) return { verdict: 'leak', why: `the answer names the owner's ${leaked.join(', ')}` };
  switch (probe.expect) {
    case 404:
      return answer.status === 404 ? { verdict: 'isolated', why: 'not found, like a missing object' } : { verdict: 'leak', why: `expected 404, got ${answer.status}` };
    case 403:
      return answer.status === 403 && /install_only/.test(answer.text)
        ? { verdict: 'isolated', why: "refused: the install's route" }
        : { verdict: 'leak', why: `expected 403 install_only, got ${answer.status}` };
    case 'excludes':
      return answer.status === 200 ? { verdict: 'isolated', why: "listed without the owner's objects" } : { verdict: 'inconclusive', why: `expected 200, got ${answer.status}` };
    case 'own':
      return answer.status >= 500
        ? { verdict: 'inconclusive', why: `server error ${answer.status}` }
        : { verdict: 'isolated', why: `acts on its own tenant (${answer.status})` };
  }
}
