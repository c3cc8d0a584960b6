/**
 * The core loop's rules in the engine: verbs run the agents they name, the step outcome model, who
 * gets asked (nobody without reason), ACMF that does not decay on correct work, honest status, and
 * subscriptions kept apart from the request's intelligence.
 */
import { strict as assert } from 'node:assert';
import { filesNamedIn, findVerb, TASK_VERBS, verbPrefix, VERBS } from '../../../server/src/engine/catalog/verbs';
import { AGENTS, findAction } from '../../../server/src/engine/catalog/index';
import { MAX_ADJUSTMENT_STEPS, adjustedThreshold, findGate } from '../../../server/src/engine/catalog/gates';
import type { Skill } from '../../../server/src/engine/rigor/skill';
import { progressOf, rigorStatus } from '../../../server/src/engine/executions/views';
import { anyone, createHarness, fleetSkills, settled, testSkill, type Harness } from '../../support/engine-harness';
import { waitFor } from '../../support/wait';

const AUTONOMOUS = 'defaults:\n  acmf_mode: AUTONOMOUS\n';

describe('core loop: verbs and plans', () => {
  it('has the contract verbs, each naming agents and actions of the catalog', () => {
    assert.deepEqual([...TASK_VERBS].sort(), ['backup', 'capacity', 'code', 'debug', 'deploy', 'incident', 'maintain', 'monitor', 'review', 'security', 'test']);
    for (const v of VERBS) {
      if (v.workflow) continue;
      assert.ok(v.steps.length > 0, v.verb);
      for (const s of v.steps) assert.ok(findAction(s.agent, s.action), `${v.verb}: ${s.agent} ${s.action}`);
    }
    // Each OPERATE verb runs its own agent's action first.
    const own: Record<string, string> = { deploy: 'deploy-ai', monitor: 'observe-ai', incident: 'incident-ai', maintain: 'maintain-ai', capacity: 'capacity-ai', backup: 'backup-ai' };
    for (const [verb, agent] of Object.entries(own)) assert.equal(findVerb(verb)!.steps[0]!.agent, agent, verb);
    assert.ok(AGENTS.length === 25);
  });

  it('reads a "verb:" prefix and the files an instruction names', () => {
    assert.deepEqual(verbPrefix('review: src/index.ts for bugs'), { verb: 'review', rest: 'src/index.ts for bugs' });
    assert.equal(verbPrefix('add a login page'), undefined);
    assert.equal(verbPrefix('later: do it'), undefined);
    assert.deepEqual(filesNamedIn('review src/index.ts and ./lib/util.js, not https://x.io/a.js nor /etc/passwd or ../up.ts; version 1.2.3'), ['src/index.ts', 'lib/util.js']);
    assert.deepEqual(filesNamedIn('fix the crash at src/app.ts:12:5'), ['src/app.ts']);
  });

  describe('through the engine', function () {
    this.timeout(20_000);
    let h: Harness;
    afterEach(async () => h?.close());

    const cases: Array<[string, string, string[]]> = [
      ['review', 'core', ['review-ai']],
      ['review', 'ultra', ['review-ai', 'security-ai']],
      ['test', 'core', ['tester-ai']],
      ['debug', 'core', ['debug-ai']],
      ['security', 'core', ['security-ai', 'threathunter-ai']],
      ['code', 'core', ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai']],
      ['deploy', 'core', ['deploy-ai', 'deploy-ai']],
      ['monitor', 'core', ['observe-ai']],
    ];
    for (const [verb, intelligence, agents] of cases) {
      it(`${verb} at ${intelligence} runs ${agents.join(', ')} and completes without asking anyone`, async () => {
        h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS });
        const cap = findVerb(verb)!.capability;
        const rec = await h.engine.executions.submitTask({ task: `${verb}: src/index.ts`, capabilities: [cap], intelligence: intelligence as 'core' }, anyone);
        assert.deepEqual(rec.steps.map((s) => s.agentId), agents);
        assert.deepEqual(rec.request.input['files'], ['src/index.ts']);
        const done = await settled(h.engine, rec.id);
        assert.equal(done.status, 'completed', JSON.stringify(done.error));
        assert.equal(h.engine.acmf.listApprovals({ executionId: rec.id }).length, 0);
      });
    }

    it('an explicit verb outside the requested capabilities is a validation error naming verb', async () => {
      h = await createHarness({ skills: fleetSkills });
      await assert.rejects(h.engine.executions.submitTask({ task: 'x', capabilities: ['SECURE'], verb: 'review' }, anyone),
        (e: { code?: string; details?: { errors?: Array<{ field: string }> } }) => e.code === 'ERR_VALIDATION' && e.details?.errors?.[0]?.field === 'verb');
    });

    it('a verb whose agent has no skill is refused at submission (501), not after an hour', async () => {
      h = await createHarness({ skills: fleetSkills.filter((s) => s.agentId !== 'observe-ai') });
      await assert.rejects(h.engine.executions.submitTask({ task: 'monitor: the api', capabilities: ['OPERATE'] }, anyone),
        (e: { code?: string; message?: string }) => e.code === 'ERR_SKILL_UNAVAILABLE' && /observe-ai analyze has no embedded skill/.test(e.message ?? ''));
      assert.equal(h.engine.executions.list().length, 0, 'no execution was created');
    });

    it('a step whose skill needs a workspace answers 422 ERR_NEEDS_INPUT naming source when the request has none', async () => {
      const needy: Skill = { ...testSkill({ agentId: 'review-ai', action: 'review' }), needs: ['workspace'] };
      h = await createHarness({ skills: [needy], yaml: AUTONOMOUS });
      await assert.rejects(h.engine.executions.invokeRigor('review-ai', { prompt: 'review it' }, anyone),
        (e: { code?: string; details?: { errors?: Array<{ field: string }> } }) => e.code === 'ERR_NEEDS_INPUT' && e.details?.errors?.[0]?.field === 'source');
      const ok = await h.engine.executions.invokeRigor('review-ai', { prompt: 'review it', source: h.dir }, anyone);
      assert.equal((await settled(h.engine, ok.id)).status, 'completed');
    });
  });
});

