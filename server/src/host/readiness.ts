/**
 * Deployment readiness as every door runs it (the editor's Readiness view over LSP, the MCP tool):
 * the engine's facts (last tests, last review, pending approvals) go to deploy-ai `readiness` on the
 * workspace, and the caller gets its checks once the execution has ended. Moved here from
 * lsp/requests.ts so that the LSP request and the MCP tool call the same code.
 */
import { DEFAULT_TENANT_ID } from '../engine/tenants/tenant-id';
import type { Engine } from '../engine/index';
import type { Principal } from '../engine/executions/execution-service';
import type { ExecutionRecord } from '../engine/executions/records';
import { TERMINAL_STATUSES } from '../engine/executions/records';
import { READINESS_LOOKBACK, readinessFacts as engineReadinessFacts } from '../engine/executions/readiness-facts';
import type { ReadinessCheck } from '../../../protocol/lsp';
import type { ReadinessData, ReadinessInput } from '../skills/deploy/readiness';

/** What deploy-ai cannot see in the repository: the engine's last test run, last review and pending approvals. */
export function readinessFacts(engine: Engine, tenantId: string = DEFAULT_TENANT_ID): ReadinessInput {
  return engineReadinessFacts(engine.executions.list({ limit: READINESS_LOOKBACK, tenantId }), engine.approvals.list(tenantId, { status: 'pending' }).length);
}

/** Rejected by `waitForEnd` when the execution is still running at the deadline. */
export class StillRunningError extends Error {
  constructor(readonly executionId: string, readonly timeoutMs: number, readonly status: string) {
    super(`${executionId} did not finish within ${timeoutMs} ms (still ${status})`);
    this.name = 'StillRunningError';
  }
}

/**
 * Resolves once the execution has ended (by its events, with the record as the truth); rejects with
 * StillRunningError after `timeoutMs`, or with the signal's reason when `signal` aborts first.
 */
export function waitForEnd(engine: Engine, id: string, timeoutMs: number, signal?: AbortSignal): Promise<ExecutionRecord> {
  const ex = engine.executions;
  return new Promise((resolve, reject) => {
    let done = false;
    let unsubscribe: () => void = () => {};
    const settle = (outcome: 'ended' | 'timeout' | 'aborted') => {
      if (done) return;
      const rec = ex.get(id);
      if (outcome === 'ended' && !TERMINAL_STATUSES.has(rec.status)) return;
      done = true;
      clearTimeout(timer);
      clearInterval(poll);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      if (outcome === 'ended') resolve(rec);
      else if (outcome === 'aborted') reject(signal?.reason instanceof Error ? signal.reason : new Error('the wait was cancelled'));
      else reject(new StillRunningError(id, timeoutMs, rec.status));
    };
    const onAbort = () => settle('aborted');
    const timer = setTimeout(() => settle('timeout'), timeoutMs);
    // The record is written just after the final event: a short poll covers that gap.
    const poll = setInterval(() => settle('ended'), 100);
    unsubscribe = ex.eventSource(id).subscribe((e) => {
      if (e.type === 'execution_completed' || e.type === 'execution_failed') setImmediate(() => settle('ended'));
    });
    if (signal?.aborted) return settle('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    settle('ended');
  });
}

export interface ReadinessOutcome {
  executionId: string;
  ready: boolean;
  checkedAt: string;
  checks: ReadinessCheck[];
}

/** Why readiness could not answer (no skill, the execution failed without checks, too slow). */
export class ReadinessError extends Error {
  constructor(message: string, readonly code: string, readonly executionId: string | null) {
    super(message);
    this.name = 'ReadinessError';
  }
}

/**
 * Runs deploy-ai `readiness` on `workspace` with the engine's facts and waits for its checks.
 * `hooks.started` learns the execution id before the wait (progress reporting).
 */
export async function runReadiness(
  engine: Engine, workspace: string, who: Principal,
  opts: { timeoutMs: number; signal?: AbortSignal; started?(rec: ExecutionRecord): void },
): Promise<ReadinessOutcome> {
  if (!engine.skills.get('deploy-ai', 'readiness')) throw new ReadinessError('deploy-ai readiness is not available (no embedded skill loaded)', 'ERR_SKILL_UNAVAILABLE', null);
  const input = readinessFacts(engine, who.tenantId);
  const started = await engine.executions.runAction('deploy-ai', 'readiness', { prompt: 'deploy-ai readiness of the workspace', input: input as Record<string, unknown>, source: workspace }, who);
  opts.started?.(started);
  const rec = await waitForEnd(engine, started.id, opts.timeoutMs, opts.signal);
  const data = rec.steps[0]?.output as ReadinessData | null | undefined;
  if (!data || !Array.isArray(data.checks)) {
    throw new ReadinessError(`deploy-ai readiness ${rec.id} ${rec.status}${rec.error ? `: ${rec.error.message}` : ' without checks'}`, rec.error?.code ?? 'ERR_SKILL_FAILED', rec.id);
  }
  return { executionId: rec.id, ready: data.ready, checkedAt: data.checkedAt, checks: data.checks };
}
