import assert from 'node:assert/strict';
import { qualityScore } from '../../../server/src/engine/acmf/acmf-service';
import type { AgentAcmfState } from '../../../server/src/engine/acmf/records';
import { qualityTopic, type QualityScore } from '../../../server/src/engine/bus';
import { isEngineError } from '../../../server/src/engine/errors';
import { createHarness, DEFAULT_SETTINGS } from './harness';

const pass = (executionId = 'task_1') => ({ executionId, reviewPassed: true, failedGates: [] as string[] });
const fail = (executionId = 'task_1', failedGates = ['tests-pass', 'coverage']) => ({ executionId, reviewPassed: false, failedGates });

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => isEngineError(err) && err.code === code);
}

/** Seeds a persisted state (e.g. an agent with history). */
async function seed(h: ReturnType<typeof createHarness>, state: Partial<AgentAcmfState> & { id: string }): Promise<void> {
  await h.agents.put({
    mode: 'LEARNING',
    tasks: 0,
    successes: 0,
    consecutiveSuccess: 0,
    recentFailures: 0,
    qualityHistory: [],
    history: [],
    configuredMode: 'LEARNING',
    recentOutcomes: [],
    ...state,
  });
}

describe('acmf service: state, outcomes, quality', () => {
  describe('state', () => {
    it('is created lazily from settings with the initial ModeChange by config, audited once', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED' });
      assert.equal(h.agents.get('coder-ai'), undefined);
      const s = await h.service.state('coder-ai');
      assert.equal(s.mode, 'ASSISTED');
      assert.deepEqual([s.tasks, s.successes, s.consecutiveSuccess, s.recentFailures], [0, 0, 0, 0]);
      assert.equal(s.history.length, 1);
      assert.deepEqual({ ...s.history[0]!, at: undefined }, { at: undefined, from: 'ASSISTED', to: 'ASSISTED', by: 'config', reason: 'initial mode from configuration (acmf_mode ASSISTED)' });
      assert.deepEqual(h.agents.get('coder-ai'), s, 'persisted');
      await h.service.state('coder-ai');
      const audits = await h.audit.query({ kind: 'acmf.mode_changed' });
      assert.equal(audits.length, 1);
      assert.equal(audits[0]!.data.initial, true);
      assert.equal(audits[0]!.agentId, 'coder-ai');
    });

    it('the persisted mode wins over an unchanged config; a changed acmf_mode is applied once', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED' });
      await h.service.recordOutcome('coder-ai', fail());
      assert.equal((await h.service.state('coder-ai')).mode, 'LEARNING');
      h.settings.set('coder-ai', { ...DEFAULT_SETTINGS, acmfMode: 'AUTONOMOUS' });
      const s = await h.service.state('coder-ai');
      assert.equal(s.mode, 'AUTONOMOUS');
      assert.equal(s.history.at(-1)!.by, 'config');
      assert.match(s.history.at(-1)!.reason, /changed in configuration from ASSISTED to AUTONOMOUS/);
      await h.service.recordOutcome('coder-ai', fail());
      assert.equal((await h.service.state('coder-ai')).mode, 'ASSISTED');
    });

    it('rejects an invalid configured mode with ERR_CONFIG_INVALID', async () => {
      const h = createHarness({ acmfMode: 'SHADOW' as never });
      await rejectsWith(h.service.state('x'), 'ERR_CONFIG_INVALID');
    });
  });

  describe('evaluate', () => {
    it('rates each action and applies the mode table', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED' });
      const out = await h.service.evaluate('coder-ai', [
        { kind: 'read_file', description: 'r', paths: ['src/a.ts'] },
        { kind: 'write_file', description: 'w', paths: ['src/a.ts'] },
        { kind: 'write_file', description: 'ci', paths: ['.github/workflows/ci.yml'] },
        { kind: 'deploy', description: 'prod', production: true },
      ], 'mvp');
      assert.deepEqual(out.map((e) => [e.risk, e.decision]), [
        ['none', 'allow'],
        ['low', 'allow'],
        ['high', 'allow'],
        ['critical', 'approval_required'],
      ]);
      assert.ok(out[3]!.reasons.some((r) => r.startsWith('approval_required_for: production_changes')));
    });

    it('OBSERVE allows reads only', async () => {
      const h = createHarness({ acmfMode: 'OBSERVE' });
      const out = await h.service.evaluate('observe-ai', [
        { kind: 'read', description: 'r' },
        { kind: 'write_file', description: 'w', paths: ['a'] },
      ]);
      assert.deepEqual(out.map((e) => e.decision), ['allow', 'observe_only']);
    });
  });

  describe('regression', () => {
    it('regresses one level per failed review down to OBSERVE, naming the failed gates', async () => {
      const h = createHarness({ acmfMode: 'AUTONOMOUS' });
      const modes: string[] = [];
      for (let i = 1; i <= 4; i++) {
        const r = await h.service.recordOutcome('coder-ai', fail(`task_${i}`, ['secrets-clean']));
        modes.push(r.state.mode);
        assert.equal(r.state.recentFailures, i);
        assert.equal(h.service.strictness('coder-ai'), i);
        if (i <= 3) {
          assert.ok(r.modeChange);
          assert.equal(r.modeChange.by, 'engine');
          assert.match(r.modeChange.reason, /failed gates: secrets-clean/);
          assert.match(r.modeChange.reason, new RegExp(`task_${i}`));
        } else {
          assert.equal(r.modeChange, null, 'OBSERVE stays OBSERVE');
        }
      }
      assert.deepEqual(modes, ['ASSISTED', 'LEARNING', 'OBSERVE', 'OBSERVE']);
      const s = await h.service.state('coder-ai');
      assert.deepEqual(s.history.map((c) => `${c.from}->${c.to}`), ['AUTONOMOUS->AUTONOMOUS', 'AUTONOMOUS->ASSISTED', 'ASSISTED->LEARNING', 'LEARNING->OBSERVE']);
      const audits = await h.audit.query({ kind: 'acmf.mode_changed', agentId: 'coder-ai' });
      assert.equal(audits.length, 4);
      assert.deepEqual(audits.slice(1).map((a) => [a.actor, a.executionId, a.data.from, a.data.to]), [
        ['engine', 'task_1', 'AUTONOMOUS', 'ASSISTED'],
        ['engine', 'task_2', 'ASSISTED', 'LEARNING'],
        ['engine', 'task_3', 'LEARNING', 'OBSERVE'],
      ]);
    });

    it('a passed review resets recentFailures (strictness) to 0', async () => {
      const h = createHarness({ acmfMode: 'AUTONOMOUS' });
      await h.service.recordOutcome('a', fail());
      await h.service.recordOutcome('a', fail());
      assert.equal(h.service.strictness('a'), 2);
      const r = await h.service.recordOutcome('a', pass());
      assert.equal(r.state.recentFailures, 0);
      assert.equal(h.service.strictness('a'), 0);
      assert.equal(h.service.strictness('unknown-agent'), 0);
    });
  });

  describe('progression LEARNING -> ASSISTED', () => {
    it('happens exactly when min_tasks is reached (the binding threshold), not one task earlier', async () => {
      const h = createHarness({ toAssisted: { successRate: 0.5, minTasks: 5, consecutiveSuccess: 1 } });
      for (let i = 1; i <= 4; i++) {
        const r = await h.service.recordOutcome('coder-ai', pass(`task_${i}`));
        assert.equal(r.state.mode, 'LEARNING', `after ${i}`);
        assert.equal(r.modeChange, null);
      }
      const r = await h.service.recordOutcome('coder-ai', pass('task_5'));
      assert.equal(r.state.mode, 'ASSISTED');
      assert.ok(r.modeChange);
      assert.equal(r.modeChange.by, 'engine');
      assert.equal(
        r.modeChange.reason,
        'progression.to_assisted met after task_5: success rate 1.00 (5/5) >= 0.5, tasks 5 >= 5, consecutive successes 5 >= 1',
      );
      const audit = (await h.audit.query({ kind: 'acmf.mode_changed' })).at(-1)!;
      assert.deepEqual([audit.data.from, audit.data.to, audit.executionId], ['LEARNING', 'ASSISTED', 'task_5']);
    });

    it('happens exactly when consecutive_success is reached', async () => {
      const h = createHarness({ toAssisted: { successRate: 0.8, minTasks: 5, consecutiveSuccess: 3 } });
      await seed(h, { id: 'coder-ai', tasks: 10, successes: 9, consecutiveSuccess: 0 });
      assert.equal((await h.service.recordOutcome('coder-ai', pass())).state.mode, 'LEARNING');
      assert.equal((await h.service.recordOutcome('coder-ai', pass())).state.mode, 'LEARNING');
      const r = await h.service.recordOutcome('coder-ai', pass());
      assert.equal(r.state.mode, 'ASSISTED');
      assert.match(r.modeChange!.reason, /success rate 0\.92 \(12\/13\) >= 0\.8, tasks 13 >= 5, consecutive successes 3 >= 3/);
    });

    it('happens exactly when success_rate is reached', async () => {
      const h = createHarness({ toAssisted: { successRate: 0.7, minTasks: 5, consecutiveSuccess: 1 } });
      await seed(h, { id: 'coder-ai', tasks: 10, successes: 6, consecutiveSuccess: 0 });
      for (let i = 1; i <= 3; i++) assert.equal((await h.service.recordOutcome('coder-ai', pass())).state.mode, 'LEARNING', `after ${i}`);
      const r = await h.service.recordOutcome('coder-ai', pass());
      assert.equal(r.state.mode, 'ASSISTED');
      assert.match(r.modeChange!.reason, /success rate 0\.71 \(10\/14\) >= 0\.7/);
    });

    it('never leaves OBSERVE automatically', async () => {
      const h = createHarness({ acmfMode: 'OBSERVE', toAssisted: { successRate: 0, minTasks: 1, consecutiveSuccess: 1 } });
      for (let i = 0; i < 5; i++) assert.equal((await h.service.recordOutcome('a', pass())).state.mode, 'OBSERVE');
    });
  });

  describe('promotion ASSISTED -> AUTONOMOUS', () => {
    const toAutonomous = { successRate: 0.9, minTasks: 3, consecutiveSuccess: 3 };

    it('is only proposed, and applied only on confirmPromotion by a person', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED', toAutonomous });
      await h.service.recordOutcome('coder-ai', pass('t1'));
      await h.service.recordOutcome('coder-ai', pass('t2'));
      assert.equal((await h.service.state('coder-ai')).pendingPromotion, undefined);
      const r = await h.service.recordOutcome('coder-ai', pass('t3'));
      assert.equal(r.promotionProposed, true);
      assert.equal(r.state.mode, 'ASSISTED');
      assert.equal(r.modeChange, null);
      assert.deepEqual(r.state.pendingPromotion?.to, 'AUTONOMOUS');
      assert.match(r.state.pendingPromotion!.reason, /tasks 3 >= 3/);
      assert.equal((await h.audit.query({ kind: 'acmf.promotion_proposed' })).length, 1);

      const again = await h.service.recordOutcome('coder-ai', pass('t4'));
      assert.equal(again.promotionProposed, false, 'not proposed twice');
      assert.equal(again.state.mode, 'ASSISTED', 'never applied silently');

      await rejectsWith(h.service.confirmPromotion('coder-ai', ''), 'ERR_VALIDATION');
      const s = await h.service.confirmPromotion('coder-ai', 'user:alice');
      assert.equal(s.mode, 'AUTONOMOUS');
      assert.equal(s.pendingPromotion, undefined);
      assert.equal(s.history.at(-1)!.by, 'user:alice');
      const audit = (await h.audit.query({ kind: 'acmf.mode_changed' })).at(-1)!;
      assert.equal(audit.actor, 'user:alice');
      assert.equal(audit.ts, new Date(h.clock.now()).toISOString());
      await rejectsWith(h.service.confirmPromotion('coder-ai', 'user:alice'), 'ERR_CONFLICT');
    });

    it('is not proposed when to_autonomous is not configured', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED', toAutonomous: null });
      for (let i = 0; i < 10; i++) assert.equal((await h.service.recordOutcome('a', pass())).promotionProposed, false);
      assert.equal((await h.service.state('a')).pendingPromotion, undefined);
      await rejectsWith(h.service.confirmPromotion('a', 'user:alice'), 'ERR_CONFLICT');
    });

    it('a failed review withdraws the proposal; a decline drops it', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED', toAutonomous: { successRate: 0, minTasks: 1, consecutiveSuccess: 1 } });
      assert.equal((await h.service.recordOutcome('a', pass())).promotionProposed, true);
      const failed = await h.service.recordOutcome('a', fail());
      assert.equal(failed.state.pendingPromotion, undefined);
      assert.equal(failed.state.mode, 'LEARNING');

      const h2 = createHarness({ acmfMode: 'ASSISTED', toAutonomous: { successRate: 0, minTasks: 1, consecutiveSuccess: 1 } });
      await h2.service.recordOutcome('a', pass());
      const declined = await h2.service.declinePromotion('a', 'user:bob', 'not yet');
      assert.equal(declined.pendingPromotion, undefined);
      assert.equal(declined.mode, 'ASSISTED');
      const audit = (await h2.audit.query({ kind: 'acmf.promotion_declined' }))[0]!;
      assert.equal(audit.actor, 'user:bob');
    });
  });

  describe('setMode', () => {
    it('is a person\'s audited change; the same mode is a no-op', async () => {
      const h = createHarness();
      const s = await h.service.setMode('a', 'OBSERVE', 'user:carol', 'investigating an incident');
      assert.equal(s.mode, 'OBSERVE');
      assert.deepEqual({ ...s.history.at(-1)!, at: '' }, { at: '', from: 'LEARNING', to: 'OBSERVE', by: 'user:carol', reason: 'investigating an incident' });
      const audit = (await h.audit.query({ kind: 'acmf.mode_changed' })).at(-1)!;
      assert.deepEqual([audit.actor, audit.data.by, audit.data.reason], ['user:carol', 'user:carol', 'investigating an incident']);
      const n = h.audit.records.length;
      await h.service.setMode('a', 'OBSERVE', 'user:carol', 'again');
      assert.equal(h.audit.records.length, n);
      await rejectsWith(h.service.setMode('a', 'LEARNING', ' ', 'x'), 'ERR_VALIDATION');
      await rejectsWith(h.service.setMode('a', 'SHADOW' as never, 'user:carol', 'x'), 'ERR_VALIDATION');
    });
  });

  describe('quality score', () => {
    it('is published on agent.{id}.quality.score with the QualityScore payload', async () => {
      const h = createHarness({ acmfMode: 'ASSISTED' });
      const mine: QualityScore[] = [];
      const other: QualityScore[] = [];
      const wildcard: string[] = [];
      h.bus.subscribe(qualityTopic('coder-ai'), (p) => void mine.push(p));
      h.bus.subscribe(qualityTopic('tester-ai'), (p) => void other.push(p));
      h.bus.subscribe('agent.*.quality.score', (_p, topic) => void wildcard.push(topic));
      await h.service.recordOutcome('coder-ai', pass());
      await h.service.recordOutcome('coder-ai', fail());
      assert.equal(other.length, 0);
      assert.deepEqual(wildcard, ['agent.coder-ai.quality.score', 'agent.coder-ai.quality.score']);
      assert.deepEqual(mine[0], { agentId: 'coder-ai', score: 1, successRate: 1, tasks: 1, consecutiveSuccess: 1, lastReviewPassed: true });
      // lifetime 1/2, recent window [true,false] 1/2 -> 0.5
      assert.deepEqual(mine[1], { agentId: 'coder-ai', score: 0.5, successRate: 0.5, tasks: 2, consecutiveSuccess: 0, lastReviewPassed: false });
      const s = await h.service.state('coder-ai');
      assert.deepEqual(s.qualityHistory.map((q) => q.score), [1, 0.5]);
    });

    it('weights lifetime success rate and the recent trend equally', () => {
      assert.equal(qualityScore({ tasks: 0, successes: 0, recentOutcomes: [] }), 0);
      // 20 tasks, 15 successes (0.75); last 10: 5 passed (0.5) -> 0.625
      assert.equal(qualityScore({ tasks: 20, successes: 15, recentOutcomes: [true, false, true, false, true, false, true, false, true, false] }), 0.625);
    });

    it('caps qualityHistory at 100 entries', async () => {
      const h = createHarness({ acmfMode: 'AUTONOMOUS' });
      for (let i = 0; i < 105; i++) await h.service.recordOutcome('a', pass(`t${i}`));
      const s = await h.service.state('a');
      assert.equal(s.qualityHistory.length, 100);
      assert.equal(s.tasks, 105);
      assert.equal(s.recentOutcomes?.length, 10);
    });

    it('a subscriber that throws (or rejects) does not break recordOutcome', async () => {
      const h = createHarness();
      h.bus.subscribe(qualityTopic('a'), () => {
        throw new Error('boom');
      });
      h.bus.subscribe(qualityTopic('a'), async () => {
        throw new Error('async boom');
      });
      const seen: number[] = [];
      h.bus.subscribe(qualityTopic('a'), (p) => void seen.push(p.score));
      const r = await h.service.recordOutcome('a', pass());
      assert.equal(r.state.tasks, 1);
      assert.deepEqual(seen, [1], 'later subscribers still get it');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(h.busErrors.map((e) => (e as Error).message).sort(), ['async boom', 'boom']);
    });
  });

  it('serialises concurrent outcomes of one agent (no lost update)', async () => {
    const h = createHarness({ acmfMode: 'AUTONOMOUS' });
    await Promise.all(Array.from({ length: 20 }, (_, i) => h.service.recordOutcome('a', pass(`t${i}`))));
    const s = await h.service.state('a');
    assert.equal(s.tasks, 20);
    assert.equal(s.successes, 20);
    assert.equal(s.consecutiveSuccess, 20);
  });
});
