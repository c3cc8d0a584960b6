/**
 * planner-ai's embedded skills: `plan` (dependency graph) and `estimate` (three-point/PERT), no model.
 * With a language model, `plan` asks it for the task breakdown (Research evidence in the prompt); the
 * answer is validated (zod, then the same task rules and graph checks) or the embedded plan is kept.
 */
import { z } from 'zod';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { askModel, evidenceText, fallbackLine, rejected, type ModelNote } from '../../llm/skill-model';
import { coerceTasks } from './tasks';
import { buildPlan, estimateTasks, pathEstimate, type Plan, type TaskEstimate } from './graph';
import { resolveTasks, type TaskSource } from './tasks';

export { buildPlan, estimateTasks, findCycle, heuristicEstimate, pathEstimate, pert } from './graph';
export type { Plan, PlanResult, PlanTask, ScheduledTask, TaskEstimate, ThreePoint } from './graph';
export { coerceTasks, resolveTasks, tasksFromBullets, tasksFromStories } from './tasks';
export type { TaskSource } from './tasks';

export const PERT_METHOD = 'Three-point (PERT): expected = (o + 4m + p) / 6, σ = (p − o) / 6 per task; a path sums the means and σ = √Σσ²; P85 = mean + 1.04σ, P95 = mean + 1.645σ (normal approximation). Missing estimates: likely 1 day, ×2 for complex work, ×0.5 for light work, +0.25 day per extra acceptance criterion; o = 0.5m, p = 2.5m.';

const SOURCE_WEIGHT: Record<TaskSource['source'], number> = { input: 1, 'previous-plan': 1, stories: 0.6, prompt: 0.4 };

function unit(ctx: SkillContext): string {
  const u = ctx.request.input['unit'];
  return typeof u === 'string' && u.trim() ? u : 'days';
}

function sourceOf(ctx: SkillContext): TaskSource {
  return resolveTasks(ctx.request.input, ctx.request.previous, ctx.request.goal.prompt);
}

function unableArtifact(ctx: SkillContext, kind: string, why: string, data: unknown): Artifact {
  return { kind, summary: `planner-ai ${ctx.request.action}: unable: ${why}`, goalRef: ctx.request.goal.id, confidence: 0, data, unable: why };
}

function problem(src: TaskSource): string | undefined {
  if (src.errors.length) return `invalid tasks: ${src.errors.join('; ')}`;
  if (!src.tasks.length) return 'no tasks: give input.tasks, run req-ai analyze first, or list the tasks as bullets in the goal';
  return undefined;
}

export function renderPlan(plan: Plan, estimates: TaskEstimate[]): string {
  const byId = new Map(plan.tasks.map((t) => [t.id, t]));
  const est = new Map(estimates.map((e) => [e.id, e]));
  const out = ['# Plan', '', `Critical path (${plan.duration} ${plan.unit} expected): ${plan.criticalPath.join(' → ')}`, '', '## Parallel groups'];
  plan.groups.forEach((g, i) => out.push(`${i + 1}. ${g.map((id) => `${id} (${byId.get(id)!.title})`).join(', ')}`));
  out.push('', '## Tasks in order', '| id | title | depends on | expected | start | slack | critical |', '|---|---|---|---|---|---|---|');
  for (const t of plan.tasks) out.push(`| ${t.id} | ${t.title} | ${t.dependsOn.join(', ') || '-'} | ${t.expected}${est.get(t.id)?.basis === 'heuristic' ? '*' : ''} | ${t.earliestStart} | ${t.slack} | ${t.critical ? 'yes' : ''} |`);
  if (estimates.some((e) => e.basis === 'heuristic')) out.push('', '\\* default estimate from the heuristic (no estimate given).');
  return out.join('\n');
}

function givenShare(estimates: TaskEstimate[]): number {
  return estimates.length ? estimates.filter((e) => e.basis === 'given').length / estimates.length : 0;
}

const modelPlanSchema = z.object({
  tasks: z.array(z.object({
    id: z.string().trim().min(1).max(40),
    title: z.string().trim().min(1).max(200),
    dependsOn: z.array(z.string()).default([]),
    estimate: z.object({ optimistic: z.number().min(0), likely: z.number().min(0), pessimistic: z.number().min(0) }).optional(),
  })).min(1).max(100),
});

