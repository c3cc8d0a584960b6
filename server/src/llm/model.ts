/**
 * The language-model provider interface (issue 5 item 8) and its two simple providers: `NoModel`
 * (the default: no model configured) and `RelayModel` (forwards to a function, e.g. the editor's
 * language-model API through the LSP connection).
 *
 * A provider only completes chat messages. It knows nothing of agents or gates: a generative skill
 * asks for a completion in Generate, with its Research evidence in the messages, and its artifact
 * then passes the same gates as any other. Token use is counted by `TokenMeter` (meter.ts).
 */
import { EngineError, isEngineError } from '../engine/errors';

// The port's types are the engine's (engine/rigor/language-model.ts); the providers below implement it.
import type { ChatMessage, CompletionRequest, CompletionResult, LanguageModel, TokenUsage } from '../engine/rigor/language-model';
export type { ChatMessage, ChatRole, CompletionRequest, CompletionResult, LanguageModel, TokenUsage } from '../engine/rigor/language-model';

/** The rough token count of a text when the provider reports none: one token per 4 characters. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Usage estimated from the prompt messages and the completion text (see `estimateTokens`). */
export function estimateUsage(messages: readonly ChatMessage[], completion: string): TokenUsage {
  const promptTokens = messages.reduce((n, m) => n + estimateTokens(m.content), 0);
  const completionTokens = estimateTokens(completion);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

export function cancelled(message = 'language model request cancelled'): EngineError {
  return new EngineError('ERR_CANCELLED', message);
}

/** The default provider: every completion is refused with ERR_SKILL_UNAVAILABLE. */
export class NoModel implements LanguageModel {
  readonly id = 'none';

  complete(_req: CompletionRequest): Promise<CompletionResult> {
    return Promise.reject(new EngineError('ERR_SKILL_UNAVAILABLE', 'no language model configured (set llm.provider in the configuration)', {
      details: { provider: 'none' },
    }));
  }
}

/** The function a `RelayModel` forwards to; the LSP door sends a custom request to the editor. */
export type RelayFunction = (req: CompletionRequest) => Promise<CompletionResult | Omit<CompletionResult, 'usage'> & { usage?: TokenUsage }>;

/**
 * Forwards completions to a function. The function may be connected later (`connect`), e.g. once
 * the editor's client has connected; until then completions fail with ERR_SKILL_UNAVAILABLE.
 * A result without usage gets the chars/4 estimate (`usageEstimated: true`).
 */
export class RelayModel implements LanguageModel {
  readonly id: string;
  #relay: RelayFunction | undefined;

  constructor(relay?: RelayFunction, id = 'editor') {
    this.id = id;
    this.#relay = relay;
  }

  /** Sets (or, with undefined, removes) the function completions are forwarded to. */
  connect(relay: RelayFunction | undefined): void {
    this.#relay = relay;
  }

  get connected(): boolean {
    return this.#relay !== undefined;
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const relay = this.#relay;
    if (!relay) {
      throw new EngineError('ERR_SKILL_UNAVAILABLE', `language model relay "${this.id}" is not connected (the editor has not provided a language model)`, {
        details: { provider: this.id },
      });
    }
    if (req.signal?.aborted) throw cancelled();
    let result: Awaited<ReturnType<RelayFunction>>;
    try {
      result = await withAbort(relay(req), req.signal);
    } catch (err) {
      if (isEngineError(err)) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw new EngineError('ERR_SKILL_FAILED', `language model relay "${this.id}" failed: ${message}`, { cause: err, details: { provider: this.id } });
    }
    if (!result || typeof result.text !== 'string') {
      throw new EngineError('ERR_SKILL_FAILED', `language model relay "${this.id}" returned no text`, { details: { provider: this.id } });
    }
    const usage = validUsage(result.usage);
    return {
      text: result.text,
      usage: usage ?? estimateUsage(req.messages, result.text),
      model: typeof result.model === 'string' ? result.model : this.id,
      finishReason: typeof result.finishReason === 'string' ? result.finishReason : 'unknown',
      ...(usage && !result.usageEstimated ? {} : { usageEstimated: true }),
    };
  }
}

function validUsage(u: TokenUsage | undefined): TokenUsage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const { promptTokens, completionTokens } = u;
  if (!Number.isFinite(promptTokens) || !Number.isFinite(completionTokens)) return undefined;
  const totalTokens = Number.isFinite(u.totalTokens) ? u.totalTokens : promptTokens + completionTokens;
  return { promptTokens, completionTokens, totalTokens };
}

/** Settles with `p`, or rejects with ERR_CANCELLED as soon as `signal` aborts. */
export function withAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled());
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v); },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e); },
    );
  });
}
