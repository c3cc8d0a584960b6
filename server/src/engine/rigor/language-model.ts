/**
 * The language-model port of the engine: what a skill asks of a model and what it gets back. Owned by
 * the engine (a skill reaches the model as `ctx.model`, see skill.ts); the providers in server/src/llm
 * implement `LanguageModel` and import these types from here. Types only.
 */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface CompletionRequest {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** Aborting rejects the completion with ERR_CANCELLED. */
  signal?: AbortSignal;
  /** Called with each piece of text as it streams in, in order. Giving it turns streaming on. */
  onToken?(text: string): void;
  /** Streams the response (default: true when `onToken` is given). */
  stream?: boolean;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface CompletionResult {
  text: string;
  usage: TokenUsage;
  /** The model that answered, as the provider names it. */
  model: string;
  /** `stop`, `length`, `content_filter`, ... as the provider says; `unknown` when it said nothing. */
  finishReason: string;
  /** True when the provider reported no usage and `usage` is the chars/4 estimate. */
  usageEstimated?: boolean;
}

export interface LanguageModel {
  /** `none`, `openai-compatible`, `editor`. */
  readonly id: string;
  complete(req: CompletionRequest): Promise<CompletionResult>;
}
