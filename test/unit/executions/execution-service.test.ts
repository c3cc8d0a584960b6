import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { DOMAIN_WORKFLOWS, WORKFLOW_TEMPLATES } from '../../../server/src/engine/catalog/index';
import { anyone, createHarness, fleetSkills, settled, type Harness } from '../../support/engine-harness';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openStore, storeFilePath } from '../../../server/src/store';
import { waitFor } from '../../support/wait';

describe('executions', function () {
  this.timeout(30_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const ultra = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

  it('routes a BUILD task through its orchestrator, starting with req-ai, planner-ai, architect-ai', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.submitTask({ task: 'add a login page', capabilities: ['BUILD'] }, anyone);
    assert.match(rec.id, /^task_[0-9a-f]{24}$/);
    assert.equal(rec.status, 'queued');
    assert.deepEqual(rec.agents, ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai']);
    assert.ok(Date.parse(rec.estimatedCompletion) > Date.parse(rec.createdAt));
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.output?.steps.length, 6);
    assert.deepEqual((done.output?.result as { saw: string[] }).saw, ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai'], 'each agent receives the results before it');
    assert.ok(done.completedAt && done.startedAt);
  });

  it('a PLATFORM task is chained by the meta-orchestrator over BUILD, OPERATE and SECURE', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.submitTask({ task: 'ship it', capabilities: ['PLATFORM'] }, anyone);
    assert.deepEqual(rec.orchestrator, { tier: 2, domains: ['BUILD', 'OPERATE', 'SECURE'] });
    assert.ok(rec.agents.includes('security-ai') && rec.agents.includes('deploy-ai'));
  });

  for (const wf of [...WORKFLOW_TEMPLATES, ...DOMAIN_WORKFLOWS]) {
    it(`runs ${wf.id} (${wf.pattern}) end to end with the template's agents`, async () => {
      h = await createHarness({ skills: fleetSkills, yaml: ultra });
      const rec = await h.engine.executions.invokeWorkflow({ capability: wf.capabilities[0]!, workflow: wf.id, input: { prompt: `run ${wf.id}` } }, anyone);
      const done = await settled(h.engine, rec.id);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      const template = wf.pipeline.filter((s) => s.condition !== 'as_needed').map((s) => s.agent);
      const firstRound = done.steps.filter((s) => s.round === 1 && !s.addedBecause).map((s) => s.agentId);
      assert.deepEqual(firstRound, template, 'the set and order of the template never change');
      if (wf.pattern === 'debate') {
        const judge = done.steps.find((s) => s.agentId === wf.lead)!;
        for (const s of done.steps) if (s !== judge) assert.ok(s.completedAt! <= judge.startedAt!, 'the judge decides last');
        assert.ok(done.steps.some((s) => s.round === 2));
      }
      if (wf.pattern === 'group_chat') assert.ok(done.steps.some((s) => s.round === 2), 'at least a second turn');
    });
  }

  it('refuses a workflow that the subscription does not cover (trial of [ULTRA]) with a preview', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: 'subscription:\n  products: [PLATFORM, GOVERN]\n  tier: trial\n' });
    await assert.rejects(
      h.engine.executions.invokeWorkflow({ capability: 'GOVERN', workflow: 'compliance-audit-automation', input: { prompt: 'audit' } }, anyone),
      (err: { code?: string; details?: { requiredCommercialTier?: string; preview?: { agents?: string[] } } }) =>
        err.code === 'ERR_TIER_REQUIRED' && err.details?.requiredCommercialTier === 'ultra' && err.details.preview!.agents!.includes('govern-ai'),
    );
  });

  it('retries a crashing step with backoff and succeeds', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'SECURE', workflow: 'secure', input: { prompt: 'crash:security-ai:2' } }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.steps.find((s) => s.agentId === 'security-ai')!.attempts, 3);
  });

  it('escalates to a person when retries are spent, re-routes a security scan before deploy, and continues when approved', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'OPERATE', workflow: 'performance-regression-fix', input: { prompt: 'crash:coder-ai:9' } }, anyone);
    const approval = await waitFor(() => h.engine.acmf.pendingApprovals({ executionId: rec.id })[0]);
    assert.equal(h.engine.executions.get(rec.id).status, 'awaiting_approval');
    assert.equal(approval.action.kind, 'continue_after_failure');
    await h.engine.acmf.decideApproval(approval.id, { approved: true, by: 'user:alice' });
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const agents = done.steps.map((s) => s.agentId);
    const deploy = agents.indexOf('deploy-ai');
    assert.equal(agents[deploy - 1], 'security-ai');
    assert.match(done.steps[deploy - 1]!.addedBecause ?? '', /re-routed/);
    assert.equal(done.steps.find((s) => s.agentId === 'coder-ai')!.continuedBy, 'user:alice');
  });

  it('fails the execution when the person denies the escalation', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'crash:planner-ai:9' } }, anyone);
    const approval = await waitFor(() => h.engine.acmf.pendingApprovals({ executionId: rec.id })[0]);
    await h.engine.acmf.decideApproval(approval.id, { approved: false, by: 'user:bob' });
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.agentId, 'planner-ai');
  });

  it('a parallel step that keeps crashing fails the execution with its reason and asks nobody (its siblings do not need its output)', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'SECURE', workflow: 'secure', input: { prompt: 'crash:security-ai:9' } }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.agentId, 'security-ai');
    assert.equal(done.steps.find((s) => s.agentId === 'threathunter-ai')!.status, 'completed');
    assert.equal(h.engine.acmf.listApprovals({ executionId: rec.id }).length, 0);
  });

  it('completes when the review retried after debug-ai passes', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.submitTask({ task: 'crash:review-ai:3', capabilities: ['BUILD'] }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    const reviews = done.steps.filter((s) => s.agentId === 'review-ai');
    assert.equal(reviews.length, 2);
    assert.equal(reviews[0]!.superseded, true);
    assert.equal(reviews[1]!.status, 'completed');
  });

  it('steps added by an escalation (renumbered after them) read back from the journal as memory held them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-added-steps-'));
    const store = await openStore({ file: storeFilePath(dir) });
    try {
      h = await createHarness({ skills: fleetSkills, yaml: ultra, store });
      const rec = await h.engine.executions.submitTask({ task: 'crash:review-ai:3', capabilities: ['BUILD'] }, anyone);
      const done = await settled(h.engine, rec.id);
      assert.ok(done.steps.some((s) => s.addedBecause), 'a step was added');
      assert.deepEqual(done.steps.map((s) => s.step), done.steps.map((_, i) => i), 'numbered in order');
      await h.close();
      const memory = JSON.stringify(store.collection('executions').get(rec.id));
      await store.close();
      const again = await openStore({ file: storeFilePath(dir) });
      assert.equal(JSON.stringify(again.collection('executions').get(rec.id)), memory, 'the journal (deltas of each update) replays to the same record');
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets debug-ai diagnose a failed review in BUILD and retries the review', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.submitTask({ task: 'weak:review-ai', capabilities: ['BUILD'] }, anyone);
    await waitFor(() => h.engine.acmf.pendingApprovals({ executionId: rec.id })[0]);
    const steps = h.engine.executions.get(rec.id).steps;
    const debug = steps.findIndex((s) => s.agentId === 'debug-ai');
    assert.ok(debug > 0, 'debug-ai was added');
    assert.equal(steps[debug - 1]!.agentId, 'review-ai');
    assert.equal(steps[debug + 1]!.agentId, 'review-ai');
    await h.engine.executions.cancel(rec.id, 'user:test');
  });

  it('fails fast when an agent has no skill for its action', async () => {
    h = await createHarness({ skills: fleetSkills.filter((s) => s.agentId !== 'threathunter-ai'), yaml: ultra });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'SECURE', workflow: 'secure', input: { prompt: 'scan' } }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'ERR_SKILL_UNAVAILABLE');
  });

  it('cancellation reaches the running skill and leaves nothing running', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'block:coder-ai' }, anyone);
    await waitFor(() => (h.engine.executions.get(rec.id).steps[0]!.status === 'running' ? true : undefined));
    const after = await h.engine.executions.cancel(rec.id, 'user:carol');
    assert.equal(after.status, 'cancelled');
    assert.equal(after.steps[0]!.status, 'cancelled');
    assert.equal(h.engine.executions.isRunning(rec.id), false);
    await assert.rejects(h.engine.executions.cancel(rec.id, 'user:carol'), (e: { code?: string }) => e.code === 'ERR_CONFLICT');
  });

  it('validates customer workflows: unknown agent, empty steps, cycles', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const run = (steps: unknown[]) => h.engine.executions.runCustomWorkflow({ name: 'x', pattern: 'sequential', steps: steps as never, input: { prompt: 'p' } }, anyone);
    await assert.rejects(run([]), (e: { code?: string; message: string }) => e.code === 'ERR_VALIDATION' && /at least one step/.test(e.message));
    await assert.rejects(run([{ agent: 'nobody-ai' }]), (e: { details?: { errors: Array<{ field: string }> } }) => e.details!.errors[0]!.field === 'steps[0].agent');
    await assert.rejects(run([{ id: 'a', agent: 'coder-ai', depends_on: ['b'] }, { id: 'b', agent: 'review-ai', depends_on: ['a'] }]), (e: { message: string }) => /cycle/.test(e.message));
  });

  it('runs a customer workflow in dependency order with its input mapping', async () => {
    h = await createHarness({ skills: fleetSkills, yaml: ultra });
    const { execution } = await h.engine.executions.runCustomWorkflow({
      name: 'review then test', pattern: 'sequential',
      steps: [{ id: 'test', agent: 'tester-ai', depends_on: ['review'], input: { findings: '$steps.review.output.agentId', goal: '$goal.prompt' } }, { id: 'review', agent: 'review-ai' }],
      input: { prompt: 'check the parser' },
    }, anyone);
    const done = await settled(h.engine, execution.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(done.steps.map((s) => s.agentId), ['review-ai', 'tester-ai']);
    assert.deepEqual((done.output?.result as { input: Record<string, unknown> }).input, { prompt: 'check the parser', findings: 'review-ai', goal: 'check the parser' });
  });

  it('sends the callback once, signed, retrying a failing receiver', async () => {
    const deliveries: Array<{ body: string; signature: string; status: number }> = [];
    let calls = 0;
    const notifier = { deliver: async (_url: string, body: string, headers: Record<string, string>) => {
      const status = ++calls === 1 ? 503 : 200;
      deliveries.push({ body, signature: headers['x-cadre-signature']!, status });
      return { status };
    } };
    h = await createHarness({ skills: fleetSkills, yaml: ultra, notifier });
    const secret = 'a'.repeat(64);
    const rec = await h.engine.executions.submitTask({ task: 'x', capabilities: ['SECURE'], callbackUrl: 'https://example.test/hook' }, { keyId: 'key_1', callbackSecret: secret });
    await settled(h.engine, rec.id);
    await waitFor(() => (deliveries.some((d) => d.status === 200) ? true : undefined));
    assert.equal(deliveries.length, 2);
    const d = deliveries[1]!;
    assert.equal(d.signature, `sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`);
    assert.equal((JSON.parse(d.body) as { data: { id: string } }).data.id, rec.id);
  });
});
