import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import { defineRoute } from '../../../server/src/http/route';
import { startTestApi, type TestApi } from './harness';

/** A signed inbound webhook verifies an HMAC over the exact bytes sent: the door must hand them over unchanged. */
describe('http: raw body for signed inbound webhooks', () => {
  let api: TestApi;
  const seen: Buffer[] = [];
  before(async () => {
    api = await startTestApi({
      routes: [
        defineRoute({
          method: 'POST', path: '/test/hook', auth: 'none', tenancy: 'tenant', summary: 'raw', tags: ['test'], rawBody: true,
          body: z.object({ n: z.number() }).passthrough(),
          responses: { 200: { description: 'digest', schema: z.object({ hmac: z.string(), n: z.number() }) } },
          handler: (ctx) => {
            seen.push(ctx.rawBody);
            return { status: 200, body: { hmac: createHmac('sha256', 'k').update(ctx.rawBody).digest('hex'), n: ctx.body.n } };
          },
        }),
        defineRoute({
          method: 'POST', path: '/test/plain', auth: 'none', tenancy: 'tenant', summary: 'parsed only', tags: ['test'],
          body: z.object({ n: z.number() }),
          responses: { 200: { description: 'size', schema: z.object({ size: z.number() }) } },
          handler: (ctx) => ({ status: 200, body: { size: ctx.rawBody.length } }),
        }),
      ],
    });
  });
  after(() => api.close());

  it('gives the handler the bytes as sent (spacing and key order kept), parsed body alongside', async () => {
    const sent = '{ "n" : 7,\n  "z": "\\u00e9" }';
    const res = await request(`${api.url}/test/hook`, { method: 'POST', body: sent, headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200);
    const body = (await res.body.json()) as { hmac: string; n: number };
    assert.equal(body.n, 7);
    assert.equal(body.hmac, createHmac('sha256', 'k').update(sent).digest('hex'));
    assert.equal(seen.at(-1)!.toString('utf8'), sent);
  });

  it('keeps no copy on routes that did not ask for it', async () => {
    const res = await request(`${api.url}/test/plain`, { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } });
    assert.deepEqual(await res.body.json(), { size: 0 });
  });
});
