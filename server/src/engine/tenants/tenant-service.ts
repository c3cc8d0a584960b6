/**
 * Tenants: creation, quotas, subscriptions, deletion, and the quota check work is accepted under.
 * Who may call these is the door's business (install admin keys); what a tenant may see is decided
 * by `tenantOf` on every record (tenant-id.ts).
 */
import { LOCAL_SUBSCRIPTION, type Subscription } from '../catalog/subscription';
import { EngineError } from '../errors';
import type { Clock, CollectionStore, Repository } from '../ports';
import { DEFAULT_TENANT_ID } from './tenant-id';
import { NO_QUOTAS, QUOTA_NAMES, type TenantQuotas, type TenantRecord, type TenantUsage } from './records';

export const TENANTS_COLLECTION = 'tenants';

export interface TenantServiceDeps {
  store: CollectionStore;
  clock: Clock;
  newId(prefix: string): string;
  /** The install's subscription (the default tenant's, and any tenant's without its own). */
  installSubscription(): Subscription;
  /** What a tenant uses now (executions, projects, webhooks), from the services that own them. */
  usage(tenantId: string): TenantUsage;
}

export interface TenantInput {
  name: string;
  subscription?: Subscription | null;
  quotas?: Partial<TenantQuotas>;
}

export class TenantService {
  private readonly repo: Repository<TenantRecord>;

  constructor(private readonly deps: TenantServiceDeps) {
    this.repo = deps.store.collection<TenantRecord>(TENANTS_COLLECTION);
  }

  /**
   * The default tenant exists from the first start on; a store from before tenants gets it here, and
   * every record without a tenantId already reads as its own (`tenantOf`), so nothing is rewritten.
   */
  async ensureDefault(): Promise<TenantRecord> {
    const existing = this.repo.get(DEFAULT_TENANT_ID);
    if (existing) return existing;
    const now = this.now();
    const rec: TenantRecord = { id: DEFAULT_TENANT_ID, name: 'default', subscription: null, quotas: { ...NO_QUOTAS }, createdAt: now, updatedAt: now };
    await this.repo.put(rec);
    return rec;
  }

  async create(input: TenantInput, opts: { probe?: boolean } = {}): Promise<TenantRecord> {
    const name = input.name.trim();
    if (!name) throw new EngineError('ERR_VALIDATION', 'a tenant needs a name', { details: { errors: [{ field: 'body.name', message: 'empty' }] } });
    if (this.repo.list((t) => !t.deletedAt && t.name === name).length > 0) {
      throw new EngineError('ERR_CONFLICT', `a tenant named "${name}" already exists`, { details: { name } });
    }
    const now = this.now();
    const rec: TenantRecord = {
      id: this.deps.newId('tnt'), name, subscription: input.subscription ?? null, quotas: { ...NO_QUOTAS, ...(input.quotas ?? {}) },
      createdAt: now, updatedAt: now, ...(opts.probe ? { probe: true } : {}),
    };
    await this.repo.put(rec);
    return rec;
  }

  /** The tenant, deleted ones included (their records stay readable to the install admin). */
  get(id: string): TenantRecord {
    const rec = this.repo.get(id);
    if (!rec) throw new EngineError('ERR_NOT_FOUND', `no tenant ${id}`, { details: { id } });
    return rec;
  }

  find(id: string): TenantRecord | undefined {
    return this.repo.get(id);
  }

  /** Oldest first; deleted ones only when asked. */
  list(opts: { includeDeleted?: boolean } = {}): TenantRecord[] {
    return this.repo.list((t) => opts.includeDeleted === true || !t.deletedAt).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async update(id: string, patch: { name?: string; subscription?: Subscription | null; quotas?: Partial<TenantQuotas> }): Promise<TenantRecord> {
    const cur = this.get(id);
    if (cur.deletedAt) throw new EngineError('ERR_CONFLICT', `tenant ${id} was deleted`, { details: { id } });
    if (id === DEFAULT_TENANT_ID && patch.subscription !== undefined) {
      throw new EngineError('ERR_VALIDATION', "the default tenant's subscription is the install's (config `subscription`)", { details: { errors: [{ field: 'body.subscription', message: 'not settable on the default tenant' }] } });
    }
    return this.repo.update(id, {
      ...(patch.name !== undefined ? { name: patch.name.trim() } : {}),
      ...(patch.subscription !== undefined ? { subscription: patch.subscription } : {}),
      ...(patch.quotas ? { quotas: { ...cur.quotas, ...patch.quotas } } : {}),
      updatedAt: this.now(),
    });
  }

  /** Marks the tenant deleted (the door revokes its keys); the default tenant cannot be deleted. */
  async delete(id: string): Promise<TenantRecord> {
    if (id === DEFAULT_TENANT_ID) throw new EngineError('ERR_CONFLICT', 'the default tenant holds the install and cannot be deleted', { details: { id } });
    const cur = this.get(id);
    if (cur.deletedAt) return cur;
    return this.repo.update(id, { deletedAt: this.now(), updatedAt: this.now() });
  }

  subscriptionOf(tenantId: string): Subscription {
    return this.repo.get(tenantId)?.subscription ?? this.deps.installSubscription() ?? LOCAL_SUBSCRIPTION;
  }

  /** Usage against quotas: each quota with its limit, what is used, and whether it is exceeded. */
  report(tenantId: string): { tenantId: string; quotas: Array<{ name: keyof TenantQuotas; limit: number | null; used: number; exceeded: boolean }> } {
    const t = this.get(tenantId);
    const u = this.deps.usage(tenantId);
    const used: Record<keyof TenantQuotas, number> = { executionsPerDay: u.executionsLast24h, concurrentExecutions: u.activeExecutions, projects: u.projects, webhooks: u.webhooks };
    return { tenantId, quotas: QUOTA_NAMES.map((name) => ({ name, limit: t.quotas[name], used: used[name], exceeded: t.quotas[name] !== null && used[name] >= t.quotas[name]! })) };
  }

  /**
   * Refuses new work of a tenant that is deleted or at one of its quotas (429 ERR_QUOTA_EXCEEDED,
   * naming the quota). Cheap when the tenant has no quota (the single-user install).
   */
  admit(tenantId: string, what: 'execution' | 'project' | 'webhook'): void {
    const t = this.repo.get(tenantId);
    if (!t) {
      if (tenantId === DEFAULT_TENANT_ID) return;
      throw new EngineError('ERR_NOT_FOUND', `no tenant ${tenantId}`, { details: { id: tenantId } });
    }
    if (t.deletedAt) throw new EngineError('ERR_CONFLICT', `tenant ${tenantId} was deleted`, { details: { id: tenantId } });
    const names: Array<keyof TenantQuotas> = what === 'execution' ? ['executionsPerDay', 'concurrentExecutions'] : what === 'project' ? ['projects'] : ['webhooks'];
    if (names.every((n) => t.quotas[n] === null)) return;
    const u = this.deps.usage(tenantId);
    const used: Record<keyof TenantQuotas, number> = { executionsPerDay: u.executionsLast24h, concurrentExecutions: u.activeExecutions, projects: u.projects, webhooks: u.webhooks };
    for (const n of names) {
      const limit = t.quotas[n];
      if (limit !== null && used[n] >= limit) {
        throw new EngineError('ERR_QUOTA_EXCEEDED', `tenant ${t.name} is at its ${n} quota (${used[n]} of ${limit})`, { details: { tenantId, quota: n, limit, used: used[n] } });
      }
    }
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
