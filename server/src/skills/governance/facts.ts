/**
 * What the GOVERN / EVOLVE skills that report engine facts share: reading `input.governance` (handed
 * in by the engine, engine/governance/step-facts.ts; the skill may not read the store or the audit
 * trail itself) and turning what the engine could not do into the step's outcome.
 */
import type { Artifact, Evidence, EvidenceItem, Skill, SkillContext } from '../../engine/rigor/skill';

export interface FactErrorShape {
  error: { code: 'not_found' | 'invalid' | 'refused' | 'conflict'; message: string; field?: string; reason?: string };
}

export function isFactError(v: unknown): v is FactErrorShape {
  return typeof v === 'object' && v !== null && 'error' in v && typeof (v as FactErrorShape).error?.message === 'string';
}

/** The engine's facts for `action`, or why there are none (the engine did not hand any in). */
export function governanceFacts<T extends { action: string }>(ctx: SkillContext, action: string): T | FactErrorShape | { missing: string } {
  const f = ctx.request.input['governance'];
  if (isFactError(f)) return f;
  if (typeof f !== 'object' || f === null || (f as { action?: unknown }).action !== action) {
    return { missing: `the engine handed in no ${action} facts (input.governance): this action reads the store and the audit trail through the engine only` };
  }
  return f as T;
}

/** The step's outcome for what the engine refused or could not find: needs_input naming the field, or an error. */
export function unableFor(ctx: SkillContext, kind: string, label: string, e: FactErrorShape['error'] | { message: string }): Artifact {
  const asInput = 'code' in e && (e.code === 'not_found' || e.code === 'invalid') && e.field;
  return {
    kind, summary: `${label}: unable: ${e.message}`, goalRef: ctx.request.goal.id, confidence: 0, data: null, unable: e.message, tokens: 0,
    ...(asInput ? { needsInput: { field: (e as { field: string }).field } } : {}),
  };
}

export function emptyEvidence(): Evidence {
  return { items: [], constraints: [], pathsRead: [] };
}

/** `{ key: count }` as rows sorted by count (then key). */
export function countRows(counts: Record<string, number>): Array<{ key: string; count: number }> {
  return Object.entries(counts).map(([key, count]) => ({ key, count })).sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
}

/** `1d 2h`, `3h 5m`, `42s`: how long something has waited. */
export function humanAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400), h = Math.floor((s % 86_400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** What a skill on engine facts says of them: its evidence, and what it makes of them. */
export interface FactsPhases<T> {
  kind: string;
  label: string;
  /** The facts (default: `governanceFacts(ctx, action)`), or why there are none. */
  facts(ctx: SkillContext): T | FactErrorShape | { missing: string };
  /** What the facts are evidence of (Research). */
  evidence(f: T): EvidenceItem[];
  /** An error inside the facts that leaves the step unable (a refused decision, a rating not recorded). */
  failed?(f: T): FactErrorShape | undefined;
  /** The artifact made of facts that are there and whole (Generate). */
  report(ctx: SkillContext, f: T): Artifact | Promise<Artifact>;
}

/**
 * Research and Generate of a skill that reports engine facts, which they all share: Research names the
 * facts as evidence, or why they are missing or failed as a constraint; Generate makes the report, or
 * the step's outcome for what the engine could not do (`unableFor`).
 */
export function factsPhases<T>(p: FactsPhases<T>): Pick<Skill, 'research' | 'generate'> {
  const failure = (f: T | FactErrorShape | { missing: string }): FactErrorShape['error'] | { message: string } | null => {
    if (typeof f === 'object' && f !== null && 'missing' in f) return { message: (f as { missing: string }).missing };
    if (isFactError(f)) return f.error;
    const inner = p.failed?.(f as T);
    return inner ? inner.error : null;
  };
  return {
    async research(ctx) {
      const evidence = emptyEvidence();
      const f = p.facts(ctx);
      const e = failure(f);
      if (e) evidence.constraints.push(e.message);
      else evidence.items.push(...p.evidence(f as T));
      ctx.progress(40, 0.5);
      return evidence;
    },
    async generate(ctx) {
      const f = p.facts(ctx);
      const e = failure(f);
      return e ? unableFor(ctx, p.kind, p.label, e) : p.report(ctx, f as T);
    },
  };
}

/** `governanceFacts` of `action` as a `FactsPhases.facts`. */
export const factsOf = <T extends { action: string }>(action: string) => (ctx: SkillContext): T | FactErrorShape | { missing: string } => governanceFacts<T>(ctx, action);
