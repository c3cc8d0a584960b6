/**
 * The catalog: agents, domains, products and intelligence tiers, workflows and gates as validated,
 * deep-frozen data, with lookup maps and small pure helpers.
 *
 * Each catalog file validates its own shape with zod when it is loaded; this module checks the rules
 * that join files (every agent a workflow names exists, a domain's list matches its agents'
 * memberships, a shared agent's role in a template is stated, ...). Any failure throws
 * ERR_CONFIG_INVALID naming the catalog file and the path inside it.
 *
 * @example
 * import { catalog, findWorkflow, stepAction } from './catalog';
 * const wf = findWorkflow('generate-code');            // the BUILD domain workflow
 * const first = wf?.pipeline[0];                      // { agent: 'req-ai', ... }
 * catalog.agentsById.get('req-ai')?.actions[0]?.name; // 'analyze'
 */
import { EngineError } from '../errors';
import { AGENTS } from './agents';
import { DOMAIN_DEFS, PLATFORM_DOMAINS } from './domains';
import type { Capability, Domain, IntelligenceTier, TierTag } from './enums';
import { GATES } from './gates';
import { INTELLIGENCE_TIER_DEFS, PRODUCTS, tierAllows, tierHasFeature } from './products';
import {
  AgentsFileSchema,
  CATALOG_FILES,
  DomainsFileSchema,
  GatesFileSchema,
  ProductsFileSchema,
  WorkflowsFileSchema,
  catalogError,
  catalogIssue,
  deepFreeze,
  parseCatalogFile,
  tierTagRank,
  type AgentActionDef,
  type AgentDef,
  type AgentDomainRole,
  type CatalogIssue,
  type DomainDef,
  type DomainsFile,
  type GateDef,
  type IntelligenceTierDef,
  type ProductDef,
  type ProductsFile,
  type WorkflowDef,
  type WorkflowStep,
} from './schema';
import { WORKFLOWS } from './workflows';

export * from './enums';
export * from './schema';
export * from './agents';
export * from './domains';
export * from './products';
export * from './workflows';
export * from './gates';
export * from './verbs';

/** The validated content of the five catalog files. */
export interface CatalogParts {
  agents: readonly AgentDef[];
  domains: DomainsFile;
  products: ProductsFile;
  workflows: readonly WorkflowDef[];
  gates: readonly GateDef[];
}

/** Unvalidated content of the five catalog files, as given to `loadCatalog`. */
export type CatalogSources = { [K in keyof CatalogParts]: unknown };

/** The loaded catalog: lists in contract order and lookup maps. Everything in it is frozen. */
export interface Catalog {
  readonly agents: readonly AgentDef[];
  readonly domains: readonly DomainDef[];
  readonly platformDomains: readonly Domain[];
  /** The 15 unique agents of BUILD, OPERATE and SECURE. */
  readonly platformAgents: readonly string[];
  readonly products: readonly ProductDef[];
  readonly intelligenceTiers: readonly IntelligenceTierDef[];
  readonly workflows: readonly WorkflowDef[];
  readonly gates: readonly GateDef[];
  readonly agentsById: ReadonlyMap<string, AgentDef>;
  readonly domainsById: ReadonlyMap<Domain, DomainDef>;
  readonly productsById: ReadonlyMap<Capability, ProductDef>;
  readonly tiersById: ReadonlyMap<IntelligenceTier, IntelligenceTierDef>;
  readonly workflowsById: ReadonlyMap<string, WorkflowDef>;
  /** Workflows by id and by alias (`generate-code`). */
  readonly workflowsByName: ReadonlyMap<string, WorkflowDef>;
  readonly gatesById: ReadonlyMap<string, GateDef>;
}

// ---------------------------------------------------------------------------------------------
// Pure helpers over one agent / workflow
// ---------------------------------------------------------------------------------------------

/** The agent's role record in `domain`, if it belongs to it. */
export function agentDomainRole(agent: AgentDef, domain: Domain): AgentDomainRole | undefined {
  return agent.domains.find((d) => d.domain === domain);
}

/**
 * The domain whose role `agent` plays in `step`: the step's own `domain`, else the agent's only
 * domain, else (domain workflows) the workflow's capability. Undefined when it cannot be told.
 */
