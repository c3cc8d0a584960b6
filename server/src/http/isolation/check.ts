/**
 * tenant-ai `check-isolation`, the host's part: proves the tenant boundary through the real API. Two
 * probe tenants are made (an owner and an intruder, each with an admin key); the owner makes one
 * object of each kind through the API (executions, a project with metrics, a prediction and its
 * remediation, a webhook with a delivery, a GitHub integration; its approval is filed through ACMF on
 * the owner's execution, since whether an agent asks depends on the install's modes); then every row
 * of `ISOLATION_PROBES` is sent over loopback HTTP with the intruder's key, the reads first with the
 * owner's key as a control (a 404 proves nothing when the owner cannot read its object either), and
 * finally the owner checks that the intruder's writes changed nothing. Both tenants, their keys and
 * their objects are removed at the end, whatever happened; the tenants are marked deleted, and their
 * executions stay in history under their ids (visible to no key, pruned by retention, never counted
 * as an agent's ACMF evidence).
 *
 * Only the install (a key of the default tenant) may run it: it creates tenants.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ApiKeys } from '../../auth/api-keys';
import type { Engine } from '../../engine/index';
import { TERMINAL_STATUSES } from '../../engine/executions/records';
import { DEFAULT_TENANT_ID } from '../../engine/tenants/tenant-id';
import { ISOLATION_PROBES, SHARED_ROUTES, isConcreteActionPath, judgeProbe, type OwnedObjects, type ProbeAnswer, type ProbeRequest, type ProbeVerdict } from './probes';

export interface IsolationRow {
  route: string;
  expect: string;
  method: string;
  path: string;
  status: number;
  /** The owner's own answer to the same read (a control), null for writes and install routes. */
  ownerStatus: number | null;
  verdict: ProbeVerdict;
  why: string;
}

export interface IsolationFacts {
  action: 'check-isolation';
  asOf: string;
  ownerTenant: string;
  intruderTenant: string;
  rows: IsolationRow[];
  /** Routes of the live OpenAPI document with no probe (a new route nobody decided for). */
  unprobed: string[];
  /** The owner's objects after the intruder's writes: each still as it was, or what changed. */
  intact: Array<{ object: string; ok: boolean; detail: string }>;
  cleanup: string[];
}

export interface IsolationCheckDeps {
  /** The server's own loopback URL (known once it listens). */
  url(): string | null;
  engine: Pick<Engine, 'tenants' | 'acmf' | 'executions'>;
  keys: ApiKeys;
  log(line: string): void;
}

type Json = Record<string, unknown>;

class ProbeClient {
  constructor(private readonly base: string, readonly key: string) {}

  async send(r: ProbeRequest): Promise<ProbeAnswer & { json: Json | null }> {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 30_000);
    try {
      const res = await fetch(this.base + r.path, {
        method: r.method,
        headers: { authorization: `Bearer ${this.key}`, accept: 'application/json, text/event-stream', ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
        signal: ctl.signal,
      });
      // A stream that opened would never end: its opening is the answer.
      if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        await res.body?.cancel();
        return { status: res.status, text: '(stream opened)', json: null };
      }
      const text = await res.text();
      let json: Json | null = null;
      try {
        json = JSON.parse(text) as Json;
      } catch {
        json = null;
      }
      return { status: res.status, text, json };
    } finally {
      clearTimeout(timer);
    }
  }

  async must(r: ProbeRequest, status: number[], what: string): Promise<Json> {
    const a = await this.send(r);
    if (!status.includes(a.status) || !a.json) throw new Error(`could not make the owner's ${what}: ${r.method} ${r.path} answered ${a.status} ${a.text.slice(0, 200)}`);
    return a.json;
  }
}

async function pollFor<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A rising disk series the capacity detector turns into a prediction (60 points, one a minute). */
function risingSeries(now: number): string {
  return Array.from({ length: 60 }, (_, i) => `disk_used_gb ${10 + 2 * i} ${now - (59 - i) * 60_000}`).join('\n') + '\n';
}

