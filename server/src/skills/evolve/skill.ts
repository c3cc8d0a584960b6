/**
 * evolve-ai's embedded skills, read-only and deterministic (no model, no network):
 *
 *  - `assess` (the EVOLVE domain's default action): the maturity score (0-100, a level) over seven
 *    criteria with the evidence of each check (file and line) and what is missing (assess.ts);
 *  - `plan`: the improvements of an assessment ordered by value / effort, with next steps naming the
 *    files to add (plan.ts). It plans from `input.assessment`, else from a previous assess step of the
 *    same execution, else it assesses the workspace itself.
 *
 * A low maturity is a finding of the project, never a failed gate of the step.
 */
import { existsSync } from 'node:fs';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { parseJsonQuietly, WorkspaceFiles } from '../workspace/files';
import { assess, gitTags, ManifestError, type Assessment } from './assess';
import { planImprovements, asAssessment, type MaturityPlan } from './plan';
import { RepoIndex } from './repo-index';
import { assessDataSchema, evolveInputSchema, planDataSchema } from './schemas';

type Action = 'assess' | 'plan';

interface Prepared {
  assessment?: Assessment;
  source?: MaturityPlan['from']['source'];
  idx?: RepoIndex;
  problem?: { field: string; message: string };
}

function scopeOf(ctx: SkillContext): string[] | { field: string; message: string } {
  const raw = ctx.request.input['paths'];
  const given = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map(String);
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  const out: string[] = [];
  for (const g of given) {
    const r = ws.resolve(g);
    if (!r.ok) return { field: 'paths', message: `input.paths: ${g} ${r.reason === 'not found' ? 'does not exist in the workspace' : `is ${r.reason}; not read`}` };
    out.push(r.rel);
  }
  return out;
}

/** The assessment handed to plan: input.assessment, else the last evolve-ai assess step of this execution. */
function handedAssessment(ctx: SkillContext): { assessment: Assessment; source: 'input' | 'previous step' } | { field: string; message: string } | undefined {
  let raw = ctx.request.input['assessment'];
  if (raw !== undefined && raw !== null && raw !== '') {
    if (typeof raw === 'string') {
      try { raw = parseJsonQuietly(raw, 'input.assessment'); } catch (e) { return { field: 'assessment', message: (e as Error).message }; }
    }
    const a = asAssessment(raw);
    return 'error' in a ? { field: 'assessment', message: a.error } : { assessment: a, source: 'input' };
  }
  const prev = [...ctx.request.previous].reverse().find((s) => s.agentId === 'evolve-ai' && s.action === 'assess' && s.data);
  if (prev) {
    const a = asAssessment(prev.data);
    if (!('error' in a)) return { assessment: a, source: 'previous step' };
  }
  return undefined;
}

async function prepare(ctx: SkillContext, action: Action): Promise<Prepared> {
  if (action === 'plan') {
    const handed = handedAssessment(ctx);
    if (handed && 'message' in handed) return { problem: handed };
    if (handed) return { assessment: handed.assessment, source: handed.source };
  }
  const scope = scopeOf(ctx);
  if (!Array.isArray(scope)) return { problem: scope };
  const idx = new RepoIndex(ctx.request.workspace!, scope);
  if (!idx.files.length) return { idx };
  const git = await gitTags(idx.root, ctx.signal);
  try {
    return { idx, assessment: assess(idx, git), source: 'assessed' };
  } catch (e) {
    if (e instanceof ManifestError) return { idx, problem: { field: 'paths', message: e.message } };
    throw e;
  }
}

/** Confidence from how much of the model could be judged on this repository (not-judged checks lower it). */
export function assessmentConfidence(a: Assessment): number {
  const all = a.criteria.flatMap((c) => c.checks);
  const total = all.reduce((n, k) => n + k.points, 0);
  const judged = all.filter((k) => k.earned !== null).reduce((n, k) => n + k.points, 0);
  return total ? Math.round(0.9 * (0.5 + 0.5 * (judged / total)) * 100) / 100 : 0;
}

function renderAssessment(a: Assessment): string {
  const out = [`# evolve-ai assess: ${a.score}/100, level ${a.level} (${a.levelName})`, '', `${a.meaning}. Ecosystems: ${a.ecosystems.join(', ') || 'none detected'}.`, '',
    '| criterion | weight | score | evidence | missing |', '|---|---|---|---|---|'];
  for (const c of a.criteria) {
    out.push(`| ${c.title} | ${c.weight} | ${c.score ?? 'not judged'} | ${c.evidence.slice(0, 4).map((e) => `${e.file}${e.line ? `:${e.line}` : ''}`).join(', ')} | ${c.missing.join('; ').replace(/\|/g, '\\|')} |`);
  }
  return out.join('\n') + '\n';
}

