/**
 * How an execution ends: the final record (status, output, error), its pending approvals closed, the
 * final event, the callback; and `whenSettled(id)`, the one wait every door uses for an execution to
 * end (resolved by the write of the final record, not by polling).
 */
import type { EngineEventInput } from '../../../../protocol/events';
import type { AcmfService } from '../acmf/acmf-service';
import { EngineError } from '../errors';
import type { ExecutionEvents } from '../execution-events';
import { systemTimers, type Timers } from '../resilience/timers';
import type { Callbacks } from './callbacks';
import type { Checkpoints } from './checkpoints';
import { TERMINAL_STATUSES, type ExecutionOutput, type ExecutionRecord, type StepRecord } from './records';

export interface SettlementDeps {
  checkpoints: Checkpoints;
  acmf: Pick<AcmfService, 'closeForExecution'>;
  events: Pick<ExecutionEvents, 'forget'>;
  callbacks: Callbacks;
  emit(e: EngineEventInput): void;
  timers?: Timers;
  log(line: string): void;
}

export interface SettleWait {
  /** Rejects with ERR_TIMEOUT (details: id, status, timeoutMs) when the execution has not ended by then. */
  timeoutMs?: number;
  /** Rejects with the signal's reason when it aborts first. */
  signal?: AbortSignal;
}

interface Waiter {
  settled(rec: ExecutionRecord): void;
}

export class Settlement {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Executions that asked a person in this process: only they can have approvals to close when they end. */
  private readonly askedApproval = new Set<string>();

  constructor(private readonly deps: SettlementDeps) {}

  /** An execution asked a person (its approvals are closed when it ends). */
  asked(id: string): void {
    this.askedApproval.add(id);
  }

  /**
   * Resolves with the record once the execution has ended (completed, failed, cancelled), at once when
   * it already has; ERR_NOT_FOUND for an unknown id. The final record is written before it resolves.
   */
  whenSettled(id: string, wait: SettleWait = {}): Promise<ExecutionRecord> {
    const cp = this.deps.checkpoints;
    const rec = cp.find(id);
    if (!rec) return Promise.reject(new EngineError('ERR_NOT_FOUND', `no execution ${id}`, { details: { id } }));
    if (TERMINAL_STATUSES.has(rec.status)) return Promise.resolve(rec);
    const timers = this.deps.timers ?? systemTimers;
    return new Promise<ExecutionRecord>((resolve, reject) => {
      const set = this.waiters.get(id) ?? this.waiters.set(id, new Set()).get(id)!;
      const done = () => {
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        if (timer !== undefined) timers.clearTimeout(timer);
        wait.signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = { settled: (r) => (done(), resolve(r)) };
      const onAbort = () => {
        done();
        reject(wait.signal!.reason instanceof Error ? wait.signal!.reason : new EngineError('ERR_CANCELLED', 'the wait was cancelled'));
      };
      const timer = wait.timeoutMs === undefined ? undefined : timers.setTimeout(() => {
        done();
        const status = cp.find(id)?.status ?? 'unknown';
        reject(new EngineError('ERR_TIMEOUT', `${id} did not finish within ${wait.timeoutMs} ms (still ${status})`, { details: { id, status, timeoutMs: wait.timeoutMs } }));
      }, wait.timeoutMs);
      set.add(waiter);
      if (wait.signal?.aborted) return onAbort();
      wait.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Ends an execution: its final record, then (once durable) its approvals closed, its terminal event,
   * its waiters and its callback. With `after` (the step ends still being written, execution-service.ts)
   * the final record is handed to the store at once, so it rides the same journal write as the last
   * step's end, and nothing is announced before both are durable; a failed end rejects here, before any
   * announcement (the caller then ends the execution as failed).
   */
  async finish(id: string, status: 'completed' | 'failed' | 'cancelled', error: ExecutionRecord['error'], after?: Promise<void>): Promise<void> {
    const cp = this.deps.checkpoints;
    const rec = cp.get(id);
    const steps = rec.steps.map((s) => (s.status === 'pending' || s.status === 'running' ? { ...s, status: status === 'cancelled' ? ('cancelled' as const) : ('skipped' as const) } : s));
    const now = cp.now();
    const written = cp.executions.update(id, { status, steps, error, output: outputOf(status, steps, error), completedAt: now, updatedAt: now, currentAgent: null, estimatedCompletion: now });
    if (after) {
      written.catch(() => undefined); // awaited below, unless the ends failed first
      await after;
    }
    const ended = await written;
    // Nobody may be asked about an execution that is over: its pending approvals close with it.
    // Only executions that asked someone (in this process, or an escalation stored before a restart) are
    // looked up, so ending an execution does not scan the approvals of the whole history.
    if (this.askedApproval.delete(id) || rec.resumes > 0 || steps.some((s) => s.escalationId)) {
      await this.deps.acmf.closeForExecution(id, `execution ${id} ${status}`).catch((err: unknown) => this.deps.log(`approvals of ${id} not closed: ${(err as Error).message}`));
    }
    if (status === 'completed') this.deps.emit({ type: 'execution_completed', execution_id: id, status: 'completed' });
    else this.deps.emit({ type: 'execution_failed', execution_id: id, status, error: { code: error?.code ?? 'ERR_INTERNAL', message: error?.message ?? status } });
    this.deps.events.forget(id);
    for (const w of [...(this.waiters.get(id) ?? [])]) w.settled(cp.find(id) ?? ended);
    if (rec.request.callbackUrl) void this.deps.callbacks.notify(id);
  }
}

/** `output` of an ended execution (docs/api.md). */
function outputOf(status: 'completed' | 'failed' | 'cancelled', steps: StepRecord[], error: ExecutionRecord['error']): ExecutionOutput {
  // Steps that reached an outcome (not those skipped because the execution stopped).
  const done = steps.filter((s) => s.outcome !== undefined || s.status === 'completed' || s.status === 'failed');
  const last = [...done].reverse().find((s) => s.status === 'completed');
  const notApplicable = done.filter((s) => s.outcome === 'not_applicable');
  const completed = done.filter((s) => s.status === 'completed');
  const continued = done.length - completed.length - notApplicable.length;
  return {
    summary: status === 'completed'
      ? `${completed.length} step(s) completed${notApplicable.length ? `, ${notApplicable.length} not applicable (${notApplicable.map((s) => `${s.agentId}: ${(s.reason ?? '').replace(/^not applicable: /, '')}`).join('; ')})` : ''}${continued > 0 ? `, ${continued} continued past a failure` : ''}`
      : `${status}: ${error?.message ?? ''}`,
    // Passed: every step that ran completed and passed its Review, or had nothing to do. A step a
    // person chose to go on past is not a pass.
    passed: status === 'completed' && done.every((s) => (s.status === 'completed' && s.passed === true) || s.outcome === 'not_applicable' || s.superseded === true),
    steps: done.map((s) => ({ step: s.step, agentId: s.agentId, action: s.action, passed: s.passed, outcome: s.outcome ?? null, reason: s.reason ?? null, confidence: s.confidence, summary: s.summary })),
    result: last?.output ?? null,
  };
}
