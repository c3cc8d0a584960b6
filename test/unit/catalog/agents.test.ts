import assert from 'node:assert/strict';
import { catalog, findAction, getAgent, isActionEnabled, isAgentId } from '../../../server/src/engine/catalog';
import { KNOWN_AGENT_IDS } from '../../../server/src/config/agent-ids';
import { isEngineError } from '../../../server/src/engine/errors';

/** Contract, "Capability domains and agents": every agent id, domain table order. */
const CONTRACT_AGENTS = [
  'req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai',
  'deploy-ai', 'maintain-ai', 'observe-ai', 'incident-ai', 'capacity-ai', 'backup-ai',
  'security-ai', 'threathunter-ai',
  'govern-ai', 'policy-ai', 'tenant-ai',
  'optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai',
  'adapt-ai', 'evolve-ai', 'success-ai',
];

/** Contract, "Direct agent actions named" (tier tag in brackets), copied verbatim. */
const CONTRACT_ACTIONS: Record<string, Array<[string, 'PRO' | 'ULTRA' | null]>> = {
  'req-ai': [['analyze', null], ['validate', null]],
  'planner-ai': [['plan', null], ['estimate', null]],
  'architect-ai': [['design', null], ['validate', null]],
  'govern-ai': [['audit-trail', 'ULTRA'], ['approval', 'ULTRA']],
  'policy-ai': [['check', 'ULTRA'], ['enforce', 'ULTRA']],
  'tenant-ai': [['check-isolation', 'ULTRA'], ['quotas', 'ULTRA']],
  'optimize-ai': [['analyze', 'PRO'], ['benchmark', 'PRO']],
  'cost-ai': [['report', 'PRO'], ['optimize', 'PRO']],
  'dba-ai': [['analyze-queries', 'PRO'], ['indexes', 'PRO']],
  'billing-ai': [['usage', 'PRO'], ['analytics', 'PRO']],
  'adapt-ai': [['feedback', 'ULTRA'], ['evaluate', 'ULTRA']],
  'evolve-ai': [['assess', 'ULTRA'], ['plan', 'ULTRA']],
  'success-ai': [['health', 'ULTRA'], ['engagement', 'ULTRA']],
};

/** Contract, "Source-hosting app integration". */
const PR_CAPABLE = ['coder-ai', 'architect-ai', 'debug-ai', 'security-ai', 'review-ai', 'tester-ai', 'maintain-ai', 'optimize-ai'];

/** Contract, "Availability": observability, incidents, threat hunting, security scanning. */
const ALWAYS_ON = ['observe-ai', 'incident-ai', 'threathunter-ai', 'security-ai'];

const GOVERN_EVOLVE = ['govern-ai', 'policy-ai', 'tenant-ai', 'adapt-ai', 'evolve-ai', 'success-ai'];
const OPTIMIZE = ['optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai'];

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

