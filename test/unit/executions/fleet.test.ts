import { strict as assert } from 'node:assert';
import { anyone, createHarness, fleetSkills, settled, type Harness } from '../../support/engine-harness';
import { waitFor } from '../../support/wait';

describe('fleet: load, backpressure and warm-up', function () {
  this.timeout(30_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const yaml = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

  it('queues past capacity, reports pressure above 85%, and refuses new work when the queue is full', async () => {
    h = await createHarness({ skills: fleetSkills, yaml });
    const stats = () => h.engine.fleet.load.stats('tester-ai');
    const { capacity, queueBound } = stats();
    const ids: string[] = [];
    for (let i = 0; i < capacity + queueBound; i++) {
      ids.push((await h.engine.executions.runAction('tester-ai', 'test', { prompt: 'block:tester-ai' }, anyone)).id);
    }
    await waitFor(() => (stats().running === capacity && stats().queued === queueBound ? true : undefined));
    assert.equal(stats().pressure, true);
    assert.ok(stats().timeoutFactor > 1);
    await assert.rejects(h.engine.executions.runAction('tester-ai', 'test', { prompt: 'x' }, anyone), (e: { code?: string; retryable?: boolean; details?: { retryAfterMs?: number } }) =>
      e.code === 'ERR_OVERLOADED' && e.retryable === true && (e.details?.retryAfterMs ?? 0) >= 1000);
    for (const id of ids) await h.engine.executions.cancel(id, 'user:test');
    assert.equal(stats().running + stats().queued, 0, 'cancelled waiters leave the queue');
  });

  it('a cold agent warms up on demand and the request succeeds', async () => {
    h = await createHarness({ skills: fleetSkills, yaml });
    assert.notEqual(h.engine.fleet.warm.status('billing-ai').state, 'warm');
    const rec = await h.engine.executions.runAction('billing-ai', 'usage', {}, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(h.engine.fleet.warm.status('billing-ai').state, 'warm');
  });

  it('publishes a week of availability for every agent', async () => {
    h = await createHarness({ yaml });
    const week = h.engine.fleet.schedule(Date.parse('2026-11-23T12:00:00Z'), 'ultra');
    assert.equal(week.agents.length, 25);
    const observe = week.agents.find((a) => a.agentId === 'observe-ai')!;
    assert.equal(observe.policy, 'always_warm');
    const coder = week.agents.find((a) => a.agentId === 'coder-ai')!;
    assert.equal(coder.windows.length, 5, 'five business days');
    assert.equal(coder.windows[0]!.start, '2026-11-23T12:00:00.000Z'); // 07:00 EST
  });
});
