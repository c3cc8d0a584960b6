/**
 * req-ai's embedded skills: `analyze` (text → user stories) and `validate` (INVEST), no model. With a
 * language model configured, `analyze` asks it for the stories (Research evidence in the prompt),
 * validates the answer and falls back on the embedded stories when it is unusable.
 */
import { z } from 'zod';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { askModel, evidenceText, fallbackLine, type ModelNote } from '../../llm/skill-model';
import { validateStories, type ValidationResult } from './invest';
import { analyzeRequirements, completeness, deriveStory, type UserStory } from './stories';

export { AMBIGUOUS_TERMS, ambiguitiesIn, untestableReason, validateStories, validateStory } from './invest';
export type { AmbiguityFlag, InvestCheck, InvestCriterion, StoryValidation, ValidationResult } from './invest';
export { analyzeRequirements, completeness, deriveStory, ROLE_WORDS, splitStatements } from './stories';
export type { AcceptanceCriterion, UserStory } from './stories';

/** The requirement text: input.text, else the goal prompt. */
export function requirementText(ctx: SkillContext): string {
  const t = ctx.request.input['text'];
  return typeof t === 'string' && t.trim() ? t : ctx.request.goal.prompt;
}

function isStory(v: unknown): v is UserStory {
  const s = v as UserStory;
  return !!s && typeof s === 'object' && typeof s.id === 'string' && typeof s.capability === 'string' && Array.isArray(s.acceptanceCriteria);
}

/** Turns given stories (objects of req-ai analyze, or plain story sentences) into UserStory. */
export function coerceStories(value: unknown): UserStory[] {
  if (!Array.isArray(value)) return [];
  const out: UserStory[] = [];
  for (const v of value) {
    if (isStory(v)) out.push({ ...v, benefit: v.benefit ?? null, roleMissing: !!v.roleMissing, text: v.text ?? v.capability, source: v.source ?? v.text ?? v.capability });
    else if (typeof v === 'string') { const s = deriveStory(v, `S${out.length + 1}`); if (s) out.push(s); }
    else if (v && typeof v === 'object' && typeof (v as { text?: unknown }).text === 'string') {
      const s = deriveStory((v as { text: string }).text, typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : `S${out.length + 1}`);
      if (s) out.push(s);
    }
  }
  return out;
}

/** Stories for validate: input.stories, else the last req-ai step's stories, else analyzed from the text. */
export function storiesFor(ctx: SkillContext): { stories: UserStory[]; source: 'input' | 'previous' | 'text' } {
  const given = coerceStories(ctx.request.input['stories']);
  if (given.length) return { stories: given, source: 'input' };
  for (const p of [...ctx.request.previous].reverse()) {
    if (p.agentId !== 'req-ai') continue;
    const s = coerceStories((p.data as { stories?: unknown } | null)?.stories);
    if (s.length) return { stories: s, source: 'previous' };
  }
  return { stories: analyzeRequirements(requirementText(ctx)), source: 'text' };
}

export function renderStories(stories: UserStory[]): string {
  const out = ['# User stories', ''];
  for (const s of stories) {
    out.push(`## ${s.id}${s.roleMissing ? ' (actor missing: defaulted to "user")' : ''}`, s.text, '', 'Acceptance criteria:');
    for (const c of s.acceptanceCriteria) out.push(`- Given ${c.given}`, `  When ${c.when}`, `  Then ${c.then}`);
    out.push('', `Source: "${s.source}"`, '');
  }
  return out.join('\n');
}

export function renderValidation(v: ValidationResult): string {
  const out = [`# INVEST validation: mean score ${v.score}`, ''];
  for (const s of v.stories) {
    out.push(`## ${s.id}: ${s.score} (${s.checks.filter((c) => c.passed).length}/6)`, s.text);
    for (const c of s.checks) out.push(`- ${c.passed ? 'PASS' : 'FAIL'} ${c.criterion}: ${c.reason}`);
    if (s.missingActor) out.push('- Missing actor: name who wants this.');
    for (const a of s.ambiguities) out.push(`- Ambiguous "${a.term}" (${a.where}): ${a.suggestion}`);
    for (const u of s.untestableCriteria) out.push(`- Untestable criterion ${u.index + 1} ("${u.then}"): ${u.reason}`);
    out.push('');
  }
  return out.join('\n');
}

