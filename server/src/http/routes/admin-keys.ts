/**
 * API key management: create (the key is shown once), list, read one, revoke. Creating and listing
 * keys needs the admin role (a key that could mint keys could give itself any role); a key may read
 * and revoke itself. The CLI `cadre keys ...` calls these when a server owns the data directory.
 */
import { type ApiKeyRecord, type ApiKeys, keyView } from '../../auth/api-keys';
import { roleOf } from '../../auth/roles';
import { tenantOf } from '../../engine/tenants/tenant-id';
import type { Sessions } from '../../auth/sessions';
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import { HttpProblem, problemFor } from '../problem';
import { defineRoute, type RouteDef } from '../route';
import { ApiKeyListSchema, ApiKeyViewSchema, CreateApiKeySchema, CreatedApiKeySchema } from '../schemas';

const KeyIdParams = z.object({ id: z.string().min(1).max(100).describe('Key id (key_...)') });

/** Admin, or the key itself. */
function adminOrSelf(principal: ApiKeyRecord, id: string, what: string): void {
  if (principal.id === id || roleOf(principal) === 'admin') return;
  throw new HttpProblem(problemFor('ERR_FORBIDDEN', `${what} another key needs the admin role; this key (${principal.id}) has the ${roleOf(principal)} role`, { requiredRole: 'admin', role: roleOf(principal) }));
}

export function adminKeyRoutes(deps: { keys: Pick<ApiKeys, 'create' | 'list' | 'get' | 'revoke'>; sessions: Pick<Sessions, 'endForKey'> }): RouteDef[] {
  /** A key of the caller's tenant: another tenant's key is not found, whatever the caller's role. */
  const keyOfTenant = (tenantId: string, id: string): ApiKeyRecord => {
    const record = deps.keys.get(id);
    if (!record || tenantOf(record) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no API key with id "${id}"`, { details: { id } });
    return record;
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/admin/keys',
      auth: 'key', tenancy: 'tenant',
      role: 'admin',
      // A replay under the same Idempotency-Key names the same key but never shows it again (it is not kept).
      idempotent: { redact: (body) => ({ ...(body as Record<string, unknown>), key: null }) },
      summary: 'Create an API key (shown once)',
      description: 'Needs the admin role. `role` (default operator) sets what the new key may decide. The key belongs to the caller\'s tenant ' +
        '(keys of another tenant are made with `POST /v1/admin/tenants/{tenant_id}/keys`).',
      tags: ['keys'],
      body: CreateApiKeySchema,
      responses: { 201: { description: 'The new key; `key` is never shown again (only its hash is stored)', schema: CreatedApiKeySchema } },
      handler: async (ctx) => {
        const { key, record } = await deps.keys.create(ctx.body.label, ctx.body.plan, ctx.body.role, ctx.tenantId);
        return {
          status: 201,
          body: { id: record.id, key, prefix: record.prefix, plan: record.plan, role: roleOf(record), tenantId: tenantOf(record), label: record.label, createdAt: record.createdAt },
          headers: { location: `/v1/admin/keys/${record.id}`, 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/keys',
      auth: 'key', tenancy: 'tenant',
      role: 'admin',
      summary: 'List API keys (never the key or its hash; the prefix is `cadre_` and 8 characters)',
      tags: ['keys'],
      responses: { 200: { description: "Every key of the caller's tenant, revoked ones included, oldest first", schema: ApiKeyListSchema } },
      handler: (ctx) => ({ status: 200, body: { keys: deps.keys.list(ctx.tenantId).map(keyView) } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/keys/{id}',
      auth: 'key', tenancy: 'tenant',
      summary: 'One API key (never the key or its hash)',
      tags: ['keys'],
      params: KeyIdParams,
      responses: { 200: { description: 'The key', schema: ApiKeyViewSchema }, 404: { description: 'No key with this id' } },
      handler: (ctx) => {
        const record = keyOfTenant(ctx.tenantId, ctx.params.id);
        adminOrSelf(ctx.principal, ctx.params.id, 'reading');
        return { status: 200, body: keyView(record) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/admin/keys/{id}',
      auth: 'key', tenancy: 'tenant',
      summary: 'Revoke an API key (and end its sessions)',
      description: 'Idempotent: revoking a revoked key answers its record again. A key may revoke itself; revoking another needs the admin role.',
      tags: ['keys'],
      params: KeyIdParams,
      responses: { 200: { description: 'The revoked key', schema: ApiKeyViewSchema }, 404: { description: 'No key with this id' } },
      handler: async (ctx) => {
        keyOfTenant(ctx.tenantId, ctx.params.id);
        adminOrSelf(ctx.principal, ctx.params.id, 'revoking');
        const record = await deps.keys.revoke(ctx.params.id);
        await deps.sessions.endForKey(record.id);
        return { status: 200, body: keyView(record) };
      },
    }),
  ];
}