const PLAN_SYSTEM = [
  'You are planner-ai. Break the goal down into tasks with dependencies, using the evidence given (tasks, stories).',
  'Keep given task ids and titles; add tasks only when the goal needs them. No cycles.',
  'Estimates are in the unit given, three-point with 0 <= optimistic <= likely <= pessimistic; leave estimate out when unsure.',
  'Answer with JSON only: {"tasks":[{"id":"T1","title":"...","dependsOn":["..."],"estimate":{"optimistic":1,"likely":2,"pessimistic":4}}]}',
].join('\n');

/** The model's plan, or why it cannot be used (same task rules and graph checks as given tasks). */
async function modelPlan(ctx: SkillContext, evidence: Evidence | undefined, src: TaskSource): Promise<{ artifact?: Artifact; note?: ModelNote }> {
  const u = unit(ctx);
  const answer = await askModel(ctx, {
    system: PLAN_SYSTEM,
    user: `Goal:\n"""\n${ctx.request.goal.prompt}\n"""\nUnit: ${u}\nTasks found (${src.source}): ${JSON.stringify(src.tasks)}\n\n${evidenceText(evidence)}`,
    schema: modelPlanSchema,
  });
  if (!answer) return {};
  if (!answer.ok) return { note: answer.note };
  const { tasks, errors } = coerceTasks(answer.value.tasks);
  if (errors.length) return { note: rejected(answer, `the model's tasks are invalid: ${errors.slice(0, 3).join('; ')}`) };
  const estimates = estimateTasks(tasks, src.criteria);
  const r = buildPlan(tasks, estimates, u);
  if (!r.ok) return { note: rejected(answer, `the model's plan is not a valid task graph: ${r.reason}`) };
  const confidence = Math.round((0.45 + 0.25 * SOURCE_WEIGHT[src.source] * (src.tasks.length ? 1 : 0.5) + 0.2 * givenShare(estimates)) * 100) / 100;
  return {
    artifact: {
      kind: 'plan',
      summary: `${tasks.length} task(s) in ${r.plan.groups.length} parallel group(s); critical path ${r.plan.criticalPath.join(' → ')} (${r.plan.duration} ${r.plan.unit}) (language model ${answer.model})`,
      goalRef: ctx.request.goal.id,
      confidence,
      data: { source: 'model', basedOn: src.source, input: { tasks }, criteria: src.criteria, ...r.plan, estimates, method: PERT_METHOD, llm: answer.note },
      text: renderPlan(r.plan, estimates),
    },
  };
}

const planSkill: Skill = {
  agentId: 'planner-ai',
  action: 'plan',
  async research(ctx) {
    const src = sourceOf(ctx);
    return { items: src.tasks.map((t) => ({ source: `${src.source} ${t.id}`, detail: t.title, weight: SOURCE_WEIGHT[src.source] })), constraints: src.errors, pathsRead: [] };
  },
  propose() { return []; },
  async generate(ctx, evidence): Promise<Artifact> {
    const src = sourceOf(ctx);
    // Given tasks with errors are the caller's to fix: the model is not asked to guess around them.
    const viaModel = src.errors.length ? {} : await modelPlan(ctx, evidence, src);
    if (viaModel.artifact) return viaModel.artifact;
    const note = viaModel.note;
    const noted = (a: Artifact): Artifact => note ? { ...a, ...(a.unable ? { unable: `${a.unable}; ${fallbackLine(note)}` } : {}), data: { ...(a.data as object), llm: note } } : a;
    const bad = problem(src);
    if (bad) return noted(unableArtifact(ctx, 'plan', bad, { source: src.source, errors: src.errors }));
    const estimates = estimateTasks(src.tasks, src.criteria);
    const r = buildPlan(src.tasks, estimates, unit(ctx));
    if (!r.ok) return noted(unableArtifact(ctx, 'plan', r.reason, { source: src.source, ...(r.cycle ? { cycle: r.cycle } : {}) }));
    ctx.progress(80);
    // Confidence, calibrated from the evidence (issue 10): the plan is a deterministic function of the
    // task list, and the graph was checked (no cycle, every dependency known). An explicit task list
    // (input.tasks or a previous plan) is complete evidence for the breakdown: >= 0.75 even with
    // heuristic estimates, up to 0.95 when every estimate is given. Tasks derived from stories (0.67)
    // or from prompt bullets (0.63) are partial evidence and stay lower, still above the 0.6 gate a
    // correct plan must pass.
    const confidence = Math.round((0.55 + 0.2 * SOURCE_WEIGHT[src.source] + 0.2 * givenShare(estimates)) * 100) / 100;
    return noted({
      kind: 'plan',
      summary: `${src.tasks.length} task(s) in ${r.plan.groups.length} parallel group(s); critical path ${r.plan.criticalPath.join(' → ')} (${r.plan.duration} ${r.plan.unit})${note ? ' (embedded: the language model answer was not usable)' : ''}`,
      goalRef: ctx.request.goal.id,
      confidence,
      data: { source: src.source, input: { tasks: src.tasks }, criteria: src.criteria, ...r.plan, estimates, method: PERT_METHOD },
      text: note ? `${renderPlan(r.plan, estimates)}\n\n${fallbackLine(note)}` : renderPlan(r.plan, estimates),
      tokens: 0,
    });
  },
};