const modelStoriesSchema = z.object({
  stories: z.array(z.object({
    role: z.string().trim().min(1).max(80),
    capability: z.string().trim().min(2).max(300),
    benefit: z.string().trim().max(300).nullable().optional(),
    /** The sentence of the requirement the story comes from, quoted. */
    source: z.string().max(1000).optional(),
    acceptanceCriteria: z.array(z.object({ given: z.string().trim().min(1), when: z.string().trim().min(1), then: z.string().trim().min(1) })).min(1).max(10),
  })).min(1).max(50),
});
type ModelStories = z.infer<typeof modelStoriesSchema>;

const STORIES_SYSTEM = [
  'You are req-ai, a requirements analyst. Turn the requirement text into user stories.',
  'Use only what the text says: do not invent features, actors or numbers. One story per capability.',
  'Answer with JSON only, no prose, exactly this shape:',
  '{"stories":[{"role":"<actor>","capability":"<what they can do>","benefit":"<why, or null when the text gives none>","source":"<the sentence of the text it comes from, quoted exactly>","acceptanceCriteria":[{"given":"...","when":"...","then":"<an observable outcome>"}]}]}',
].join('\n');

const squash = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();

/** The model's stories as UserStory; a quoted source not found in the text is replaced by the text itself (never an invented quote). */
function storiesFromModel(answer: ModelStories, text: string): { stories: UserStory[]; grounded: number } {
  const whole = squash(text);
  let grounded = 0;
  const stories = answer.stories.map((s, i): UserStory => {
    const quoted = s.source && s.source.trim() && whole.includes(squash(s.source)) ? s.source.trim() : undefined;
    if (quoted) grounded++;
    const role = s.role.trim();
    const article = /^[aeiou]/i.test(role) ? 'an' : 'a';
    const benefit = s.benefit?.trim() ? s.benefit.trim() : null;
    return {
      id: `S${i + 1}`, role, roleMissing: false, capability: s.capability.trim(), benefit,
      source: quoted ?? text.trim().slice(0, 300),
      acceptanceCriteria: s.acceptanceCriteria.map((c) => ({ given: c.given.trim(), when: c.when.trim(), then: c.then.trim() })),
      text: `As ${article} ${role}, I want to ${s.capability.trim().replace(/^to\s+/i, '')}, so that ${benefit ?? '[benefit not stated]'}.`,
    };
  });
  return { stories, grounded: stories.length ? grounded / stories.length : 0 };
}

