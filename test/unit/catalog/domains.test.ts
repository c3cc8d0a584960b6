import assert from 'node:assert/strict';
import {
  agentsOfCapabilities,
  agentsOfCapability,
  catalog,
  domainDef,
  domainsOfAgent,
  PLATFORM_AGENTS,
} from '../../../server/src/engine/catalog';

/** Contract, "Capability domains and agents", agents in table order. */
const TABLE = {
  BUILD: ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai'],
  OPERATE: ['deploy-ai', 'maintain-ai', 'observe-ai', 'incident-ai', 'debug-ai', 'review-ai', 'capacity-ai', 'backup-ai'],
  SECURE: ['security-ai', 'threathunter-ai'],
  GOVERN: ['govern-ai', 'policy-ai', 'tenant-ai'],
  OPTIMIZE: ['optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai'],
  EVOLVE: ['adapt-ai', 'evolve-ai', 'success-ai'],
} as const;

describe('catalog: domains', () => {
  it('has the six domains in contract order', () => {
    assert.deepEqual(catalog.domains.map((d) => d.id), ['BUILD', 'OPERATE', 'SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE']);
  });

  it('lists each domain\'s agents in table order, with the contract counts', () => {
    for (const [domain, agents] of Object.entries(TABLE)) {
      assert.deepEqual(agentsOfCapability(domain as keyof typeof TABLE), agents, domain);
      assert.deepEqual(catalog.domainsById.get(domain as keyof typeof TABLE)?.agents, agents, domain);
    }
    const counts = Object.fromEntries(catalog.domains.map((d) => [d.id, d.agents.length]));
    assert.deepEqual(counts, { BUILD: 7, OPERATE: 8, SECURE: 2, GOVERN: 3, OPTIMIZE: 4, EVOLVE: 3 });
  });

  it('splits BUILD into 5 core + 2 shared and OPERATE into 6 core + 2 shared', () => {
    assert.deepEqual(domainDef('BUILD').counts, { core: 5, shared: 2 });
    assert.deepEqual(domainDef('OPERATE').counts, { core: 6, shared: 2 });
    for (const d of ['SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE'] as const) assert.equal(domainDef(d).counts.shared, 0, d);
  });

  it('tags GOVERN and EVOLVE ULTRA, OPTIMIZE PRO, the rest untagged', () => {
    const tags = Object.fromEntries(catalog.domains.map((d) => [d.id, d.tierTag]));
    assert.deepEqual(tags, { BUILD: null, OPERATE: null, SECURE: null, GOVERN: 'ULTRA', OPTIMIZE: 'PRO', EVOLVE: 'ULTRA' });
  });

  it('makes PLATFORM the 15 unique agents of BUILD, OPERATE and SECURE (rule 2)', () => {
    const expected = [...new Set([...TABLE.BUILD, ...TABLE.OPERATE, ...TABLE.SECURE])];
    assert.equal(expected.length, 15);
    assert.deepEqual(agentsOfCapability('PLATFORM'), expected);
    assert.deepEqual(PLATFORM_AGENTS, expected);
    assert.deepEqual(catalog.platformAgents, expected);
    assert.deepEqual(catalog.platformDomains, ['BUILD', 'OPERATE', 'SECURE']);
  });

  it('totals 25 unique agents across the domains (rule 3)', () => {
    assert.equal(new Set(catalog.domains.flatMap((d) => d.agents)).size, 25);
  });

  it('unions several capabilities without duplicates', () => {
    assert.deepEqual(agentsOfCapabilities(['SECURE', 'GOVERN', 'SECURE']), [...TABLE.SECURE, ...TABLE.GOVERN]);
    assert.equal(agentsOfCapabilities(['PLATFORM', 'BUILD']).length, 15);
    assert.equal(agentsOfCapabilities(['BUILD', 'OPERATE', 'SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE']).length, 25);
  });

  it('returns a fresh array the caller may change', () => {
    const a = agentsOfCapability('BUILD');
    a.push('x-ai');
    assert.equal(agentsOfCapability('BUILD').length, 7);
  });

  it('tells the domains of an agent', () => {
    assert.deepEqual(domainsOfAgent('review-ai'), ['BUILD', 'OPERATE']);
    assert.deepEqual(domainsOfAgent('cost-ai'), ['OPTIMIZE']);
  });
});
