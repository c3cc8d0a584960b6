/**
 * INVEST scoring of user stories and ambiguity flags. Each criterion is one explained check; a
 * story's score is the share of the six checks it passes.
 */
import type { AcceptanceCriterion, UserStory } from './stories';

export type InvestCriterion = 'Independent' | 'Negotiable' | 'Valuable' | 'Estimable' | 'Small' | 'Testable';

export interface InvestCheck {
  criterion: InvestCriterion;
  passed: boolean;
  reason: string;
}

export interface AmbiguityFlag {
  term: string;
  where: 'story' | 'criterion';
  suggestion: string;
}

export interface StoryValidation {
  id: string;
  text: string;
  score: number;
  checks: InvestCheck[];
  ambiguities: AmbiguityFlag[];
  missingActor: boolean;
  untestableCriteria: Array<{ index: number; then: string; reason: string }>;
}

export interface ValidationResult {
  stories: StoryValidation[];
  /** Mean of the stories' scores. */
  score: number;
  /** Counts per criterion of stories passing it. */
  passing: Record<InvestCriterion, number>;
  issues: number;
}

/** Ambiguous terms and how to make them precise. */
export const AMBIGUOUS_TERMS: ReadonlyArray<{ term: string; pattern: RegExp; suggestion: string }> = [
  { term: 'fast', pattern: /\b(fast|quick(ly)?|speedy|responsive)\b/i, suggestion: 'state a measurable time (e.g. "responds in under 300 ms at p95")' },
  { term: 'easy', pattern: /\b(easy|easily|simple|simply|intuitive)\b/i, suggestion: 'state the observable measure (steps, clicks, task success rate)' },
  { term: 'user-friendly', pattern: /\buser[- ]friendly\b/i, suggestion: 'name the usability property to verify (e.g. keyboard-accessible, WCAG 2.1 AA)' },
  { term: 'etc.', pattern: /\betc\b\.?/i, suggestion: 'list every item; an open list cannot be tested' },
  { term: 'should', pattern: /\bshould\b/i, suggestion: 'use "must" for a requirement, or say it is optional' },
  { term: 'appropriate', pattern: /\b(appropriate(ly)?|as appropriate|suitable|reasonable|adequate)\b/i, suggestion: 'state the rule that decides what is appropriate' },
  { term: 'as needed', pattern: /\b(as needed|as required|if needed|if necessary|where possible|if possible)\b/i, suggestion: 'state the condition under which it applies' },
  { term: 'and/or', pattern: /\band\/or\b/i, suggestion: 'say whether both, either, or exactly one is required' },
  { term: 'some', pattern: /\b(some|several|many|few|various|a lot of)\b/i, suggestion: 'give the number or the range' },
  { term: 'flexible', pattern: /\b(flexible|robust|scalable|efficient|seamless(ly)?|optimal|state[- ]of[- ]the[- ]art)\b/i, suggestion: 'state the measurable quality behind the adjective' },
  { term: 'TBD', pattern: /\b(TBD|TBC|to be (defined|decided|determined))\b|\?\?/i, suggestion: 'resolve the open point before estimating' },
];

const DEPENDENCY_WORDS = /\b(depends on|dependent on|after (story|S\d+)|once (story|S\d+)|requires (story|S\d+)|same as (story|S\d+|above)|see (story|S\d+|above)|as above|previous story|before (story|S\d+))\b/i;
const IMPLEMENTATION_WORDS = /\b(using|via|implemented (with|in)|in (react|angular|vue|java|python|go|sql)|mysql|postgres(ql)?|mongodb|redis|kafka|rest endpoint|graphql|microservice|table column|stored procedure|css|pixels?|\d+px|hex color|exactly)\b/i;
const OBSERVABLE = /\b(see|sees|shown?|display(s|ed)?|receive(s|d)?|send(s|ing)?|sent|return(s|ed)?|save(s|d)?|stored?|creat(e|es|ed)|delet(e|es|ed)|updat(e|es|ed)|export(s|ed)?|download(s|ed)?|redirect(s|ed)?|log(s|ged)?|reject(s|ed)?|accept(s|ed)?|approv(e|es|ed)|notif(y|ies|ied)|email(s|ed)?|can|cannot|must|is|are|has|have|contain(s|ed)?|list(s|ed)?|record(s|ed)?|appear(s)?|enable(s|d)?|disable(s|d)?|finish|complete(s|d)?|fail(s|ed)?|succeed(s|ed)?)\b/i;

export function ambiguitiesIn(text: string, where: AmbiguityFlag['where']): AmbiguityFlag[] {
  return AMBIGUOUS_TERMS.filter((t) => t.pattern.test(text)).map((t) => ({ term: t.term, where, suggestion: t.suggestion }));
}