export function resolveStepDomain(workflow: WorkflowDef, step: WorkflowStep, agent: AgentDef): Domain | undefined {
  if (step.domain !== null) return step.domain;
  const [only, ...others] = agent.domains;
  if (only !== undefined && others.length === 0) return only.domain;
  return workflow.kind === 'domain' ? workflow.capabilities[0] : undefined;
}

/** True when `tier` enables `action`: its tier tag, and the feature it needs if any. */
export function isActionEnabled(tier: IntelligenceTier, action: AgentActionDef): boolean {
  return tierAllows(tier, action.tierTag) && (action.requiresFeature === null || tierHasFeature(tier, action.requiresFeature));
}

// ---------------------------------------------------------------------------------------------
// Cross-file checks
// ---------------------------------------------------------------------------------------------

type Report = (file: string, root: unknown, path: PropertyKey[], message: string) => void;

function maxTag(tags: readonly (TierTag | null)[]): TierTag | null {
  return tags.reduce<TierTag | null>((best, t) => (tierTagRank(t) > tierTagRank(best) ? t : best), null);
}

function checkAgentsAndDomains(parts: CatalogParts, byId: ReadonlyMap<string, AgentDef>, report: Report): void {
  const domains = parts.domains.domains;
  const byDomain = new Map(domains.map((d) => [d.id, d]));
  domains.forEach((d, i) => {
    d.agents.forEach((id, j) => {
      const agent = byId.get(id);
      if (agent === undefined) report(CATALOG_FILES.domains, parts.domains, ['domains', i, 'agents', j], `unknown agent '${id}'`);
      else if (agentDomainRole(agent, d.id) === undefined) report(CATALOG_FILES.domains, parts.domains, ['domains', i, 'agents', j], `agent '${id}' does not list domain ${d.id}`);
    });
    const shared = d.agents.filter((id) => (byId.get(id)?.domains.length ?? 0) > 1).length;
    if (shared !== d.counts.shared) report(CATALOG_FILES.domains, parts.domains, ['domains', i, 'counts', 'shared'], `${shared} of the listed agents are shared with another domain`);
  });
  parts.agents.forEach((agent, i) => {
    agent.domains.forEach((role, k) => {
      if (!(byDomain.get(role.domain)?.agents.includes(agent.id) ?? false)) {
        report(CATALOG_FILES.agents, parts.agents, [i, 'domains', k, 'domain'], `domain ${role.domain} does not list agent '${agent.id}'`);
      }
    });
    const expected = maxTag(agent.domains.map((r) => byDomain.get(r.domain)?.tierTag ?? null));
    if (agent.tierTag !== expected) report(CATALOG_FILES.agents, parts.agents, [i, 'tierTag'], `must be ${String(expected)}, the tier tag of the agent's domains`);
  });
}

function checkProducts(parts: CatalogParts, report: Report): void {
  parts.products.products.forEach((p, i) => {
    if (p.id !== 'PLATFORM') return;
    const same = p.domains.length === parts.domains.platform.length && p.domains.every((d) => parts.domains.platform.includes(d));
    if (!same) report(CATALOG_FILES.products, parts.products, ['products', i, 'domains'], `must be the platform domains ${parts.domains.platform.join(', ')}`);
  });
}

function checkStep(wf: WorkflowDef, i: number, j: number, parts: CatalogParts, byId: ReadonlyMap<string, AgentDef>, report: Report): Domain | undefined {
  const step = wf.pipeline[j];
  if (step === undefined) return undefined;
  const at = (...rest: PropertyKey[]): PropertyKey[] => [i, 'pipeline', j, ...rest];
  const agent = byId.get(step.agent);
  if (agent === undefined) {
    report(CATALOG_FILES.workflows, parts.workflows, at('agent'), `unknown agent '${step.agent}'`);
    return undefined;
  }
  const domain = resolveStepDomain(wf, step, agent);
  if (domain === undefined) {
    report(CATALOG_FILES.workflows, parts.workflows, at('domain'), `shared agent '${agent.id}' needs the domain whose role it plays`);
    return undefined;
  }
  const role = agentDomainRole(agent, domain);
  if (role === undefined) report(CATALOG_FILES.workflows, parts.workflows, at('domain'), `agent '${agent.id}' has no role in ${domain}`);
  if (!wf.capabilities.includes(domain)) report(CATALOG_FILES.workflows, parts.workflows, at('agent'), `step plays a ${domain} role outside the workflow's capabilities`);
  if (step.action !== null && !agent.actions.some((a) => a.name === step.action)) {
    report(CATALOG_FILES.workflows, parts.workflows, at('action'), `agent '${agent.id}' has no action '${step.action}'`);
  }
  return domain;
}

