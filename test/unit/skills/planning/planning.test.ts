import { strict as assert } from 'node:assert';
import type { SkillContext, StepRequest, StepSummary } from '../../../../server/src/engine/rigor/skill';
import {
  buildPlan, coerceTasks, estimateSkill, estimateTasks, findCycle, heuristicEstimate, pathEstimate, pert, planningSkills, planSkill, tasksFromBullets, tasksFromStories, type PlanTask,
} from '../../../../server/src/skills/planning';
import { analyzeRequirements } from '../../../../server/src/skills/requirements';

function ctx(partial: { prompt?: string; input?: Record<string, unknown>; previous?: StepSummary[]; action?: string }): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 2, agentId: 'planner-ai', action: partial.action ?? 'plan',
    goal: { id: 'goal-plan', prompt: partial.prompt ?? '' }, input: partial.input ?? {}, scope: 'workspace' as StepRequest['scope'],
    tier: 'standard' as StepRequest['tier'], previous: partial.previous ?? [],
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => false, once: (_k, f) => f() };
}

const e = (optimistic: number, likely: number, pessimistic: number) => ({ optimistic, likely, pessimistic });
// A → B → D, A → C → D; C is the long branch.
const TASKS: PlanTask[] = [
  { id: 'A', title: 'Design schema', dependsOn: [], estimate: e(1, 2, 3) },
  { id: 'B', title: 'API endpoints', dependsOn: ['A'], estimate: e(1, 1, 1) },
  { id: 'C', title: 'Data migration', dependsOn: ['A'], estimate: e(2, 4, 12) },
  { id: 'D', title: 'Release', dependsOn: ['B', 'C'], estimate: e(0.5, 0.5, 0.5) },
  { id: 'E', title: 'Write docs', dependsOn: [], estimate: e(1, 1, 1) },
];