const estimateSkill: Skill = {
  agentId: 'planner-ai',
  action: 'estimate',
  research: planSkill.research,
  propose() { return []; },
  async generate(ctx): Promise<Artifact> {
    const src = sourceOf(ctx);
    const bad = problem(src);
    if (bad) return unableArtifact(ctx, 'estimate', bad, { source: src.source, errors: src.errors });
    const estimates = estimateTasks(src.tasks, src.criteria);
    const r = buildPlan(src.tasks, estimates, unit(ctx));
    if (!r.ok) return unableArtifact(ctx, 'estimate', r.reason, { source: src.source, ...(r.cycle ? { cycle: r.cycle } : {}) });
    const critical = { ids: r.plan.criticalPath, ...pathEstimate(r.plan.criticalPath, estimates) };
    const effort = pathEstimate(src.tasks.map((t) => t.id), estimates);
    const share = givenShare(estimates);
    const cv = critical.expected > 0 ? critical.stdDev / critical.expected : 1;
    // Confidence, calibrated from the evidence (issue 10): given estimates are complete evidence for
    // the PERT figures (explicit tasks, all estimates given, a tight spread: >= 0.85); heuristic
    // estimates are partial evidence (0.6-0.7, lower with a wide spread: sigma relative to the mean).
    // The old formula put a correct heuristic estimate at 0.43, below the 0.6 gate.
    const confidence = Math.round(Math.min(0.95, 0.5 + 0.3 * share + 0.1 * SOURCE_WEIGHT[src.source] + 0.1 * Math.max(0, 1 - 2 * cv)) * 100) / 100;
    const u = r.plan.unit;
    const lines = ['# Estimate', '', `Method: ${PERT_METHOD}`, '', '| task | o | m | p | expected | σ | basis |', '|---|---|---|---|---|---|---|'];
    for (const e of estimates) lines.push(`| ${e.id} | ${e.optimistic} | ${e.likely} | ${e.pessimistic} | ${e.expected} | ${e.stdDev} | ${e.basis === 'given' ? 'given' : `heuristic: ${e.heuristic}`} |`);
    lines.push('', `Critical path ${critical.ids.join(' → ')}: ${critical.expected} ± ${critical.stdDev} ${u} (P85 ${critical.p85}, P95 ${critical.p95}).`, `Total effort: ${effort.expected} ± ${effort.stdDev} ${u}.`);
    return {
      kind: 'estimate',
      summary: `critical path ${critical.expected} ± ${critical.stdDev} ${u} (P85 ${critical.p85}); effort ${effort.expected} ${u}; ${Math.round(share * 100)}% of estimates given`,
      goalRef: ctx.request.goal.id,
      confidence,
      data: { method: PERT_METHOD, unit: u, source: src.source, tasks: estimates, criticalPath: critical, effort, givenShare: Math.round(share * 100) / 100 },
      text: lines.join('\n'),
      tokens: 0,
    };
  },
};

export { estimateSkill, planSkill };
export const planningSkills: Skill[] = [planSkill, estimateSkill];
