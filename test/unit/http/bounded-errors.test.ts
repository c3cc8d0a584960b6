/** Validation answers are bounded: 100,000 bad entries in a 490 KB body get a small 400, quickly. */
import { strict as assert } from 'node:assert';
import { request } from 'undici';
import { z } from 'zod';
import { defineRoute } from '../../../server/src/http/route';
import { TaskSubmissionSchema } from '../../../server/src/http/engine-schemas';
import { MAX_BODY_ENTRIES, MAX_FIELD_ERRORS } from '../../../server/src/http/validation';
import { bearer, startTestApi, type TestApi } from './harness';

const routes = [
  defineRoute({
    method: 'POST', path: '/t/tasks', auth: 'key', tenancy: 'tenant', summary: 'the task schema', tags: ['t'], body: TaskSubmissionSchema,
    responses: { 200: { description: 'ok' } }, handler: () => ({ status: 200 }),
  }),
  defineRoute({
    // No .max() anywhere: the generic guards must bound it.
    method: 'POST', path: '/t/open', auth: 'key', tenancy: 'tenant', summary: 'unbounded arrays', tags: ['t'],
    body: z.strictObject({ items: z.array(z.number()).optional(), nested: z.array(z.object({ n: z.number() })).optional() }),
    responses: { 200: { description: 'ok' } }, handler: () => ({ status: 200 }),
  }),
];

async function post(api: TestApi, path: string, body: string): Promise<{ status: number; bytes: number; json: Record<string, unknown> }> {
  const res = await request(api.url + path, { method: 'POST', headers: { ...bearer(api.key), 'content-type': 'application/json' }, body });
  const text = await res.body.text();
  return { status: res.statusCode, bytes: Buffer.byteLength(text), json: JSON.parse(text) as Record<string, unknown> };
}

describe('bounded validation errors', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi({ routes });
  });
  after(async () => api.close());

  it('answers a 490 KB body of 100,000 invalid capabilities with a 400 under 16 KB', async () => {
    const body = JSON.stringify({ task: 'x', capabilities: Array(100_000).fill('zzz') });
    assert.ok(body.length > 480_000 && body.length < 1024 * 1024, String(body.length));
    const r = await post(api, '/t/tasks', body);
    assert.equal(r.status, 400);
    assert.ok(r.bytes < 16 * 1024, `${r.bytes} bytes`);
    assert.ok((r.json['errors'] as unknown[]).length <= MAX_FIELD_ERRORS);
  });

  it('lists the first 20 of 9,000 unknown fields and counts them all', async () => {
    const obj: Record<string, number> = { task: 1 } as never;
    for (let i = 0; i < 9_000; i++) obj[`unknown_field_${i}`] = 1;
    const r = await post(api, '/t/tasks', JSON.stringify(obj));
    assert.equal(r.status, 400);
    assert.ok(r.bytes < 16 * 1024, `${r.bytes} bytes`);
    assert.equal((r.json['errors'] as unknown[]).length, MAX_FIELD_ERRORS);
    assert.ok((r.json['totalErrors'] as number) >= 9_000);
    assert.match(r.json['detail'] as string, /\(and \d+ more\)$/);
  });

  it('refuses an array or object of more than 10,000 entries before the schema runs, naming it', async () => {
    const big = await post(api, '/t/open', JSON.stringify({ items: Array(100_000).fill('x') }));
    assert.equal(big.status, 400);
    assert.ok(big.bytes < 16 * 1024);
    assert.deepEqual(big.json['errors'], [{ field: 'body.items', message: `has 100000 entries; at most ${MAX_BODY_ENTRIES} are accepted` }]);
    assert.equal(big.json['totalErrors'], 1);
    const deep = await post(api, '/t/open', JSON.stringify({ nested: [{ n: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, i])) }] }));
    assert.equal(deep.status, 400);
    assert.equal((deep.json['errors'] as Array<{ field: string }>)[0]!.field, 'body.nested[0].n');
  });

  it('caps the list below the entry guard too: 10,000 bad numbers give 20 errors and the count', async () => {
    const r = await post(api, '/t/open', JSON.stringify({ items: Array(10_000).fill('x') }));
    assert.equal(r.status, 400);
    assert.equal((r.json['errors'] as unknown[]).length, MAX_FIELD_ERRORS);
    assert.equal(r.json['totalErrors'], 10_000);
    assert.ok(r.bytes < 16 * 1024, `${r.bytes} bytes`);
  });

  it('12 such requests in parallel keep the server answering small bodies', async () => {
    const body = JSON.stringify({ task: 'x', capabilities: Array(100_000).fill('zzz') });
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(api, '/t/tasks', body)));
    for (const a of answers) {
      assert.equal(a.status, 400);
      assert.ok(a.bytes < 16 * 1024);
    }
  });
});
