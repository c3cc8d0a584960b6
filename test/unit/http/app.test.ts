import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { request } from 'undici';
import { z } from 'zod';
import { EngineError } from '../../../server/src/engine/errors';
import { defineRoute, RESPONSE_SENT } from '../../../server/src/http/route';
import { bearer, startTestApi, type TestApi } from './harness';

const Capability = z.enum(['BUILD', 'OPERATE', 'SECURE']);

/** Test-only routes: typed input, a session-protected action, an engine error, a streaming handler. */
const routes = [
  defineRoute({
    method: 'POST',
    path: '/v1/test/things/{thingId}',
    auth: 'key', tenancy: 'tenant',
    summary: 'echo',
    tags: ['test'],
    params: z.object({ thingId: z.string().startsWith('thing_') }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }),
    body: z.strictObject({ task: z.string().min(1), capabilities: z.array(Capability).min(1), priority: z.enum(['low', 'normal', 'high']).default('normal') }),
    responses: { 201: { description: 'echoed', schema: z.object({ thingId: z.string(), limit: z.number(), task: z.string(), capabilities: z.array(Capability), priority: z.string(), by: z.string() }) } },
    handler: (ctx) => ({ status: 201, body: { thingId: ctx.params.thingId, limit: ctx.query.limit, ...ctx.body, by: ctx.principal.id } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/agents/{id}/{action}',
    auth: 'session', tenancy: 'tenant',
    summary: 'session-protected test action',
    tags: ['test'],
    responses: { 200: { description: 'who', schema: z.object({ id: z.string(), action: z.string(), via: z.string(), keyId: z.string() }) } },
    handler: (ctx) => ({ status: 200, body: { id: ctx.params.id, action: ctx.params.action, via: ctx.credential.kind, keyId: ctx.principal.id } }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/test/missing/{id}',
    auth: 'key', tenancy: 'tenant',
    summary: 'engine error',
    tags: ['test'],
    responses: { 200: { description: 'never' } },
    handler: (ctx) => {
      throw new EngineError('ERR_NOT_FOUND', `no thing "${ctx.params.id}"`);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/test/boom',
    auth: 'key', tenancy: 'tenant',
    summary: 'unexpected error',
    tags: ['test'],
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('secret internal detail at /home/x');
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/test/overloaded',
    auth: 'key', tenancy: 'tenant',
    summary: 'retryable engine error',
    tags: ['test'],
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new EngineError('ERR_OVERLOADED', 'coder-ai is overloaded', { details: { agentId: 'coder-ai', retryAfterMs: 2500 }, retryable: true });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/test/raw',
    auth: 'key', tenancy: 'tenant',
    summary: 'takes over the response',
    tags: ['test'],
    responses: { 200: { description: 'text' } },
    handler: (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/plain' });
      ctx.res.end('raw');
      return RESPONSE_SENT;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/test/liar',
    auth: 'key', tenancy: 'tenant',
    summary: 'answers off its schema',
    tags: ['test'],
    responses: { 200: { description: 'x', schema: z.object({ n: z.number() }) } },
    handler: () => ({ status: 200, body: { n: 'not a number' as unknown as number } }),
  }),
];

const goodBody = { task: 'add login', capabilities: ['BUILD'] };

describe('HTTP app', () => {
  let api: TestApi;
  beforeEach(async () => {
    api = await startTestApi({ routes, deps: { server: { allowed_hosts: ['cadre.internal', 'box.lan:9999'], cors_origins: ['https://dash.example'] } } });
  });
  afterEach(() => api.close());

  describe('routing and errors', () => {
    it('serves /v1/health without a key and without rate-limit headers', async () => {
      const res = await request(`${api.url}/v1/health`);
      assert.equal(res.statusCode, 200);
      assert.equal((await res.body.json() as { service: string }).service, 'cadre');
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    });

    it('answers 404 problem+json for an unknown route', async () => {
      const res = await request(`${api.url}/v1/nope`, { headers: bearer(api.key) });
      assert.equal(res.statusCode, 404);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      const p = await res.body.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(p).sort(), ['code', 'detail', 'instance', 'status', 'title', 'type']);
      assert.equal(p['code'], 'ERR_ROUTE_NOT_FOUND');
      assert.equal(p['instance'], '/v1/nope');
    });

    it('answers 405 with Allow for a wrong method', async () => {
      const res = await request(`${api.url}/v1/admin/keys/key_1`, { method: 'PUT', headers: bearer(api.key) });
      assert.equal(res.statusCode, 405);
      assert.equal(res.headers['allow'], 'GET, HEAD, DELETE');
      assert.equal((await res.body.json() as { code: string }).code, 'ERR_METHOD_NOT_ALLOWED');
    });

    it('answers HEAD on GET routes', async () => {
      const res = await request(`${api.url}/v1/health`, { method: 'HEAD' });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), '');
    });

    it('maps engine errors by code, hides unexpected ones, and passes Retry-After of retryable ones', async () => {
      const nf = await request(`${api.url}/v1/test/missing/abc`, { headers: bearer(api.key) });
      assert.equal(nf.statusCode, 404);
      assert.deepEqual(await nf.body.json(), { type: 'https://cadre.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'no thing "abc"', code: 'ERR_NOT_FOUND', instance: '/v1/test/missing/abc' });

      const boom = await request(`${api.url}/v1/test/boom`, { headers: bearer(api.key) });
      assert.equal(boom.statusCode, 500);
      const text = await boom.body.text();
      assert.ok(!text.includes('secret') && !text.includes('/home/x') && !text.includes('at '), text);
      assert.ok(api.logs.some((l) => l.includes('secret internal detail')), 'the real error is logged');

      const busy = await request(`${api.url}/v1/test/overloaded`, { headers: bearer(api.key) });
      assert.equal(busy.statusCode, 503);
      assert.equal(busy.headers['retry-after'], '3');
      assert.equal((await busy.body.json() as { code: string }).code, 'ERR_OVERLOADED');
    });

    it('lets a handler take over the response', async () => {
      const res = await request(`${api.url}/v1/test/raw`, { headers: bearer(api.key) });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'raw');
      assert.equal(res.headers['x-ratelimit-limit'], '167', 'headers decided before the handler are on the response');
    });

    it('turns a response off its declared schema into a logged 500 when responses are checked', async () => {
      const res = await request(`${api.url}/v1/test/liar`, { headers: bearer(api.key) });
      assert.equal(res.statusCode, 500);
      await res.body.dump();
      assert.ok(api.logs.some((l) => l.includes('does not match its schema')));
    });
  });

  describe('validation', () => {
    it('hands typed, parsed params, query and body to the handler', async () => {
      const res = await request(`${api.url}/v1/test/things/thing_1?limit=5`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body: JSON.stringify(goodBody) });
      assert.equal(res.statusCode, 201);
      assert.deepEqual(await res.body.json(), { thingId: 'thing_1', limit: 5, task: 'add login', capabilities: ['BUILD'], priority: 'normal', by: api.keyRecord.id });
    });

    it('lists every offending field of params, query and body in one 400', async () => {
      const res = await request(`${api.url}/v1/test/things/other?limit=500`, {
        method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ capabilities: ['BUILD', 'MAGIC'], priority: 7, extra: true }),
      });
      assert.equal(res.statusCode, 400);
      const p = await res.body.json() as { code: string; errors: Array<{ field: string; message: string }> };
      assert.equal(p.code, 'ERR_VALIDATION');
      const fields = p.errors.map((e) => e.field).sort();
      assert.deepEqual(fields, ['body.capabilities[1]', 'body.extra', 'body.priority', 'body.task', 'params.thingId', 'query.limit']);
      assert.equal(p.errors.find((e) => e.field === 'body.task')!.message, 'is required');
      assert.match(p.errors.find((e) => e.field === 'body.capabilities[1]')!.message, /BUILD/);
    });

    it('says a required body is missing', async () => {
      const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: bearer(api.key) });
      assert.equal(res.statusCode, 400);
      assert.deepEqual((await res.body.json() as { errors: unknown }).errors, [{ field: 'body', message: 'is required' }]);
    });

    it('answers 400 for malformed JSON, never 500', async () => {
      for (const body of ['{"task": "x",', 'nul', '{"a":1}}', '\u0000']) {
        const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body });
        assert.equal(res.statusCode, 400, body);
        assert.equal((await res.body.json() as { code: string }).code, 'ERR_MALFORMED_JSON');
      }
    });

    it('answers 400 (not 500) for JSON of the wrong shape entirely', async () => {
      for (const body of ['[]', '"text"', '42', 'null', JSON.stringify({ task: { deep: [[[[[]]]]] }, capabilities: 'BUILD' })]) {
        const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body });
        assert.equal(res.statusCode, 400, body);
        assert.equal((await res.body.json() as { code: string }).code, 'ERR_VALIDATION');
      }
    });

    it('answers 415 for a body that is not JSON, or not UTF-8, or compressed', async () => {
      const cases: Array<Record<string, string>> = [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}, { 'content-type': 'application/json; charset=latin1' }, { 'content-type': 'application/json', 'content-encoding': 'gzip' }];
      for (const h of cases) {
        const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), ...h }, body: JSON.stringify(goodBody) });
        assert.equal(res.statusCode, 415, JSON.stringify(h));
        assert.equal((await res.body.json() as { code: string }).code, 'ERR_UNSUPPORTED_MEDIA_TYPE');
      }
      const vendor = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/vnd.cadre+json' }, body: JSON.stringify(goodBody) });
      assert.equal(vendor.statusCode, 201);
      await vendor.body.dump();
    });

    it('answers 413 past 1 MiB, by Content-Length or while reading a chunked body', async () => {
      const big = JSON.stringify({ task: 'x'.repeat(1024 * 1024), capabilities: ['BUILD'] });
      const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body: big });
      assert.equal(res.statusCode, 413);
      assert.equal((await res.body.json() as { code: string }).code, 'ERR_PAYLOAD_TOO_LARGE');

      // Chunked: the server answers 413 as soon as the limit is passed, while the client is still
      // sending; it then drops (never buffers) a bounded amount and cuts a client that keeps going.
      const outcome = await new Promise<{ status: string; sentAfterAnswer: number; closedMs: number }>((resolve, reject) => {
        const sock = connect(api.port, '127.0.0.1');
        const chunk = 'a'.repeat(64 * 1024);
        const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
        let got = '';
        let answeredAt = 0;
        let sentAfterAnswer = 0;
        let closed = false;
        const pump = () => {
          while (!closed && sock.write(frame)) {
            if (answeredAt) sentAfterAnswer += frame.length;
            if (sentAfterAnswer > 64 * 1024 * 1024) return reject(new Error('the server keeps reading without bound'));
          }
        };
        sock.on('connect', () => {
          sock.write(`POST /v1/test/things/thing_1 HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${api.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
          pump();
        });
        sock.on('drain', pump);
        sock.on('data', (d) => {
          got += d.toString('latin1');
          if (!answeredAt && got.includes('\r\n')) answeredAt = Date.now();
        });
        const done = () => {
          if (closed) return;
          closed = true;
          resolve({ status: got.split('\r\n')[0]!, sentAfterAnswer, closedMs: answeredAt ? Date.now() - answeredAt : -1 });
        };
        sock.on('close', done);
        sock.on('error', done);
        setTimeout(() => reject(new Error(`no end; got ${got.slice(0, 80)}`)), 10_000).unref();
      });
      const status = outcome.status;
      assert.ok(outcome.closedMs >= 0 && outcome.closedMs < 4000, `cut by the byte bound, not the timer (${outcome.closedMs} ms)`);
      assert.ok(outcome.sentAfterAnswer < 32 * 1024 * 1024, `bounded: ${outcome.sentAfterAnswer}`);
      assert.equal(status, 'HTTP/1.1 413 Payload Too Large');
    });

    it('accepts an exactly-1-MiB body', async () => {
      const pad = 1024 * 1024 - JSON.stringify({ task: '', capabilities: ['BUILD'] }).length;
      const body = JSON.stringify({ task: 'y'.repeat(pad), capabilities: ['BUILD'] });
      assert.equal(Buffer.byteLength(body), 1024 * 1024);
      const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body });
      assert.equal(res.statusCode, 201);
      await res.body.dump();
    });
  });

  describe('authentication', () => {
    it('answers 401 with WWW-Authenticate for a missing, malformed, wrong or revoked key', async () => {
      const missing = await request(`${api.url}/v1/info`);
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="cadre"');
      assert.equal((await missing.body.json() as { code: string }).code, 'ERR_AUTH_REQUIRED');
      for (const authorization of ['Basic abc', 'Bearer', `Bearer ${api.key}x`, 'Bearer cadre_nope']) {
        const res = await request(`${api.url}/v1/info`, { headers: { authorization } });
        assert.equal(res.statusCode, 401, authorization);
        assert.match(String(res.headers['www-authenticate']), /^Bearer realm="cadre", error="invalid_token"$/);
        assert.equal((await res.body.json() as { code: string }).code, 'ERR_AUTH_INVALID');
      }
      const other = await api.newKey('growth');
      await api.keys.revoke(api.keys.verify(other)!.id);
      const revoked = await request(`${api.url}/v1/info`, { headers: bearer(other) });
      assert.equal(revoked.statusCode, 401);
      await revoked.body.dump();
    });

    it('checks auth before reading the body (a 401 never uploads it)', async () => {
      const res = await request(`${api.url}/v1/test/things/thing_1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'not even json' });
      assert.equal(res.statusCode, 401);
      await res.body.dump();
    });
  });

  describe('Host and CORS', () => {
    const get = (headers: Record<string, string>) => request(`${api.url}/v1/health`, { headers });

    it('accepts loopback names with the server port or none, and configured hosts', async () => {
      for (const host of [`127.0.0.1:${api.port}`, '127.0.0.1', 'localhost', `LOCALHOST:${api.port}`, `[::1]:${api.port}`, '[::1]', 'cadre.internal', 'cadre.internal:1234', 'box.lan:9999']) {
        const res = await get({ host });
        assert.equal(res.statusCode, 200, host);
        await res.body.dump();
      }
    });

    it('refuses any other Host with 403 (DNS rebinding)', async () => {
      for (const host of ['evil.example', `evil.example:${api.port}`, '127.0.0.1:1', 'localhost.evil.example', 'box.lan', 'box.lan:1', '127.0.0.2']) {
        const res = await get({ host });
        assert.equal(res.statusCode, 403, host);
        assert.equal((await res.body.json() as { code: string }).code, 'ERR_HOST_NOT_ALLOWED');
      }
    });

    it('sends no CORS headers for an origin that is not configured', async () => {
      const res = await request(`${api.url}/v1/info`, { headers: { ...bearer(api.key), origin: 'https://evil.example' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      await res.body.dump();
    });

    it('echoes a configured origin with Vary: Origin and answers its preflight', async () => {
      const res = await request(`${api.url}/v1/info`, { headers: { ...bearer(api.key), origin: 'https://dash.example' } });
      assert.equal(res.headers['access-control-allow-origin'], 'https://dash.example');
      assert.equal(res.headers['vary'], 'Origin');
      assert.match(String(res.headers['access-control-expose-headers']), /X-RateLimit-Remaining/);
      await res.body.dump();

      const pre = await request(`${api.url}/v1/test/things/thing_1`, { method: 'OPTIONS', headers: { origin: 'https://dash.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
      assert.equal(pre.statusCode, 204);
      assert.equal(pre.headers['access-control-allow-origin'], 'https://dash.example');
      assert.equal(pre.headers['access-control-allow-methods'], 'POST');
      assert.match(String(pre.headers['access-control-allow-headers']), /Authorization/);
      await pre.body.dump();

      const refused = await request(`${api.url}/v1/info`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } });
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
      assert.equal((await refused.body.json() as { code: string }).code, 'ERR_CROSS_ORIGIN');
    });
  });

  describe('sessions', () => {
    function cookieOf(setCookie: string | string[] | undefined): string {
      const line = Array.isArray(setCookie) ? setCookie[0]! : setCookie!;
      return line.split(';')[0]!;
    }

    it('opens a session with the bearer key; the cookie works on session routes and not on key routes', async () => {
      const open = await request(`${api.url}/api/session`, { method: 'POST', headers: bearer(api.key) });
      assert.equal(open.statusCode, 201);
      const setCookie = String(open.headers['set-cookie']);
      assert.match(setCookie, /^cadre_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
      const body = await open.body.json() as { keyId: string; expiresAt: string };
      assert.equal(body.keyId, api.keyRecord.id);
      const cookie = cookieOf(open.headers['set-cookie']);

      const action = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie } });
      assert.equal(action.statusCode, 200);
      assert.deepEqual(await action.body.json(), { id: 'req-ai', action: 'analyze', via: 'session', keyId: api.keyRecord.id });
      assert.equal(action.headers['x-ratelimit-limit'], '167', 'a session is rate limited as its key');

      const viaKey = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: bearer(api.key) });
      assert.equal((await viaKey.body.json() as { via: string }).via, 'key');

      const keyRoute = await request(`${api.url}/v1/info`, { headers: { cookie } });
      assert.equal(keyRoute.statusCode, 401, 'key routes do not take the cookie');
      await keyRoute.body.dump();

      const noAuth = await request(`${api.url}/api/agents/req-ai/analyze`);
      assert.equal(noAuth.statusCode, 401);
      assert.match((await noAuth.body.json() as { detail: string }).detail, /session cookie/);
    });

    it('stores only a hash of the token and ends the session on logout', async () => {
      const open = await request(`${api.url}/api/session`, { method: 'POST', headers: bearer(api.key) });
      const cookie = cookieOf(open.headers['set-cookie']);
      await open.body.dump();
      const token = cookie.split('=')[1]!;
      assert.equal(api.sessions.count(), 1);
      assert.ok(!JSON.stringify([...((api.sessions as unknown as { repo: { records: Map<string, unknown> } }).repo.records.values())]).includes(token));

      const out = await request(`${api.url}/api/session`, { method: 'DELETE', headers: { cookie } });
      assert.equal(out.statusCode, 204);
      assert.match(String(out.headers['set-cookie']), /^cadre_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
      await out.body.dump();
      const after = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie } });
      assert.equal(after.statusCode, 401);
      assert.equal((await after.body.json() as { code: string }).code, 'ERR_AUTH_INVALID');
    });

    it('ends with its key, and after 8 hours', async () => {
      const other = await api.newKey('growth');
      const open = await request(`${api.url}/api/session`, { method: 'POST', headers: bearer(other) });
      const cookie = cookieOf(open.headers['set-cookie']);
      await open.body.dump();
      const id = api.keys.verify(other)!.id;
      const del = await request(`${api.url}/v1/admin/keys/${id}`, { method: 'DELETE', headers: bearer(api.key) });
      assert.equal(del.statusCode, 200);
      await del.body.dump();
      assert.equal(api.sessions.count(), 0, 'revoking the key ended its sessions');
      const dead = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie } });
      assert.equal(dead.statusCode, 401);
      await dead.body.dump();

      const open2 = await request(`${api.url}/api/session`, { method: 'POST', headers: bearer(api.key) });
      const cookie2 = cookieOf(open2.headers['set-cookie']);
      await open2.body.dump();
      api.clock.advance(8 * 3600_000 - 1000);
      const alive = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie: cookie2 } });
      assert.equal(alive.statusCode, 200);
      await alive.body.dump();
      api.clock.advance(1000);
      const expired = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie: cookie2 } });
      assert.equal(expired.statusCode, 401);
      await expired.body.dump();
    });

    it('refuses the cookie from another origin (CSRF), unless the origin is a configured CORS origin', async () => {
      const open = await request(`${api.url}/api/session`, { method: 'POST', headers: bearer(api.key) });
      const cookie = cookieOf(open.headers['set-cookie']);
      await open.body.dump();
      const cases: Array<[Record<string, string>, number]> = [
        [{ origin: 'http://127.0.0.1:8080' }, 403],
        [{ 'sec-fetch-site': 'same-site' }, 403],
        [{ 'sec-fetch-site': 'cross-site' }, 403],
        [{ origin: 'null' }, 403],
        [{ 'sec-fetch-site': 'same-origin', origin: `http://127.0.0.1:${api.port}` }, 200],
        [{ 'sec-fetch-site': 'none' }, 200],
        [{ origin: 'https://dash.example', 'sec-fetch-site': 'cross-site' }, 200],
      ];
      for (const [h, status] of cases) {
        const res = await request(`${api.url}/api/agents/req-ai/analyze`, { headers: { cookie, ...h } });
        assert.equal(res.statusCode, status, JSON.stringify(h));
        await res.body.dump();
      }
    });
  });

  describe('key management', () => {
    it('creates (shown once), lists and reads keys without their hash, revokes them', async () => {
      api.clock.advance(1000); // lists are oldest first
      const created = await request(`${api.url}/v1/admin/keys`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body: JSON.stringify({ label: 'ci', plan: 'startup' }) });
      assert.equal(created.statusCode, 201);
      const c = await created.body.json() as { id: string; key: string; plan: string; label: string; prefix: string };
      assert.equal(created.headers['location'], `/v1/admin/keys/${c.id}`);
      assert.match(c.key, /^cadre_[A-Za-z0-9_-]{43}$/);
      assert.equal(c.plan, 'startup');
      assert.ok(c.key.startsWith(c.prefix));

      const byOperator = await request(`${api.url}/v1/admin/keys`, { headers: bearer(c.key) });
      assert.equal(byOperator.statusCode, 403, 'a new key is an operator key: listing keys needs admin');
      await byOperator.body.dump();
      const list = await request(`${api.url}/v1/admin/keys`, { headers: bearer(api.key) });
      const text = await list.body.text();
      assert.ok(!text.includes(c.key) && !text.includes('"hash"'), text);
      const keys = (JSON.parse(text) as { keys: Array<{ id: string; revokedAt: string | null }> }).keys;
      assert.deepEqual(keys.map((k) => k.id), [api.keyRecord.id, c.id]);

      const one = await request(`${api.url}/v1/admin/keys/${c.id}`, { headers: bearer(api.key) });
      assert.equal((await one.body.json() as { label: string }).label, 'ci');

      const del = await request(`${api.url}/v1/admin/keys/${c.id}`, { method: 'DELETE', headers: bearer(api.key) });
      assert.equal(del.statusCode, 200);
      assert.ok((await del.body.json() as { revokedAt: string }).revokedAt);
      const again = await request(`${api.url}/v1/admin/keys/${c.id}`, { method: 'DELETE', headers: bearer(api.key) });
      assert.equal(again.statusCode, 200, 'revoking twice is idempotent');
      await again.body.dump();
      const gone = await request(`${api.url}/v1/admin/keys`, { headers: bearer(c.key) });
      assert.equal(gone.statusCode, 401);
      await gone.body.dump();

      const unknown = await request(`${api.url}/v1/admin/keys/key_nope`, { method: 'DELETE', headers: bearer(api.key) });
      assert.equal(unknown.statusCode, 404);
      assert.equal((await unknown.body.json() as { code: string }).code, 'ERR_NOT_FOUND');
    });

    it('defaults label and plan, and rejects an unknown plan', async () => {
      const res = await request(`${api.url}/v1/admin/keys`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.statusCode, 201);
      const c = await res.body.json() as { label: string; plan: string };
      assert.deepEqual([c.label, c.plan], ['api key', 'enterprise']);
      const bad = await request(`${api.url}/v1/admin/keys`, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'platinum', label: '' }) });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual((await bad.body.json() as { errors: Array<{ field: string }> }).errors.map((e) => e.field).sort(), ['body.label', 'body.plan']);
    });
  });
});
