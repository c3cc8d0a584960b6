/**
 * An incident whose fix cannot start (coder-ai has no language model, the plan is refused): the chain
 * ends `fix_failed` with the reason in the audit trail, and a redelivered resolution does not try again;
 * before, the error only reached the bus's error log and the chain stayed `fixing` for ever.
 */
import { strict as assert } from 'node:assert';
import { MessageBus } from '../../../server/src/engine/bus';
import { INCIDENT_CHAIN_COLLECTION, PrTriggers, type IncidentChainRecord } from '../../../server/src/engine/pr-flow/triggers';
import { MemoryStore } from '../../support/engine-harness';
import { ManualClock, MemoryAuditTrail } from '../../support/fakes';

describe('incident chain: a fix that cannot start', () => {
  it('marks the chain fix_failed with the reason, audited, and does not call the fixer again', async () => {
    const bus = new MessageBus();
    const store = new MemoryStore();
    const clock = new ManualClock();
    const audit = new MemoryAuditTrail(clock);
    const chains = store.collection<IncidentChainRecord>(INCIDENT_CHAIN_COLLECTION);
    let calls = 0;
    const triggers = new PrTriggers({
      bus, audit, host: 'github', executions: { find: () => undefined }, chains, clock, log: () => {},
      fixer: { fix: async () => { calls += 1; throw new Error('coder-ai generate needs a language model and none is configured (llm.provider)'); } },
    });
    triggers.start();
    bus.publish('incident.resolution.completed', { executionId: 'pagerduty:P1', incidentId: 'pagerduty:P1', summary: 'pool exhausted' });
    const end = Date.now() + 5_000;
    while (chains.get('pagerduty:P1')?.status !== 'fix_failed') {
      if (Date.now() > end) throw new Error(`chain still ${chains.get('pagerduty:P1')?.status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const failed = (await audit.query({ kind: 'incident.fix_failed' }))[0]!;
    assert.equal(failed.data['incidentId'], 'pagerduty:P1');
    assert.match(String(failed.data['reason']), /needs a language model/);
    bus.publish('incident.resolution.completed', { executionId: 'pagerduty:P1', incidentId: 'pagerduty:P1' });
    bus.publish('pipeline.fix.request', { executionId: 'pagerduty:P1', incidentId: 'pagerduty:P1' });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(calls, 1);
    triggers.stop();
  });
});
