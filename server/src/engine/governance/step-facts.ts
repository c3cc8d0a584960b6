/**
 * The engine's facts for GOVERN and EVOLVE steps (the `stepFacts` hook of the execution service):
 * govern-ai `audit-trail` and `approval`, adapt-ai `feedback` and `evaluate`, success-ai `health` and
 * `engagement`, and govern-ai `compliance`'s audit evidence (`input.audit`). Skills run confined (a worker thread, no store, no audit trail): what they report
 * comes from here, as `input.governance`, scoped to the execution's tenant, over anything the request
 * said. The two writes (a decision on an approval, a rating) are made here, once, as the person's
 * act; the skill reports them.
 */
import type { AcmfService } from '../acmf/acmf-service';
import type { Scope } from '../catalog/enums';
import type { ExecutionRecord } from '../executions/records';
import type { StepFactsContext } from '../executions/execution-service';
import type { AuditTrail, Clock, CollectionStore } from '../ports';
import { DEFAULT_TENANT_ID, tenantOf } from '../tenants/tenant-id';
import type { TenantService } from '../tenants/tenant-service';
import type { Adaptations } from './adaptations';
import { approvalFacts, type KeyAuthority } from './approval-facts';
import { auditTrailFacts, complianceAuditFacts } from './audit-facts';
import { executionTenants } from './audit-tenant';
import { evaluateFacts } from './evaluate-facts';
import { recordFeedback } from './feedback';
import { successFacts } from './success-facts';
import type { ApprovalRecord } from '../acmf/records';
import { COLLECTIONS } from '../ports';

export interface GovernanceFactsDeps {
  store: CollectionStore;
  audit: AuditTrail;
  acmf: AcmfService;
  clock: Clock;
  /** Executions by id (as stored) and the tenant's newest ones; the execution service, reached lazily. */
  executions(): { find(id: string): ExecutionRecord | undefined; list(filter: { tenantId: string; limit: number }): ExecutionRecord[] };
  /** Key roles, from the host (absent: no key can decide through govern-ai). */
  keys?: KeyAuthority;
  /** `security.self_approval` of the configuration. */
  selfApprovalSetting(): boolean | undefined;
  /** The install's default scope (the gate thresholds adapt-ai reports). */
  defaultScope(): Scope;
  /** Tenants with their quota usage (tenant-ai quotas); absent: no tenant facts. */
  tenants?(): Pick<TenantService, 'list' | 'find' | 'report'>;
  /**
   * tenant-ai check-isolation: the host probes the boundary through its real API (two probe tenants,
   * every route) and reports each route with its answer; absent: the engine has no API to probe.
   */
  isolationCheck?(req: { tenantId: string; now: number }): Promise<Record<string, unknown>>;
  /** Adaptations in force (adapt-ai's, applied through ACMF): shown by evaluate, suppressions handed to scans. */
  adaptations?: Pick<Adaptations, 'list' | 'suppressedFor'>;
}

/** Agents whose findings carry fingerprints people rate (and adapt-ai may suppress). */
const SUPPRESSIBLE_AGENTS: ReadonlySet<string> = new Set(['security-ai']);

/** The agent actions that get facts from here. */
export const GOVERNANCE_FACT_ACTIONS: ReadonlySet<string> = new Set([
  'govern-ai/audit-trail', 'govern-ai/approval', 'adapt-ai/feedback', 'adapt-ai/evaluate', 'success-ai/health', 'success-ai/engagement',
]);

