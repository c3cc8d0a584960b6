import { strict as assert } from 'node:assert';
import { agentDescription, formatMs, overallPercent, progressLabel, readinessSummary, stepPresentation } from '../../../client/src/labels';
import type { ReadinessCheck } from '../../../protocol/lsp';

describe('editor labels', () => {
  it('inline progress reads agent · phase percent · confidence', () => {
    assert.equal(progressLabel({ agent: 'review-ai', phase: 'Inspect', progress: 40.4, confidence: 0.7249 }), 'review-ai · Inspect 40% · 0.72');
    assert.equal(progressLabel({ agent: 'coder-ai', phase: 'Research', progress: 0, confidence: null }), 'coder-ai · Research 0%');
  });

  it('overall progress gives each RIGOR phase a fifth and stays in 0–100', () => {
    assert.equal(overallPercent('Research', 0), 0);
    assert.equal(overallPercent('Inspect', 50), 30);
    assert.equal(overallPercent('Review', 100), 100);
    assert.equal(overallPercent('Review', 250), 100);
    assert.equal(overallPercent('Generate', -5), 40);
  });

  it('readiness summary: "Ready to deploy" only when every check passes', () => {
    const check = (status: ReadinessCheck['status']): ReadinessCheck => ({ id: 'tests', title: 't', status, evidence: '' });
    assert.equal(readinessSummary({ ready: true, checks: [check('pass'), check('pass')] }), 'Ready to deploy');
    assert.equal(readinessSummary({ ready: false, checks: [check('pass'), check('fail')] }), '1 readiness check failing');
    assert.equal(readinessSummary({ ready: false, checks: [check('unknown'), check('fail')] }), '2 readiness checks failing');
  });

  it('agent rows show role, warm state, mode, tier and load', () => {
    const row = { id: 'dba-ai', name: 'DBA', role: 'query tuning', warm: 'cold', acmfMode: 'LEARNING', tier: 'PRO', load: { running: 1, queued: 2, capacity: 4 }, actions: [] } as const;
    assert.equal(agentDescription({ ...row, actions: [] }), 'query tuning · cold · LEARNING · PRO · 1/4 +2 queued');
    assert.equal(agentDescription({ ...row, tier: null, load: { running: 0, queued: 0, capacity: 4 }, actions: [] }), 'query tuning · cold · LEARNING · 0/4');
  });

  it('durations', () => {
    assert.equal(formatMs(null), '');
    assert.equal(formatMs(840), '840 ms');
    assert.equal(formatMs(12_345), '12.3 s');
  });
});

describe('editor labels: a step by its outcome', () => {
  it('shows a not-applicable step as skipped with its reason, not as failed', () => {
    const s = stepPresentation({ status: 'skipped', outcome: 'not_applicable', reason: 'not applicable: no log files to hunt in' });
    assert.deepEqual(s, { icon: 'skipped', label: 'skipped (not applicable)', reason: 'not applicable: no log files to hunt in' });
  });

  it('keeps the reason of needs input, failed and error, and none for completed', () => {
    assert.deepEqual(stepPresentation({ status: 'failed', outcome: 'needs_input', reason: 'no trace given' }), { icon: 'needs_input', label: 'needs input', reason: 'no trace given' });
    assert.deepEqual(stepPresentation({ status: 'failed', outcome: 'failed', reason: 'Review failed 1 gate(s): confidence' }), { icon: 'failed', label: 'failed', reason: 'Review failed 1 gate(s): confidence' });
    assert.deepEqual(stepPresentation({ status: 'failed', outcome: 'error', reason: 'timed out' }), { icon: 'error', label: 'error', reason: 'timed out' });
    assert.deepEqual(stepPresentation({ status: 'completed', outcome: 'completed', reason: null }), { icon: 'completed', label: 'completed', reason: null });
  });

  it('falls back to the status while the step runs or when the server sends no outcome', () => {
    assert.deepEqual(stepPresentation({ status: 'waiting_approval', outcome: null, reason: null }), { icon: 'waiting_approval', label: 'waiting approval', reason: null });
    assert.deepEqual(stepPresentation({ status: 'running' }), { icon: 'running', label: 'running', reason: null });
  });
});
