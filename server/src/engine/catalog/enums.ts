/** Closed value sets of the contract, as constants so both types and validators derive from them. */

export const DOMAINS = ['BUILD', 'OPERATE', 'SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE'] as const;
export type Domain = (typeof DOMAINS)[number];

/** Request values of `capabilities`: the six domains plus PLATFORM (= BUILD + OPERATE + SECURE). */
export const CAPABILITIES = [...DOMAINS, 'PLATFORM'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const INTELLIGENCE_TIERS = ['core', 'pro', 'ultra'] as const;
export type IntelligenceTier = (typeof INTELLIGENCE_TIERS)[number];

/** Commercial tier tag on an agent or action; `null` = available on every plan. */
export const TIER_TAGS = ['PRO', 'ULTRA'] as const;
export type TierTag = (typeof TIER_TAGS)[number];

export const SCOPES = ['demo', 'poc', 'mvp', 'product', 'production'] as const;
export type Scope = (typeof SCOPES)[number];

export const PRIORITIES = ['low', 'normal', 'high'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** ACMF autonomy modes, lowest to highest autonomy. */
export const ACMF_MODES = ['OBSERVE', 'LEARNING', 'ASSISTED', 'AUTONOMOUS'] as const;
export type AcmfMode = (typeof ACMF_MODES)[number];

export const AVAILABILITY_MODES = ['always_on', 'business_hours', 'commercial'] as const;
export type AvailabilityMode = (typeof AVAILABILITY_MODES)[number];

export const GATE_CATEGORIES = ['safety', 'correctness', 'performance', 'compliance'] as const;
export type GateCategory = (typeof GATE_CATEGORIES)[number];