describe('planner-ai skills', () => {
  describe('graph', () => {
    it('computes PERT mean and standard deviation', () => {
      assert.deepEqual(pert(e(2, 4, 12)), { expected: 5, stdDev: 1.67, variance: (10 / 6) ** 2 });
    });
    it('orders tasks topologically, groups them by level and finds the critical path by expected duration', () => {
      const r = buildPlan(TASKS);
      assert.ok(r.ok);
      if (!r.ok) return;
      assert.deepEqual(r.plan.order, ['A', 'E', 'B', 'C', 'D']);
      assert.deepEqual(r.plan.groups, [['A', 'E'], ['B', 'C'], ['D']]);
      assert.deepEqual(r.plan.criticalPath, ['A', 'C', 'D']);
      assert.equal(r.plan.duration, 7.5);
      const byId = new Map(r.plan.tasks.map((t) => [t.id, t]));
      assert.equal(byId.get('B')!.slack, 4);
      assert.equal(byId.get('C')!.slack, 0);
      assert.equal(byId.get('E')!.slack, 6.5);
      assert.equal(byId.get('D')!.earliestStart, 7);
    });
    it('detects a cycle and names it', () => {
      const cyc: PlanTask[] = [{ id: 'a', title: 'a', dependsOn: ['c'] }, { id: 'b', title: 'b', dependsOn: ['a'] }, { id: 'c', title: 'c', dependsOn: ['b'] }];
      assert.deepEqual(findCycle(cyc), ['a', 'c', 'b', 'a']);
      const r = buildPlan(cyc);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.reason, /dependency cycle: a → c → b → a/);
    });
    it('rejects unknown dependencies and duplicate ids', () => {
      const r1 = buildPlan([{ id: 'a', title: 'a', dependsOn: ['zz'] }]);
      assert.ok(!r1.ok && /unknown task "zz"/.test(r1.reason));
      const r2 = buildPlan([{ id: 'a', title: 'a', dependsOn: [] }, { id: 'a', title: 'b', dependsOn: [] }]);
      assert.ok(!r2.ok && /duplicate/.test(r2.reason));
    });
    it('sums a path: means add, variances add', () => {
      const est = estimateTasks(TASKS);
      const p = pathEstimate(['A', 'C', 'D'], est);
      assert.equal(p.expected, 7.5);
      assert.equal(p.stdDev, Math.round(Math.sqrt((2 / 6) ** 2 + (10 / 6) ** 2) * 100) / 100);
      assert.ok(p.p95 > p.p85 && p.p85 > p.p50);
    });
    it('defaults missing estimates with the stated heuristic', () => {
      assert.deepEqual(heuristicEstimate('Polish the landing page').estimate, e(0.5, 1, 2.5));
      assert.deepEqual(heuristicEstimate('Integrate payment provider').estimate, e(1, 2, 5));
      assert.deepEqual(heuristicEstimate('Write tests').estimate, e(0.25, 0.5, 1.25));
      assert.deepEqual(heuristicEstimate('Polish the landing page', 3).estimate.likely, 1.5);
      const est = estimateTasks([{ id: 'x', title: 'Migrate the database', dependsOn: [] }]);
      assert.equal(est[0]!.basis, 'heuristic');
      assert.match(est[0]!.heuristic!, /×2 complex work/);
    });
  });

  describe('task sources', () => {
    it('validates explicit tasks and estimates', () => {
      const { tasks, errors } = coerceTasks([{ id: 1, title: 'x', dependsOn: '2, 3' }, { title: 'no id' }, { id: 'b', estimate: { optimistic: 3, likely: 2, pessimistic: 1 } }]);
      assert.deepEqual(tasks[0], { id: '1', title: 'x', dependsOn: ['2', '3'] });
      assert.equal(errors.length, 2);
    });
    it('reads a numbered list as a sequence and bullets as independent, honouring "(after n)"', () => {
      assert.deepEqual(tasksFromBullets('Plan:\n1. Design the API\n2. Build it\n3. Test it').map((t) => t.dependsOn), [[], ['T1'], ['T2']]);
      assert.deepEqual(tasksFromBullets('- Set up CI\n- Write the parser\n- Wire both (after 1, 2)').map((t) => [t.title, t.dependsOn]), [['Set up CI', []], ['Write the parser', []], ['Wire both', ['T1', 'T2']]]);
    });
    it('turns user stories into build and verify tasks and a release', () => {
      const { tasks, criteria } = tasksFromStories(analyzeRequirements('- Admins can export orders so that finance can reconcile them.\n- Users can save their cart so that they finish later.'));
      assert.deepEqual(tasks.map((t) => t.id), ['S1-build', 'S1-verify', 'S2-build', 'S2-verify', 'release']);
      assert.deepEqual(tasks[4]!.dependsOn, ['S1-verify', 'S2-verify']);
      assert.equal(criteria['S1-build'], 1);
    });
  });

  describe('through the Skill interface', () => {
    it('exports plan and estimate for planner-ai', () => {
      assert.deepEqual(planningSkills.map((s) => `${s.agentId}/${s.action}`), ['planner-ai/plan', 'planner-ai/estimate']);
    });
    it('plan: research → propose → generate from input.tasks', async () => {
      const c = ctx({ prompt: 'plan the schema change', input: { tasks: TASKS } });
      const ev = await planSkill.research(c);
      assert.deepEqual(await planSkill.propose(c, ev), []);
      const a = await planSkill.generate(c, ev);
      assert.equal(a.goalRef, 'goal-plan');
      assert.equal(a.unable, undefined);
      const d = a.data as { criticalPath: string[]; groups: string[][]; source: string };
      assert.deepEqual(d.criticalPath, ['A', 'C', 'D']);
      assert.equal(d.source, 'input');
      assert.match(a.text!, /Critical path \(7\.5 days expected\): A → C → D/);
      const derived = await planSkill.generate(ctx({ prompt: '- a thing to do\n- another thing to do' }), ev);
      assert.ok(a.confidence > derived.confidence, 'explicit tasks with estimates weigh more than prompt bullets');
    });
    it('plan: from the previous req-ai stories', async () => {
      const stories = analyzeRequirements('- Admins can export orders so that finance can reconcile them.');
      const previous: StepSummary[] = [{ step: 0, agentId: 'req-ai', action: 'analyze', passed: true, confidence: 0.8, summary: '', data: { stories } }];
      const c = ctx({ prompt: 'plan it', previous });
      const a = await planSkill.generate(c, await planSkill.research(c));
      assert.deepEqual((a.data as { order: string[] }).order, ['S1-build', 'S1-verify', 'release']);
    });
    it('plan: unable with the cycle', async () => {
      const c = ctx({ input: { tasks: [{ id: 'a', title: 'a', dependsOn: ['b'] }, { id: 'b', title: 'b', dependsOn: ['a'] }] } });
      const a = await planSkill.generate(c, await planSkill.research(c));
      assert.match(a.unable ?? '', /cycle: a → b → a/);
      assert.deepEqual((a.data as { cycle: string[] }).cycle, ['a', 'b', 'a']);
    });
    it('estimate: PERT per task and for the critical path, method stated, from a previous plan', async () => {
      const planCtx = ctx({ input: { tasks: TASKS } });
      const plan = await planSkill.generate(planCtx, await planSkill.research(planCtx));
      const previous: StepSummary[] = [{ step: 0, agentId: 'planner-ai', action: 'plan', passed: true, confidence: plan.confidence, summary: plan.summary, data: plan.data }];
      const c = ctx({ action: 'estimate', previous });
      const a = await estimateSkill.generate(c, await estimateSkill.research(c));
      const d = a.data as { method: string; source: string; criticalPath: { ids: string[]; expected: number; stdDev: number }; effort: { expected: number }; tasks: Array<{ id: string; expected: number }> };
      assert.equal(d.source, 'previous-plan');
      assert.match(d.method, /\(o \+ 4m \+ p\) \/ 6/);
      assert.deepEqual(d.criticalPath.ids, ['A', 'C', 'D']);
      assert.equal(d.criticalPath.expected, 7.5);
      assert.equal(d.effort.expected, 9.5);
      assert.equal(d.tasks.find((t) => t.id === 'C')!.expected, 5);
      const heuristicOnly = await estimateSkill.generate(ctx({ action: 'estimate', prompt: '1. Design the API\n2. Build it' }), { items: [], constraints: [], pathsRead: [] });
      assert.ok(a.confidence > heuristicOnly.confidence, `${a.confidence} > ${heuristicOnly.confidence}`);
      assert.match(heuristicOnly.text!, /heuristic: base 1 day/);
    });
    it('confidence is calibrated: complete evidence >= 0.75, partial evidence lower but a correct result still passes the 0.6 gate', async () => {
      const full = await planSkill.generate(ctx({ input: { tasks: TASKS } }), { items: [], constraints: [], pathsRead: [] });
      const bullets = await planSkill.generate(ctx({ prompt: 'Plan the release:\n- add an option\n- document it\n- publish' }), { items: [], constraints: [], pathsRead: [] });
      assert.ok(full.confidence >= 0.75, `explicit tasks: ${full.confidence}`);
      assert.ok(bullets.confidence >= 0.6 && bullets.confidence < full.confidence, `prompt bullets: ${bullets.confidence}`);
      const est = await estimateSkill.generate(ctx({ action: 'estimate', input: { tasks: TASKS } }), { items: [], constraints: [], pathsRead: [] });
      const heuristic = await estimateSkill.generate(ctx({ action: 'estimate', prompt: '1. Design the API\n2. Build it' }), { items: [], constraints: [], pathsRead: [] });
      assert.ok(est.confidence >= 0.75, `given estimates: ${est.confidence}`);
      assert.ok(heuristic.confidence >= 0.6 && heuristic.confidence < est.confidence, `heuristic estimates: ${heuristic.confidence} (was 0.43 before calibration)`);
    });
    it('estimate: unable with no tasks', async () => {
      const c = ctx({ action: 'estimate', prompt: 'estimate something' });
      const a = await estimateSkill.generate(c, await estimateSkill.research(c));
      assert.match(a.unable ?? '', /no tasks/);
      assert.equal(a.goalRef, 'goal-plan');
    });
  });
});
