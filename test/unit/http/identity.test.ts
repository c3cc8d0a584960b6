/**
 * Identity and separation of duties over real HTTP: roles on every route that decides or changes an
 * ACMF mode, the audit trail's actor (the authenticated key, the client's `by` as a note only), and
 * self-approval of an execution's own high-risk action.
 */
import { strict as assert } from 'node:assert';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { request } from 'undici';
import { ApiKeys, type ApiKeyRecord } from '../../../server/src/auth/api-keys';
import type { Role } from '../../../server/src/auth/roles';
import { Sessions, type SessionRecord } from '../../../server/src/auth/sessions';
import { createHttpServer } from '../../../server/src/http/app';
import { IdempotencyStore, type IdempotencyRecord } from '../../../server/src/http/idempotency';
import { engineRoutes } from '../../../server/src/http/routes/engine';
import { authRoutes } from '../../../server/src/http/routes/index';
import { createHarness, type Harness } from '../../support/engine-harness';
import { MemoryRepository } from '../../support/fakes';
import { HEALTH } from './harness';

interface Api {
  url: string;
  h: Harness;
  keys: ApiKeys;
  server: Server;
  key(role: Role): Promise<{ key: string; id: string }>;
  call(method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

async function startApi(yaml = '', opts: { extraKeys?: number } = {}): Promise<Api> {
  const h = await createHarness({ yaml });
  const keys = new ApiKeys(new MemoryRepository<ApiKeyRecord>());
  const sessions = new Sessions(new MemoryRepository<SessionRecord>(), keys);
  for (let i = 0; i < (opts.extraKeys ?? 0); i++) await keys.create(`other ${i}`, 'enterprise', 'operator');
  const idempotency = new IdempotencyStore(new MemoryRepository<IdempotencyRecord>());
  const server = createHttpServer({ version: 't', health: () => HEALTH, log: () => {}, keys, sessions, checkResponses: true, idempotency },
    [...authRoutes({ keys, sessions }), ...engineRoutes({ engine: h.engine, keys })]);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, h, keys, server,
    key: async (role) => {
      const { key, record } = await keys.create(role, 'enterprise', role);
      return { key, id: record.id };
    },
    call: async (method, path, key, body, headers = {}) => {
      const res = await request(url + path, {
        method: method as 'GET', headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await h.close();
    },
  };
}

/** A pending approval of `risk` on an execution started over HTTP by `ownerKey`. */
async function approvalOf(api: Api, ownerKey: string, risk: 'low' | 'high' | 'critical' = 'high'): Promise<string> {
  const t = await api.call('POST', '/v1/agents/tasks', ownerKey, { task: 'add a health endpoint', capabilities: ['BUILD'] });
  assert.equal(t.status, 202, JSON.stringify(t.body));
  const r = await api.h.engine.acmf.requestApproval({
    executionId: t.body['taskId'] as string, agentId: 'tester-ai', risk, reasons: ['runs a shell command'],
    action: { kind: 'run_command', description: 'npm test' },
  });
  return r.id;
}

describe('identity and separation of duties over HTTP', () => {
  let api: Api;
  afterEach(async () => api?.close());

  describe('POST /v1/approvals/{id}/decision', () => {
    it('refuses an operator key with 403 ERR_FORBIDDEN and leaves the approval pending', async () => {
      api = await startApi();
      const owner = await api.key('admin');
      const op = await api.key('operator');
      const id = await approvalOf(api, owner.key);
      const r = await api.call('POST', `/v1/approvals/${id}/decision`, op.key, { approved: true, by: 'user:alice' });
      assert.equal(r.status, 403);
      assert.equal(r.body['code'], 'ERR_FORBIDDEN');
      assert.equal(r.body['requiredRole'], 'approver');
      assert.equal(api.h.engine.acmf.getApproval(id).status, 'pending');
    });

    it('attributes an approver\'s decision to its key; the client\'s `by` is only a note', async () => {
      api = await startApi();
      const owner = await api.key('operator');
      const approver = await api.key('approver');
      const id = await approvalOf(api, owner.key);
      const r = await api.call('POST', `/v1/approvals/${id}/decision`, approver.key, { approved: true, by: 'user:alice', reason: 'window open' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body['decidedBy'], `key:${approver.id}`);
      const [rec] = await api.h.audit.query({ kind: 'approval.decided' });
      assert.equal(rec!.actor, `key:${approver.id}`);
      assert.equal(rec!.data['note'], 'user:alice');
      assert.equal(rec!.data['decidedBy'], `key:${approver.id}`);
      assert.equal(rec!.data['selfApproved'], undefined);
    });

    it('an admin key may decide too', async () => {
      api = await startApi();
      const owner = await api.key('operator');
      const admin = await api.key('admin');
      const id = await approvalOf(api, owner.key);
      assert.equal((await api.call('POST', `/v1/approvals/${id}/decision`, admin.key, { approved: false })).status, 200);
    });

    it('refuses the execution\'s own key approving its high-risk action when several keys exist', async () => {
      api = await startApi('', { extraKeys: 1 });
      const self = await api.key('approver');
      for (const risk of ['high', 'critical'] as const) {
        const id = await approvalOf(api, self.key, risk);
        const r = await api.call('POST', `/v1/approvals/${id}/decision`, self.key, { approved: true, by: 'user:alice' });
        assert.equal(r.status, 403, risk);
        assert.equal(r.body['code'], 'ERR_FORBIDDEN');
        assert.equal(r.body['reason'], 'self_approval');
        assert.equal(api.h.engine.acmf.getApproval(id).status, 'pending');
        // Denying one's own action stays possible.
        assert.equal((await api.call('POST', `/v1/approvals/${id}/decision`, self.key, { approved: false })).status, 200);
      }
      // A low-risk action of one's own is not a separation-of-duties matter.
      const low = await approvalOf(api, self.key, 'low');
      assert.equal((await api.call('POST', `/v1/approvals/${low}/decision`, self.key, { approved: true })).status, 200);
    });

    it('allows and records self-approval when security.self_approval is true', async () => {
      api = await startApi('security:\n  self_approval: true\n', { extraKeys: 2 });
      const self = await api.key('approver');
      const id = await approvalOf(api, self.key);
      const r = await api.call('POST', `/v1/approvals/${id}/decision`, self.key, { approved: true });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const [rec] = await api.h.audit.query({ kind: 'approval.decided' });
      assert.equal(rec!.actor, `key:${self.id}`);
      assert.equal(rec!.data['selfApproved'], true);
    });

    it('allows self-approval on a single-key install by default, recorded as such', async () => {
      api = await startApi();
      const only = await api.key('admin');
      const id = await approvalOf(api, only.key);
      const r = await api.call('POST', `/v1/approvals/${id}/decision`, only.key, { approved: true });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const [rec] = await api.h.audit.query({ kind: 'approval.decided' });
      assert.equal(rec!.data['selfApproved'], true);
    });

    it('refuses self-approval even on a single-key install when security.self_approval is false', async () => {
      api = await startApi('security:\n  self_approval: false\n');
      const only = await api.key('admin');
      const id = await approvalOf(api, only.key);
      assert.equal((await api.call('POST', `/v1/approvals/${id}/decision`, only.key, { approved: true })).status, 403);
    });
  });

  describe('POST /v1/agents/{id}/acmf', () => {
    it('lets an operator lower a mode, attributed to its key, and refuses raising it with 403', async () => {
      api = await startApi('agents:\n  coder-ai:\n    acmf_mode: ASSISTED\n');
      const op = await api.key('operator');
      const up = await api.call('POST', '/v1/agents/coder-ai/acmf', op.key, { mode: 'AUTONOMOUS', reason: 'trust me', by: 'user:mallory' });
      assert.equal(up.status, 403);
      assert.equal(up.body['code'], 'ERR_FORBIDDEN');
      assert.equal((await api.h.engine.acmf.state('coder-ai')).mode, 'ASSISTED');
      const down = await api.call('POST', '/v1/agents/coder-ai/acmf', op.key, { mode: 'OBSERVE', reason: 'incident', by: 'user:alice' });
      assert.equal(down.status, 200, JSON.stringify(down.body));
      const changes = (await api.h.audit.query({ kind: 'acmf.mode_changed' })).filter((r) => r.data['initial'] !== true);
      assert.equal(changes.length, 1);
      assert.equal(changes[0]!.actor, `key:${op.id}`);
      assert.equal(changes[0]!.data['note'], 'user:alice');
      assert.equal(changes[0]!.data['to'], 'OBSERVE');
    });

    it('lets an approver raise a mode (and an admin), attributed to its key', async () => {
      api = await startApi('agents:\n  coder-ai:\n    acmf_mode: LEARNING\n');
      const approver = await api.key('approver');
      const admin = await api.key('admin');
      assert.equal((await api.call('POST', '/v1/agents/coder-ai/acmf', approver.key, { mode: 'ASSISTED', reason: 'good record' })).status, 200);
      assert.equal((await api.call('POST', '/v1/agents/coder-ai/acmf', admin.key, { mode: 'AUTONOMOUS', reason: 'release week' })).status, 200);
      const changes = (await api.h.audit.query({ kind: 'acmf.mode_changed' })).filter((r) => r.data['initial'] !== true);
      assert.deepEqual(changes.map((c) => [c.actor, c.data['to']]), [[`key:${approver.id}`, 'ASSISTED'], [`key:${admin.id}`, 'AUTONOMOUS']]);
      assert.ok(changes.every((c) => c.data['note'] === undefined));
    });
  });

  describe('key management needs admin (or the key itself)', () => {
    it('refuses an operator or approver creating or listing keys, or revoking another key; a key may revoke itself', async () => {
      api = await startApi();
      const admin = await api.key('admin');
      for (const role of ['operator', 'approver'] as const) {
        const k = await api.key(role);
        const create = await api.call('POST', '/v1/admin/keys', k.key, { label: 'escalate', role: 'admin' });
        assert.equal(create.status, 403, role);
        assert.equal(create.body['code'], 'ERR_FORBIDDEN');
        assert.equal((await api.call('GET', '/v1/admin/keys', k.key)).status, 403);
        assert.equal((await api.call('DELETE', `/v1/admin/keys/${admin.id}`, k.key)).status, 403);
        assert.equal((await api.call('GET', `/v1/admin/keys/${k.id}`, k.key)).status, 200);
        assert.equal((await api.call('DELETE', `/v1/admin/keys/${k.id}`, k.key)).status, 200);
      }
      const made = await api.call('POST', '/v1/admin/keys', admin.key, { label: 'ci', role: 'approver' });
      assert.equal(made.status, 201);
      assert.equal(made.body['role'], 'approver');
      const plain = await api.call('POST', '/v1/admin/keys', admin.key, {});
      assert.equal(plain.body['role'], 'operator', 'a new key is an operator key unless asked otherwise');
    });
  });

  describe('Idempotency-Key on deciding and key-creating routes', () => {
    it('replays a decision instead of deciding twice (no 409 on a retry), and never replays a created key', async () => {
      api = await startApi();
      const owner = await api.key('operator');
      const approver = await api.key('approver');
      const admin = await api.key('admin');
      const id = await approvalOf(api, owner.key);
      const idem = { 'idempotency-key': 'decide-1' };
      const first = await api.call('POST', `/v1/approvals/${id}/decision`, approver.key, { approved: true }, idem);
      const retry = await api.call('POST', `/v1/approvals/${id}/decision`, approver.key, { approved: true }, idem);
      assert.equal(first.status, 200);
      assert.equal(retry.status, 200, 'the stored answer, not 409 already decided');
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.deepEqual(retry.body, first.body);
      assert.equal((await api.h.audit.query({ kind: 'approval.decided' })).length, 1);
      // A role refusal keeps nothing: the same Idempotency-Key of another caller is its own.
      const byOperator = await api.call('POST', `/v1/approvals/${id}/decision`, owner.key, { approved: true }, idem);
      assert.equal(byOperator.status, 403);

      const made = await api.call('POST', '/v1/admin/keys', admin.key, { label: 'ci' }, { 'idempotency-key': 'mk-1' });
      const again = await api.call('POST', '/v1/admin/keys', admin.key, { label: 'ci' }, { 'idempotency-key': 'mk-1' });
      assert.equal(made.status, 201);
      assert.match(made.body['key'] as string, /^cadre_/);
      assert.equal(again.status, 201);
      assert.equal(again.body['id'], made.body['id'], 'the same key, not a second one');
      assert.equal(again.body['key'], null, 'the secret is never kept, so never replayed');
      assert.equal(api.keys.list().filter((k) => k.label === 'ci').length, 1);
    });
  });
});
