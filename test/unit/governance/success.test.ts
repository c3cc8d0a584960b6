/**
 * success-ai: `health` scores a tenant from its executions, approvals and ratings (each component
 * with its data, weight and reason); `engagement` trends weeks since the first execution and says
 * "not enough history" honestly. Pure report functions on planted facts, and the engine's hand-over.
 */
import { strict as assert } from 'node:assert';
import type { SuccessFacts } from '../../../server/src/engine/governance/success-facts';
import { engagement, health, trendOf, type EngagementData, type HealthData } from '../../../server/src/skills/success/index';
import { as, govEngine, newTenant, type GovEngine } from './engine';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const iso = (daysAgo: number, hours = 0) => new Date(NOW - daysAgo * 86_400_000 + hours * 3_600_000).toISOString();

function facts(over: Partial<SuccessFacts>): SuccessFacts {
  return { action: 'health', tenantId: 'tnt_default', asOf: new Date(NOW).toISOString(), since: iso(30), window: { days: 30 }, firstActivity: null, executions: [], approvals: [], feedback: [], ...over };
}
const ex = (daysAgo: number, status: string, agents = ['review-ai']) => ({ id: `act_${daysAgo}_${status}_${Math.random()}`, kind: 'action', status, createdAt: iso(daysAgo), completedAt: iso(daysAgo), agents });

describe('success-ai health and engagement', function () {
  this.timeout(30_000);
  let g: GovEngine | undefined;
  afterEach(async () => g?.close());

  it('health: a busy tenant with few failures, quick approvals and good ratings is healthy; each component has data, weight and reason', () => {
    const executions = Array.from({ length: 20 }, (_, i) => ex(i, i === 3 ? 'failed' : 'completed', i % 2 ? ['review-ai', 'security-ai'] : ['coder-ai']));
    const approvals = [{ id: 'a1', executionId: 'x', agentId: 'coder-ai', status: 'approved', risk: 'high', requestedAt: iso(2), decidedAt: iso(2, 0.5), decidedBy: 'key:k' }];
    const feedback = [{ id: 'f1', executionId: 'x', agentId: 'coder-ai', good: true, rating: 'up', at: iso(1) }, { id: 'f2', executionId: 'y', agentId: 'coder-ai', good: true, rating: 5, at: iso(1) }];
    const d: HealthData = health(facts({ executions, approvals, feedback }));
    assert.equal(d.status, 'healthy');
    assert.deepEqual(d.components.map((c) => [c.name, c.weight]), [['usage', 0.3], ['failures', 0.3], ['approvals', 0.2], ['feedback', 0.2]]);
    const byName = Object.fromEntries(d.components.map((c) => [c.name, c]));
    assert.deepEqual([byName['usage']!.data['executions'], byName['usage']!.data['activeAgents'], byName['usage']!.data['activeDays']], [20, 3, 20]);
    assert.equal(byName['failures']!.data['failed'], 1);
    assert.equal(byName['approvals']!.score, 100);
    assert.equal(byName['feedback']!.score, 100);
    assert.ok(d.score >= 80, String(d.score));
  });

  it('health: failures and a day-long approval wait pull the score down, with the reasons; missing components are said to be left out', () => {
    const executions = Array.from({ length: 6 }, (_, i) => ex(i, i < 3 ? 'failed' : 'completed'));
    const approvals = [{ id: 'a1', executionId: 'x', agentId: 'coder-ai', status: 'pending', risk: 'critical', requestedAt: iso(3), decidedAt: null, decidedBy: null }];
    const d = health(facts({ executions, approvals }));
    assert.equal(d.status, 'unhealthy');
    const byName = Object.fromEntries(d.components.map((c) => [c.name, c]));
    assert.equal(byName['failures']!.score, 0);
    assert.equal(byName['approvals']!.score, 0);
    assert.equal(byName['approvals']!.data['pendingOverADay'], 1);
    assert.equal(byName['feedback']!.score, null);
    assert.ok(d.reasons.some((r) => /feedback had no data: their weight was shared/.test(r)), d.reasons.join(' | '));
    assert.equal(health(facts({})).status, 'inactive');
  });

  it('engagement: not enough history for a tenant two weeks old, said so; no trend invented', () => {
    const d: EngagementData = engagement(facts({ action: 'engagement', window: { weeks: 8 }, since: iso(56), firstActivity: iso(10), executions: [ex(10, 'completed'), ex(2, 'completed')] }));
    assert.equal(d.enoughHistory, false);
    assert.match(d.note!, /^not enough history: 2 week\(s\) since the first execution/);
    assert.equal(d.trends.executions, null);
    assert.equal(d.series.length, 8);
    assert.equal(d.series.filter((w) => w.beforeFirstActivity).length, 6);
    assert.equal(engagement(facts({ action: 'engagement', window: { weeks: 4 } })).note, 'not enough history: this tenant has no execution yet');
  });

  it('engagement: weekly series and rising / falling trends once there is history', () => {
    const executions = [
      ...Array.from({ length: 1 }, () => ex(25, 'completed')), ...Array.from({ length: 3 }, () => ex(18, 'completed')),
      ...Array.from({ length: 6 }, () => ex(11, 'failed')), ...Array.from({ length: 9 }, () => ex(4, 'completed', ['a', 'b'])),
    ];
    const d = engagement(facts({ action: 'engagement', window: { weeks: 4 }, since: iso(28), firstActivity: iso(25), executions }));
    assert.equal(d.enoughHistory, true);
    assert.deepEqual(d.series.map((w) => w.executions), [1, 3, 6, 9]);
    assert.equal(d.trends.executions!.direction, 'rising');
    assert.deepEqual([d.trends.executions!.first, d.trends.executions!.last], [1, 9]);
    assert.deepEqual(trendOf([5, 5, 5])!.direction, 'flat');
    assert.deepEqual(trendOf([9, 4, 1])!.direction, 'falling');
    assert.equal(trendOf([1, 2]), null);
  });

  it('through the engine: the tenant\'s own executions only, the asking execution left out', async () => {
    g = await govEngine();
    const b = await newTenant(g.engine, 'b');
    await g.run('review-ai', 'review', {}, as('key_a'));
    await g.run('review-ai', 'review', {}, as('key_a'));
    await g.run('review-ai', 'review', {}, as('key_b', b));
    const done = await g.run('success-ai', 'health', { days: 7 }, as('key_a'));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as HealthData;
    assert.equal(d.components.find((c) => c.name === 'usage')!.data['executions'], 2);
    const eng = await g.run('success-ai', 'engagement', {}, as('key_b', b));
    assert.equal(eng.status, 'completed', JSON.stringify(eng.steps[0]?.reason));
    const e = eng.steps[0]!.output as EngagementData;
    assert.equal(e.series.reduce((n, w) => n + w.executions, 0), 1);
    assert.match(e.note!, /not enough history/);
    const bad = await g.run('success-ai', 'engagement', { weeks: 99 }, as('key_a'));
    assert.equal(bad.steps[0]!.outcome, 'needs_input');
  });
});
