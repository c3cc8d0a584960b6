/**
 * A provider for any OpenAI-compatible chat completions endpoint (OpenAI, Azure-style gateways,
 * vLLM, llama.cpp, Ollama, LM Studio, ...), over undici.
 *
 * POST {baseUrl}/chat/completions with `{ model, messages, stream, max_tokens?, temperature? }`
 * (and `stream_options: { include_usage: true }` when streaming). Streamed responses are read as
 * server-sent events: `data: {chunk}` lines with `choices[0].delta.content`, ended by `data: [DONE]`.
 *
 * Errors: 401/403 are not retried and carry the provider's message; 429 and 5xx (and network
 * failures) are retried by `runWithRetry`, honouring `Retry-After` (seconds or an HTTP date) and
 * `retry-after-ms`. Each attempt has its own timeout. The API key is read when a request is made,
 * sent only in the Authorization header, and redacted from any error message.
 */
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import { EngineError, isEngineError } from '../engine/errors';
import { systemClock, type Clock } from '../engine/ports';
import { retryPolicy, runWithRetry, type AttemptReport, type RetryPolicy } from '../engine/resilience/retry';
import type { Timers } from '../engine/resilience/timers';
import { cancelled, estimateUsage, type CompletionRequest, type CompletionResult, type LanguageModel, type TokenUsage } from './model';

export interface OpenAiCompatibleOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (without `/chat/completions`). */
  baseUrl: string;
  model: string;
  /** The key itself (already resolved from `${VAR}` by the configuration loader)... */
  apiKey?: string;
  /** ...or the name of the environment variable holding it, read at each request. */
  apiKeyEnv?: string;
  env?: Record<string, string | undefined>;
  /** Timeout of one attempt (the whole response, streamed or not). Default 120 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx, network errors and timeouts. Default 2. */
  maxRetries?: number;
  /** Backoff overrides (the defaults are those of `DEFAULT_RETRY_POLICY`). */
  retry?: Partial<Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'factor' | 'jitter'>>;
  /** Ask for usage in the last streamed chunk (`stream_options.include_usage`). Default true. */
  streamUsage?: boolean;
  clock?: Clock;
  timers?: Timers;
  random?: () => number;
  dispatcher?: Dispatcher;
  /** Told about each attempt (never sees the key). */
  onAttempt?: (report: AttemptReport) => void;
}

export const DEFAULT_LLM_TIMEOUT_MS = 120_000;
export const DEFAULT_LLM_MAX_RETRIES = 2;
/** The longest provider message kept in an error. */
const MAX_PROVIDER_MESSAGE = 500;

interface ChunkChoice {
  delta?: { content?: unknown };
  message?: { content?: unknown };
  finish_reason?: unknown;
}
interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  total_tokens?: unknown;
}
interface WireBody {
  model?: unknown;
  choices?: ChunkChoice[];
  usage?: WireUsage | null;
  error?: { message?: unknown } | string;
}

export class OpenAiCompatible implements LanguageModel {
  readonly id = 'openai-compatible';
  readonly model: string;
  readonly #url: string;
  readonly #apiKey: () => string | undefined;
  readonly #policy: RetryPolicy;
  readonly #opts: OpenAiCompatibleOptions;

  constructor(opts: OpenAiCompatibleOptions) {
    let base: URL;
    try {
      base = new URL(opts.baseUrl);
    } catch {
      throw new EngineError('ERR_VALIDATION', `llm.base_url is not a URL: ${opts.baseUrl}`);
    }
    if (!opts.model) throw new EngineError('ERR_VALIDATION', 'llm.model is required for an OpenAI-compatible provider');
    this.model = opts.model;
    this.#url = `${base.href.replace(/\/+$/, '')}/chat/completions`;
    const env = opts.env ?? process.env;
    this.#apiKey = opts.apiKey !== undefined ? () => opts.apiKey : opts.apiKeyEnv ? () => env[opts.apiKeyEnv!] || undefined : () => undefined;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
    this.#policy = retryPolicy({ ...opts.retry, maxAttempts: (opts.maxRetries ?? DEFAULT_LLM_MAX_RETRIES) + 1, timeouts: [timeoutMs] });
    this.#opts = opts;
  }

