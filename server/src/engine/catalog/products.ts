/**
 * Products and intelligence tiers (contract: "Products and intelligence tiers").
 *
 * Products are what a customer subscribes to (four core products, three add-ons). Intelligence
 * tiers (request value `intelligence`) are independent of products: each names a model class and
 * switches on features, cumulatively (PRO has everything CORE has, ULTRA everything PRO has). The
 * tier also decides which commercial tags are enabled: core none, pro [PRO], ultra [PRO] and [ULTRA].
 */
import { EngineError } from '../errors';
import { INTELLIGENCE_TIERS, type IntelligenceTier, type TierTag } from './enums';
import {
  CATALOG_FILES,
  ProductsFileSchema,
  parseCatalogFile,
  tierTagRank,
  type FeatureFlag,
  type IntelligenceTierDef,
  type ProductDef,
  type ProductsFileInput,
} from './schema';

const RAW_PRODUCTS = {
  products: [
    { id: 'BUILD', kind: 'core', displayName: 'Build', description: 'The BUILD agents and workflow.', domains: ['BUILD'] },
    { id: 'OPERATE', kind: 'core', displayName: 'Operate', description: 'The OPERATE agents and workflow.', domains: ['OPERATE'] },
    { id: 'SECURE', kind: 'core', displayName: 'Secure', description: 'The SECURE agents and workflow.', domains: ['SECURE'] },
    { id: 'PLATFORM', kind: 'core', displayName: 'Platform', description: 'BUILD, OPERATE and SECURE together (15 agents).', domains: ['BUILD', 'OPERATE', 'SECURE'] },
    { id: 'GOVERN', kind: 'addon', displayName: 'Govern', description: 'Governance add-on for any core product [ULTRA].', domains: ['GOVERN'] },
    { id: 'OPTIMIZE', kind: 'addon', displayName: 'Optimize', description: 'Optimisation add-on for any core product [PRO].', domains: ['OPTIMIZE'] },
    { id: 'EVOLVE', kind: 'addon', displayName: 'Evolve', description: 'Evolution add-on for any core product [ULTRA].', domains: ['EVOLVE'] },
  ],
  intelligenceTiers: [
    {
      id: 'core',
      displayName: 'CORE',
      modelClass: 'fast',
      modelDescription: 'Fast, cost-efficient model.',
      adds: ['container-scanning', 'basic-threat-hunting'],
      tokenBudgetFactor: 1,
    },
    {
      id: 'pro',
      displayName: 'PRO',
      modelClass: 'capable',
      modelDescription: 'More capable model.',
      adds: ['dependency-scanning', 'advanced-threat-queries'],
      tokenBudgetFactor: 2,
    },
    {
      id: 'ultra',
      displayName: 'ULTRA',
      modelClass: 'frontier',
      modelDescription: 'Frontier model with reasoning escalation.',
      adds: ['static-code-analysis', 'custom-rules', 'attack-path-analysis', 'reasoning-escalation'],
      tokenBudgetFactor: 4,
    },
  ],
} as const satisfies ProductsFileInput;

const FILE = parseCatalogFile(CATALOG_FILES.products, ProductsFileSchema, RAW_PRODUCTS);

/** The seven products: BUILD, OPERATE, SECURE, PLATFORM (core), GOVERN, OPTIMIZE, EVOLVE (add-ons). */
export const PRODUCTS: readonly ProductDef[] = FILE.products;

/** The three intelligence tiers, lowest first. */
export const INTELLIGENCE_TIER_DEFS: readonly IntelligenceTierDef[] = FILE.intelligenceTiers;

function tierRank(tier: IntelligenceTier): number {
  return INTELLIGENCE_TIERS.indexOf(tier);
}

/** The record of one intelligence tier. */
export function intelligenceTierDef(tier: IntelligenceTier): IntelligenceTierDef {
  const def = INTELLIGENCE_TIER_DEFS[tierRank(tier)];
  // Unreachable: the schema requires the three tiers in order.
  if (def === undefined) throw new EngineError('ERR_INTERNAL', `intelligence tier ${tier} missing from the catalog`);
  return def;
}

/** True when `tier` enables something tagged `tag` (untagged: every tier; PRO: pro, ultra; ULTRA: ultra). */
export function tierAllows(tier: IntelligenceTier, tag: TierTag | null): boolean {
  return tierRank(tier) >= tierTagRank(tag);
}

/** The lowest intelligence tier that enables `tag` (for preview messages: "requires pro"). */
export function minimumTierFor(tag: TierTag | null): IntelligenceTier {
  return INTELLIGENCE_TIERS[tierTagRank(tag)] ?? 'ultra';
}

/** Every feature `tier` has: its own and those of the tiers below it, lowest tier's first. */
export function tierFeatures(tier: IntelligenceTier): FeatureFlag[] {
  return INTELLIGENCE_TIER_DEFS.slice(0, tierRank(tier) + 1).flatMap((t) => t.adds);
}

/** True when `tier` has `feature`. */
export function tierHasFeature(tier: IntelligenceTier, feature: FeatureFlag): boolean {
  return tierFeatures(tier).includes(feature);
}

/** Multiplier of the token budget (cost-budget gate) for `tier`. */
export function tokenBudgetFactor(tier: IntelligenceTier): number {
  return intelligenceTierDef(tier).tokenBudgetFactor;
}
