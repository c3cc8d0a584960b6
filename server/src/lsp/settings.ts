/**
 * The editor's settings as the server receives them: `initializationOptions` at start, then
 * `workspace/didChangeConfiguration` (`{ settings: { cadre: … } }`) whenever they change. Both carry
 * protocol/lsp.ts CadreSettings; anything else is reported and ignored, never half-applied.
 */
import { z } from 'zod';
import type { CadreSettings } from '../../../protocol/lsp';

const SettingsSchema = z.object({
  diagnostics: z.enum(['onSave', 'onChange']).optional(),
  intelligence: z.enum(['core', 'pro', 'ultra']).optional(),
  llm: z.object({
    provider: z.enum(['none', 'openai-compatible', 'editor']),
    baseUrl: z.string().optional(),
    model: z.string().optional(),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
  }).strict().optional(),
}).passthrough();

/** The settings, or null (with a log line saying why) when they do not have the declared shape. Absent: no settings. */
export function parseSettings(raw: unknown, log: (line: string) => void): CadreSettings | null {
  if (raw === undefined || raw === null) return {};
  const r = SettingsSchema.safeParse(raw);
  if (!r.success) {
    log(`settings ignored: ${r.error.issues.map((i) => `${i.path.join('.') || 'cadre'}: ${i.message}`).join('; ')}`);
    return null;
  }
  const { diagnostics, intelligence, llm } = r.data;
  return {
    ...(diagnostics ? { diagnostics } : {}),
    ...(intelligence ? { intelligence } : {}),
    ...(llm ? { llm: { provider: llm.provider, ...(llm.baseUrl ? { baseUrl: llm.baseUrl } : {}), ...(llm.model ? { model: llm.model } : {}), ...(llm.apiKeyEnv ? { apiKeyEnv: llm.apiKeyEnv } : {}) } } : {}),
  };
}
