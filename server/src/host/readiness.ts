/**
 * The doors' adapter of two engine services: readiness (engine/executions/readiness-service.ts) and
 * the wait for an execution to settle (ExecutionService.whenSettled). The engine answers with
 * EngineError codes; the LSP request and the MCP tools branch on the two error types below.
 */
import { DEFAULT_TENANT_ID } from '../engine/tenants/tenant-id';
import type { Engine } from '../engine/index';
import { isEngineError } from '../engine/errors';
import type { Principal } from '../engine/executions/execution-service';
import type { ExecutionRecord } from '../engine/executions/records';
import type { ReadinessCheck } from '../../../protocol/lsp';
import type { ReadinessInput } from '../skills/deploy/readiness';

/** What deploy-ai cannot see in the repository: the engine's last test run, last review and pending approvals. */
export function readinessFacts(engine: Engine, tenantId: string = DEFAULT_TENANT_ID): ReadinessInput {
  return engine.readiness.facts(tenantId);
}

/** Rejected by `waitForEnd` when the execution is still running at the deadline. */
export class StillRunningError extends Error {
  constructor(readonly executionId: string, readonly timeoutMs: number, readonly status: string) {
    super(`${executionId} did not finish within ${timeoutMs} ms (still ${status})`);
    this.name = 'StillRunningError';
  }
}

/**
 * Resolves once the execution has ended (the engine's `whenSettled`); rejects with StillRunningError
 * after `timeoutMs`, or with the signal's reason when `signal` aborts first.
 */
export async function waitForEnd(engine: Engine, id: string, timeoutMs: number, signal?: AbortSignal): Promise<ExecutionRecord> {
  try {
    return await engine.executions.whenSettled(id, { timeoutMs, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (isEngineError(err) && err.code === 'ERR_TIMEOUT') throw new StillRunningError(id, timeoutMs, String(err.details?.['status'] ?? 'running'));
    throw err;
  }
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
 * Runs deploy-ai `readiness` on `workspace` with the engine's facts and waits for its checks
 * (engine.readiness.run). `started` learns the execution id before the wait (progress reporting).
 */
export async function runReadiness(
  engine: Engine, workspace: string, who: Principal,
  opts: { timeoutMs: number; signal?: AbortSignal; prompt?: string; started?(rec: ExecutionRecord): void },
): Promise<ReadinessOutcome> {
  let executionId: string | null = null;
  try {
    const r = await engine.readiness.run(workspace, who, {
      timeoutMs: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.prompt ? { prompt: opts.prompt } : {}),
      started: (rec) => {
        executionId = rec.id;
        opts.started?.(rec);
      },
    });
    return { ...r, checks: r.checks as unknown as ReadinessCheck[] };
  } catch (err) {
    if (!isEngineError(err)) throw err;
    const id = typeof err.details?.['executionId'] === 'string' ? err.details['executionId'] : executionId;
    if (err.code === 'ERR_TIMEOUT') throw new ReadinessError(`deploy-ai readiness ${id}: ${err.message}`, err.code, id);
    if (err.code === 'ERR_SKILL_UNAVAILABLE' || err.details?.['executionId']) throw new ReadinessError(err.message, err.code, id);
    throw err;
  }
}
