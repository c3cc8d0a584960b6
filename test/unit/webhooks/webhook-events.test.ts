import assert from 'node:assert/strict';
import { isWebhookEvent, WEBHOOK_EVENTS, WEBHOOK_EVENT_NAMES, WEBHOOK_TEST_EVENT } from '../../../server/src/engine/catalog/webhook-events';

/** The contract's table "Webhook event names" (agent-orchestration-service.md, Events), row by row. */
const CONTRACT_TABLE: Array<[string, string[]]> = [
  ['Code', ['code.generated', 'code.reviewed', 'code.merged']],
  ['Deployment', ['deployment.started', 'deployment.completed', 'deployment.failed', 'deployment.rollback']],
  ['Security', ['security.vulnerability_detected', 'security.vulnerability_fixed', 'security.compliance_check']],
  ['System', ['system.anomaly_detected', 'system.self_healing_triggered', 'system.performance_alert']],
  ['Prediction', ['prediction.created', 'prediction.updated', 'prediction.resolved']],
  ['Remediation', ['remediation.started', 'remediation.completed', 'remediation.failed']],
  ['Security (second surface)', ['security.vulnerability_found', 'security.vulnerability_fixed']],
  ['Performance', ['performance.anomaly_detected', 'performance.optimization_applied']],
];

describe('webhook event catalog', () => {
  it('holds exactly the union of the contract table (one subscription space, no duplicates)', () => {
    const expected = [...new Set(CONTRACT_TABLE.flatMap(([, names]) => names))].sort();
    assert.deepEqual([...WEBHOOK_EVENT_NAMES].sort(), expected);
    assert.equal(new Set(WEBHOOK_EVENT_NAMES).size, WEBHOOK_EVENT_NAMES.length);
  });

  it('puts each event in its contract group', () => {
    for (const [group, names] of CONTRACT_TABLE) {
      const g = group === 'Security (second surface)' ? 'Security' : group;
      for (const n of names) assert.equal(WEBHOOK_EVENTS.find((e) => e.name === n)?.group, g, n);
    }
  });

  it('marks security.vulnerability_fixed as listed by both catalogs and the second surface as projects', () => {
    assert.equal(WEBHOOK_EVENTS.find((e) => e.name === 'security.vulnerability_fixed')?.surface, 'both');
    for (const n of ['prediction.created', 'remediation.failed', 'security.vulnerability_found', 'performance.anomaly_detected']) {
      assert.equal(WEBHOOK_EVENTS.find((e) => e.name === n)?.surface, 'projects', n);
    }
  });

  it('says who emits every event', () => {
    for (const e of WEBHOOK_EVENTS) assert.ok(e.emittedBy.length > 10, e.name);
  });

  it('does not accept the test event or unknown names as subscribable', () => {
    assert.equal(isWebhookEvent(WEBHOOK_TEST_EVENT), false);
    assert.equal(isWebhookEvent('code.deleted'), false);
    assert.equal(isWebhookEvent('code.generated'), true);
  });
});