async function makeOwned(owner: ProbeClient, deps: IsolationCheckDeps, tenant: string, workspace: string): Promise<OwnedObjects> {
  const src = { prompt: 'isolation probe', source: workspace };
  const action = await owner.must({ method: 'POST', path: '/api/agents/security-ai/scan', body: src }, [202], 'agent action');
  const task = await owner.must({ method: 'POST', path: '/v1/agents/tasks', body: { task: 'check the secrets', capabilities: ['SECURE'], source: workspace } }, [202], 'task');
  const wf = await owner.must({ method: 'POST', path: '/api/workflows/invoke', body: { capability: 'SECURE', workflow: 'secure', input: src } }, [202], 'workflow');
  const rigor = await owner.must({ method: 'POST', path: '/v1/admin/rigor/invoke/security-ai', body: src }, [202], 'RIGOR execution');
  const custom = await owner.must({ method: 'POST', path: '/v1/customer/workflow', body: { name: 'probe', pattern: 'sequential', steps: [{ id: 's', agent: 'security-ai', action: 'scan' }], input: src } }, [202], 'custom workflow');
  const actionId = action['executionId'] as string;
  const approval = await deps.engine.acmf.requestApproval({
    executionId: actionId, agentId: 'security-ai', risk: 'low', reasons: ['tenant-ai isolation probe (never applied)'], timeoutMs: 10 * 60_000,
    action: { kind: 'write_file', description: 'tenant-ai isolation probe: an approval of the owner probe tenant, closed when the check ends' },
  });
  const project = await owner.must({ method: 'POST', path: '/v1/projects', body: { name: 'isolation-probe', repository: { type: 'local', url: workspace } } }, [201], 'project');
  const projectId = project['id'] as string;
  await owner.must({ method: 'POST', path: `/v1/projects/${projectId}/metrics`, body: { content: risingSeries(Date.now()), limits: { disk_used_gb: 250 } } }, [202], 'metrics');
  const prediction = await pollFor('prediction of the owner probe project', async () => {
    const r = await owner.send({ method: 'GET', path: `/v1/projects/${projectId}/predictions` });
    return ((r.json?.['predictions'] as Json[] | undefined) ?? [])[0]?.['id'] as string | undefined;
  }, 60_000);
  const rem = await owner.must({ method: 'POST', path: `/v1/predictions/${prediction}/remediate`, body: { action: 'apply', mode: 'automatic' } }, [202], 'remediation');
  // `.invalid` never resolves (RFC 2606): a delivery to it never leaves the machine.
  const hook = await owner.must({ method: 'POST', path: '/v1/webhooks', body: { url: 'https://isolation-probe.invalid/hook', events: ['code.reviewed'], secret: 'tenant-isolation-probe-owner-0123456789abcdef' } }, [201], 'webhook');
  const delivery = await owner.must({ method: 'POST', path: `/v1/webhooks/${hook['id'] as string}/test` }, [200, 201, 202], 'webhook delivery');
  const integ = await owner.must({ method: 'POST', path: '/api/v1/integrations/github', body: { integration_name: 'probe', github_repo: 'acme/probe', github_installation_id: 7, verify: false, config: { agents: ['coder-ai'], require_review: true } } }, [201], 'GitHub integration');
  const keyId = deps.keys.list(tenant)[0]?.id;
  if (!keyId) throw new Error('the owner probe tenant has no key');
  return {
    tenant, workspace, action: actionId, task: task['taskId'] as string, workflow: wf['workflowId'] as string, rigor: rigor['executionId'] as string,
    custom: custom['workflowId'] as string, approval: approval.id, project: projectId, prediction, remediation: (rem['remediation'] as Json)['id'] as string,
    webhook: hook['id'] as string, delivery: (delivery['delivery'] as Json)['id'] as string, integration: integ['integration_id'] as string, keyId,
    secret: integ['secrets_manager_arn'] as string,
  };
}

async function settleRuns(deps: IsolationCheckDeps, tenantIds: string[], ms: number): Promise<{ cancelled: number }> {
  const running = () => tenantIds.flatMap((t) => deps.engine.executions.list({ tenantId: t, limit: 1000 }).filter((r) => !TERMINAL_STATUSES.has(r.status)));
  // The engine's one wait (whenSettled), bounded by `ms`: what has not ended by then is cancelled below.
  await Promise.all(running().map((r) => deps.engine.executions.whenSettled(r.id, { timeoutMs: ms }).catch(() => undefined)));
  const left = running();
  for (const r of left) await deps.engine.executions.cancel(r.id, 'tenant-ai check-isolation').catch(() => undefined);
  return { cancelled: left.length };
}

/** The live OpenAPI document's routes that have neither a probe nor a place among the shared ones. */
async function unprobedRoutes(client: ProbeClient): Promise<string[]> {
  const doc = await client.send({ method: 'GET', path: '/v1/openapi.json' });
  const paths = (doc.json?.['paths'] ?? {}) as Record<string, Record<string, unknown>>;
  const out: string[] = [];
  for (const [p, ops] of Object.entries(paths)) {
    if (isConcreteActionPath(p)) continue;
    for (const m of Object.keys(ops)) {
      const id = `${m.toUpperCase()} ${p}`;
      if (!ISOLATION_PROBES[id] && !SHARED_ROUTES.has(id)) out.push(id);
    }
  }
  return out;
}