export function governanceStepFacts(deps: GovernanceFactsDeps): (ctx: StepFactsContext) => Promise<Record<string, unknown> | undefined> {
  return async (ctx) => {
    const key = `${ctx.agentId}/${ctx.action}`;
    if (key === 'tenant-ai/quotas' && deps.tenants) {
      // The install (default tenant) sees every tenant; any other tenant only itself.
      const t = deps.tenants();
      const install = ctx.tenantId === DEFAULT_TENANT_ID;
      const ids = install ? t.list({ includeDeleted: true }).filter((x) => !x.probe).map((x) => x.id) : [ctx.tenantId];
      if (!ids.includes(ctx.tenantId)) ids.unshift(ctx.tenantId);
      return {
        governance: {
          action: 'quotas', asOf: new Date(deps.clock.now()).toISOString(), scope: install ? 'install' : 'tenant',
          tenants: ids.map((id) => {
            const rec = t.find(id);
            return { id, name: rec?.name ?? (id === DEFAULT_TENANT_ID ? 'default' : id), deleted: Boolean(rec?.deletedAt), quotas: rec ? t.report(id).quotas.map((q) => ({ ...q })) : [] };
          }),
        },
      };
    }
    if (key === 'tenant-ai/check-isolation') {
      if (!deps.isolationCheck) return { governance: { error: { code: 'refused', message: 'no HTTP API runs with this engine: the isolation check probes the real API (start `cadre serve` or the editor extension)' } } };
      try {
        return { governance: await deps.isolationCheck({ tenantId: ctx.tenantId, now: deps.clock.now() }) };
      } catch (err) {
        return { governance: { error: { code: 'refused', message: (err as Error).message } } };
      }
    }
    if (key === 'govern-ai/compliance') {
      // The tenant's audit evidence for the audit-evidenced controls, over the request's own: a request cannot vouch for its trail.
      const map = executionTenants(deps.store);
      const approvals = deps.store.collection<ApprovalRecord>(COLLECTIONS.approvals).list();
      return { audit: await complianceAuditFacts(deps.audit, ctx.tenantId, (id) => map.get(id), approvals) };
    }
    if (SUPPRESSIBLE_AGENTS.has(ctx.agentId) && deps.adaptations) {
      // The tenant's findings rated false positives, suppressed through ACMF: left out of this scan.
      const suppressed = deps.adaptations.suppressedFor(ctx.tenantId, ctx.agentId);
      return suppressed.length > 0 ? { suppressedFindings: suppressed } : undefined;
    }
    if (!GOVERNANCE_FACT_ACTIONS.has(key)) return undefined;
    const now = deps.clock.now();
    const asOf = new Date(now).toISOString();
    const ex = deps.executions();
    const tenantOfExecution = (): ((id: string) => string | undefined) => {
      let map: Map<string, string> | null = null;
      return (id) => (map ??= executionTenants(deps.store)).get(id);
    };
    switch (key) {
      case 'govern-ai/audit-trail':
        return { governance: await auditTrailFacts(deps.audit, ctx.tenantId, ctx.input, tenantOfExecution(), asOf) };
      case 'govern-ai/approval':
        return {
          governance: await approvalFacts({
            acmf: deps.acmf, ...(deps.keys ? { keys: deps.keys } : {}), executionTenant: tenantOfExecution(), now: () => deps.clock.now(),
            ownerKeyOf: (id) => ex.find(id)?.ownerKeyId ?? null, selfApprovalSetting: deps.selfApprovalSetting,
          }, ctx, asOf),
        };
      case 'adapt-ai/feedback':
        return {
          governance: await recordFeedback({
            store: deps.store, audit: deps.audit, now: () => new Date(deps.clock.now()).toISOString(),
            executionFor: (tenantId, id) => {
              const rec = ex.find(id);
              return rec && tenantOf(rec) === tenantId ? rec : undefined;
            },
          }, ctx),
        };
      case 'adapt-ai/evaluate':
        return { governance: evaluateFacts({ store: deps.store, recentExecutions: (tenantId, limit) => ex.list({ tenantId, limit }), ...(deps.adaptations ? { adaptations: (t: string) => deps.adaptations!.list(t) } : {}) }, ctx.tenantId, deps.defaultScope(), asOf, ctx.executionId) };
      default:
        return { governance: successFacts(deps.store, ctx.tenantId, ctx.action as 'health' | 'engagement', ctx.input, now, ctx.executionId) };
    }
  };
}
