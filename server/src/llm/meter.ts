/**
 * Token accounting. A `TokenMeter` keeps the totals of each execution (for the cost-budget gate);
 * `meter.metered(model, executionId)` wraps a provider so that every completion is recorded, and
 * keeps the wrapper's own totals so that a skill can set `Artifact.tokens` for its step:
 *
 * @example
 * const model = meter.metered(llm, ctx.request.executionId);
 * const out = await model.complete({ messages, signal: ctx.signal });
 * return { ...artifact, tokens: model.used.totalTokens };
 */
import type { CompletionRequest, CompletionResult, LanguageModel, TokenUsage } from './model';

/** Engine event types that end an execution: no more tokens are recorded for it. */
const FINISHED_EVENTS: ReadonlySet<string> = new Set(['execution_completed', 'execution_failed']);

export interface TokenTotals extends TokenUsage {
  /** Completions recorded. */
  calls: number;
  /** Of which the usage was the chars/4 estimate. */
  estimatedCalls: number;
}

export function emptyTotals(): TokenTotals {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0, estimatedCalls: 0 };
}

function add(t: TokenTotals, usage: TokenUsage, estimated: boolean): void {
  t.promptTokens += usage.promptTokens;
  t.completionTokens += usage.completionTokens;
  t.totalTokens += usage.totalTokens;
  t.calls += 1;
  if (estimated) t.estimatedCalls += 1;
}

/** A language model whose completions are recorded in a meter; `used` is this wrapper's own total. */
export interface MeteredModel extends LanguageModel {
  readonly used: Readonly<TokenTotals>;
}

export class TokenMeter {
  readonly #byExecution = new Map<string, TokenTotals>();

  /** Adds one completion's usage to an execution's totals. */
  record(executionId: string, usage: TokenUsage, estimated = false): void {
    let t = this.#byExecution.get(executionId);
    if (!t) this.#byExecution.set(executionId, (t = emptyTotals()));
    add(t, usage, estimated);
  }

  /** An execution's totals so far (zeros when nothing was recorded). A copy. */
  totals(executionId: string): TokenTotals {
    return { ...(this.#byExecution.get(executionId) ?? emptyTotals()) };
  }

  /** Forgets an execution (call when it is finished and its totals persisted). */
  clear(executionId: string): void {
    this.#byExecution.delete(executionId);
  }

  /**
   * Forgets the execution an engine event ends (`execution_completed`, `execution_failed`, which
   * also covers cancelled); other events are ignored. Subscribe it to the bus topic `engine.event`
   * so that totals do not outlive their execution.
   */
  forgetFinished(event: { type: string; execution_id?: string }): void {
    if (FINISHED_EVENTS.has(event.type) && event.execution_id) this.clear(event.execution_id);
  }

  /** Executions with totals kept (running ones, or finished ones nobody cleared). */
  get size(): number {
    return this.#byExecution.size;
  }

  /** Wraps `model` so that each successful completion is recorded under `executionId`. */
  metered(model: LanguageModel, executionId: string): MeteredModel {
    const used = emptyTotals();
    const record = (r: CompletionResult): CompletionResult => {
      const estimated = r.usageEstimated === true;
      add(used, r.usage, estimated);
      this.record(executionId, r.usage, estimated);
      return r;
    };
    return {
      id: model.id,
      get used() {
        return { ...used };
      },
      complete: (req: CompletionRequest) => model.complete(req).then(record),
    };
  }
}
