/**
 * The 25 agent ids of the contract, in the order of its domain table. A stop-gap copy: once the
 * agent catalog (`server/src/engine/catalog/index.ts`) exists, this list should be derived from it
 * (a test there can assert that both agree).
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
