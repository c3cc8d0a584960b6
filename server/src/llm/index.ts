/**
 * Language-model providers (issue 5 item 8): the `LanguageModel` interface, `NoModel` (default),
 * `OpenAiCompatible` (chat completions over undici), `RelayModel` (the editor's model through the
 * LSP connection), the `createLanguageModel` factory and the `TokenMeter`.
 */
import type { LlmConfig } from '../config/schema';
import type { AttemptReport } from '../engine/resilience/retry';
import type { Timers } from '../engine/resilience/timers';
import type { Clock } from '../engine/ports';
import { NoModel, RelayModel, type LanguageModel, type RelayFunction } from './model';
import { OpenAiCompatible } from './openai-compatible';

export * from './model';
export * from './meter';
export { DEFAULT_LLM_MAX_RETRIES, DEFAULT_LLM_TIMEOUT_MS, OpenAiCompatible, retryAfterMs, type OpenAiCompatibleOptions } from './openai-compatible';

export interface LanguageModelDeps {
  /** For `editor`: the function that forwards to the editor (may also be connected later). */
  relay?: RelayFunction;
  clock?: Clock;
  timers?: Timers;
  onAttempt?: (report: AttemptReport) => void;
}

/**
 * The provider of the configuration's `llm` section. `api_key` arrives already resolved from its
 * `${VAR}` by the configuration loader (the secret rule), so no environment is read here.
 * `editor` returns a `RelayModel`; until its relay is connected, completions fail with
 * ERR_SKILL_UNAVAILABLE.
 */
export function createLanguageModel(llm: LlmConfig, deps: LanguageModelDeps = {}): LanguageModel {
  switch (llm.provider) {
    case 'none':
      return new NoModel();
    case 'editor':
      return new RelayModel(deps.relay, 'editor');
    case 'openai-compatible':
      return new OpenAiCompatible({
        baseUrl: llm.base_url ?? '',
        model: llm.model ?? '',
        ...(llm.api_key ? { apiKey: llm.api_key } : {}),
        timeoutMs: llm.timeout_ms,
        maxRetries: llm.max_retries,
        ...(deps.clock ? { clock: deps.clock } : {}),
        ...(deps.timers ? { timers: deps.timers } : {}),
        ...(deps.onAttempt ? { onAttempt: deps.onAttempt } : {}),
      });
  }
}