/** A criterion is untestable when its outcome has no observable verb or uses a vague term. */
export function untestableReason(c: AcceptanceCriterion): string | undefined {
  if (!c.then || c.then.split(/\s+/).length < 2) return 'no outcome stated';
  const vague = AMBIGUOUS_TERMS.filter((t) => t.term !== 'should' && t.pattern.test(c.then)).map((t) => t.term);
  if (vague.length) return `outcome uses vague term(s): ${vague.join(', ')}`;
  if (!OBSERVABLE.test(c.then)) return 'outcome has no observable result (nothing to see, receive, store or return)';
  return undefined;
}

function words(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

/**
 * Scores one story. Rules:
 * - Independent: no reference to another story ("depends on", "after S2", "same as above").
 * - Negotiable: no implementation prescription (technology names, "using", pixel sizes, "exactly").
 * - Valuable: an actor and a benefit ("so that") are stated.
 * - Estimable: no ambiguous term, no TBD, and the capability has at least 2 words.
 * - Small: capability of at most 20 words, at most one "and"/"or"/"," joining parts, at most 5 criteria.
 * - Testable: at least one criterion, each with a When and an observable, non-vague Then.
 */
export function validateStory(story: UserStory): StoryValidation {
  const storyText = `${story.source} ${story.capability}`;
  const ambiguities = ambiguitiesIn(storyText, 'story');
  for (const c of story.acceptanceCriteria) {
    for (const a of ambiguitiesIn(`${c.given} ${c.when} ${c.then}`, 'criterion')) if (!ambiguities.some((x) => x.term === a.term)) ambiguities.push(a);
  }
  const untestable = story.acceptanceCriteria.map((c, index) => ({ index, then: c.then, reason: untestableReason(c) })).filter((u): u is { index: number; then: string; reason: string } => !!u.reason);
  const checks: InvestCheck[] = [];
  const dep = DEPENDENCY_WORDS.exec(storyText);
  checks.push({ criterion: 'Independent', passed: !dep, reason: dep ? `refers to other work: "${dep[0]}"` : 'no reference to another story' });
  const impl = IMPLEMENTATION_WORDS.exec(storyText);
  checks.push({ criterion: 'Negotiable', passed: !impl, reason: impl ? `prescribes the implementation: "${impl[0]}"` : 'states the need, not the solution' });
  const valuable = !story.roleMissing && !!story.benefit;
  checks.push({ criterion: 'Valuable', passed: valuable, reason: valuable ? `${story.role} gets: ${story.benefit}` : [story.roleMissing ? 'no actor named' : '', !story.benefit ? 'no benefit ("so that ...") stated' : ''].filter(Boolean).join('; ') });
  const vagueForEstimate = ambiguities.filter((a) => a.where === 'story' && a.term !== 'should');
  const estimable = vagueForEstimate.length === 0 && words(story.capability) >= 2;
  checks.push({ criterion: 'Estimable', passed: estimable, reason: estimable ? 'scope is concrete' : vagueForEstimate.length ? `vague scope: ${vagueForEstimate.map((a) => a.term).join(', ')}` : 'capability too short to size' });
  const joins = (story.capability.match(/\band\b|\bor\b|,/gi) ?? []).length;
  const small = words(story.capability) <= 20 && joins <= 1 && story.acceptanceCriteria.length <= 5;
  checks.push({ criterion: 'Small', passed: small, reason: small ? `${words(story.capability)} words, ${joins} conjunction(s)` : `${words(story.capability)} words and ${joins} conjunction(s) in the capability: split it` });
  const testable = story.acceptanceCriteria.length > 0 && untestable.length === 0;
  checks.push({ criterion: 'Testable', passed: testable, reason: testable ? `${story.acceptanceCriteria.length} criterion(s) with observable outcomes` : story.acceptanceCriteria.length ? untestable.map((u) => u.reason).join('; ') : 'no acceptance criteria' });
  const score = Math.round((checks.filter((c) => c.passed).length / checks.length) * 100) / 100;
  return { id: story.id, text: story.text, score, checks, ambiguities, missingActor: story.roleMissing, untestableCriteria: untestable };
}

export function validateStories(stories: UserStory[]): ValidationResult {
  const results = stories.map(validateStory);
  const passing = { Independent: 0, Negotiable: 0, Valuable: 0, Estimable: 0, Small: 0, Testable: 0 } as Record<InvestCriterion, number>;
  for (const r of results) for (const c of r.checks) if (c.passed) passing[c.criterion]++;
  const score = results.length ? Math.round((results.reduce((s, r) => s + r.score, 0) / results.length) * 100) / 100 : 0;
  const issues = results.reduce((n, r) => n + r.checks.filter((c) => !c.passed).length + r.ambiguities.length, 0);
  return { stories: results, score, passing, issues };
}