const analyzeSkill: Skill = {
  agentId: 'req-ai',
  action: 'analyze',
  async research(ctx) {
    const text = requirementText(ctx);
    return { items: text.trim() ? [{ source: typeof ctx.request.input['text'] === 'string' ? 'input.text' : 'goal prompt', detail: text.slice(0, 200), weight: 1 }] : [], constraints: [], pathsRead: [] };
  },
  propose() { return []; },
  async generate(ctx, evidence): Promise<Artifact> {
    const goalRef = ctx.request.goal.id;
    const text = requirementText(ctx);
    const stories = analyzeRequirements(text);
    let note: ModelNote | undefined;
    if (text.trim()) {
      const answer = await askModel(ctx, {
        system: STORIES_SYSTEM,
        user: `Requirement text:\n"""\n${text}\n"""\n\n${evidenceText(evidence)}`,
        schema: modelStoriesSchema,
      });
      if (answer?.ok) {
        const { stories: ms, grounded } = storiesFromModel(answer.value, text);
        const mean = ms.reduce((n, x) => n + completeness(x), 0) / ms.length;
        // Confidence: completeness of the stories and the share whose quoted source is really in the text.
        const confidence = Math.round((0.3 + 0.4 * mean + 0.25 * grounded) * 100) / 100;
        return {
          kind: 'user-stories',
          summary: `${ms.length} user stor${ms.length === 1 ? 'y' : 'ies'} (language model ${answer.model})`,
          goalRef,
          confidence,
          data: { stories: ms, completeness: Math.round(mean * 100) / 100, grounded: Math.round(grounded * 100) / 100, llm: answer.note },
          text: renderStories(ms),
        };
      }
      note = answer?.note;
    }
    if (!stories.length) {
      const why = text.trim() ? 'no requirement statement (a sentence or bullet with a capability) was found in the text' : 'no requirement text given (input.text or the goal prompt)';
      const unable = note ? `${why}; ${fallbackLine(note)}` : why;
      return { kind: 'user-stories', summary: `req-ai analyze: unable: ${unable}`, goalRef, confidence: 0, data: { stories: [], ...(note ? { llm: note } : {}) }, unable };
    }
    ctx.progress(80);
    // Confidence: mean completeness of the stories (actor, capability, benefit, When, Then found in the text).
    const mean = stories.reduce((s, x) => s + completeness(x), 0) / stories.length;
    const confidence = Math.round((0.3 + 0.65 * mean) * 100) / 100;
    const missing = stories.filter((s) => s.roleMissing).length;
    return {
      kind: 'user-stories',
      summary: `${stories.length} user stor${stories.length === 1 ? 'y' : 'ies'}${missing ? `, ${missing} without a named actor` : ''}${note ? ' (embedded: the language model answer was not usable)' : ''}`,
      goalRef,
      confidence,
      data: { stories, completeness: Math.round(mean * 100) / 100, ...(note ? { llm: note } : {}) },
      text: note ? `${renderStories(stories)}\n${fallbackLine(note)}\n` : renderStories(stories),
      tokens: 0,
    };
  },
};

const validateSkill: Skill = {
  agentId: 'req-ai',
  action: 'validate',
  async research(ctx) {
    const { stories, source } = storiesFor(ctx);
    const evidence: Evidence = { items: stories.map((s) => ({ source: `${source} ${s.id}`, detail: s.text, weight: source === 'text' ? 0.6 : 0.9 })), constraints: [], pathsRead: [] };
    return evidence;
  },
  propose() { return []; },
  async generate(ctx, evidence): Promise<Artifact> {
    const goalRef = ctx.request.goal.id;
    const { stories, source } = storiesFor(ctx);
    if (!stories.length) {
      const why = 'no user stories to validate (input.stories, a previous req-ai step, or a requirement text)';
      // The request lacks what the step needs: needs input naming `stories`, not a failure of req-ai.
      return { kind: 'invest-validation', summary: `req-ai validate: unable: ${why}`, goalRef, confidence: 0, data: { stories: [] }, unable: why, needsInput: { field: 'stories' } };
    }
    const result = validateStories(stories);
    // Confidence: the checks are deterministic; what varies is how much the stories are worth checking:
    // stories given (input/previous) weigh more than ones re-derived from text, and more stories more.
    const weight = evidence.items.length ? evidence.items.reduce((s, i) => s + i.weight, 0) / evidence.items.length : (source === 'text' ? 0.6 : 0.9);
    const confidence = Math.round(Math.min(0.95, 0.35 + 0.5 * weight + 0.05 * Math.min(2, stories.length - 1)) * 100) / 100;
    const failing = result.stories.filter((s) => s.score < 1).length;
    return {
      kind: 'invest-validation',
      summary: `INVEST mean ${result.score} over ${stories.length} stor${stories.length === 1 ? 'y' : 'ies'}; ${failing} need work, ${result.issues} issue(s)`,
      goalRef,
      confidence,
      data: { ...result, source },
      text: renderValidation(result),
      tokens: 0,
    };
  },
};

export { analyzeSkill, validateSkill };
export const requirementSkills: Skill[] = [analyzeSkill, validateSkill];