function checkWorkflow(wf: WorkflowDef, i: number, parts: CatalogParts, byId: ReadonlyMap<string, AgentDef>, report: Report): void {
  const covered = new Set<Domain>();
  wf.pipeline.forEach((_, j) => {
    const d = checkStep(wf, i, j, parts, byId, report);
    if (d !== undefined) covered.add(d);
  });
  wf.background.forEach((id, k) => {
    const agent = byId.get(id);
    if (agent === undefined) report(CATALOG_FILES.workflows, parts.workflows, [i, 'background', k], `unknown agent '${id}'`);
    else agent.domains.filter((r) => wf.capabilities.includes(r.domain)).forEach((r) => covered.add(r.domain));
  });
  wf.capabilities.forEach((c, k) => {
    if (!covered.has(c)) report(CATALOG_FILES.workflows, parts.workflows, [i, 'capabilities', k], `no step plays a ${c} role`);
  });
  const [capability] = wf.capabilities;
  if (wf.kind !== 'domain' || capability === undefined) return;
  const members = parts.domains.domains.find((d) => d.id === capability)?.agents ?? [];
  const used = [...wf.pipeline.map((s) => s.agent), ...wf.background];
  const same = used.length === members.length && members.every((a) => used.includes(a));
  if (!same) report(CATALOG_FILES.workflows, parts.workflows, [i, 'pipeline'], `pipeline and background must be exactly the ${capability} agents`);
}

function checkWorkflows(parts: CatalogParts, byId: ReadonlyMap<string, AgentDef>, report: Report): void {
  parts.workflows.forEach((wf, i) => checkWorkflow(wf, i, parts, byId, report));
  for (const d of parts.domains.domains) {
    const count = parts.workflows.filter((w) => w.kind === 'domain' && w.capabilities[0] === d.id).length;
    if (count !== 1) report(CATALOG_FILES.workflows, parts.workflows, [], `domain ${d.id} needs exactly one domain workflow (found ${count})`);
  }
}

/** Every cross-file problem of `parts` (empty when consistent). */
export function crossCheck(parts: CatalogParts): CatalogIssue[] {
  const issues: CatalogIssue[] = [];
  const report: Report = (file, root, path, message) => { issues.push(catalogIssue(file, root, path, message)); };
  const byId = new Map(parts.agents.map((a) => [a.id, a]));
  checkAgentsAndDomains(parts, byId, report);
  checkProducts(parts, report);
  checkWorkflows(parts, byId, report);
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Assembly
// ---------------------------------------------------------------------------------------------

/** A ReadonlyMap that really is read-only (a frozen view over a private Map). */
function readonlyMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map<K, V>(entries);
  const view: ReadonlyMap<K, V> = {
    get: (key) => map.get(key),
    has: (key) => map.has(key),
    get size() { return map.size; },
    forEach: (fn, thisArg?: unknown) => map.forEach((v, k) => fn.call(thisArg, v, k, view)),
    entries: () => map.entries(),
    keys: () => map.keys(),
    values: () => map.values(),
    [Symbol.iterator]: () => map[Symbol.iterator](),
  };
  return Object.freeze(view);
}

function platformAgentsOf(domains: DomainsFile): string[] {
  const out: string[] = [];
  for (const id of domains.platform) {
    for (const agent of domains.domains.find((d) => d.id === id)?.agents ?? []) if (!out.includes(agent)) out.push(agent);
  }
  return out;
}

/** Checks the cross-file rules of validated parts and builds the frozen catalog with its maps. */
export function assembleCatalog(parts: CatalogParts): Catalog {
  const issues = crossCheck(parts);
  if (issues.length > 0) throw catalogError(issues);
  const workflowNames = parts.workflows.flatMap((w) => [[w.id, w] as const, ...w.aliases.map((a) => [a, w] as const)]);
  return Object.freeze({
    agents: parts.agents,
    domains: parts.domains.domains,
    platformDomains: parts.domains.platform,
    platformAgents: deepFreeze(platformAgentsOf(parts.domains)),
    products: parts.products.products,
    intelligenceTiers: parts.products.intelligenceTiers,
    workflows: parts.workflows,
    gates: parts.gates,
    agentsById: readonlyMap(parts.agents.map((a) => [a.id, a] as const)),
    domainsById: readonlyMap(parts.domains.domains.map((d) => [d.id, d] as const)),
    productsById: readonlyMap(parts.products.products.map((p) => [p.id, p] as const)),
    tiersById: readonlyMap(parts.products.intelligenceTiers.map((t) => [t.id, t] as const)),
    workflowsById: readonlyMap(parts.workflows.map((w) => [w.id, w] as const)),
    workflowsByName: readonlyMap(workflowNames),
    gatesById: readonlyMap(parts.gates.map((g) => [g.id, g] as const)),
  });
}