function renderPlan(p: MaturityPlan): string {
  const out = [`# evolve-ai plan: ${p.from.score} -> ${p.projected.score} (${p.from.levelName} -> ${p.projected.levelName})`, ''];
  for (const i of p.items) out.push(`${i.rank}. **${i.title}** (${i.criterion}; value ${i.value}, effort ${i.effort}, +${i.gain}): ${i.missing}`, ...i.steps.map((s) => `   - ${s}`));
  return out.join('\n') + '\n';
}

function makeEvolveSkill(action: Action): Skill {
  const prepared = new WeakMap<Evidence, Prepared>();
  const kind = `evolve-${action}`;
  return {
    agentId: 'evolve-ai',
    action,
    inputSchema: evolveInputSchema,
    outputSchema: action === 'assess' ? assessDataSchema : planDataSchema,
    needs: ['workspace'],
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to assess'); return evidence; }
      const p = await prepare(ctx, action);
      prepared.set(evidence, p);
      if (p.problem) evidence.constraints.push(p.problem.message);
      if (p.idx) {
        evidence.pathsRead.push(...p.idx.pathsRead());
        evidence.items.push({ source: ws, detail: `${p.idx.files.length} file(s) listed, ${p.idx.read.size} read`, weight: 0.6 });
      }
      if (p.source && p.source !== 'assessed') evidence.items.push({ source: `assessment from the ${p.source}`, detail: `score ${p.assessment!.score}`, weight: 0.7 });
      ctx.progress(40, p.assessment ? assessmentConfidence(p.assessment) : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      const p = prepared.get(evidence);
      return p?.idx?.files.length ? [{ kind: 'read', description: `read ${p.idx.read.size} workspace file(s) (manifests, CI, docs, configuration) and the git tags (read-only)`, paths: p.idx.pathsRead() }] : [];
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) {
        const why = 'no workspace was given to assess';
        return { kind, summary: `evolve-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, needsInput: { field: 'source' }, tokens: 0 };
      }
      const p = prepared.get(evidence) ?? await prepare(ctx, action);
      if (p.problem) return { kind, summary: `evolve-ai ${action}: unable: ${p.problem.message}`, goalRef, confidence: 0, data: null, unable: p.problem.message, needsInput: { field: p.problem.field }, tokens: 0 };
      if (!p.assessment) {
        const why = 'the workspace holds no file to assess';
        return { kind, summary: `evolve-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const a = p.assessment;
      const confidence = assessmentConfidence(a);
      ctx.progress(100, confidence);
      const gaps = a.criteria.flatMap((c) => c.checks.filter((k) => k.earned !== null && k.earned < k.points));
      const findingsAfter = { count: gaps.length, maxSeverity: gaps.length ? (a.score < 40 ? 2 : 1) : 0 };
      if (action === 'assess') {
        const weakest = a.criteria.filter((c) => c.score !== null).sort((x, y) => x.score! - y.score!).slice(0, 3);
        const summary = `maturity ${a.score}/100, level ${a.level} (${a.levelName}); ${a.criteria.map((c) => `${c.id} ${c.score ?? 'n/a'}`).join(', ')}; weakest: ${weakest.map((c) => `${c.id} (${c.missing[0] ?? 'partial'})`).join('; ')}`;
        return { kind, summary, goalRef, confidence, tokens: 0, data: a, text: renderAssessment(a), findingsAfter };
      }
      const plan = planImprovements(a, p.source!);
      const limitRaw = ctx.request.input['limit'];
      const limit = limitRaw === undefined ? undefined : Number(limitRaw);
      if (limit !== undefined && limit > 0) plan.items = plan.items.slice(0, limit);
      const summary = plan.items.length
        ? `${plan.items.length} improvement(s) from ${a.score}/100 (${a.levelName}) to ${plan.projected.score}/100 (${plan.projected.levelName}); first: ${plan.items.slice(0, 3).map((i) => `${i.title} (${i.files[0] ?? i.criterion})`).join(', ')}`
        : `nothing to improve: every judged check is met (${a.score}/100, ${a.levelName})`;
      return { kind, summary, goalRef, confidence, tokens: 0, data: { ...plan, ...(p.source === 'assessed' ? { assessment: a } : {}) }, text: renderPlan(plan), findingsAfter };
    },
  };
}

export const assessSkill: Skill = makeEvolveSkill('assess');
export const planSkill: Skill = makeEvolveSkill('plan');
