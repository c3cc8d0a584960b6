/**
 * Tenants over HTTP. Administering tenants (create, list, change quotas or subscription, delete, make
 * a tenant's first key) is the install's: an admin key of the default tenant. Any key reads its own
 * tenant with its quota usage at `GET /v1/tenant`. Every change is in the audit trail under the
 * authenticated actor, with the tenant it concerns.
 */
import { z } from 'zod';
import type { ApiKeys } from '../../auth/api-keys';
import { roleOf } from '../../auth/roles';
import { COMMERCIAL_TIERS, PRODUCT_IDS } from '../../engine/catalog/subscription';
import { EngineError } from '../../engine/errors';
import type { Engine } from '../../engine/index';
import type { TenantRecord } from '../../engine/tenants/records';
import { tenantOf } from '../../engine/tenants/tenant-id';
import { defineRoute, type RouteDef } from '../route';
import { ApiPlanSchema, ApiRoleSchema, CreatedApiKeySchema } from '../schemas';

const SubscriptionSchema = z.object({
  products: z.array(z.enum(PRODUCT_IDS)).min(1, 'name at least one product'),
  commercialTier: z.enum(COMMERCIAL_TIERS),
}).meta({ id: 'TenantSubscription' });

const quota = z.number().int().min(0).max(10_000_000).nullable();
const QuotasSchema = z.object({
  executionsPerDay: quota.describe('Executions accepted in a rolling 24 hours (null: no limit)'),
  concurrentExecutions: quota.describe('Executions not yet ended at once (null: no limit)'),
  projects: quota.describe('Projects (null: no limit)'),
  webhooks: quota.describe('Outbound webhook subscriptions (null: no limit)'),
}).meta({ id: 'TenantQuotas' });

const QuotaUseSchema = z.object({ name: z.string(), limit: z.number().int().nullable(), used: z.number().int(), exceeded: z.boolean() });

export const TenantSchema = z.object({
  id: z.string(),
  name: z.string(),
  subscription: SubscriptionSchema.nullable().describe("null: the install's subscription"),
  quotas: QuotasSchema,
  usage: z.array(QuotaUseSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
  deletedAt: z.string().nullable(),
}).meta({ id: 'Tenant' });

const CreateTenantSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  subscription: SubscriptionSchema.nullable().optional(),
  quotas: QuotasSchema.partial().optional(),
});
const PatchTenantSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  subscription: SubscriptionSchema.nullable().optional(),
  quotas: QuotasSchema.partial().optional(),
});
const TenantKeySchema = z.strictObject({
  label: z.string().trim().min(1).max(200).default('api key'),
  plan: ApiPlanSchema.default('enterprise'),
  role: ApiRoleSchema.default('admin'),
});
const TenantIdParams = z.object({ tenant_id: z.string().min(1).max(100).describe('Tenant id (tnt_...)') });

