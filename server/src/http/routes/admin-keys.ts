/**
 * API key management: create (the key is shown once), list, read one, revoke. Any valid key may
 * manage keys (the contract shows no scopes); the CLI `cadre keys ...` calls these when a server
 * owns the data directory.
 */
import { type ApiKeys, keyView } from '../../auth/api-keys';
import type { Sessions } from '../../auth/sessions';
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import { defineRoute, type RouteDef } from '../route';
import { ApiKeyListSchema, ApiKeyViewSchema, CreateApiKeySchema, CreatedApiKeySchema } from '../schemas';

const KeyIdParams = z.object({ id: z.string().min(1).max(100).describe('Key id (key_...)') });

export function adminKeyRoutes(deps: { keys: Pick<ApiKeys, 'create' | 'list' | 'get' | 'revoke'>; sessions: Pick<Sessions, 'endForKey'> }): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/admin/keys',
      auth: 'key',
      summary: 'Create an API key (shown once)',
      tags: ['keys'],
      body: CreateApiKeySchema,
      responses: { 201: { description: 'The new key; `key` is never shown again (only its hash is stored)', schema: CreatedApiKeySchema } },
      handler: async (ctx) => {
        const { key, record } = await deps.keys.create(ctx.body.label, ctx.body.plan);
        return {
          status: 201,
          body: { id: record.id, key, prefix: record.prefix, plan: record.plan, label: record.label, createdAt: record.createdAt },
          headers: { location: `/v1/admin/keys/${record.id}`, 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/keys',
      auth: 'key',
      summary: 'List API keys (never the key or its hash)',
      tags: ['keys'],
      responses: { 200: { description: 'Every key, revoked ones included, oldest first', schema: ApiKeyListSchema } },
      handler: () => ({ status: 200, body: { keys: deps.keys.list().map(keyView) } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/keys/{id}',
      auth: 'key',
      summary: 'One API key (never the key or its hash)',
      tags: ['keys'],
      params: KeyIdParams,
      responses: { 200: { description: 'The key', schema: ApiKeyViewSchema }, 404: { description: 'No key with this id' } },
      handler: (ctx) => {
        const record = deps.keys.get(ctx.params.id);
        if (!record) throw new EngineError('ERR_NOT_FOUND', `no API key with id "${ctx.params.id}"`);
        return { status: 200, body: keyView(record) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/admin/keys/{id}',
      auth: 'key',
      summary: 'Revoke an API key (and end its sessions)',
      description: 'Idempotent: revoking a revoked key answers its record again. A key may revoke itself.',
      tags: ['keys'],
      params: KeyIdParams,
      responses: { 200: { description: 'The revoked key', schema: ApiKeyViewSchema }, 404: { description: 'No key with this id' } },
      handler: async (ctx) => {
        const record = await deps.keys.revoke(ctx.params.id);
        await deps.sessions.endForKey(record.id);
        return { status: 200, body: keyView(record) };
      },
    }),
  ];
}
