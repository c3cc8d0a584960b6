/**
 * Which tenant an audit record belongs to. Records written since tenants carry `tenantId`; older
 * ones (and records the engine writes without it) belong to the tenant of their execution, and a
 * record of no execution (a mode change by the configuration, a webhook disabled) to the default
 * tenant, as every record did before tenants existed.
 */
import type { AuditRecord, CollectionStore } from '../ports';
import { COLLECTIONS } from '../ports';
import { summarizeExecution, type ExecutionRecord } from '../executions/records';
import { DEFAULT_TENANT_ID, tenantOf } from '../tenants/tenant-id';

/** The tenant of `record`: its own `tenantId`, else its execution's (`executionTenant`), else the default tenant. */
export function auditTenantOf(record: Pick<AuditRecord, 'executionId'> & { tenantId?: string | null }, executionTenant: (executionId: string) => string | null | undefined): string {
  if (typeof record.tenantId === 'string' && record.tenantId !== '') return record.tenantId;
  if (record.executionId) return executionTenant(record.executionId) ?? DEFAULT_TENANT_ID;
  return DEFAULT_TENANT_ID;
}

/**
 * Tenant of every execution in the store, from the in-memory summaries (a cold execution is not read
 * from disk): one pass, then a lookup per audit record or approval.
 */
export function executionTenants(store: CollectionStore): Map<string, string> {
  const repo = store.collection<ExecutionRecord>(COLLECTIONS.executions);
  const all = repo.summaries?.(summarizeExecution) ?? repo.list().map(summarizeExecution);
  return new Map(all.map((s) => [s.id, tenantOf(s)]));
}
