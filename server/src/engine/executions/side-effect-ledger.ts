/**
 * The side-effect ledger: how an external effect (a commit on a new branch, a callback POST) happens
 * once although the process running it can die at any instant.
 *
 * Protocol, per effect `${executionId}:${step}:${key}`:
 *  1. INTENT: a record `state: 'intent'` with a stable effect id and the resources the effect will
 *     create (a temporary worktree) is written and the write awaited (on disk) BEFORE the effect starts;
 *  2. the effect runs;
 *  3. OUTCOME: the record becomes `state: 'done'` with the effect's result (awaited).
 * A step that runs the same effect again (a retry, a resume after a crash) and finds
 *  - the outcome: gets the recorded result; nothing runs;
 *  - an intent without outcome: the effect may or may not have happened. The skill's `reconcile` looks
 *    in the world (coder-ai: its branch, found by the commit trailer) and what it finds becomes the
 *    outcome; when it finds nothing (or there is no reconcile) the effect runs again under the SAME
 *    effect id, so a receiver can dedupe (callbacks: at-least-once with a stable delivery id).
 * Resources named in an intent are released by the host (worktrees removed) when the effect fails,
 * and at start-up for every intent a crash left without outcome (`releaseAbandoned`).
 */
import type { Clock, Repository } from '../ports';
import type { SideEffectLedger } from '../rigor/pipeline';
import type { EffectInfo, EffectResource, OnceOptions } from '../rigor/skill';
import type { SideEffectRecord } from './records';

/** The host frees what an interrupted effect left in the world (the engine itself touches no files). */
export interface EffectResourcesPort {
  release(resources: readonly EffectResource[]): Promise<void>;
  /**
   * Start-up only: removes every temporary worktree Cadre made (a `cadre-wt-` name) in the
   * repositories of these workspaces, those of executions a crash interrupted. Catches what no intent
   * names (tester-ai's test checkouts, worktrees of earlier versions). Returns how many were removed.
   */
  sweep?(workspaces: readonly string[]): Promise<number>;
}

export interface LedgerDeps {
  repo: Repository<SideEffectRecord>;
  clock: Clock;
  newId(prefix: string): string;
  resources?: EffectResourcesPort;
  log(line: string): void;
}

/** Records written before the intent protocol have no state: they hold an outcome. */
export function isDone(rec: SideEffectRecord): boolean {
  return rec.state !== 'intent';
}

export class DurableSideEffectLedger implements SideEffectLedger {
  /** The same effect asked for twice in this process waits on the first call instead of racing it. */
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: LedgerDeps) {}

  once<T>(executionId: string, step: number, attempt: number, key: string, effect: (info: EffectInfo) => Promise<T>, opts: OnceOptions<T> = {}): Promise<T> {
    const id = ledgerId(executionId, step, key);
    const running = this.inflight.get(id);
    if (running) return running as Promise<T>;
    const p = this.perform(id, executionId, step, attempt, key, effect, opts).finally(() => this.inflight.delete(id));
    this.inflight.set(id, p);
    return p;
  }

  /** The record of an effect, if any (callers check `isDone`). */
  get(executionId: string, step: number, key: string): SideEffectRecord | undefined {
    return this.deps.repo.get(ledgerId(executionId, step, key));
  }

  /**
   * Start-up, before anything runs: every intent without outcome is from a process that died; the
   * resources it named (worktrees) are released. The intent itself stays: the step that resumes it
   * reconciles (or the callback is re-sent with its delivery id).
   */
  async releaseAbandoned(): Promise<number> {
    const open = this.deps.repo.list((r) => r.state === 'intent' && (r.resources?.length ?? 0) > 0 && !this.inflight.has(r.id));
    let released = 0;
    for (const rec of open) {
      if (await this.release(rec.resources!)) {
        released += rec.resources!.length;
        await this.deps.repo.put({ ...rec, resources: [] });
      }
    }
    return released;
  }

  private async perform<T>(id: string, executionId: string, step: number, attempt: number, key: string, effect: (info: EffectInfo) => Promise<T>, opts: OnceOptions<T>): Promise<T> {
    const found = this.deps.repo.get(id);
    if (found && isDone(found)) return found.result as T;
    if (found && opts.reconcile) {
      // The effect was started before and its outcome never recorded: ask the world first.
      const seen = await opts.reconcile();
      if (seen !== undefined) {
        await this.deps.repo.put({ ...found, state: 'done', at: this.now(), result: seen, reconciled: true, resources: [] });
        return seen;
      }
    }
    const intent: SideEffectRecord = found
      ? { ...found, attempt, tries: (found.tries ?? 1) + 1, intentAt: this.now(), resources: [...(opts.resources ?? [])] }
      : { id, executionId, step, attempt, key, state: 'intent', effectId: this.deps.newId('eff'), tries: 1, intentAt: this.now(), at: this.now(), result: null, resources: [...(opts.resources ?? [])] };
    // Durable before the effect starts: a crash from here on leaves a trace to reconcile with.
    await this.deps.repo.put(intent);
    let result: T;
    try {
      result = await effect({ effectId: intent.effectId!, tries: intent.tries! });
    } catch (err) {
      // Whether anything happened is unknown (a POST that timed out may have arrived): the intent stays.
      const released = intent.resources?.length ? await this.release(intent.resources) : true;
      await this.deps.repo.put({ ...intent, lastError: String((err as Error)?.message ?? err).slice(0, 500), ...(released ? { resources: [] } : {}) })
        .catch((e: unknown) => this.deps.log(`side effect ${id}: failure not recorded: ${(e as Error).message}`));
      throw err;
    }
    await this.deps.repo.put({ ...intent, state: 'done', at: this.now(), result: result === undefined ? null : result, resources: [] });
    return result;
  }

  private async release(resources: readonly EffectResource[]): Promise<boolean> {
    if (!this.deps.resources) return false;
    try {
      await this.deps.resources.release(resources);
      return true;
    } catch (err) {
      this.deps.log(`releasing ${resources.map((r) => `${r.kind} ${r.path}`).join(', ')} failed: ${(err as Error).message}`);
      return false;
    }
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

export function ledgerId(executionId: string, step: number, key: string): string {
  return `${executionId}:${step}:${key}`;
}
