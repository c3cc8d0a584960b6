/**
 * Audit records carry their tenant: an entry about an execution is stamped with the execution's
 * tenant before it is chained (so the stamp is covered by the hash), whoever appends it (pipeline,
 * ACMF, projects, PR flow). An entry that already names a tenant, or names no execution, is kept as is.
 */
import type { AuditTrail } from '../ports';

export function tenantStampedAudit(audit: AuditTrail, tenantOfExecution: (executionId: string) => string | undefined): AuditTrail {
  return {
    // `opts` carries the step's write unit: dropping it would write the records apart from their checkpoint.
    append: (entry, opts) => {
      if (entry.tenantId !== undefined || entry.executionId === undefined) return audit.append(entry, opts);
      const tenantId = tenantOfExecution(entry.executionId);
      return audit.append(tenantId === undefined ? entry : { ...entry, tenantId }, opts);
    },
    query: (filter) => audit.query(filter),
    verify: () => audit.verify(),
  };
}