/** After the intruder's writes: the owner's objects are all still there, unchanged. */
async function intactAfter(owner: ProbeClient, o: OwnedObjects, deps: IsolationCheckDeps): Promise<IsolationFacts['intact']> {
  const out: IsolationFacts['intact'] = [];
  const check = async (object: string, r: ProbeRequest, ok: (j: Json) => string | null) => {
    const a = await owner.send(r);
    const problem = a.status !== 200 || !a.json ? `the owner gets ${a.status}` : ok(a.json);
    out.push({ object, ok: problem === null, detail: problem ?? 'unchanged' });
  };
  await check('webhook', { method: 'GET', path: `/v1/webhooks/${o.webhook}` }, (j) => (j['enabled'] === false ? 'disabled by someone' : null));
  await check('project', { method: 'GET', path: `/v1/projects/${o.project}` }, (j) => (j['name'] !== 'isolation-probe' ? `renamed to ${String(j['name'])}` : null));
  await check('integration', { method: 'GET', path: `/api/v1/integrations/github/${o.integration}` }, () => null);
  await check('key', { method: 'GET', path: `/v1/admin/keys/${o.keyId}` }, (j) => (j['revokedAt'] ? 'revoked by someone' : null));
  await check('agent action', { method: 'GET', path: `/api/v1/rigor/status/${o.action}` }, (j) => (/cancel/i.test(String(j['status'])) ? 'cancelled by someone' : null));
  const approval = deps.engine.acmf.getApproval(o.approval);
  out.push({ object: 'approval', ok: approval.status === 'pending', detail: approval.status === 'pending' ? 'unchanged' : `${approval.status} by ${approval.decidedBy ?? 'someone'}` });
  return out;
}

export async function runIsolationCheck(deps: IsolationCheckDeps, req: { tenantId: string; now: number }): Promise<IsolationFacts> {
  if (req.tenantId !== DEFAULT_TENANT_ID) {
    throw new Error('only a key of the install (the default tenant) may run check-isolation: it creates probe tenants');
  }
  const base = deps.url();
  if (!base) throw new Error('the HTTP server is not listening: the check needs the real API');
  const stamp = new Date(req.now).toISOString();
  const tenants = deps.engine.tenants;
  const ownerT = await tenants.create({ name: `isolation-probe-owner ${stamp} ${Math.random().toString(36).slice(2, 8)}` }, { probe: true });
  const intruderT = await tenants.create({ name: `isolation-probe-intruder ${stamp} ${Math.random().toString(36).slice(2, 8)}` }, { probe: true });
  const workspace = mkdtempSync(path.join(tmpdir(), 'cadre-isolation-'));
  const cleanup: string[] = [];
  let owned: OwnedObjects | null = null;
  let owner: ProbeClient | null = null;
  try {
    owner = new ProbeClient(base, (await deps.keys.create('isolation probe owner', 'enterprise', 'admin', ownerT.id)).key);
    const intruder = new ProbeClient(base, (await deps.keys.create('isolation probe intruder', 'enterprise', 'admin', intruderT.id)).key);
    owned = await makeOwned(owner, deps, ownerT.id, workspace);
    const rows: IsolationRow[] = [];
    // Reads first (with the owner's control), then the writes, so a write cannot spoil a later read.
    const entries = Object.entries(ISOLATION_PROBES).sort(([, a], [, b]) => Number(a.req(owned!).method !== 'GET') - Number(b.req(owned!).method !== 'GET'));
    for (const [route, probe] of entries) {
      const r = probe.req(owned);
      const control = r.method === 'GET' && probe.expect === 404 ? await owner.send(r) : null;
      const answer = await intruder.send(r);
      let { verdict, why } = judgeProbe(probe, r, answer, owned);
      if (verdict === 'isolated' && control && control.status >= 300) {
        verdict = 'inconclusive';
        why = `the owner itself gets ${control.status}: the 404 proves nothing`;
      }
      rows.push({ route, expect: String(probe.expect), method: r.method, path: r.path, status: answer.status, ownerStatus: control?.status ?? null, verdict, why });
    }
    const intact = await intactAfter(owner, owned, deps);
    const unprobed = await unprobedRoutes(owner);
    return { action: 'check-isolation', asOf: stamp, ownerTenant: ownerT.id, intruderTenant: intruderT.id, rows, unprobed, intact, cleanup };
  } finally {
    // Whatever happened: the owner's objects, both tenants and every key they made go.
    if (owned && owner) {
      for (const p of [`/v1/webhooks/${owned.webhook}`, `/api/v1/integrations/github/${owned.integration}`, `/v1/projects/${owned.project}`]) {
        const a = await owner.send({ method: 'DELETE', path: p }).catch((e: unknown) => ({ status: 0, text: (e as Error).message }));
        cleanup.push(`DELETE ${p.replace(/\/[^/]+$/, '/…')}: ${a.status}`);
      }
      await deps.engine.acmf.closeForExecution(owned.action, 'the isolation check ended').catch(() => undefined);
    }
    // The probe tenants' executions end before their workspace goes (cancelled after a minute): a
    // run that lost its files would end failed for no reason of its own.
    const settled = await settleRuns(deps, [ownerT.id, intruderT.id], 60_000);
    if (settled.cancelled > 0) cleanup.push(`${settled.cancelled} probe execution(s) still running after a minute: cancelled`);
    for (const t of [ownerT.id, intruderT.id]) {
      const n = await deps.keys.revokeTenant(t);
      // Marked deleted, not removed: its executions stay attributable to the probe (and never count as an agent's evidence).
      await tenants.delete(t);
      cleanup.push(`probe tenant ${t}: ${n} key(s) revoked, tenant deleted`);
    }
    rmSync(workspace, { recursive: true, force: true });
  }
}
