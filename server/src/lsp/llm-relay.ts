/**
 * The editor's language model as an engine model provider: a completion becomes a server → client
 * `cadre/llm.complete` request (LlmCompleteRequest), answered by the extension with VS Code's
 * language-model API. Aborting the completion cancels the request ($/cancelRequest).
 */
import { CancellationTokenSource, type CancellationToken } from 'vscode-languageserver/node';
import { z } from 'zod';
import { LlmCompleteRequest } from '../../../protocol/lsp';
import { ServerRequests } from '../../../protocol/lsp-messages';
import type { CompletionRequest, CompletionResult, RelayFunction } from '../llm/model';

/** Sends the declared cadre/llm.complete request (protocol/lsp-messages.ts); the answer is validated before use all the same. */
export type SendLlmRequest = (type: typeof ServerRequests.llmComplete, params: LlmCompleteRequest.Params, token: CancellationToken) => Promise<unknown>;

const ResultSchema = z.object({
  text: z.string(),
  model: z.string(),
  usage: z.object({ promptTokens: z.number().nonnegative(), completionTokens: z.number().nonnegative(), totalTokens: z.number().nonnegative() }).optional(),
});

export function toLlmParams(req: CompletionRequest): LlmCompleteRequest.Params {
  return {
    messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
  };
}

export function fromLlmResult(raw: unknown): Omit<CompletionResult, 'usage'> & { usage?: CompletionResult['usage'] } {
  const r = ResultSchema.safeParse(raw);
  if (!r.success) throw new Error(`the editor answered ${LlmCompleteRequest.method} with an invalid result: ${r.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ')}`);
  return { text: r.data.text, model: r.data.model, finishReason: 'unknown', ...(r.data.usage ? { usage: r.data.usage } : {}) };
}

/** A RelayFunction that asks the editor; streaming callers get the whole text as one token. */
export function editorRelay(send: SendLlmRequest): RelayFunction {
  return async (req) => {
    const source = new CancellationTokenSource();
    const onAbort = () => source.cancel();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = fromLlmResult(await send(ServerRequests.llmComplete, toLlmParams(req), source.token));
      req.onToken?.(result.text);
      return result;
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
      source.dispose();
    }
  };
}
