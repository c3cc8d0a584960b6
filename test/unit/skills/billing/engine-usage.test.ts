/**
 * The engine's hand-over to billing-ai: a billing-ai step gets `input.usage` computed from the store's
 * execution summaries (agents, tier, capabilities, project, tokens), whatever the request said, and
 * no other agent gets it. Real engine (in-memory store), the fleet test skills for the other agents.
 */
import { strict as assert } from 'node:assert';
import type { Skill } from '../../../../server/src/engine/rigor/skill';
import { summarizeExecution } from '../../../../server/src/engine/executions/records';
import { billingSkills, type UsageData } from '../../../../server/src/skills/billing/index';
import { anyone, createHarness, fleetSkills, settled, type Harness } from '../../../support/engine-harness';

describe('billing-ai: the engine hands in the usage facts', function () {
  this.timeout(30_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const skills: Skill[] = [...fleetSkills.filter((s) => s.agentId !== 'billing-ai'), ...billingSkills];

  it('usage counts the executions run before it per agent, tier and capability, from the summaries; a usage given in the request is ignored', async () => {
    h = await createHarness({ skills, yaml: 'defaults:\n  intelligence: pro\n  acmf_mode: AUTONOMOUS\n' });
    const ex = h.engine.executions;
    const a = await ex.runAction('cost-ai', 'report', { prompt: 'costs', intelligence: 'pro' }, anyone);
    const b = await ex.runAction('observe-ai', 'analyze', { prompt: 'look', intelligence: 'ultra' }, anyone);
    const c = await ex.submitTask({ task: 'secure it', capabilities: ['SECURE'] }, anyone);
    for (const id of [a.id, b.id, c.id]) await settled(h.engine, id);
    const summary = summarizeExecution(ex.get(a.id));
    assert.deepEqual([summary.agents, summary.intelligence, summary.capabilities, summary.project, summary.tokens], [['cost-ai'], 'pro', [], null, 0]);
    const forged = { asOf: '2026-01-01T00:00:00Z', executions: [] };
    const m = await ex.runAction('billing-ai', 'usage', { prompt: 'meter', intelligence: 'pro', input: { usage: forged } }, anyone);
    const done = await settled(h.engine, m.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error ?? done.steps[0]?.reason));
    const u = done.steps[0]!.output as UsageData;
    assert.equal(u.executions.total, 3);
    assert.deepEqual(u.excluded.self, m.id);
    const agents = Object.fromEntries(u.byAgent.map((x) => [x.key, x.executions]));
    assert.equal(agents['cost-ai'], 1);
    assert.equal(agents['observe-ai'], 1);
    assert.ok(agents['security-ai']! >= 1, JSON.stringify(agents));
    assert.deepEqual(Object.fromEntries(u.byTier.map((x) => [x.key, x.executions])), { pro: 2, ultra: 1 });
    assert.equal(u.byCapability.find((x) => x.key === 'SECURE')?.executions, 1);
    assert.equal(u.unknown.executions, 0);
  });

  it('only billing-ai steps get the facts', async () => {
    const seen: Array<unknown> = [];
    const spy: Skill = { ...fleetSkills.find((s) => s.agentId === 'cost-ai' && s.action === 'report')!, async research(ctx) { seen.push(ctx.request.input['usage']); return { items: [], constraints: [], pathsRead: [] }; } };
    h = await createHarness({ skills: [spy], yaml: 'defaults:\n  intelligence: pro\n  acmf_mode: AUTONOMOUS\n' });
    const r = await h.engine.executions.runAction('cost-ai', 'report', { prompt: 'costs' }, anyone);
    await settled(h.engine, r.id);
    assert.deepEqual(seen, [undefined]);
  });
});
