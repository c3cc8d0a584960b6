/**
 * Subscriptions (contract: "Products and intelligence tiers", rule 4 of "Capability domains and
 * agents"): what an install (later: a tenant) has bought, kept apart from the request's
 * `intelligence`, which only picks the model class and the tier's features.
 *
 * - Products: a domain's agents run when a subscribed product covers the domain (PLATFORM covers
 *   BUILD, OPERATE and SECURE; GOVERN, OPTIMIZE and EVOLVE are add-ons).
 * - Commercial tier: [PRO] agents and actions need the `pro` or `ultra` commercial tier, [ULTRA] ones
 *   need `ultra`. During a `trial` they answer as a preview (403 ERR_TIER_REQUIRED with what they
 *   would do), never a 500.
 *
 * A local install owns everything: with no `subscription` in the configuration every product and
 * the `ultra` commercial tier are enabled (docs/decisions.md, "Products and tiers").
 */
import type { Domain, TierTag } from './enums';
import { PRODUCTS } from './products';
import { tierTagRank } from './schema';

export const COMMERCIAL_TIERS = ['trial', 'pro', 'ultra'] as const;
export type CommercialTier = (typeof COMMERCIAL_TIERS)[number];

export const PRODUCT_IDS = ['BUILD', 'OPERATE', 'SECURE', 'PLATFORM', 'GOVERN', 'OPTIMIZE', 'EVOLVE'] as const;
export type ProductId = (typeof PRODUCT_IDS)[number];

export interface Subscription {
  products: readonly ProductId[];
  commercialTier: CommercialTier;
}

/** A local install: every product, every commercial tag. */
export const LOCAL_SUBSCRIPTION: Subscription = Object.freeze({ products: PRODUCT_IDS, commercialTier: 'ultra' });

/** Products that cover `domain`. */
export function productsCovering(domain: Domain): ProductId[] {
  return PRODUCTS.filter((p) => (p.domains as readonly string[]).includes(domain)).map((p) => p.id as ProductId);
}

/** True when the commercial tier enables something tagged `tag` (untagged: always). */
export function commercialAllows(tier: CommercialTier, tag: TierTag | null): boolean {
  if (tag === null) return true;
  const rank = tier === 'ultra' ? 2 : tier === 'pro' ? 1 : 0;
  return rank >= tierTagRank(tag);
}

export interface SubscriptionRefusal {
  /** One sentence: what is missing. */
  reason: string;
  missingProduct?: ProductId;
  requiredCommercialTier?: CommercialTier;
}

/** Why `sub` does not cover an agent of `domains` tagged `tag`, or null when it does. */
export function subscriptionRefusal(sub: Subscription, what: { domains: readonly Domain[]; tag: TierTag | null }): SubscriptionRefusal | null {
  for (const d of what.domains) {
    const covering = productsCovering(d);
    if (!covering.some((p) => sub.products.includes(p))) {
      const product = covering.find((p) => p === d) ?? covering[0]!;
      return { reason: `the ${d} product is not in this subscription (products: ${sub.products.join(', ') || 'none'})`, missingProduct: product };
    }
  }
  if (!commercialAllows(sub.commercialTier, what.tag)) {
    const needed: CommercialTier = what.tag === 'ULTRA' ? 'ultra' : 'pro';
    return { reason: `[${what.tag}] agents and actions need the ${needed.toUpperCase()} commercial tier (this subscription: ${sub.commercialTier})`, requiredCommercialTier: needed };
  }
  return null;
}
