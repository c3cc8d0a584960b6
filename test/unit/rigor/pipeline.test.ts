import { strict as assert } from 'node:assert';
import { PHASES } from '../../../protocol/events';
import { createHarness, testSkill, type Harness } from '../../support/engine-harness';
import { waitFor } from '../../support/wait';

describe('RIGOR pipeline', () => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('runs Research, Inspect, Generate, Optimize, Review in order with the contract events', async () => {
    const skill = testSkill();
    h = await createHarness({ skills: [skill] });
    const result = await h.engine.rigor.runStep(h.request());
    assert.equal(result.passed, true, JSON.stringify(result.gates.filter((g) => g.status === 'fail')));
    assert.deepEqual(skill.calls, ['research', 'propose', 'generate', 'optimize']);
    const phaseEvents = h.events.filter((e) => e.type === 'phase_started' || e.type === 'phase_completed');
    assert.deepEqual(phaseEvents.map((e) => `${e.type}:${e.phase}`), PHASES.flatMap((p) => [`phase_started:${p}`, `phase_completed:${p}`]));
    for (const e of h.events) {
      if (e.type === 'phase_started') assert.equal(e.agent_id, 'review-ai');
      if (e.type === 'phase_completed') assert.ok(Number.isInteger(e.duration_ms) && e.duration_ms >= 0);
      if (e.type === 'work_progress') {
        assert.ok(Number.isInteger(e.progress) && e.progress >= 0 && e.progress <= 100);
        assert.ok(e.confidence >= 0 && e.confidence <= 1);
      }
    }
    const generateProgress = h.events.filter((e) => e.type === 'work_progress' && e.phase === 'Generate').map((e) => (e.type === 'work_progress' ? e.progress : -1));
    assert.deepEqual(generateProgress, [50, 100]);
    // Sequence numbers have no gaps.
    assert.deepEqual(h.events.map((e) => e.seq), h.events.map((_, i) => i + 1));
    assert.deepEqual(result.phases.map((p) => p.status), ['Completed', 'Completed', 'Completed', 'Completed', 'Completed']);
  });

  it('evaluates all 21 gates and writes every result to a verifiable audit trail', async () => {
    h = await createHarness({ skills: [testSkill()] });
    const req = h.request();
    const result = await h.engine.rigor.runStep(req);
    assert.equal(result.gates.length, 21);
    assert.deepEqual(result.gates.map((g) => g.number), Array.from({ length: 21 }, (_, i) => i + 1));
    const records = await h.audit.query({ executionId: req.executionId, kind: 'phase.completed' });
    assert.deepEqual(records.map((r) => r.data['phase']), [...PHASES]);
    const review = records[4]!.data as { gates: Array<{ gate: string; status: string }> };
    assert.deepEqual(review.gates.map((g) => g.gate), result.gates.map((g) => g.gate));
    const gateEvents = h.events.filter((e) => e.type === 'gate_results');
    assert.equal(gateEvents.length, 1);
    assert.equal(gateEvents[0]!.type === 'gate_results' && gateEvents[0]!.gates.length, 21);
    const v = await h.audit.verify();
    assert.equal(v.ok, true);
  });

  it('fails the step when a gate fails, and regresses the agent one ACMF level', async () => {
    const skill = testSkill({ artifact: () => ({ confidence: 0.5 }) });
    h = await createHarness({ skills: [skill], yaml: 'agents:\n  review-ai:\n    acmf_mode: AUTONOMOUS\n' });
    const result = await h.engine.rigor.runStep(h.request({ scope: 'production' }));
    assert.equal(result.passed, false);
    assert.equal(result.error?.code, 'ERR_GATE_FAILED');
    const conf = result.gates.find((g) => g.gate === 'confidence')!;
    assert.equal(conf.status, 'fail');
    assert.equal(conf.threshold, 0.85);
    const state = await h.engine.acmf.state('review-ai');
    assert.equal(state.mode, 'ASSISTED');
    assert.match(state.history.at(-1)!.reason, /confidence/);
  });

  it('holds the next execution to stricter thresholds after a failed review', async () => {
    let confidence = 0.55;
    h = await createHarness({ skills: [testSkill({ artifact: () => ({ confidence }) })], yaml: 'agents:\n  review-ai:\n    acmf_mode: AUTONOMOUS\n' });
    const first = await h.engine.rigor.runStep(h.request({ scope: 'mvp' }));
    assert.equal(first.gates.find((g) => g.gate === 'confidence')!.threshold, 0.6);
    confidence = 0.62; // would pass the plain mvp threshold
    const second = await h.engine.rigor.runStep(h.request({ scope: 'mvp' }));
    const gate = second.gates.find((g) => g.gate === 'confidence')!;
    assert.ok(gate.threshold! > 0.6, `threshold ${gate.threshold}`);
    assert.equal(gate.status, 'fail');
  });

  it('fails a step whose skill throws without inventing output, leaving later phases Pending', async () => {
    h = await createHarness({ skills: [testSkill({ generate: async () => { throw new Error('disk on fire'); } })] });
    const before = (await h.engine.acmf.state('review-ai')).mode;
    const result = await h.engine.rigor.runStep(h.request());
    assert.equal(result.passed, false);
    assert.match(result.error!.message, /Generate: disk on fire/);
    assert.deepEqual(result.phases.map((p) => p.status), ['Completed', 'Completed', 'Failed', 'Pending', 'Pending']);
    assert.equal(result.gates.length, 0);
    assert.equal((await h.engine.acmf.state('review-ai')).mode, before);
  });

  it('reports a skill that cannot do the job as such', async () => {
    h = await createHarness({ skills: [testSkill({ artifact: () => ({ unable: 'no git repository in the workspace' }) })] });
    const result = await h.engine.rigor.runStep(h.request());
    assert.equal(result.passed, false);
    assert.equal(result.error?.code, 'ERR_SKILL_FAILED');
    assert.match(result.error!.message, /no git repository/);
  });

  it('waits in Inspect for a person to approve an action the mode does not allow, and records who', async () => {
    const actions = [{ kind: 'write_file', description: 'apply the fix', paths: ['src/a.ts'] }];
    const skill = testSkill({
      actions,
      artifact: (ctx) => ({
        actionsTaken: ctx.allowed('write_file') ? actions : [],
        changes: [{ path: 'src/a.json', kind: 'modify', content: '{"a":1}', linesAdded: 1, linesRemoved: 1 }],
        rollback: { kind: 'branch', ref: 'cadre/fix-1' },
      }),
    });
    h = await createHarness({ skills: [skill], yaml: 'agents:\n  review-ai:\n    acmf_mode: LEARNING\n' });
    const running = h.engine.rigor.runStep(h.request());
    const requested = await waitFor(() => h.events.find((e) => e.type === 'approval_requested'));
    assert.equal(requested.type, 'approval_requested');
    if (requested.type !== 'approval_requested') return;
    await h.engine.acmf.decideApproval(requested.approval_id, { approved: true, by: 'user:alice' });
    const result = await running;
    assert.equal(result.passed, true, JSON.stringify(result.gates.filter((g) => g.status === 'fail')));
    const rec = result.gates.find((g) => g.gate === 'approval-recorded')!;
    assert.equal(rec.status, 'pass');
    assert.match(rec.reason, /approved by user:alice/);
    const decided = await h.audit.query({ kind: 'approval.decided' });
    assert.equal(decided.length, 1);
    assert.equal(decided[0]!.actor, 'user:alice');
  });

  it('fails acmf-permission when a skill takes an action that was denied', async () => {
    const actions = [{ kind: 'write_file', description: 'apply the fix', paths: ['src/a.ts'] }];
    h = await createHarness({ skills: [testSkill({ actions, artifact: () => ({ actionsTaken: actions, rollback: { kind: 'branch', ref: 'b' } }) })], yaml: 'agents:\n  review-ai:\n    acmf_mode: LEARNING\n' });
    const running = h.engine.rigor.runStep(h.request());
    const requested = await waitFor(() => h.events.find((e) => e.type === 'approval_requested'));
    if (requested.type !== 'approval_requested') return;
    await h.engine.acmf.decideApproval(requested.approval_id, { approved: false, by: 'user:bob' });
    const result = await running;
    assert.equal(result.passed, false);
    assert.equal(result.gates.find((g) => g.gate === 'acmf-permission')!.status, 'fail');
  });

  it('is cancelled through the AbortSignal while waiting for an approval', async () => {
    h = await createHarness({ skills: [testSkill({ actions: [{ kind: 'write_file', description: 'x', paths: ['a'] }] })], yaml: 'agents:\n  review-ai:\n    acmf_mode: LEARNING\n' });
    const ctrl = new AbortController();
    const running = h.engine.rigor.runStep(h.request({ signal: ctrl.signal }));
    await waitFor(() => h.events.find((e) => e.type === 'approval_requested'));
    ctrl.abort();
    await assert.rejects(running, (err: { code?: string }) => err.code === 'ERR_CANCELLED');
  });

  it('catches a secret in the artifact', async () => {
    h = await createHarness({ skills: [testSkill({ artifact: () => ({ text: 'use key AKIAIOSFODNN7EXAMPLQ now' }) })] });
    const result = await h.engine.rigor.runStep(h.request());
    const g = result.gates.find((x) => x.gate === 'secrets-clean')!;
    assert.equal(g.status, 'fail');
    assert.match(g.reason, /aws-access-key-id/);
  });

  it('publishes learned patterns and keeps running when a bus subscriber throws', async () => {
    h = await createHarness({ skills: [testSkill({ patterns: ['prefer early returns'] })] });
    h.engine.bus.subscribe('engine.event', () => {
      throw new Error('bad subscriber');
    });
    const seen: string[] = [];
    h.engine.bus.subscribe('learning.pattern.detected', (p) => void seen.push(p.pattern));
    const result = await h.engine.rigor.runStep(h.request());
    assert.equal(result.passed, true);
    assert.deepEqual(seen, ['prefer early returns']);
  });

  it('refuses an agent action without a skill', async () => {
    h = await createHarness();
    await assert.rejects(h.engine.rigor.runStep(h.request({ action: 'nope' })), (err: { code?: string }) => err.code === 'ERR_SKILL_UNAVAILABLE');
  });

  it("a request's acmfMode caps the agent's mode for that step, never raises it", async () => {
    const actions = [{ kind: 'write_file', description: 'apply the fix', paths: ['src/a.ts'] }];
    h = await createHarness({ skills: [testSkill({ actions })], yaml: 'agents:\n  review-ai:\n    acmf_mode: AUTONOMOUS\n' });
    const capped = h.engine.rigor.runStep(h.request({ acmfModeCap: 'LEARNING' }));
    const requested = await waitFor(() => h.events.find((e) => e.type === 'approval_requested'));
    if (requested.type !== 'approval_requested') return;
    await h.engine.acmf.decideApproval(requested.approval_id, { approved: false, by: 'user:cap' });
    await capped;
    const before = h.events.length;
    await h.engine.rigor.runStep(h.request({ acmfModeCap: 'AUTONOMOUS' }));
    assert.equal(h.events.slice(before).some((e) => e.type === 'approval_requested'), false, 'AUTONOMOUS needs no approval');
    assert.equal((await h.engine.acmf.state('review-ai')).mode, 'AUTONOMOUS', 'the cap changed nothing persistent');
  });
});
