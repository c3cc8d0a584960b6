/** Idempotency-Key on creating POSTs (Stripe's semantics), over real HTTP, including across a restart. */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { z } from 'zod';
import { generateKey } from '../../../server/src/auth/api-keys';
import { EngineError } from '../../../server/src/engine/errors';
import { canonicalJson, IdempotencyStore, type IdempotencyRecord, requestHash } from '../../../server/src/http/idempotency';
import { defineRoute } from '../../../server/src/http/route';
import { startRuntime, type OwnerRuntime } from '../../../server/src/host/runtime';
import { openStore, storeFilePath } from '../../../server/src/store';
import { MemoryRepository } from '../../support/fakes';
import { bearer, startTestApi } from './harness';

type Answer = { status: number; headers: Record<string, unknown>; body: Record<string, unknown> };

async function post(url: string, key: string, body: unknown, idem?: string): Promise<Answer> {
  const res = await request(url, {
    method: 'POST', body: JSON.stringify(body),
    headers: { ...bearer(key), 'content-type': 'application/json', ...(idem ? { 'idempotency-key': idem } : {}) },
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('Idempotency-Key', () => {
  it('hashes a body independently of its key order', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ y: 2, x: 1 }] }), canonicalJson({ a: [{ x: 1, y: 2 }], b: 1 }));
    assert.notEqual(requestHash('POST', '/a', { a: 1 }), requestHash('POST', '/b', { a: 1 }));
  });

  describe('in one process', () => {
    let runs = 0;
    let gate: (() => void) | null = null;
    const routes = [
      defineRoute({
        method: 'POST', path: '/t/things', auth: 'key', tenancy: 'tenant', idempotent: true, summary: 'create a thing', tags: ['t'],
        body: z.strictObject({ name: z.string(), slow: z.boolean().optional(), fail: z.enum(['404', '500']).optional() }),
        responses: { 201: { description: 'made', schema: z.object({ id: z.number(), name: z.string() }) }, 404: { description: 'no' } },
        handler: async (ctx) => {
          const n = ++runs;
          if (ctx.body.slow) await new Promise<void>((r) => (gate = r));
          if (ctx.body.fail === '404') throw new EngineError('ERR_NOT_FOUND', 'no such thing');
          if (ctx.body.fail === '500') throw new Error('boom');
          return { status: 201, body: { id: n, name: ctx.body.name }, headers: { location: `/t/things/${n}` } };
        },
      }),
    ];

    it('replays the first answer for the same key and body, refuses another body (422), scopes keys per API key', async () => {
      const store = new IdempotencyStore(new MemoryRepository<IdempotencyRecord>());
      const api = await startTestApi({ routes, deps: { idempotency: store } });
      try {
        runs = 0;
        const first = await post(`${api.url}/t/things`, api.key, { name: 'a' }, 'k-1');
        assert.equal(first.status, 201);
        assert.equal(first.headers['idempotent-replayed'], undefined);
        const again = await post(`${api.url}/t/things`, api.key, { name: 'a' }, 'k-1');
        assert.equal(again.status, 201);
        assert.deepEqual(again.body, first.body);
        assert.equal(again.headers['location'], first.headers['location']);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(runs, 1, 'the handler ran once');
        const other = await post(`${api.url}/t/things`, api.key, { name: 'b' }, 'k-1');
        assert.equal(other.status, 422);
        assert.equal(other.body['code'], 'ERR_IDEMPOTENCY_KEY_REUSED');
        const otherKey = await api.newKey('enterprise', 'other', 'operator');
        const theirs = await post(`${api.url}/t/things`, otherKey, { name: 'a' }, 'k-1');
        assert.equal(theirs.status, 201);
        assert.notDeepEqual(theirs.body, first.body, 'another API key has its own key space');
        const without = await post(`${api.url}/t/things`, api.key, { name: 'a' });
        assert.equal(without.body['id'], 3, 'without the header every POST runs');
        const bad = await post(`${api.url}/t/things`, api.key, { name: 'a' }, 'has space');
        assert.equal(bad.status, 400);
      } finally {
        await api.close();
      }
    });

    it('answers 409 to a duplicate while the first is still running', async () => {
      const api = await startTestApi({ routes, deps: { idempotency: new IdempotencyStore(new MemoryRepository<IdempotencyRecord>()) } });
      try {
        runs = 0;
        const first = post(`${api.url}/t/things`, api.key, { name: 's', slow: true }, 'k-slow');
        for (let i = 0; i < 200 && !gate; i++) await new Promise((r) => setTimeout(r, 5));
        assert.ok(gate, 'the first request is running');
        const dup = await post(`${api.url}/t/things`, api.key, { name: 's', slow: true }, 'k-slow');
        assert.equal(dup.status, 409);
        assert.equal(dup.body['code'], 'ERR_IDEMPOTENCY_IN_PROGRESS');
        gate!();
        gate = null;
        assert.equal((await first).status, 201);
        const replay = await post(`${api.url}/t/things`, api.key, { name: 's', slow: true }, 'k-slow');
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(runs, 1);
      } finally {
        await api.close();
      }
    });

    it('keeps a 4xx answer, not a 5xx (a retry after a server error runs again)', async () => {
      const api = await startTestApi({ routes, deps: { idempotency: new IdempotencyStore(new MemoryRepository<IdempotencyRecord>()) } });
      try {
        runs = 0;
        const nf = await post(`${api.url}/t/things`, api.key, { name: 'x', fail: '404' }, 'k-404');
        assert.equal(nf.status, 404);
        const nf2 = await post(`${api.url}/t/things`, api.key, { name: 'x', fail: '404' }, 'k-404');
        assert.equal(nf2.status, 404);
        assert.equal(nf2.headers['idempotent-replayed'], 'true');
        assert.equal(runs, 1);
        await post(`${api.url}/t/things`, api.key, { name: 'x', fail: '500' }, 'k-500');
        await post(`${api.url}/t/things`, api.key, { name: 'x', fail: '500' }, 'k-500');
        assert.equal(runs, 3);
      } finally {
        await api.close();
      }
    });

    it('runs again a request left in flight by a process that died; forgets answers after 24 h', async () => {
      const repo = new MemoryRepository<IdempotencyRecord>();
      let now = Date.UTC(2026, 0, 1);
      const clock = { now: () => now };
      const dead = new IdempotencyStore(repo, clock, 'dead-process');
      const h = requestHash('POST', '/t', { a: 1 });
      assert.equal((await dead.begin('key_a', 'k', 'POST', '/t', h)).kind, 'new');
      const alive = new IdempotencyStore(repo, clock, 'new-process');
      const again = await alive.begin('key_a', 'k', 'POST', '/t', h);
      assert.equal(again.kind, 'new');
      await alive.finish((again as { id: string }).id, { status: 201, body: { id: 1 }, problem: false, headers: {} });
      assert.equal((await alive.begin('key_a', 'k', 'POST', '/t', h)).kind, 'replay');
      now += 24 * 60 * 60 * 1000 + 1;
      assert.equal((await alive.begin('key_a', 'k', 'POST', '/t', h)).kind, 'new', 'expired: a new request');
    });
  });

  describe('across a restart of the server (real store, real HTTP)', function () {
    this.timeout(60_000);
    let dataDir: string;
    before(() => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-idem-'));
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));

    it('a retried POST after a lost 202 and a restart answers the first task and creates no duplicate', async () => {
      const KEY = generateKey();
      const start = async () => (await startRuntime({ dataDir, port: 0, env: { CADRE_API_KEY: KEY }, log: () => {} })) as OwnerRuntime;
      const body = { task: 'add a health endpoint', capabilities: ['BUILD'], source: mkdtempSync(path.join(tmpdir(), 'cadre-ws-')) };
      let rt = await start();
      const first = await post(`${rt.url}/v1/agents/tasks`, KEY, body, 'retry-me-1');
      assert.equal(first.status, 202);
      const taskId = first.body['taskId'];
      await rt.close();

      rt = await start();
      try {
        const retried = await post(`${rt.url}/v1/agents/tasks`, KEY, body, 'retry-me-1');
        assert.equal(retried.status, 202);
        assert.equal(retried.headers['idempotent-replayed'], 'true');
        assert.equal(retried.body['taskId'], taskId);
        assert.deepEqual(retried.body, first.body);
        assert.equal(rt.engine.executions.list({ kind: 'task' }).length, 1, 'one task, not two');
        const reused = await post(`${rt.url}/v1/agents/tasks`, KEY, { ...body, task: 'something else' }, 'retry-me-1');
        assert.equal(reused.status, 422);
      } finally {
        await rt.close();
      }
    });

    it('a crash after the task was stored and before its answer was kept: the retry finds that task (no duplicate)', async () => {
      const KEY = generateKey();
      const start = async () => (await startRuntime({ dataDir, port: 0, env: { CADRE_API_KEY: KEY }, log: () => {} })) as OwnerRuntime;
      const body = { task: 'add a readiness endpoint', capabilities: ['BUILD'], source: mkdtempSync(path.join(tmpdir(), 'cadre-ws-')) };
      let rt = await start();
      const first = await post(`${rt.url}/v1/agents/tasks`, KEY, body, 'crash-window-1');
      assert.equal(first.status, 202);
      const before = rt.engine.executions.count({ kind: 'task' });
      await rt.close();
      // What a SIGKILL between the two writes leaves: the claim still in flight (of a dead process), no answer.
      const store = await openStore({ file: storeFilePath(dataDir) });
      const claims = store.collection<IdempotencyRecord>('idempotency');
      const kept = claims.list((r) => r.path === '/v1/agents/tasks' && r.state === 'done' && (r.answer?.body as { taskId?: string })?.taskId === first.body['taskId']);
      assert.equal(kept.length, 1, 'the kept answer of the first attempt');
      const { answer: _dropped, ...rest } = kept[0]!;
      await claims.put({ ...rest, state: 'in_flight', instance: 'a-process-that-died' });
      await store.close();

      rt = await start();
      try {
        const retried = await post(`${rt.url}/v1/agents/tasks`, KEY, body, 'crash-window-1');
        assert.equal(retried.status, 202, JSON.stringify(retried.body));
        assert.equal(retried.body['taskId'], first.body['taskId'], 'the task the first attempt stored');
        assert.equal(retried.body['status'], 'queued', 'as the 202 said');
        assert.equal(retried.headers['idempotent-replayed'], 'true');
        assert.equal(rt.engine.executions.count({ kind: 'task' }), before, 'no second task');
        const again = await post(`${rt.url}/v1/agents/tasks`, KEY, body, 'crash-window-1');
        assert.equal(again.body['taskId'], first.body['taskId'], 'and the recovered answer is kept');
      } finally {
        await rt.close();
      }
    });
  });
});
