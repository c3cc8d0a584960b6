/**
 * evolve-ai plan: the improvements of an assessment ordered by value / effort (both data per check in
 * criteria.ts), ties broken by the score the improvement would add. Each item names what is missing,
 * the concrete next steps for the project's ecosystem and the files they add or change.
 */
import { CRITERIA, levelOf, type Ecosystem } from './criteria';
import type { Assessment } from './assess';

export interface PlanItem {
  rank: number;
  criterion: string;
  check: string;
  title: string;
  value: number;
  effort: number;
  /** value / effort. */
  priority: number;
  /** Points of the overall score (0-100) this improvement would add. */
  gain: number;
  missing: string;
  steps: string[];
  files: string[];
}

export interface MaturityPlan {
  from: { score: number; level: number; levelName: string; source: 'assessed' | 'input' | 'previous step' };
  items: PlanItem[];
  projected: { score: number; level: number; levelName: string };
}

const FILE_TOKEN = /(?:^|[\s(`"])((?:\.?[\w-]+\/)*(?:\.?[\w.-]+\.(?:ya?ml|json5?|md|toml|ini|mjs|cjs|js|ts|py|go|java|xml|gradle|lockfile|cfg|lock|sum)|Makefile|CODEOWNERS|go\.sum))(?=$|[\s),:;`"])/g;

/** File names mentioned in the steps (what the improvement adds or edits). */
export function filesNamed(steps: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of steps) for (const m of s.matchAll(FILE_TOKEN)) if (!/^\d/.test(m[1]!) && !m[1]!.includes('<')) out.add(m[1]!);
  return [...out];
}

export function planImprovements(a: Assessment, source: MaturityPlan['from']['source']): MaturityPlan {
  const eco: Ecosystem | undefined = a.ecosystems[0];
  const judgedWeight = a.criteria.filter((c) => c.score !== null).reduce((n, c) => n + c.weight, 0) || 1;
  const raw: Omit<PlanItem, 'rank'>[] = [];
  for (const c of a.criteria) {
    const def = CRITERIA.find((d) => d.id === c.id);
    if (!def || c.score === null) continue;
    const available = c.checks.filter((k) => k.earned !== null).reduce((n, k) => n + k.points, 0) || 1;
    for (const k of c.checks) {
      if (k.earned === null || k.earned >= k.points) continue;
      const d = def.checks.find((x) => x.id === k.id);
      if (!d) continue;
      const steps = d.steps(eco);
      raw.push({
        criterion: c.id, check: k.id, title: d.title, value: d.value, effort: d.effort,
        priority: Math.round((d.value / d.effort) * 100) / 100,
        gain: Math.round(((k.points - k.earned) / available) * 100 * (c.weight / judgedWeight) * 10) / 10,
        missing: k.missing ?? `${d.title}: ${k.earned} of ${k.points} points`, steps, files: filesNamed(steps),
      });
    }
  }
  raw.sort((x, y) => y.priority - x.priority || y.gain - x.gain || x.criterion.localeCompare(y.criterion) || x.check.localeCompare(y.check));
  const items = raw.map((r, i) => ({ rank: i + 1, ...r }));
  const projectedScore = Math.min(100, Math.round(a.score + items.reduce((n, i) => n + i.gain, 0)));
  const pl = levelOf(projectedScore);
  return { from: { score: a.score, level: a.level, levelName: a.levelName, source }, items, projected: { score: projectedScore, level: pl.level, levelName: pl.name } };
}

/** An assessment handed in (input.assessment or a previous evolve-ai assess step), or why it is not one. */
export function asAssessment(v: unknown): Assessment | { error: string } {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'input.assessment: expected the data of evolve-ai assess (an object)' };
  const o = v as Record<string, unknown>;
  if (typeof o['score'] !== 'number' || !Array.isArray(o['criteria'])) return { error: 'input.assessment: expected {score, criteria: [...]} as evolve-ai assess returns it' };
  for (const [i, c] of (o['criteria'] as unknown[]).entries()) {
    const cc = c as Record<string, unknown> | null;
    if (!cc || typeof cc['id'] !== 'string' || !Array.isArray(cc['checks'])) return { error: `input.assessment.criteria[${i}]: expected {id, checks: [...]}` };
  }
  const a = o as unknown as Assessment;
  return { ...a, ecosystems: Array.isArray(a.ecosystems) ? a.ecosystems : [], level: typeof a.level === 'number' ? a.level : levelOf(a.score).level, levelName: typeof a.levelName === 'string' ? a.levelName : levelOf(a.score).name };
}
