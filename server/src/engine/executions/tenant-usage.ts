/**
 * What each tenant runs now and ran in the last 24 hours (its `concurrentExecutions` and
 * `executionsPerDay` quotas), kept current on every write of an execution record, so that admitting
 * work does not walk the whole history: memory holds the executions not yet ended and the ones
 * created in the last 24 hours (a tenant at its daily quota has at most that many), nothing older.
 *
 * Built once from the summaries at start-up; then the execution repository is observed
 * (`observedRepository`): a put that creates, an update that changes the status, a delete. Retention
 * deletes straight in the store (host), but only executions that ended, almost always older than a
 * day: one it removes within 24 hours (by count) still counts until it leaves the window.
 *
 * The same window answers which execution a request's idempotency claim created (`byClaim`): a claim
 * the door finds abandoned (its process died before answering) is younger than the door's claim TTL,
 * a day, and so is what it created; a retry no longer walks every summary to find it.
 */
import type { Repository } from '../ports';
import { tenantOf } from '../tenants/tenant-id';
import { TERMINAL_STATUSES, type ExecutionRecord, type ExecutionSummary } from './records';

const DAY_MS = 24 * 3600_000;

export class TenantUsageIndex {
  /** Executions not yet ended, with their tenant. */
  private readonly activeIds = new Map<string, string>();
  private readonly activeCount = new Map<string, number>();
  /** Executions created in the last 24 hours (at most): id → tenant and creation time; per tenant, oldest first. */
  private readonly recentIds = new Map<string, { tenant: string; at: number; claim?: string }>();
  private readonly recent = new Map<string, Array<{ id: string; at: number }>>();
  /** Idempotency claim → the execution of the last 24 hours it created. */
  private readonly claims = new Map<string, string>();

  constructor(private readonly now: () => number, summaries: readonly ExecutionSummary[]) {
    const since = now() - DAY_MS;
    const sorted = [...summaries].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    for (const s of sorted) {
      const tenant = tenantOf(s);
      if (!TERMINAL_STATUSES.has(s.status)) this.setActive(s.id, tenant, true);
      const at = Date.parse(s.createdAt);
      if (at >= since) this.addRecent(s.id, tenant, at, s.idempotencyId);
    }
  }

  usage(tenantId: string): { executionsLast24h: number; activeExecutions: number } {
    const list = this.pruned(tenantId);
    return { executionsLast24h: list?.length ?? 0, activeExecutions: this.activeCount.get(tenantId) ?? 0 };
  }

  /** The execution of the last 24 hours created with this idempotency claim, if any. */
  byClaim(claim: string): string | undefined {
    const id = this.claims.get(claim);
    const r = id === undefined ? undefined : this.recentIds.get(id);
    if (!r) return undefined;
    this.pruned(r.tenant);
    return this.claims.get(claim);
  }

  /** The tenant's executions of the last 24 hours, older ones dropped first. */
  private pruned(tenantId: string): Array<{ id: string; at: number }> | undefined {
    const list = this.recent.get(tenantId);
    if (list) {
      const since = this.now() - DAY_MS;
      let drop = 0;
      while (drop < list.length && list[drop]!.at < since) this.forgetRecent(list[drop++]!.id);
      if (drop > 0) list.splice(0, drop);
    }
    return list;
  }

  private forgetRecent(id: string): void {
    const claim = this.recentIds.get(id)?.claim;
    if (claim !== undefined && this.claims.get(claim) === id) this.claims.delete(claim);
    this.recentIds.delete(id);
  }

  /** A record written whole (created, or replaced). */
  written(rec: ExecutionRecord): void {
    const tenant = tenantOf(rec);
    this.setActive(rec.id, tenant, !TERMINAL_STATUSES.has(rec.status));
    if (!this.recentIds.has(rec.id)) {
      const at = Date.parse(rec.createdAt);
      if (at >= this.now() - DAY_MS) this.addRecent(rec.id, tenant, at, rec.idempotencyId);
    }
  }

  /** A patch that names a status (the record's tenant never changes; read only for one that had ended). */
  statusChanged(id: string, status: string, tenantOfRecord: () => string | undefined): void {
    const active = !TERMINAL_STATUSES.has(status as ExecutionRecord['status']);
    const tenant = this.activeIds.get(id) ?? (active ? tenantOfRecord() : undefined);
    if (tenant !== undefined) this.setActive(id, tenant, active);
  }

  deleted(id: string): void {
    const tenant = this.activeIds.get(id);
    if (tenant !== undefined) this.setActive(id, tenant, false);
    const r = this.recentIds.get(id);
    if (r) {
      this.forgetRecent(id);
      const list = this.recent.get(r.tenant) ?? [];
      const i = list.findIndex((x) => x.id === id);
      if (i >= 0) list.splice(i, 1);
    }
  }

  private setActive(id: string, tenant: string, active: boolean): void {
    const was = this.activeIds.has(id);
    if (active === was) return;
    if (active) this.activeIds.set(id, tenant);
    else this.activeIds.delete(id);
    this.activeCount.set(tenant, (this.activeCount.get(tenant) ?? 0) + (active ? 1 : -1));
  }

  private addRecent(id: string, tenant: string, at: number, claim: string | undefined): void {
    this.recentIds.set(id, claim === undefined ? { tenant, at } : { tenant, at, claim });
    if (claim !== undefined) this.claims.set(claim, id);
    const list = this.recent.get(tenant) ?? [];
    // Creations arrive in time order; an older one (a restore) goes to its place.
    let i = list.length;
    while (i > 0 && list[i - 1]!.at > at) i--;
    list.splice(i, 0, { id, at });
    this.recent.set(tenant, list);
  }
}

/** The execution repository with every write reported to `index` (the other methods unchanged). */
export function observedRepository(repo: Repository<ExecutionRecord>, index: TenantUsageIndex): Repository<ExecutionRecord> {
  return {
    get: (id) => repo.get(id),
    list: (filter) => repo.list(filter),
    count: () => repo.count(),
    put: (record, opts) => {
      index.written(record);
      return repo.put(record, opts);
    },
    update: (id, patch, opts) => {
      if (patch.status !== undefined) {
        index.statusChanged(id, patch.status, () => {
          const cur = repo.get(id);
          return cur ? tenantOf(cur) : undefined;
        });
      }
      return repo.update(id, patch, opts);
    },
    delete: (id, opts) => {
      index.deleted(id);
      return repo.delete(id, opts);
    },
    ...(repo.summaries ? { summaries: <S extends { id: string }>(summarize: (record: ExecutionRecord) => S) => repo.summaries!(summarize) } : {}),
  };
}
