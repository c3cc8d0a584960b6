/**
 * adapt-ai: `feedback` records a rating engine-side once per execution, for the caller's tenant only
 * (an execution, a step, a finding by fingerprint); `evaluate` reports ACMF state, calibration and
 * false positives and proposes changes (not applied).
 */
import { strict as assert } from 'node:assert';
import { FEEDBACK_COLLECTION, findFinding, recordFeedback, type FeedbackRecord } from '../../../server/src/engine/governance/feedback';
import type { EvaluateFacts } from '../../../server/src/engine/governance/evaluate-facts';
import { calibration, evaluate, stepVerdicts, type EvaluateData, type FeedbackData } from '../../../server/src/skills/adapt/index';
import { as, govEngine, newTenant, type GovEngine } from './engine';

const fb = (over: Partial<FeedbackRecord>): FeedbackRecord => ({
  id: `fb_${Math.random()}`, tenantId: 'tnt_default', executionId: 'act_1', step: 0, agentId: 'security-ai', agents: ['security-ai'], finding: null,
  rating: { scale: 'thumbs', value: 'up' }, good: true, reason: null, by: 'key:k', via: 'act_x', at: '2026-11-01T00:00:00Z', confidence: null, outcome: null, ...over,
});

describe('adapt-ai feedback and evaluate', function () {
  this.timeout(30_000);
  let g: GovEngine | undefined;
  afterEach(async () => g?.close());

  it('findFinding finds a finding by fingerprint or id anywhere in a step output', () => {
    const out = { findings: [{ ruleId: 'secret/aws', file: 'a.ts', severity: 'high', fingerprint: 'fp1' }], nested: { issues: [{ id: 'F-2', ruleId: 'code/eval', path: 'b.ts' }] } };
    assert.deepEqual(findFinding(out, 'fp1'), { fingerprint: 'fp1', id: null, ruleId: 'secret/aws', file: 'a.ts', severity: 'high' });
    assert.equal(findFinding(out, 'F-2')?.file, 'b.ts');
    assert.equal(findFinding(out, 'nope'), null);
  });

  it('records a rating of a step as the owner key, once per adapt-ai execution; the rated step\'s agent is kept', async () => {
    g = await govEngine();
    const target = await g.run('review-ai', 'review', {}, as('key_a'));
    const done = await g.run('adapt-ai', 'feedback', { executionId: target.id, step: 0, rating: 2, reason: 'missed the SQL injection' }, as('key_a'));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as FeedbackData;
    assert.deepEqual([d.recorded.executionId, d.recorded.step, d.recorded.agentId, d.recorded.good, d.recorded.by, d.recorded.replayed], [target.id, 0, 'review-ai', false, 'key:key_a', false]);
    assert.deepEqual(d.recorded.rating, { scale: 'stars', value: 2 });
    const stored = g.store.collection<FeedbackRecord>(FEEDBACK_COLLECTION).list();
    assert.equal(stored.length, 1);
    assert.deepEqual([stored[0]!.id, stored[0]!.tenantId, stored[0]!.via], [`fb_${done.id}`, 'tnt_default', done.id]);
    const audited = await g.audit.query({ kind: 'feedback.recorded' });
    assert.equal(audited.length, 1);
    assert.equal(audited[0]!.actor, 'key:key_a');
    // The step run again (a resume after a crash): the record is found, not written twice.
    const deps = { store: g.store, audit: g.audit, now: () => new Date().toISOString(), executionFor: (_t: string, id: string) => g!.engine.executions.find(id) };
    const again = await recordFeedback(deps, { executionId: done.id, tenantId: 'tnt_default', ownerKeyId: 'key_a', input: { executionId: target.id, rating: 'up' } });
    assert.equal((again.recorded as { replayed: boolean; good: boolean }).replayed, true);
    assert.equal((again.recorded as { good: boolean }).good, false, 'the first rating stands');
    assert.equal(g.store.collection(FEEDBACK_COLLECTION).count(), 1);
    assert.equal((await g.audit.query({ kind: 'feedback.recorded' })).length, 1);
  });

  it('rating another tenant\'s execution answers like a missing one; bad rating, step or reason need input', async () => {
    g = await govEngine();
    const b = await newTenant(g.engine, 'b');
    const theirs = await g.run('review-ai', 'review', {}, as('key_b', b));
    const mine = await g.run('review-ai', 'review', {}, as('key_a'));
    const other = await g.run('adapt-ai', 'feedback', { executionId: theirs.id, rating: 'down' }, as('key_a'));
    const missing = await g.run('adapt-ai', 'feedback', { executionId: 'act_nope', rating: 'down' }, as('key_a'));
    assert.equal(String(other.steps[0]!.reason).replace(theirs.id, 'X'), String(missing.steps[0]!.reason).replace('act_nope', 'X'));
    // The input schema refuses a rating out of range at submission, before any execution exists.
    await assert.rejects(g.engine.executions.runAction('adapt-ai', 'feedback', { input: { executionId: mine.id, rating: 7 } }, as('key_a')), /input\.rating/);
    for (const [input, field] of [[{ executionId: mine.id, rating: 'up', step: 9 }, 'step'], [{ executionId: mine.id, rating: 'up', finding: 'fp-x' }, 'finding']] as const) {
      const r = await g.run('adapt-ai', 'feedback', input, as('key_a'));
      assert.equal(r.status, 'failed', field);
      assert.ok(r.steps[0]!.outcome === 'needs_input', `${field}: ${r.steps[0]!.outcome} ${r.steps[0]!.reason}`);
      assert.match(String(r.steps[0]!.reason), new RegExp(field));
    }
    assert.equal(g.store.collection(FEEDBACK_COLLECTION).count(), 0);
  });

  it('stepVerdicts: a person\'s rating wins over the Review; calibration buckets confidence against the good share', () => {
    const steps = [0.9, 0.9, 0.85, 0.95, 0.9, 0.3].map((c, i) => ({ executionId: `act_${i}`, step: 0, agentId: 'security-ai', action: 'scan', confidence: c, passed: true, outcome: 'completed', completedAt: null, failedGates: [] }));
    const feedback = [0, 1, 2, 3].map((i) => fb({ executionId: `act_${i}`, good: false, rating: { scale: 'thumbs', value: 'down' } }));
    const v = stepVerdicts(steps, feedback);
    assert.deepEqual(v.map((x) => [x.good, x.rated]), [[false, true], [false, true], [false, true], [false, true], [true, false], [true, false]]);
    const c = calibration(v);
    const top = c.buckets.find((b) => b.from === 0.8)!;
    assert.deepEqual([top.steps, top.goodShare, top.rated], [5, 0.2, 4]);
    assert.equal(c.buckets.find((b) => b.from === 0.2)!.goodShare, 1);
    assert.ok(c.meanAbsoluteGap! > 0.5);
  });

  it('evaluate proposes a stricter confidence for an overconfident agent, a lower mode after bad ratings, and suppressions of down-rated findings; nothing applied', () => {
    const steps = [0.9, 0.9, 0.85, 0.95, 0.9].map((c, i) => ({ executionId: `act_${i}`, step: 0, agentId: 'security-ai', action: 'scan', confidence: c, passed: true, outcome: 'completed', completedAt: null, failedGates: [] }));
    const finding = { fingerprint: 'fp-aws', id: null, ruleId: 'secret/aws-key', file: 'test/fixtures/keys.ts', severity: 'high' };
    const feedback = [
      ...[0, 1, 2, 3].map((i) => fb({ executionId: `act_${i}`, good: false, rating: { scale: 'thumbs', value: 'down' }, reason: 'noise' })),
      fb({ finding, good: false, rating: { scale: 'thumbs', value: 'down' }, reason: 'a test fixture, not a key' }),
      fb({ finding, good: false, rating: { scale: 'stars', value: 1 } }),
      fb({ finding: { ...finding, fingerprint: 'fp-real' }, good: true }),
    ];
    const facts: EvaluateFacts = {
      action: 'evaluate', tenantId: 'tnt_default', asOf: '2026-11-24T00:00:00Z', scope: 'mvp', executionsLooked: 5, steps, feedback, adaptations: [],
      agents: [{ agentId: 'security-ai', mode: 'ASSISTED', tasks: 10, successes: 8, consecutiveSuccess: 1, recentFailures: 2, quality: 0.7, recentOutcomes: [true, false, false], pendingPromotion: null, modeChanges: [],
        thresholds: [{ gate: 'confidence', comparison: 'min', base: 0.6, effective: 0.68 }, { gate: 'complexity', comparison: 'max', base: 20, effective: 20 }] }],
    };
    const d: EvaluateData = evaluate(facts);
    const sec = d.agents.find((a) => a.agentId === 'security-ai')!;
    assert.deepEqual(sec.stricterGates, [{ gate: 'confidence', base: 0.6, effective: 0.68 }]);
    assert.deepEqual([sec.feedback.up, sec.feedback.down], [0, 4]);
    assert.deepEqual(d.proposals.map((p) => p.id), ['tune:security-ai:confidence', 'tune:security-ai:mode', 'suppress:fp-aws']);
    assert.match(d.proposals[0]!.change, /from 0\.68 to /);
    assert.match(d.proposals[1]!.change, /from ASSISTED to LEARNING/);
    assert.match(d.proposals[2]!.change, /cadre-ignore secret\/aws-key: a test fixture, not a key/);
    assert.deepEqual(d.falsePositives.map((x) => [x.key, x.down, x.up]), [['fp-aws', 2, 0]]);
    assert.equal(d.applied, false);
    assert.ok(d.proposals.every((p) => p.status === 'proposed'));
  });

  it('evaluate through the engine: ACMF state of the agents that ran and the tenant\'s ratings', async () => {
    g = await govEngine();
    const target = await g.run('review-ai', 'review', {}, as('key_a'));
    await g.run('adapt-ai', 'feedback', { executionId: target.id, step: 0, rating: 'up' }, as('key_a'));
    const done = await g.run('adapt-ai', 'evaluate', {}, as('key_a'));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as EvaluateData;
    const review = d.agents.find((a) => a.agentId === 'review-ai')!;
    assert.equal(review.mode, 'AUTONOMOUS');
    assert.ok(review.tasks >= 1);
    assert.deepEqual([review.feedback.up, review.feedback.total], [1, 1]);
    assert.match(d.note, /^proposals only/);
  });
});
