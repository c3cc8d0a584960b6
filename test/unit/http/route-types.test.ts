/**
 * Compile-time checks of `defineRoute` (run by `npm run typecheck`): the context and the result are
 * typed from the declaration. Each `@ts-expect-error` must stay an error.
 */
import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { defineRoute, RESPONSE_SENT } from '../../../server/src/http/route';

const Out = z.object({ id: z.string(), n: z.number() });

export const typed = [
  defineRoute({
    method: 'POST', path: '/v1/things/{thingId}', auth: 'key', tenancy: 'tenant', summary: 's', tags: [],
    params: z.object({ thingId: z.string() }),
    query: z.object({ limit: z.coerce.number().default(1) }),
    body: z.object({ n: z.number() }),
    responses: { 201: { description: 'd', schema: Out }, 204: { description: 'empty' } },
    handler: async (ctx) => {
      const id: string = ctx.params.thingId;
      const limit: number = ctx.query.limit;
      const n: number = ctx.body.n;
      const keyId: string = ctx.principal.id;
      // @ts-expect-error: not a declared parameter
      void ctx.params.other;
      if (limit > 1) return { status: 204 };
      return { status: 201, body: { id, n: n + keyId.length } };
    },
  }),
  defineRoute({
    method: 'GET', path: '/v1/a/{x}/b/{y}', auth: 'none', tenancy: 'tenant', summary: 's', tags: [],
    responses: { 200: { description: 'd', schema: Out } },
    handler: (ctx) => {
      const both: string = ctx.params.x + ctx.params.y; // strings from the path, without a params schema
      const nobody: null = ctx.principal;
      void nobody;
      return { status: 200, body: { id: both, n: 1 } };
    },
  }),
  defineRoute({
    method: 'GET', path: '/v1/wrong-status', auth: 'key', tenancy: 'tenant', summary: 's', tags: [],
    responses: { 200: { description: 'd', schema: Out } },
    // @ts-expect-error: 201 is not a declared status
    handler: () => ({ status: 201, body: { id: 'x', n: 1 } }),
  }),
  defineRoute({
    method: 'GET', path: '/v1/wrong-body', auth: 'key', tenancy: 'tenant', summary: 's', tags: [],
    responses: { 200: { description: 'd', schema: Out } },
    // @ts-expect-error: the body does not match the schema of 200
    handler: () => ({ status: 200, body: { id: 'x', n: 'one' } }),
  }),
  defineRoute({
    method: 'GET', path: '/v1/stream', auth: 'session', tenancy: 'tenant', summary: 's', tags: [],
    responses: { 200: { description: 'text/event-stream' } },
    handler: async (ctx) => {
      const kind: 'key' | 'session' = ctx.credential.kind;
      void kind;
      return RESPONSE_SENT;
    },
  }),
];

describe('defineRoute types', () => {
  it('compiles (see npm run typecheck)', () => {
    assert.equal(typed.length, 5);
  });
});
