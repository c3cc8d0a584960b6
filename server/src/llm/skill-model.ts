/**
 * What the generative skills share when they ask `ctx.model` for a completion in Generate: the
 * prompt with their Research evidence, JSON extraction, validation with zod, and the note that goes
 * into the artifact (`data.llm`) saying whether the model's answer was used or why the embedded,
 * deterministic result was kept instead. Nothing here calls a provider directly and nothing imports
 * undici: skills run in worker threads and reach the host's model through `ctx.model`.
 */
import type { z } from 'zod';
import { isEngineError } from '../engine/errors';
import type { ChatMessage, Evidence, SkillContext } from '../engine/rigor/skill';

/** Put into `artifact.data.llm` whenever a model was configured for the step. */
export interface ModelNote {
  /** The provider (`openai-compatible`, `editor`). */
  provider: string;
  /** The model's answer is in the artifact. */
  used: boolean;
  /** The model as the provider named it (when it answered). */
  model?: string;
  /** Why the answer was not used: the artifact holds the embedded result instead (or is unable). */
  fallback?: string;
}

export type ModelAnswer<T> =
  | { ok: true; value: T; text: string; model: string; note: ModelNote }
  | { ok: false; reason: string; note: ModelNote };

export interface AskOptions<T> {
  /** The role and the exact answer format. */
  system: string;
  /** The task, with the evidence (see `evidenceText`). */
  user: string;
  schema: z.ZodType<T>;
  maxTokens?: number;
  temperature?: number;
}

const MAX_EVIDENCE_ITEMS = 40;
const MAX_DETAIL = 600;

/** Research evidence as prompt text: sources, details and constraints, bounded. */
export function evidenceText(evidence: Evidence | undefined): string {
  if (!evidence) return 'Evidence: none.';
  const items = evidence.items.slice(0, MAX_EVIDENCE_ITEMS).map((i) => `- [${i.source}] ${i.detail.slice(0, MAX_DETAIL)}`);
  const out = ['Evidence gathered in Research:', ...(items.length ? items : ['- none'])];
  if (evidence.items.length > MAX_EVIDENCE_ITEMS) out.push(`- (${evidence.items.length - MAX_EVIDENCE_ITEMS} more items not shown)`);
  if (evidence.constraints.length) out.push('Constraints:', ...evidence.constraints.slice(0, 20).map((c) => `- ${c.slice(0, MAX_DETAIL)}`));
  return out.join('\n');
}

/**
 * The JSON value in a model's answer: the whole text, else a fenced ```json block, else the span
 * from the first `{` or `[` to the last matching `}` or `]`. Undefined when none parses.
 */
export function extractJson(text: string): unknown {
  const attempts: string[] = [text.trim()];
  const fence = /```(?:json|JSON)?\s*\n([\s\S]*?)```/.exec(text);
  if (fence) attempts.push(fence[1]!.trim());
  for (const [open, close] of [['{', '}'], ['[', ']']] as const) {
    const a = text.indexOf(open);
    const b = text.lastIndexOf(close);
    if (a >= 0 && b > a) attempts.push(text.slice(a, b + 1));
  }
  for (const t of attempts) {
    if (!t) continue;
    try {
      return JSON.parse(t) as unknown;
    } catch { /* next */ }
  }
  return undefined;
}

/** The code in a model's answer for one file: a fenced block's body when there is one, else the text. */
export function extractCode(text: string): string {
  const fence = /```[\w.+-]*\s*\n([\s\S]*?)```/.exec(text);
  return fence ? fence[1]! : text;
}

/**
 * Asks the step's model and validates the answer. Undefined when the step has no model (the skill
 * then does exactly what it does without one). A cancelled step rethrows; any other failure of the
 * provider, an answer that is not JSON or does not match `schema` comes back as `ok: false` with
 * the reason, for the skill to fall back on its embedded result and say so.
 */
export async function askModel<T>(ctx: SkillContext, opts: AskOptions<T>): Promise<ModelAnswer<T> | undefined> {
  const model = ctx.model;
  if (!model) return undefined;
  const messages: ChatMessage[] = [
    { role: 'system', content: opts.system },
    { role: 'user', content: opts.user },
  ];
  let text: string;
  let answeredBy: string;
  try {
    const out = await model.complete({
      messages,
      signal: ctx.signal,
      ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
      temperature: opts.temperature ?? 0,
    });
    text = out.text;
    answeredBy = out.model;
  } catch (err) {
    if (ctx.signal.aborted || (isEngineError(err) && err.code === 'ERR_CANCELLED') || (err as { code?: unknown })?.code === 'ERR_CANCELLED') throw err;
    const reason = `the language model failed: ${(err as Error)?.message ?? String(err)}`;
    return { ok: false, reason, note: { provider: model.id, used: false, fallback: reason } };
  }
  const fail = (reason: string): ModelAnswer<T> => ({ ok: false, reason, note: { provider: model.id, used: false, model: answeredBy, fallback: reason } });
  const json = extractJson(text);
  if (json === undefined) return fail('the model answer is not JSON');
  const parsed = opts.schema.safeParse(json);
  if (!parsed.success) return fail(`the model answer does not have the expected shape: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return { ok: true, value: parsed.data, text, model: answeredBy, note: { provider: model.id, used: true, model: answeredBy } };
}

/** A note for an answer that parsed but failed the skill's own checks (syntax, consistency). */
export function rejected(answer: { note: ModelNote }, reason: string): ModelNote {
  return { ...answer.note, used: false, fallback: reason };
}

/** The line a fallback adds to the artifact's text and summary. */
export function fallbackLine(note: ModelNote): string {
  return `Language model (${note.provider}${note.model ? `, ${note.model}` : ''}) not used: ${note.fallback ?? 'no answer'}; this is the embedded result.`;
}
