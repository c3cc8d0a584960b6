import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { createHttpApp } from '../../../server/src/http/app';
import { defineRoute } from '../../../server/src/http/route';
import { authRoutes } from '../../../server/src/http/routes/index';
import { ApiKeys, type ApiKeyRecord } from '../../../server/src/auth/api-keys';
import { Sessions, type SessionRecord } from '../../../server/src/auth/sessions';
import { MemoryRepository } from '../../support/fakes';
import { HEALTH } from './harness';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const Capability = z.enum(['BUILD', 'OPERATE']).meta({ id: 'TestCapability', description: 'a domain' });
const Submission = z.strictObject({ task: z.string().min(1), capabilities: z.array(Capability).min(1), priority: z.enum(['low', 'normal']).default('normal') });

const extra = [
  defineRoute({
    method: 'POST', path: '/v1/test/tasks/{taskId}', auth: 'key', tenancy: 'tenant', summary: 'submit', tags: ['test'],
    params: z.object({ taskId: z.string().startsWith('task_').describe('the task') }),
    query: z.object({ limit: z.coerce.number().int().max(100).default(20), status: z.enum(['a', 'b']) }),
    body: Submission,
    responses: { 202: { description: 'accepted', schema: z.object({ taskId: z.string(), capabilities: z.array(Capability) }) }, 404: { description: 'no such task' } },
    handler: (ctx) => ({ status: 202, body: { taskId: ctx.params.taskId, capabilities: ctx.body.capabilities } }),
  }),
  defineRoute({
    method: 'GET', path: '/api/agents/{id}/{action}', auth: 'session', tenancy: 'tenant', summary: 'action', tags: ['test'],
    responses: { 200: { description: 'ok' } },
    handler: () => ({ status: 200 }),
  }),
];

function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => refs(x, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) k === '$ref' ? out.push(x as string) : refs(x, out);
  return out;
}

describe('OpenAPI document', () => {
  const keys = new ApiKeys(new MemoryRepository<ApiKeyRecord>());
  const sessions = new Sessions(new MemoryRepository<SessionRecord>(), keys);
  const app = createHttpApp({ version: '1.2.3', health: () => HEALTH, log: () => {}, keys, sessions }, [...authRoutes({ keys, sessions }), ...extra]);
  const doc = app.openapi() as Json;

  it('is OpenAPI 3.1 with every endpoint the router serves (and nothing else)', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.2.3');
    const documented = Object.entries(doc.paths as Json).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const served = app.endpoints().map((e) => `${e.method} ${e.path}`).sort();
    assert.deepEqual(documented, served);
    assert.ok(served.includes('GET /v1/health') && served.includes('GET /v1/info') && served.includes('GET /v1/openapi.json'));
    const ids = Object.values(doc.paths as Json).flatMap((ops) => Object.values(ops as Json).map((o) => (o as Json).operationId));
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  });

  it('resolves every $ref to a component', () => {
    for (const ref of refs(doc)) {
      const [, kind, name] = /^#\/components\/(schemas|headers)\/(.+)$/.exec(ref) ?? [];
      assert.ok(kind && name && doc.components[kind][name], `dangling ${ref}`);
    }
  });

  it('takes request and response bodies from the same zod schemas (components by id, else by operation)', () => {
    const op = doc.paths['/v1/test/tasks/{taskId}'].post;
    assert.equal(op.requestBody.content['application/json'].schema.$ref, '#/components/schemas/PostV1TestTasksByTaskIdRequest');
    const body = doc.components.schemas.PostV1TestTasksByTaskIdRequest;
    const direct = z.toJSONSchema(Submission, { io: 'input' }) as Json;
    assert.deepEqual(body.required, direct.required);
    assert.equal(body.additionalProperties, false);
    assert.deepEqual(body.properties.capabilities.items, { $ref: '#/components/schemas/TestCapability' });
    assert.deepEqual(doc.components.schemas.TestCapability, { type: 'string', enum: ['BUILD', 'OPERATE'], description: 'a domain' });
    assert.equal(op.responses['202'].content['application/json'].schema.$ref, '#/components/schemas/PostV1TestTasksByTaskIdResponse202');
    assert.equal(op.responses['404'].content['application/problem+json'].schema.$ref, '#/components/schemas/Problem');
    assert.ok(doc.components.schemas.Problem.properties.errors);
    assert.equal(doc.paths['/v1/admin/keys'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/CreateApiKey');
  });

  it('lists path and query parameters with their schemas and required flags', () => {
    const params = doc.paths['/v1/test/tasks/{taskId}'].post.parameters as Json[];
    assert.deepEqual(params[0], { name: 'taskId', in: 'path', required: true, schema: { type: 'string', format: 'starts_with', pattern: '^task_.*' }, description: 'the task' });
    assert.deepEqual(params.slice(1).map((p) => [p.name, p.in, p.required]), [['limit', 'query', false], ['status', 'query', true]]);
    const action = doc.paths['/api/agents/{id}/{action}'].get.parameters as Json[];
    assert.deepEqual(action.map((p) => [p.name, p.schema]), [['id', { type: 'string' }], ['action', { type: 'string' }]]);
  });

  it('states auth, rate-limit headers and the standard problems per operation', () => {
    assert.deepEqual(doc.paths['/v1/health'].get.security, []);
    assert.equal(doc.paths['/v1/health'].get.responses['429'], undefined);
    assert.deepEqual(doc.paths['/v1/info'].get.security, [{ bearerAuth: [] }]);
    assert.deepEqual(doc.paths['/api/agents/{id}/{action}'].get.security, [{ bearerAuth: [] }, { sessionCookie: [] }]);
    assert.deepEqual(doc.components.securitySchemes.sessionCookie, { type: 'apiKey', in: 'cookie', name: 'cadre_session', description: doc.components.securitySchemes.sessionCookie.description });
    const post = doc.paths['/v1/test/tasks/{taskId}'].post.responses;
    assert.deepEqual(Object.keys(post).sort(), ['202', '400', '401', '404', '413', '415', '429']);
    assert.ok(post['202'].headers['X-RateLimit-Remaining']);
    assert.ok(post['429'].headers['Retry-After']);
    assert.ok(post['401'].headers['WWW-Authenticate']);
  });
});