export function tenantRoutes(deps: { engine: Engine; keys: Pick<ApiKeys, 'create' | 'revokeTenant'> }): RouteDef[] {
  const { tenants } = deps.engine;
  const view = (t: TenantRecord) => ({
    id: t.id, name: t.name, subscription: t.subscription ? { products: [...t.subscription.products], commercialTier: t.subscription.commercialTier } : null, quotas: { ...t.quotas }, usage: tenants.report(t.id).quotas.map((q) => ({ ...q })),
    createdAt: t.createdAt, updatedAt: t.updatedAt, deletedAt: t.deletedAt ?? null,
  });
  const audited = (kind: string, actor: string, tenantId: string, data: Record<string, unknown>) => deps.engine.audit.append({ kind, actor, tenantId, data });
  const admin = { auth: 'key' as const, tenancy: 'install' as const, role: 'admin' as const, tags: ['tenants'] };
  return [
    defineRoute({
      ...admin, method: 'POST', path: '/v1/admin/tenants', idempotent: true,
      summary: 'Create a tenant (install admin)',
      description: 'Needs an admin key of the default tenant. Make its first key with `POST /v1/admin/tenants/{tenant_id}/keys`.',
      body: CreateTenantSchema,
      responses: { 201: { description: 'The tenant', schema: TenantSchema }, 409: { description: 'A tenant of this name exists' } },
      handler: async (ctx) => {
        const t = await tenants.create({ name: ctx.body.name, ...(ctx.body.subscription !== undefined ? { subscription: ctx.body.subscription } : {}), ...(ctx.body.quotas ? { quotas: ctx.body.quotas } : {}) });
        await audited('tenant.created', ctx.actor, t.id, { name: t.name, quotas: t.quotas, subscription: t.subscription });
        return { status: 201, body: view(t), headers: { location: `/v1/admin/tenants/${t.id}` } };
      },
    }),
    defineRoute({
      ...admin, method: 'GET', path: '/v1/admin/tenants',
      summary: 'Tenants with their quota usage, oldest first (install admin)',
      query: z.object({ include_deleted: z.enum(['true', 'false']).default('false') }),
      responses: { 200: { description: 'The tenants', schema: z.object({ tenants: z.array(TenantSchema) }) } },
      handler: (ctx) => ({ status: 200, body: { tenants: tenants.list({ includeDeleted: ctx.query.include_deleted === 'true' }).map(view) } }),
    }),
    defineRoute({
      ...admin, method: 'GET', path: '/v1/admin/tenants/{tenant_id}',
      summary: 'One tenant with its quota usage (install admin)',
      params: TenantIdParams,
      responses: { 200: { description: 'The tenant', schema: TenantSchema }, 404: { description: 'No such tenant' } },
      handler: (ctx) => ({ status: 200, body: view(tenants.get(ctx.params.tenant_id)) }),
    }),
    defineRoute({
      ...admin, method: 'PATCH', path: '/v1/admin/tenants/{tenant_id}',
      summary: "Change a tenant's name, quotas or subscription (install admin)",
      params: TenantIdParams,
      body: PatchTenantSchema,
      responses: { 200: { description: 'The tenant', schema: TenantSchema }, 404: { description: 'No such tenant' }, 409: { description: 'The tenant was deleted' } },
      handler: async (ctx) => {
        const t = await tenants.update(ctx.params.tenant_id, ctx.body);
        await audited('tenant.updated', ctx.actor, t.id, { changed: Object.keys(ctx.body) });
        return { status: 200, body: view(t) };
      },
    }),
    defineRoute({
      ...admin, method: 'DELETE', path: '/v1/admin/tenants/{tenant_id}',
      summary: 'Delete a tenant: its keys are revoked and it accepts no new work (install admin)',
      description: 'Its records stay (history, audit); the default tenant cannot be deleted (409).',
      params: TenantIdParams,
      responses: { 200: { description: 'The deleted tenant', schema: TenantSchema }, 404: { description: 'No such tenant' }, 409: { description: 'The default tenant' } },
      handler: async (ctx) => {
        const t = await tenants.delete(ctx.params.tenant_id);
        const revoked = await deps.keys.revokeTenant(t.id);
        await audited('tenant.deleted', ctx.actor, t.id, { keysRevoked: revoked });
        return { status: 200, body: view(t) };
      },
    }),
    defineRoute({
      ...admin, method: 'POST', path: '/v1/admin/tenants/{tenant_id}/keys',
      idempotent: { redact: (body) => ({ ...(body as Record<string, unknown>), key: null }) },
      summary: "Create a key of a tenant (shown once; default role admin: the tenant's own administrator)",
      params: TenantIdParams,
      body: TenantKeySchema,
      responses: { 201: { description: 'The new key; `key` is never shown again', schema: CreatedApiKeySchema }, 404: { description: 'No such tenant' }, 409: { description: 'The tenant was deleted' } },
      handler: async (ctx) => {
        const t = tenants.get(ctx.params.tenant_id);
        if (t.deletedAt) throw new EngineError('ERR_CONFLICT', `tenant ${t.id} was deleted: it gets no new keys`, { details: { id: t.id } });
        const { key, record } = await deps.keys.create(ctx.body.label, ctx.body.plan, ctx.body.role, ctx.params.tenant_id);
        await audited('tenant.key_created', ctx.actor, ctx.params.tenant_id, { keyId: record.id, role: roleOf(record) });
        return {
          status: 201,
          body: { id: record.id, key, prefix: record.prefix, plan: record.plan, role: roleOf(record), tenantId: tenantOf(record), label: record.label, createdAt: record.createdAt },
          headers: { location: `/v1/admin/keys/${record.id}`, 'cache-control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/tenant', auth: 'key', tenancy: 'tenant', tags: ['tenants'],
      summary: "The caller's tenant: its subscription, quotas and what it uses of them",
      responses: { 200: { description: 'The tenant', schema: TenantSchema } },
      handler: async (ctx) => {
        // The default tenant of a store from before tenants is made at start-up; this is its record.
        return { status: 200, body: view(tenants.find(ctx.tenantId) ?? (await tenants.ensureDefault())) };
      },
    }),
  ];
}
