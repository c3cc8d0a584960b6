import type { AgentId } from '../engine/catalog/agents';

/**
 * The 25 agent ids of the contract, in the order of its domain table. Kept here as a literal tuple
 * (zod's enum wants one, and the config stays loadable without building the catalog); the type
 * check below and a unit test keep it equal to the catalog's ids.
 */
export const KNOWN_AGENT_IDS = [
  // BUILD (debug-ai and review-ai are shared with OPERATE)
  'req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai',
  // OPERATE
  'deploy-ai', 'maintain-ai', 'observe-ai', 'incident-ai', 'capacity-ai', 'backup-ai',
  // SECURE
  'security-ai', 'threathunter-ai',
  // GOVERN
  'govern-ai', 'policy-ai', 'tenant-ai',
  // OPTIMIZE
  'optimize-ai', 'cost-ai', 'dba-ai', 'billing-ai',
  // EVOLVE
  'adapt-ai', 'evolve-ai', 'success-ai',
] as const;

export type KnownAgentId = (typeof KNOWN_AGENT_IDS)[number];

export function isKnownAgentId(id: string): id is KnownAgentId {
  return (KNOWN_AGENT_IDS as readonly string[]).includes(id);
}

type Assert<T extends true> = T;
/** Compile-time proof that this list and the catalog's `AgentId` name the same agents. */
export type KnownAgentIdsMatchCatalog = Assert<
  [KnownAgentId] extends [AgentId] ? ([AgentId] extends [KnownAgentId] ? true : false) : false
>;