  /** Never shows the key. */
  toJSON(): Record<string, unknown> {
    return { id: this.id, url: this.#url, model: this.model };
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    if (req.signal?.aborted) throw cancelled();
    const stream = req.stream ?? req.onToken !== undefined;
    const key = this.#apiKey();
    const body: Record<string, unknown> = { model: this.model, messages: req.messages.map((m) => ({ role: m.role, content: m.content })), stream };
    if (req.maxTokens !== undefined) body['max_tokens'] = req.maxTokens;
    if (req.temperature !== undefined) body['temperature'] = req.temperature;
    if (stream && this.#opts.streamUsage !== false) body['stream_options'] = { include_usage: true };
    const payload = JSON.stringify(body);
    let emitted = false;
    const onToken = req.onToken && ((t: string) => { emitted = true; req.onToken!(t); });
    const clock = this.#opts.clock ?? systemClock;

    try {
      return await runWithRetry(async (attempt, signal) => {
        if (emitted) {
          // Text already reached the caller: a retry would repeat it, so the failure stands.
          throw new EngineError('ERR_SKILL_FAILED', `the streamed response was interrupted after output began (attempt ${attempt - 1}); not retried`, {
            details: { provider: this.id },
          });
        }
        return await this.#attempt(payload, key, stream, signal, req, onToken, clock);
      }, this.#policy, {
        signal: req.signal,
        ...(this.#opts.clock ? { clock: this.#opts.clock } : {}),
        ...(this.#opts.timers ? { timers: this.#opts.timers } : {}),
        ...(this.#opts.random ? { random: this.#opts.random } : {}),
        ...(this.#opts.onAttempt ? { onAttempt: this.#opts.onAttempt } : {}),
      });
    } catch (err) {
      throw redactError(err, key);
    }
  }

  async #attempt(
    payload: string,
    key: string | undefined,
    stream: boolean,
    signal: AbortSignal,
    req: CompletionRequest,
    onToken: ((t: string) => void) | undefined,
    clock: Clock,
  ): Promise<CompletionResult> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
    if (key) headers['authorization'] = `Bearer ${key}`;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(this.#url, {
        method: 'POST',
        headers,
        body: payload,
        signal,
        ...(this.#opts.dispatcher ? { dispatcher: this.#opts.dispatcher } : {}),
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? cancelled();
      const message = redact(err instanceof Error ? err.message : String(err), key);
      throw new EngineError('ERR_SKILL_UNAVAILABLE', `language model endpoint unreachable: ${message}`, {
        retryable: true, details: { provider: this.id, url: this.#url },
      });
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text().catch(() => '');
      throw httpError(res.statusCode, redact(text, key), res.headers, clock.now(), this.id);
    }
    const contentType = String(res.headers['content-type'] ?? '');
    if (stream && contentType.includes('text/event-stream')) return readStream(res.body, req, onToken, this.model);
    // Not streamed (asked so, or the server ignored `stream: true`).
    const text = await res.body.text();
    let parsed: WireBody;
    try {
      parsed = JSON.parse(text) as WireBody;
    } catch {
      throw new EngineError('ERR_SKILL_FAILED', `language model endpoint returned a response that is not JSON (content-type ${contentType || 'none'})`, {
        details: { provider: this.id, status: res.statusCode },
      });
    }
    const choice = parsed.choices?.[0];
    const content = choice?.message?.content ?? choice?.delta?.content;
    if (typeof content !== 'string') {
      throw new EngineError('ERR_SKILL_FAILED', providerMessage(parsed) ?? 'language model response has no choices[0].message.content', { details: { provider: this.id } });
    }
    if (onToken && content) onToken(content);
    return result(content, parsed.usage, req, typeof parsed.model === 'string' ? parsed.model : this.model, choice?.finish_reason);
  }
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function wireUsage(u: WireUsage | null | undefined): TokenUsage | undefined {
  if (!u) return undefined;
  const promptTokens = num(u.prompt_tokens);
  const completionTokens = num(u.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  return { promptTokens, completionTokens, totalTokens: num(u.total_tokens) ?? promptTokens + completionTokens };
}

function result(text: string, usage: WireUsage | null | undefined, req: CompletionRequest, model: string, finish: unknown): CompletionResult {
  const u = wireUsage(usage);
  return {
    text,
    usage: u ?? estimateUsage(req.messages, text),
    model,
    finishReason: typeof finish === 'string' ? finish : 'unknown',
    ...(u ? {} : { usageEstimated: true }),
  };
}

/** Reads an SSE body of chat completion chunks up to `data: [DONE]` (or the end of the body). */
async function readStream(
  body: AsyncIterable<Uint8Array | string>,
  req: CompletionRequest,
  onToken: ((t: string) => void) | undefined,
  fallbackModel: string,
): Promise<CompletionResult> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let text = '';
  let usage: WireUsage | undefined;
  let model = fallbackModel;
  let finish: unknown;
  let done = false;

  const dispatch = (): void => {
    if (data.length === 0) return;
    const payload = data.join('\n');
    data = [];
    if (payload.trim() === '[DONE]') {
      done = true;
      return;
    }
    let chunk: WireBody;
    try {
      chunk = JSON.parse(payload) as WireBody;
    } catch {
      throw new EngineError('ERR_SKILL_FAILED', 'language model stream sent a chunk that is not JSON', { details: { chunk: payload.slice(0, 200) } });
    }
    if (chunk.error) {
      throw new EngineError('ERR_SKILL_FAILED', `language model stream error: ${providerMessage(chunk) ?? 'unknown'}`, { retryable: true });
    }
    if (typeof chunk.model === 'string') model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const piece = choice.delta?.content;
    if (typeof piece === 'string' && piece.length > 0) {
      text += piece;
      onToken?.(piece);
    }
    if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
  };

  const line = (l: string): void => {
    if (l === '') return dispatch();
    if (l.startsWith(':')) return; // comment / keep-alive
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
  };

  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let nl: number;
    while (!done && (nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const sep = buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? 2 : 1;
      line(buffer.slice(0, nl));
      buffer = buffer.slice(nl + sep);
    }
    if (done) break;
  }
  if (!done) {
    buffer += decoder.decode();
    if (buffer) line(buffer);
    dispatch();
  }
  return result(text, usage, req, model, finish);
}

function providerMessage(body: WireBody | undefined): string | undefined {
  if (!body) return undefined;
  const e = body.error;
  const m = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : undefined;
  return m ? m.slice(0, MAX_PROVIDER_MESSAGE) : undefined;
}

/** Milliseconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date), if any. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now: number): number | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const ms = first(headers['retry-after-ms']);
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const ra = first(headers['retry-after']);
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.round(Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function httpError(status: number, text: string, headers: Record<string, string | string[] | undefined>, now: number, provider: string): EngineError {
  let parsed: WireBody | undefined;
  try {
    parsed = JSON.parse(text) as WireBody;
  } catch {
    parsed = undefined;
  }
  const said = providerMessage(parsed) ?? (text.trim().slice(0, MAX_PROVIDER_MESSAGE) || `HTTP ${status}`);
  const details: Record<string, unknown> = { provider, status };
  if (status === 401 || status === 403) {
    return new EngineError('ERR_SKILL_UNAVAILABLE', `language model provider refused the credentials (HTTP ${status}): ${said}`, { details, retryable: false });
  }
  if (status === 429 || status >= 500) {
    const wait = retryAfterMs(headers, now);
    if (wait !== undefined) details['retryAfterMs'] = wait;
    const code = status === 429 ? 'ERR_OVERLOADED' : 'ERR_SKILL_UNAVAILABLE';
    return new EngineError(code, `language model provider ${status === 429 ? 'is rate limiting' : 'failed'} (HTTP ${status}): ${said}`, { details, retryable: true });
  }
  return new EngineError('ERR_SKILL_FAILED', `language model provider rejected the request (HTTP ${status}): ${said}`, { details, retryable: false });
}

/** Removes the key from a text (a provider may echo it back in an error). */
function redact(text: string, key: string | undefined): string {
  return key && text.includes(key) ? text.split(key).join('[redacted]') : text;
}

/** Last line of defence: removes the key from a final error's message, keeping code and details. */
function redactError(err: unknown, key: string | undefined): unknown {
  if (!key || !isEngineError(err) || !err.message.includes(key)) return err;
  const message = err.message.split(key).join('[redacted]');
  return new EngineError(err.code, message, { details: err.details, retryable: err.retryable });
}