describe('catalog: agents', () => {
  it('has 25 unique agents, in the order of the contract table', () => {
    const ids = catalog.agents.map((a) => a.id);
    assert.equal(ids.length, 25);
    assert.equal(new Set(ids).size, 25);
    assert.deepEqual(ids, CONTRACT_AGENTS);
  });

  it('agrees with the config loader\'s list of known agent ids', () => {
    assert.deepEqual(catalog.agents.map((a) => a.id), [...KNOWN_AGENT_IDS]);
  });

  it('puts debug-ai and review-ai in BUILD and OPERATE with two different roles (rule 1)', () => {
    for (const id of ['debug-ai', 'review-ai']) {
      const agent = getAgent(id);
      assert.deepEqual(agent.domains.map((d) => d.domain), ['BUILD', 'OPERATE'], id);
      const [build, operate] = agent.domains;
      assert.notEqual(build?.role, operate?.role, id);
      assert.notEqual(build?.defaultAction, operate?.defaultAction, id);
    }
    assert.match(getAgent('debug-ai').domains[0]?.role ?? '', /development debugging/);
    assert.match(getAgent('debug-ai').domains[1]?.role ?? '', /production root-cause analysis/);
    assert.match(getAgent('review-ai').domains[0]?.role ?? '', /code review, PR gates/);
    assert.match(getAgent('review-ai').domains[1]?.role ?? '', /validates fixes before deployment/);
    const multi = catalog.agents.filter((a) => a.domains.length > 1).map((a) => a.id);
    assert.deepEqual(sorted(multi), ['debug-ai', 'review-ai']);
  });

  it('has exactly the 8 PR-capable agents of the contract', () => {
    assert.deepEqual(sorted(catalog.agents.filter((a) => a.prCapable).map((a) => a.id)), sorted(PR_CAPABLE));
  });

  it('lists every named direct action of the contract with its tag, and no other named one', () => {
    for (const [agentId, actions] of Object.entries(CONTRACT_ACTIONS)) {
      const named = getAgent(agentId).actions.filter((a) => a.named).map((a) => [a.name, a.tierTag]);
      assert.deepEqual(named, actions, agentId);
    }
    const namedElsewhere = catalog.agents.filter((a) => !(a.id in CONTRACT_ACTIONS) && a.actions.some((x) => x.named));
    assert.deepEqual(namedElsewhere.map((a) => a.id), []);
  });

  it('gives every agent at least one reachable action with unique kebab-case names', () => {
    for (const agent of catalog.agents) {
      assert.ok(agent.actions.length >= 1, agent.id);
      const names = agent.actions.map((a) => a.name);
      assert.equal(new Set(names).size, names.length, agent.id);
      for (const n of names) assert.match(n, /^[a-z]+(-[a-z]+)*$/);
      for (const role of agent.domains) assert.ok(names.includes(role.defaultAction), `${agent.id} ${role.defaultAction}`);
    }
    assert.equal(findAction('review-ai', 'review')?.named, false);
    assert.equal(findAction('govern-ai', 'audit-trail')?.tierTag, 'ULTRA');
    assert.equal(findAction('govern-ai', 'nope'), undefined);
    assert.equal(findAction('nobody-ai', 'review'), undefined);
  });

  it('tags GOVERN and EVOLVE agents and actions ULTRA, OPTIMIZE agents and actions PRO, the rest untagged', () => {
    for (const agent of catalog.agents) {
      const expected = GOVERN_EVOLVE.includes(agent.id) ? 'ULTRA' : OPTIMIZE.includes(agent.id) ? 'PRO' : null;
      assert.equal(agent.tierTag, expected, agent.id);
      for (const action of agent.actions) assert.equal(action.tierTag, expected, `${agent.id}/${action.name}`);
    }
  });

  it('assigns availability: the 4 named always-on agents, commercial for tagged agents, business hours otherwise', () => {
    assert.deepEqual(sorted(catalog.agents.filter((a) => a.availability === 'always_on').map((a) => a.id)), sorted(ALWAYS_ON));
    for (const agent of catalog.agents) {
      if (agent.tierTag !== null) assert.equal(agent.availability, 'commercial', agent.id);
      else if (!ALWAYS_ON.includes(agent.id)) assert.equal(agent.availability, 'business_hours', agent.id);
    }
    assert.equal(getAgent('capacity-ai').availability, 'business_hours');
    assert.equal(getAgent('backup-ai').availability, 'business_hours');
  });

  it('gives every agent a positive integer capacity', () => {
    for (const agent of catalog.agents) assert.ok(Number.isInteger(agent.capacity) && agent.capacity > 0, agent.id);
    assert.equal(getAgent('req-ai').capacity, 4);
    assert.equal(getAgent('observe-ai').capacity, 8);
    assert.equal(getAgent('tester-ai').capacity, 2);
  });

  it('enables actions by tier tag and required feature', () => {
    const usage = findAction('billing-ai', 'usage');
    const audit = findAction('govern-ai', 'audit-trail');
    const paths = findAction('threathunter-ai', 'attack-paths');
    const scan = findAction('security-ai', 'scan');
    assert.ok(usage && audit && paths && scan);
    assert.deepEqual([isActionEnabled('core', usage), isActionEnabled('pro', usage), isActionEnabled('ultra', usage)], [false, true, true]);
    assert.deepEqual([isActionEnabled('core', audit), isActionEnabled('pro', audit), isActionEnabled('ultra', audit)], [false, false, true]);
    assert.deepEqual([isActionEnabled('core', paths), isActionEnabled('pro', paths), isActionEnabled('ultra', paths)], [false, false, true]);
    assert.equal(isActionEnabled('core', scan), true);
  });

  it('looks agents up by id', () => {
    assert.equal(isAgentId('coder-ai'), true);
    assert.equal(isAgentId('nobody-ai'), false);
    assert.throws(() => getAgent('nobody-ai'), (err: unknown) => isEngineError(err) && err.code === 'ERR_NOT_FOUND');
  });
});
