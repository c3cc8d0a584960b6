/**
 * Deployment readiness as an engine service, the one every door calls (REST's direct action, the
 * editor's Readiness view over LSP, the MCP tool, the CLI through REST): the engine's facts for
 * deploy-ai (readiness-facts.ts) and `run`, which runs deploy-ai `readiness` on a workspace with them
 * and answers its checks once the execution has settled.
 */
import { EngineError } from '../errors';
import type { RigorPipeline } from '../rigor/pipeline';
import { DEFAULT_TENANT_ID } from '../tenants/tenant-id';
import { READINESS_LOOKBACK, readinessFacts, type ReadinessFacts } from './readiness-facts';
import type { ExecutionRecord } from './records';
import type { SettleWait } from './settlement';

/** One check of deploy-ai readiness (skills/deploy/readiness.ts), as far as the engine reads it. */
export interface ReadinessCheckData {
  id: string;
  title: string;
  status: string;
  evidence: string;
  fix?: { title: string; [k: string]: unknown };
  [k: string]: unknown;
}

export interface ReadinessOutcome<C = ReadinessCheckData> {
  executionId: string;
  ready: boolean;
  checkedAt: string;
  checks: C[];
}

/** Who asks (the execution's owner and tenant). */
export interface ReadinessCaller {
  keyId: string | null;
  tenantId?: string;
  callbackSecret: string | null;
}

export interface ReadinessServiceDeps {
  /** Executions of a tenant, newest first (ExecutionService.list). */
  list(filter: { limit: number; tenantId: string }): ExecutionRecord[];
  rigor: Pick<RigorPipeline, 'readiness'>;
  /** Pending approvals of a tenant's executions. */
  pendingApprovals(tenantId: string): number;
  runAction(agentId: string, action: string, payload: { prompt: string; input: Record<string, unknown>; source: string }, who: ReadinessCaller): Promise<ExecutionRecord>;
  whenSettled(id: string, wait: SettleWait): Promise<ExecutionRecord>;
}

export class ReadinessService {
  constructor(private readonly deps: ReadinessServiceDeps) {}

  /** What deploy-ai cannot see in the repository: the tenant's last test run, last review, pending approvals. */
  facts(tenantId: string): ReadinessFacts {
    return readinessFacts(this.deps.list({ limit: READINESS_LOOKBACK, tenantId }), this.deps.pendingApprovals(tenantId));
  }

  /**
   * Runs deploy-ai `readiness` on `workspace` with the engine's facts and waits for its checks.
   * ERR_SKILL_UNAVAILABLE without the skill; ERR_TIMEOUT after `timeoutMs` (the execution goes on);
   * the execution's error (or ERR_SKILL_FAILED) when it ended without checks, with its id in details.
   * `started` learns the execution before the wait (progress reporting).
   */
  async run(workspace: string, who: ReadinessCaller, opts: SettleWait & { prompt?: string; started?(rec: ExecutionRecord): void }): Promise<ReadinessOutcome> {
    const unavailable = this.deps.rigor.readiness('deploy-ai', 'readiness').unavailable;
    if (unavailable) throw new EngineError('ERR_SKILL_UNAVAILABLE', `deploy-ai readiness is not available (${unavailable})`, { details: { agentId: 'deploy-ai', action: 'readiness' } });
    const input = this.facts(who.tenantId ?? DEFAULT_TENANT_ID) as unknown as Record<string, unknown>;
    const started = await this.deps.runAction('deploy-ai', 'readiness', { prompt: opts.prompt ?? 'deploy-ai readiness of the workspace', input, source: workspace }, who);
    opts.started?.(started);
    const rec = await this.deps.whenSettled(started.id, { ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    const data = rec.steps[0]?.output as { ready?: boolean; checkedAt?: string; checks?: ReadinessCheckData[] } | null | undefined;
    if (!data || !Array.isArray(data.checks)) {
      throw new EngineError((rec.error?.code as 'ERR_SKILL_FAILED' | undefined) ?? 'ERR_SKILL_FAILED', `deploy-ai readiness ${rec.id} ${rec.status}${rec.error ? `: ${rec.error.message}` : ' without checks'}`, { details: { executionId: rec.id } });
    }
    return { executionId: rec.id, ready: data.ready === true, checkedAt: data.checkedAt ?? '', checks: data.checks };
  }
}