describe('core loop: step outcomes', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.close());

  async function modeOf(agentId: string): Promise<string> {
    return (await h.engine.acmf.state(agentId)).mode;
  }

  it('a step with nothing to do is not_applicable: skipped with its reason, the execution completes and passes, ACMF untouched', async () => {
    const hunt = testSkill({ agentId: 'threathunter-ai', action: 'hunt', artifact: () => ({ notApplicable: 'no log files to hunt in' }) });
    const scan = testSkill({ agentId: 'security-ai', action: 'scan' });
    h = await createHarness({ skills: [hunt, scan], yaml: 'defaults:\n  acmf_mode: ASSISTED\n' });
    const before = await h.engine.acmf.state('threathunter-ai');
    const rec = await h.engine.executions.submitTask({ task: 'security: scan it', capabilities: ['SECURE'] }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const step = done.steps.find((s) => s.agentId === 'threathunter-ai')!;
    assert.equal(step.status, 'skipped');
    assert.equal(step.outcome, 'not_applicable');
    assert.match(step.reason ?? '', /no log files to hunt in/);
    assert.deepEqual(step.phases.map((p) => p.status), ['Completed', 'Completed', 'Completed', 'Skipped', 'Skipped']);
    assert.equal(done.output?.passed, true);
    assert.match(done.output?.summary ?? '', /not applicable \(threathunter-ai: no log files to hunt in\)/);
    assert.equal(h.engine.acmf.listApprovals({ executionId: rec.id }).length, 0, 'nobody is asked');
    const after = await h.engine.acmf.state('threathunter-ai');
    assert.equal(after.tasks, before.tasks, 'a step that did nothing is no evidence either way');
    assert.equal(after.mode, 'ASSISTED');
    const ev = h.events.find((e) => e.type === 'step_completed' && e.agent_id === 'threathunter-ai');
    assert.ok(ev && ev.type === 'step_completed' && ev.outcome === 'not_applicable' && /no log files/.test(ev.reason ?? ''));
  });

  it('a request that lacks what the step needs is needs_input: the execution fails naming the field, nobody is asked, no demotion', async () => {
    const debug = testSkill({ agentId: 'debug-ai', action: 'explain', artifact: () => ({ unable: 'no stack frame could be parsed from the input', needsInput: { field: 'trace' }, confidence: 0 }) });
    h = await createHarness({ skills: [debug], yaml: 'defaults:\n  acmf_mode: ASSISTED\n' });
    const rec = await h.engine.executions.submitTask({ task: 'debug: it crashed', capabilities: ['BUILD'] }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'ERR_NEEDS_INPUT');
    assert.equal(done.steps[0]!.outcome, 'needs_input');
    assert.equal(h.engine.acmf.listApprovals({ executionId: rec.id }).length, 0);
    assert.equal(await modeOf('debug-ai'), 'ASSISTED');
  });

  it('an agent whose own artifact fails a gate: failed, demoted one level, and a last step asks nobody', async () => {
    const weak = testSkill({ agentId: 'review-ai', action: 'review', artifact: () => ({ confidence: 0.1 }) });
    h = await createHarness({ skills: [weak], yaml: 'defaults:\n  acmf_mode: ASSISTED\n' });
    const rec = await h.engine.executions.invokeRigor('review-ai', { prompt: 'review' }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed', 'a one-step RIGOR execution whose step failed its Review is failed');
    assert.equal(done.steps[0]!.outcome, 'failed');
    assert.match(done.error?.message ?? '', /confidence \(0\.1 is below the required 0\.6\)/, 'the reason names the gate and its numbers');
    assert.equal(done.output?.passed, false);
    assert.equal(h.engine.acmf.listApprovals({ executionId: rec.id }).length, 0);
    assert.equal(await modeOf('review-ai'), 'LEARNING');
    assert.equal(h.engine.acmf.strictness('review-ai'), 1);
  });

  it('a review that finds complex code and a test run that finds failures are correct results: gates judge only the step\'s own changes', async () => {
    const review = testSkill({ agentId: 'review-ai', action: 'review', artifact: () => ({ complexity: { max: 28, where: 'src/big.ts:1 parse' }, findingsBefore: { count: 0, maxSeverity: 0 }, findingsAfter: { count: 3, maxSeverity: 3 } }) });
    const tester = testSkill({ agentId: 'tester-ai', action: 'test', artifact: () => ({ tests: { passed: 57, failed: 2, skipped: 0 }, coverage: 12 }) });
    h = await createHarness({ skills: [review, tester], yaml: AUTONOMOUS });
    for (const [verb, agent] of [['review', 'review-ai'], ['test', 'tester-ai']] as const) {
      const rec = await h.engine.executions.submitTask({ task: `${verb}: the project`, capabilities: ['BUILD'] }, anyone);
      const done = await settled(h.engine, rec.id);
      assert.equal(done.status, 'completed', `${agent}: ${JSON.stringify(done.error)}`);
      assert.equal(await modeOf(agent), 'AUTONOMOUS');
    }
    const review2 = h.events.filter((e) => e.type === 'gate_results');
    const byGate = (agent: string, gate: string) => (review2.find((e) => e.type === 'gate_results' && e.agent_id === agent) as { gates: Array<{ gate: string; status: string }> }).gates.find((g) => g.gate === gate)!.status;
    assert.equal(byGate('review-ai', 'complexity'), 'not_applicable');
    assert.equal(byGate('review-ai', 'no-regression'), 'not_applicable');
    assert.equal(byGate('tester-ai', 'tests-pass'), 'not_applicable');
    assert.equal(byGate('tester-ai', 'coverage'), 'not_applicable');
  });

  it('a change the step made is held to its gates: tests it broke fail tests-pass, tests that failed before do not', async () => {
    const change = [{ path: 'src/a.ts', kind: 'modify' as const, content: 'export const a = 1;\n', linesAdded: 1, linesRemoved: 1, applied: true }];
    const broke = testSkill({ agentId: 'coder-ai', action: 'fix', actions: [{ kind: 'write_file', description: 'edit', paths: ['src/a.ts'] }], artifact: () => ({ changes: change, tests: { passed: 8, failed: 3, skipped: 0 }, testsBefore: { passed: 10, failed: 1, skipped: 0 }, rollback: { kind: 'branch', ref: 'cadre/x' }, actionsTaken: [{ kind: 'write_file', description: 'wrote', paths: ['src/a.ts'] }] }) });
    h = await createHarness({ skills: [broke], yaml: AUTONOMOUS });
    const rec = await h.engine.executions.runAction('coder-ai', 'fix', { source: h.dir }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.steps[0]!.outcome, 'failed');
    assert.match(done.steps[0]!.reason ?? '', /tests-pass \(the change broke 2 test\(s\)/);
  });

  it('acmf-permission: a kind declared without paths covers the paths the step then touched', async () => {
    const gen = testSkill({ agentId: 'coder-ai', action: 'generate', actions: [{ kind: 'write_file', description: 'write the generated files' }, { kind: 'git_commit', description: 'commit' }],
      artifact: () => ({ changes: [{ path: 'src/new.ts', kind: 'create', content: 'export const x = 1;\n', linesAdded: 1, linesRemoved: 0 }], rollback: { kind: 'branch', ref: 'cadre/y' },
        actionsTaken: [{ kind: 'write_file', description: 'wrote 1 file', paths: ['src/new.ts'] }, { kind: 'git_commit', description: 'committed', paths: ['src/new.ts'] }] }) });
    h = await createHarness({ skills: [gen], yaml: AUTONOMOUS });
    const rec = await h.engine.executions.runAction('coder-ai', 'generate', { source: h.dir }, anyone);
    await settled(h.engine, rec.id);
    const gates = h.events.find((e) => e.type === 'gate_results');
    const permission = gates?.type === 'gate_results' ? gates.gates.find((g) => g.gate === 'acmf-permission') : undefined;
    assert.equal(permission?.status, 'pass', permission?.reason);
  });
});

describe('core loop: escalation, approvals and status', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.close());

  it('a failed step with later steps that need it is escalated, with the waiting agent as currentAgent; cancelling closes the approval and deciding it is a conflict', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'weak:planner-ai' } }, anyone);
    const approval = await waitFor(() => h.engine.acmf.listApprovals({ executionId: rec.id, status: 'pending' })[0]);
    assert.equal(approval.action.kind, 'continue_after_failure');
    const waiting = h.engine.executions.get(rec.id);
    assert.equal(waiting.status, 'awaiting_approval');
    assert.equal(waiting.currentAgent, 'planner-ai');
    await h.engine.executions.cancel(rec.id, 'user:test');
    const closed = h.engine.acmf.listApprovals({ executionId: rec.id })[0]!;
    assert.equal(closed.status, 'closed');
    await assert.rejects(h.engine.acmf.decideApproval(approval.id, { approved: true, by: 'user:late' }), (e: { code?: string }) => e.code === 'ERR_CONFLICT');
  });

  it('progress of a failed run says how far it got; a person who continued past a failure does not make it passed', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'weak:architect-ai' } }, anyone);
    const approval = await waitFor(() => h.engine.acmf.listApprovals({ executionId: rec.id, status: 'pending' })[0]);
    await h.engine.acmf.decideApproval(approval.id, { approved: false, by: 'user:alice' });
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(progressOf(done), 50, '3 of 6 steps reached an outcome');

    const rec2 = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'weak:req-ai' } }, anyone);
    const a2 = await waitFor(() => h.engine.acmf.listApprovals({ executionId: rec2.id, status: 'pending' })[0]);
    await h.engine.acmf.decideApproval(a2.id, { approved: true, by: 'user:alice' });
    const done2 = await settled(h.engine, rec2.id);
    assert.equal(done2.status, 'completed');
    assert.equal(done2.output?.passed, false, 'one step failed: the run did not pass');
    assert.equal(done2.steps[0]!.continuedBy, 'user:alice');
  });

  it('the RIGOR status reports the mode the agent acted under, capped by the request', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS });
    const rec = await h.engine.executions.invokeRigor('review-ai', { prompt: 'review', acmfMode: 'LEARNING' }, anyone);
    const done = await settled(h.engine, rec.id);
    const view = rigorStatus(done);
    assert.equal(view.acmfMode, 'LEARNING');
    assert.equal(view.acmfModeCap, 'LEARNING');
    const rec2 = await h.engine.executions.invokeRigor('review-ai', { prompt: 'review' }, anyone);
    assert.equal(rigorStatus(await settled(h.engine, rec2.id)).acmfMode, 'AUTONOMOUS');
  });

  it('stricter after failures is bounded', () => {
    const c = findGate('confidence')!;
    assert.equal(MAX_ADJUSTMENT_STEPS, 2);
    assert.ok(adjustedThreshold(c, 'mvp', 50)! <= 0.68);
  });
});