/**
 * Validates raw catalog content (each file against its schema, then the cross-file rules) and
 * returns the frozen catalog. Throws ERR_CONFIG_INVALID naming the file and the path inside it.
 */
export function loadCatalog(sources: CatalogSources): Catalog {
  return assembleCatalog({
    agents: parseCatalogFile(CATALOG_FILES.agents, AgentsFileSchema, sources.agents),
    domains: parseCatalogFile(CATALOG_FILES.domains, DomainsFileSchema, sources.domains),
    products: parseCatalogFile(CATALOG_FILES.products, ProductsFileSchema, sources.products),
    workflows: parseCatalogFile(CATALOG_FILES.workflows, WorkflowsFileSchema, sources.workflows),
    gates: parseCatalogFile(CATALOG_FILES.gates, GatesFileSchema, sources.gates),
  });
}

/** The built-in catalog files, validated and frozen (copy with structuredClone to experiment). */
export const CATALOG_PARTS: CatalogParts = Object.freeze({
  agents: AGENTS,
  domains: Object.freeze({ domains: DOMAIN_DEFS, platform: PLATFORM_DOMAINS }),
  products: Object.freeze({ products: PRODUCTS, intelligenceTiers: INTELLIGENCE_TIER_DEFS }),
  workflows: WORKFLOWS,
  gates: GATES,
});

/** The built-in catalog. */
export const catalog: Catalog = assembleCatalog(CATALOG_PARTS);

// ---------------------------------------------------------------------------------------------
// Lookups over the built-in catalog
// ---------------------------------------------------------------------------------------------

/** The agent with `id`, or undefined. */
export function findAgent(id: string): AgentDef | undefined {
  return catalog.agentsById.get(id);
}

/** The agent with `id`; throws ERR_NOT_FOUND. */
export function getAgent(id: string): AgentDef {
  const agent = findAgent(id);
  if (agent === undefined) throw new EngineError('ERR_NOT_FOUND', `Unknown agent '${id}'`, { details: { agentId: id } });
  return agent;
}

/** The direct action `name` of agent `agentId`, or undefined (unknown agent or action). */
export function findAction(agentId: string, name: string): AgentActionDef | undefined {
  return findAgent(agentId)?.actions.find((a) => a.name === name);
}

/** The domain whose role the step's agent plays (see resolveStepDomain). */
export function stepDomain(workflow: WorkflowDef, step: WorkflowStep): Domain {
  const domain = resolveStepDomain(workflow, step, getAgent(step.agent));
  // Unreachable for the built-in catalog: crossCheck guarantees a domain for every step.
  if (domain === undefined) throw new EngineError('ERR_INTERNAL', `no domain for ${step.agent} in ${workflow.id}`);
  return domain;
}

/** The action a step runs: its own, else the agent's default action for the step's domain. */
export function stepAction(workflow: WorkflowDef, step: WorkflowStep): string {
  if (step.action !== null) return step.action;
  const role = agentDomainRole(getAgent(step.agent), stepDomain(workflow, step));
  if (role === undefined) throw new EngineError('ERR_INTERNAL', `no role for ${step.agent} in ${workflow.id}`);
  return role.defaultAction;
}

/** The highest tier tag among a workflow's agents (pipeline and background): what it needs to run fully. */
export function workflowTierTag(workflow: WorkflowDef): TierTag | null {
  return maxTag([...workflow.pipeline.map((s) => s.agent), ...workflow.background].map((id) => getAgent(id).tierTag));
}

/** Domains `agentId` belongs to, in the agent's order. */
export function domainsOfAgent(agentId: string): Domain[] {
  return getAgent(agentId).domains.map((d) => d.domain);
}
