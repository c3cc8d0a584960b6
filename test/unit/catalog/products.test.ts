import assert from 'node:assert/strict';
import {
  catalog,
  intelligenceTierDef,
  minimumTierFor,
  tierAllows,
  tierFeatures,
  tierHasFeature,
  tokenBudgetFactor,
} from '../../../server/src/engine/catalog';

describe('catalog: products and intelligence tiers', () => {
  it('has the core products BUILD, OPERATE, SECURE, PLATFORM and the add-ons GOVERN, OPTIMIZE, EVOLVE', () => {
    const byKind = (kind: string) => catalog.products.filter((p) => p.kind === kind).map((p) => p.id);
    assert.deepEqual(byKind('core'), ['BUILD', 'OPERATE', 'SECURE', 'PLATFORM']);
    assert.deepEqual(byKind('addon'), ['GOVERN', 'OPTIMIZE', 'EVOLVE']);
    assert.deepEqual(catalog.productsById.get('PLATFORM')?.domains, ['BUILD', 'OPERATE', 'SECURE']);
  });

  it('has the tiers core, pro, ultra with their model classes', () => {
    assert.deepEqual(catalog.intelligenceTiers.map((t) => [t.id, t.modelClass]), [['core', 'fast'], ['pro', 'capable'], ['ultra', 'frontier']]);
    assert.match(intelligenceTierDef('ultra').modelDescription, /frontier model with reasoning escalation/i);
  });

  it('accumulates features from tier to tier as the contract lists them', () => {
    const core = ['container-scanning', 'basic-threat-hunting'];
    const pro = [...core, 'dependency-scanning', 'advanced-threat-queries'];
    const ultra = [...pro, 'static-code-analysis', 'custom-rules', 'attack-path-analysis', 'reasoning-escalation'];
    assert.deepEqual(tierFeatures('core'), core);
    assert.deepEqual(tierFeatures('pro'), pro);
    assert.deepEqual(tierFeatures('ultra'), ultra);
    assert.equal(tierHasFeature('core', 'dependency-scanning'), false);
    assert.equal(tierHasFeature('pro', 'dependency-scanning'), true);
    assert.equal(tierHasFeature('pro', 'attack-path-analysis'), false);
  });

  it('allows untagged everywhere, [PRO] from pro, [ULTRA] only on ultra', () => {
    const table = (['core', 'pro', 'ultra'] as const).map((t) => [tierAllows(t, null), tierAllows(t, 'PRO'), tierAllows(t, 'ULTRA')]);
    assert.deepEqual(table, [[true, false, false], [true, true, false], [true, true, true]]);
    assert.deepEqual([minimumTierFor(null), minimumTierFor('PRO'), minimumTierFor('ULTRA')], ['core', 'pro', 'ultra']);
  });

  it('grows the token budget factor with the model class', () => {
    assert.ok(tokenBudgetFactor('core') < tokenBudgetFactor('pro'));
    assert.ok(tokenBudgetFactor('pro') < tokenBudgetFactor('ultra'));
    assert.equal(tokenBudgetFactor('core'), 1);
  });
});