describe('core loop: products and tiers', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.close());

  it('a local install runs every template and domain workflow at the default intelligence (the request shaped like the contract)', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS });
    for (const [cap, wf] of [['GOVERN', 'compliance-audit-automation'], ['OPTIMIZE', 'cost-anomaly-remediation'], ['EVOLVE', 'technical-debt-prioritization'], ['GOVERN', 'govern'], ['OPTIMIZE', 'optimize'], ['EVOLVE', 'evolve']] as const) {
      const rec = await h.engine.executions.invokeWorkflow({ capability: cap, workflow: wf, input: { prompt: 'go' } }, anyone);
      assert.equal((await settled(h.engine, rec.id)).status, 'completed', wf);
    }
  });

  it('a subscription without a product, or on trial, answers ERR_TIER_REQUIRED with the preview', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: 'subscription:\n  products: [PLATFORM, OPTIMIZE]\n  tier: trial\n' });
    await assert.rejects(h.engine.executions.invokeWorkflow({ capability: 'GOVERN', workflow: 'govern', input: { prompt: 'audit' } }, anyone),
      (e: { code?: string; details?: { missingProduct?: string; preview?: { agents?: string[] } } }) => e.code === 'ERR_TIER_REQUIRED' && e.details?.missingProduct === 'GOVERN' && e.details.preview!.agents!.includes('govern-ai'));
    await assert.rejects(h.engine.executions.runAction('billing-ai', 'usage', {}, anyone),
      (e: { code?: string; details?: { requiredCommercialTier?: string } }) => e.code === 'ERR_TIER_REQUIRED' && e.details?.requiredCommercialTier === 'pro');
    // Core products are not affected by the request's intelligence.
    const rec = await h.engine.executions.submitTask({ task: 'security: scan', capabilities: ['SECURE'], intelligence: 'core' }, anyone);
    assert.ok(rec.id);
  });
});
