/**
 * The six capability domains (contract: "Capability domains and agents") with their agents in the
 * order of the contract's table, and PLATFORM = BUILD + OPERATE + SECURE (15 unique agents).
 */
import { EngineError } from '../errors';
import type { Capability, Domain } from './enums';
import { CATALOG_FILES, DomainsFileSchema, parseCatalogFile, type DomainDef, type DomainsFileInput } from './schema';

const RAW_DOMAINS = {
  domains: [
    {
      id: 'BUILD',
      displayName: 'Build',
      description: 'From requirements to reviewed, tested code.',
      tierTag: null,
      agents: ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai'],
      counts: { core: 5, shared: 2 },
    },
    {
      id: 'OPERATE',
      displayName: 'Operate',
      description: 'Deployment, maintenance, monitoring, incidents, capacity and recovery.',
      tierTag: null,
      agents: ['deploy-ai', 'maintain-ai', 'observe-ai', 'incident-ai', 'debug-ai', 'review-ai', 'capacity-ai', 'backup-ai'],
      counts: { core: 6, shared: 2 },
    },
    {
      id: 'SECURE',
      displayName: 'Secure',
      description: 'Security scanning and threat hunting.',
      tierTag: null,
      agents: ['security-ai', 'threathunter-ai'],
      counts: { core: 2, shared: 0 },
    },
    {
      id: 'GOVERN',
      displayName: 'Govern',
      description: 'Governance audits, policies and tenant isolation.',
      tierTag: 'ULTRA',
      agents: ['govern-ai', 'policy-ai', 'tenant-ai'],
      counts: { core: 3, shared: 0 },
    },
    {
      id: 'OPTIMIZE',
      displayName: 'Optimize',
      description: 'Performance, cost, database and billing optimisation.',
      tierTag: 'PRO',
      agents: ['optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai'],
      counts: { core: 4, shared: 0 },
    },
    {
      id: 'EVOLVE',
      displayName: 'Evolve',
      description: 'Learning from feedback, maturity and customer success.',
      tierTag: 'ULTRA',
      agents: ['adapt-ai', 'evolve-ai', 'success-ai'],
      counts: { core: 3, shared: 0 },
    },
  ],
  platform: ['BUILD', 'OPERATE', 'SECURE'],
} as const satisfies DomainsFileInput;

const FILE = parseCatalogFile(CATALOG_FILES.domains, DomainsFileSchema, RAW_DOMAINS);

/** The six domains in the contract's order (BUILD, OPERATE, SECURE, GOVERN, OPTIMIZE, EVOLVE). */
export const DOMAIN_DEFS: readonly DomainDef[] = FILE.domains;

/** Domains that make up the PLATFORM capability: BUILD, OPERATE, SECURE. */
export const PLATFORM_DOMAINS: readonly Domain[] = FILE.platform;

/** The domain record of `domain`. */
export function domainDef(domain: Domain): DomainDef {
  const def = DOMAIN_DEFS.find((d) => d.id === domain);
  // Unreachable: the schema requires all six domains.
  if (def === undefined) throw new EngineError('ERR_INTERNAL', `domain ${domain} missing from the catalog`);
  return def;
}

/** Union of the given domains' agents, first occurrence wins, in domain and table order. */
function unionOfDomains(domains: readonly Domain[]): string[] {
  const out: string[] = [];
  for (const domain of domains) {
    for (const agent of domainDef(domain).agents) if (!out.includes(agent)) out.push(agent);
  }
  return out;
}

/** Domains a capability stands for: itself, or BUILD + OPERATE + SECURE for PLATFORM. */
export function domainsOfCapability(cap: Capability): readonly Domain[] {
  return cap === 'PLATFORM' ? PLATFORM_DOMAINS : [cap];
}

/** Agent ids of a capability, in table order; PLATFORM gives the 15 unique agents of BUILD, OPERATE, SECURE. */
export function agentsOfCapability(cap: Capability): string[] {
  return unionOfDomains(domainsOfCapability(cap));
}

/** Agent ids of several capabilities (a task's `capabilities`), without duplicates, in request order. */
export function agentsOfCapabilities(caps: readonly Capability[]): string[] {
  return unionOfDomains(caps.flatMap((c) => domainsOfCapability(c)));
}

/** PLATFORM's agents: BUILD, OPERATE and SECURE without duplicates (15). */
export const PLATFORM_AGENTS: readonly string[] = Object.freeze(agentsOfCapability('PLATFORM'));
