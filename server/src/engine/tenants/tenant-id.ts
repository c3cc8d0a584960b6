/**
 * Which tenant owns a record. A tenant owns API keys, executions, approvals, projects, webhooks,
 * integrations, quotas and its subscription; a single-user install has only the default tenant.
 * Records stored before tenants existed carry no `tenantId`: they belong to the default tenant
 * (the migration is this rule, so a cold segment never has to be rewritten to be read).
 */
export const DEFAULT_TENANT_ID = 'tnt_default';

/** The tenant of a record (absent or null: the default tenant). */
export function tenantOf(record: { tenantId?: string | null | undefined } | null | undefined): string {
  return record?.tenantId ?? DEFAULT_TENANT_ID;
}

/** True when `record` belongs to `tenantId` (a record of the default tenant may have no tenantId). */
export function ownedBy(record: { tenantId?: string | null | undefined } | null | undefined, tenantId: string): boolean {
  return record != null && tenantOf(record) === tenantId;
}
