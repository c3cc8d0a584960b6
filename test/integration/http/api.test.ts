/**
 * The REST surface of the real bundled server (dist/server.js --standalone), over undici.
 */
import { strict as assert } from 'node:assert';
import { request } from 'undici';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KEY = 'cadre_mvCYu1a7wIGLIlKDPmscgpFnpdYaUFFmsdPvVA0_k6w';
const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });
const json = (key = KEY) => ({ ...auth(key), 'content-type': 'application/json' });

describe('REST API of the standalone server', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  let url: string;

  before(async () => {
    ensureBuilt();
    server = await startStandalone(tempDir(), { CADRE_API_KEY: KEY });
    url = server.url;
  });
  after(async () => {
    if (server) await stop(server);
  });

  it('serves /v1/health without a key', async () => {
    const res = await request(`${url}/v1/health`);
    assert.equal(res.statusCode, 200);
    const body = await res.body.json() as Json;
    assert.equal(body.service, 'cadre');
    assert.equal(res.headers['x-ratelimit-limit'], undefined, 'health is not rate limited');
  });

  it('serves /v1/info and /v1/openapi.json with a key; the document covers every endpoint of /v1/info', async () => {
    const info = await request(`${url}/v1/info`, { headers: auth() });
    assert.equal(info.statusCode, 200);
    const i = await info.body.json() as Json;
    assert.equal(i.api_version, 'v1');
    assert.equal(i.service, 'cadre');
    assert.deepEqual(i.documentation, { openapi: '/v1/openapi.json', reference: 'docs/api.md' });
    const endpoints = i.endpoints as Array<{ method: string; path: string; auth: string; summary: string }>;
    for (const e of [['GET', '/v1/health', 'none'], ['GET', '/v1/info', 'key'], ['GET', '/v1/openapi.json', 'key'], ['POST', '/api/session', 'key'], ['DELETE', '/api/session', 'session'], ['POST', '/v1/admin/keys', 'key'], ['GET', '/v1/admin/keys', 'key'], ['DELETE', '/v1/admin/keys/{id}', 'key']]) {
      assert.ok(endpoints.some((x) => x.method === e[0] && x.path === e[1] && x.auth === e[2] && x.summary), `${e.join(' ')} listed`);
    }

    const oa = await request(`${url}/v1/openapi.json`, { headers: auth() });
    assert.equal(oa.statusCode, 200);
    const doc = await oa.body.json() as Json;
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.servers, [{ url: url }]);
    for (const e of endpoints) {
      const op = doc.paths[e.path]?.[e.method.toLowerCase()];
      assert.ok(op, `${e.method} ${e.path} is in the OpenAPI document`);
      assert.equal(op.summary, e.summary);
      assert.ok(op.responses && Object.keys(op.responses).length > 0);
    }
    const schemas = doc.components.schemas as Json;
    for (const name of ['Problem', 'FieldError', 'HealthReport', 'Info', 'ApiKey', 'CreateApiKey', 'CreatedApiKey']) assert.ok(schemas[name], `components.schemas.${name}`);
    assert.deepEqual(schemas.ApiPlan.enum, ['startup', 'growth', 'scale', 'enterprise']);
    assert.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer');
  });

  it('answers 401 problem+json with WWW-Authenticate for a missing or wrong key', async () => {
    for (const headers of [{}, auth('cadre_wrong'), { authorization: KEY }]) {
      const res = await request(`${url}/v1/info`, { headers });
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="cadre"/);
      const p = await res.body.json() as Json;
      assert.ok(['ERR_AUTH_REQUIRED', 'ERR_AUTH_INVALID'].includes(p.code));
      assert.equal(p.status, 401);
      assert.equal(p.instance, '/v1/info');
    }
  });

  it('refuses a foreign Host with 403 (DNS rebinding defence)', async () => {
    const res = await request(`${url}/v1/health`, { headers: { host: 'attacker.example' } });
    assert.equal(res.statusCode, 403);
    assert.equal((await res.body.json() as Json).code, 'ERR_HOST_NOT_ALLOWED');
    const withKey = await request(`${url}/v1/info`, { headers: { ...auth(), host: `rebind.example:${new URL(url).port}` } });
    assert.equal(withKey.statusCode, 403);
    await withKey.body.dump();
  });

  it('answers 404 for an unknown route and 405 with Allow for a wrong method', async () => {
    const nf = await request(`${url}/v1/no-such-thing`, { headers: auth() });
    assert.equal(nf.statusCode, 404);
    assert.equal((await nf.body.json() as Json).code, 'ERR_ROUTE_NOT_FOUND');
    const na = await request(`${url}/v1/info`, { method: 'POST', headers: json(), body: '{}' });
    assert.equal(na.statusCode, 405);
    assert.equal(na.headers['allow'], 'GET, HEAD');
    assert.equal((await na.body.json() as Json).code, 'ERR_METHOD_NOT_ALLOWED');
  });

  it('answers 400 for malformed JSON, 415 for another content type, 413 past 1 MiB', async () => {
    const bad = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: json(), body: '{"label": "x", ' });
    assert.equal(bad.statusCode, 400);
    assert.equal((await bad.body.json() as Json).code, 'ERR_MALFORMED_JSON');

    const form = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' }, body: 'label=x' });
    assert.equal(form.statusCode, 415);
    assert.equal((await form.body.json() as Json).code, 'ERR_UNSUPPORTED_MEDIA_TYPE');

    const big = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: json(), body: JSON.stringify({ label: 'x'.repeat(1024 * 1024 + 10) }) });
    assert.equal(big.statusCode, 413);
    const p = await big.body.json() as Json;
    assert.equal(p.code, 'ERR_PAYLOAD_TOO_LARGE');
    assert.equal(p.limit, 1024 * 1024);
  });

  it('lists every offending field in a 400', async () => {
    const res = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: json(), body: JSON.stringify({ label: 42, plan: 'diamond', colour: 'blue' }) });
    assert.equal(res.statusCode, 400);
    const p = await res.body.json() as Json;
    assert.equal(p.code, 'ERR_VALIDATION');
    assert.deepEqual((p.errors as Array<{ field: string }>).map((e) => e.field).sort(), ['body.colour', 'body.label', 'body.plan']);
    assert.match(p.errors.find((e: Json) => e.field === 'body.plan').message, /startup/);
    assert.ok(!JSON.stringify(p).includes('    at '), 'no stack trace');
  });

  it('puts rate-limit headers on authenticated responses and answers the 18th request of a startup key in a minute with 429', async () => {
    const created = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: json(), body: JSON.stringify({ label: 'burst', plan: 'startup' }) });
    assert.equal(created.statusCode, 201);
    assert.match(String(created.headers['x-ratelimit-limit']), /^\d+$/);
    const { key } = await created.body.json() as { key: string };

    const statuses: number[] = [];
    let last!: Awaited<ReturnType<typeof request>>;
    for (let i = 0; i < 18; i++) {
      last = await request(`${url}/v1/info`, { headers: auth(key) });
      statuses.push(last.statusCode);
      assert.equal(last.headers['x-ratelimit-limit'], '17', 'the per-minute burst binds first');
      assert.match(String(last.headers['x-ratelimit-reset']), /^\d+$/);
      if (i < 17) assert.equal(last.headers['x-ratelimit-remaining'], String(16 - i));
      if (i < 17) await last.body.dump();
    }
    assert.deepEqual(statuses, [...Array(17).fill(200), 429]);
    assert.equal(last.headers['x-ratelimit-remaining'], '0');
    const retry = Number(last.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 61, `Retry-After ${retry}`);
    const p = await last.body.json() as Json;
    assert.equal(p.code, 'ERR_RATE_LIMITED');
    assert.match(String(last.headers['content-type']), /problem\+json/);

    const other = await request(`${url}/v1/info`, { headers: auth() });
    assert.equal(other.statusCode, 200, 'other keys keep their budget');
    await other.body.dump();
  });

  it('opens a session (HttpOnly, SameSite=Strict cookie) that a session route accepts, and logs out', async () => {
    const open = await request(`${url}/api/session`, { method: 'POST', headers: auth() });
    assert.equal(open.statusCode, 201);
    const setCookie = String(open.headers['set-cookie']);
    const attrs = setCookie.split(';').map((s) => s.trim());
    assert.match(attrs[0]!, /^cadre_session=[A-Za-z0-9_-]{43}$/);
    assert.ok(attrs.includes('HttpOnly'));
    assert.ok(attrs.includes('SameSite=Strict'));
    assert.ok(attrs.includes('Path=/'));
    assert.ok(attrs.some((a) => /^Max-Age=\d+$/.test(a)));
    const s = await open.body.json() as Json;
    assert.ok(s.keyId && s.expiresAt);
    const cookie = attrs[0]!;

    // DELETE /api/session is itself session-protected: the cookie alone authenticates it.
    const out = await request(`${url}/api/session`, { method: 'DELETE', headers: { cookie } });
    assert.equal(out.statusCode, 204);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    await out.body.dump();
    const again = await request(`${url}/api/session`, { method: 'DELETE', headers: { cookie } });
    assert.equal(again.statusCode, 401, 'the ended session is refused');
    await again.body.dump();
  });

  it('keeps sessions across a restart of the server (they are in the store, hashed)', async () => {
    const dir = tempDir();
    const first = await startStandalone(dir, { CADRE_API_KEY: KEY });
    let cookie: string;
    try {
      const open = await request(`${first.url}/api/session`, { method: 'POST', headers: auth() });
      assert.equal(open.statusCode, 201);
      cookie = String(open.headers['set-cookie']).split(';')[0]!;
      await open.body.dump();
    } finally {
      await stop(first);
    }
    const { readdirSync, readFileSync } = await import('node:fs');
    // Every file of the store (a snapshot and/or its journal), whatever its layout.
    const stored = readdirSync(dir).filter((f) => f.startsWith('store')).map((f) => readFileSync(`${dir}/${f}`, 'utf8')).join('\n');
    assert.ok(stored.includes('"sessions"') && !stored.includes(cookie.split('=')[1]!), 'stored, and only as a hash');
    const second = await startStandalone(dir, { CADRE_API_KEY: KEY });
    try {
      const out = await request(`${second.url}/api/session`, { method: 'DELETE', headers: { cookie } });
      assert.equal(out.statusCode, 204, 'the cookie from before the restart still authenticates');
      await out.body.dump();
    } finally {
      await stop(second);
    }
  });

  it('manages keys: create shows the key once, list never shows it, revoke disables it', async () => {
    const created = await request(`${url}/v1/admin/keys`, { method: 'POST', headers: json(), body: JSON.stringify({ label: 'temp', plan: 'growth' }) });
    const c = await created.body.json() as Json;
    assert.match(c.key, /^cadre_/);
    const list = await request(`${url}/v1/admin/keys`, { headers: auth() });
    const text = await list.body.text();
    assert.ok(text.includes(c.id) && !text.includes(c.key) && !text.includes('hash'));
    const works = await request(`${url}/v1/info`, { headers: auth(c.key) });
    assert.equal(works.statusCode, 200);
    assert.equal(works.headers['x-ratelimit-limit'], '42');
    await works.body.dump();
    const del = await request(`${url}/v1/admin/keys/${c.id}`, { method: 'DELETE', headers: auth() });
    assert.equal(del.statusCode, 200);
    await del.body.dump();
    const refused = await request(`${url}/v1/info`, { headers: auth(c.key) });
    assert.equal(refused.statusCode, 401);
    await refused.body.dump();
    const unknown = await request(`${url}/v1/admin/keys/key_000000000000`, { method: 'DELETE', headers: auth() });
    assert.equal(unknown.statusCode, 404);
    await unknown.body.dump();
  });
});
