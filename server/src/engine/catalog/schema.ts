/**
 * Shapes of the declarative catalog (agents, domains, products and tiers, workflows, gates) as zod
 * schemas, the closed vocabularies they use, and the loader that validates one catalog file and
 * deep-freezes it. Types come from `z.output` so the data, the validator and the types never drift.
 *
 * Rules that need more than one file (an agent id used by a workflow exists, a domain's agent list
 * matches the agents' memberships, ...) are checked in `index.ts`.
 */
import { z } from 'zod';
import { EngineError } from '../errors';
import {
  AVAILABILITY_MODES,
  CAPABILITIES,
  DOMAINS,
  GATE_CATEGORIES,
  INTELLIGENCE_TIERS,
  SCOPES,
  TIER_TAGS,
  type TierTag,
} from './enums';

// ---------------------------------------------------------------------------------------------
// Vocabularies
// ---------------------------------------------------------------------------------------------

/** Agent ids: kebab-case ending in `-ai` (`req-ai`, `threathunter-ai`). */
export const AGENT_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*-ai$/;
/** Action names, workflow ids and aliases, gate ids: kebab-case. */
export const KEBAB_CASE_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** Gate evaluator keys: camelCase. */
export const CAMEL_CASE_PATTERN = /^[a-z][a-zA-Z0-9]*$/;

/** Concurrent steps an agent accepts when its catalog entry does not say otherwise. */
export const DEFAULT_AGENT_CAPACITY = 4;

/** Features that the intelligence tiers switch on (contract: "Products and intelligence tiers"). */
export const FEATURE_FLAGS = [
  'container-scanning',
  'basic-threat-hunting',
  'dependency-scanning',
  'advanced-threat-queries',
  'static-code-analysis',
  'custom-rules',
  'attack-path-analysis',
  'reasoning-escalation',
] as const;
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];

/** Model class of an intelligence tier: CORE fast, PRO more capable, ULTRA frontier. */
export const MODEL_CLASSES = ['fast', 'capable', 'frontier'] as const;
export type ModelClass = (typeof MODEL_CLASSES)[number];

export const PRODUCT_KINDS = ['core', 'addon'] as const;
export type ProductKind = (typeof PRODUCT_KINDS)[number];

/**
 * Execution patterns of the contract. Cadre's meaning of each (the contract does not define them):
 * - `sequential`: steps run one after another in pipeline order; each receives the goal context and
 *   every earlier step's result.
 * - `parallel`: the steps run concurrently; `lead` (when set) runs after all of them as the
 *   aggregator, and `finalize` (when set) is the orchestrator's join over all results.
 * - `hierarchical`: steps run in pipeline order like `sequential`; `lead` names the agent that owns the
 *   chain (shown in status, named in escalations). Retry, re-routing and escalation are the
 *   orchestrator's rules (patterns.ts `handleFailure`), not decisions of the lead agent.
 * - `group_chat`: the agents take turns in pipeline order on one shared transcript, round after
 *   round, until a round adds nothing new; `lead` takes its turn like the others (it does not moderate).
 * - `debate`: every agent but `lead` states a position in pipeline order, then each answers the
 *   others once; `lead` judges and writes the result.
 */
export const WORKFLOW_PATTERNS = ['sequential', 'parallel', 'hierarchical', 'group_chat', 'debate'] as const;
export type WorkflowPattern = (typeof WORKFLOW_PATTERNS)[number];
/** Patterns that need a `lead` (coordinator or judge). */
export const PATTERNS_NEEDING_LEAD: readonly WorkflowPattern[] = ['hierarchical', 'debate'];

/** `domain`: the orchestrator of one capability (tier 1); `template`: a cross-capability template (tier 2). */
export const WORKFLOW_KINDS = ['domain', 'template'] as const;
export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];

/** `on_demand`: started by a request; `event_driven`: started by engine events (OPERATE). */
export const WORKFLOW_TRIGGERS = ['on_demand', 'event_driven'] as const;
export type WorkflowTrigger = (typeof WORKFLOW_TRIGGERS)[number];

/** Orchestrator steps that are not agents (SECURE's "then correlation of findings"). */
export const WORKFLOW_FINALIZERS = ['correlate-findings'] as const;
export type WorkflowFinalizer = (typeof WORKFLOW_FINALIZERS)[number];

/** `as_needed`: the step runs only when an earlier step failed or asked for it (BUILD's debug-ai). */
export const STEP_CONDITIONS = ['always', 'as_needed'] as const;
export type StepCondition = (typeof STEP_CONDITIONS)[number];

export const GATE_UNITS = ['ratio', 'percent', 'ms', 'tokens', 'lines', 'cyclomatic', 'count'] as const;
export type GateUnit = (typeof GATE_UNITS)[number];

/** `min`: the measured value must be >= the threshold; `max`: it must be <= the threshold. */
export const GATE_COMPARISONS = ['min', 'max'] as const;
export type GateComparison = (typeof GATE_COMPARISONS)[number];

/**
 * How a numeric gate's threshold behaves. `quality`: a quality bar that gets stricter from demo to
 * production and after failed reviews. `budget`: a resource ceiling (time, tokens) that grows with the
 * scope's thoroughness and is not tightened after failures.
 */
export const GATE_SCALINGS = ['quality', 'budget'] as const;
export type GateScaling = (typeof GATE_SCALINGS)[number];

const TAG_RANK: Readonly<Record<TierTag, number>> = { PRO: 1, ULTRA: 2 };

/** Rank of a tier tag: untagged 0, PRO 1, ULTRA 2. */
export function tierTagRank(tag: TierTag | null): number {
  return tag === null ? 0 : TAG_RANK[tag];
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Readonly all the way down: what a loaded (deep-frozen) catalog value looks like. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

const text = z.string().trim().min(1);
const agentId = z.string().regex(AGENT_ID_PATTERN, 'must be an agent id such as coder-ai');
const kebab = z.string().regex(KEBAB_CASE_PATTERN, 'must be kebab-case');

/** Reports every value that occurs more than once in `values` (at its later positions). */
function reportDuplicates(
  ctx: z.RefinementCtx,
  values: readonly unknown[],
  what: string,
  pathOf: (index: number) => PropertyKey[],
): void {
  const seen = new Set<unknown>();
  values.forEach((value, index) => {
    if (seen.has(value)) ctx.addIssue({ code: 'custom', message: `duplicate ${what} '${String(value)}'`, path: pathOf(index) });
    seen.add(value);
  });
}

// ---------------------------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------------------------

export const AgentActionSchema = z.strictObject({
  /** Path segment of `/api/agents/{id}/{action}`. */
  name: kebab,
  tierTag: z.enum(TIER_TAGS).nullable(),
  description: text,
  /** True when the contract's "Direct agent actions named" table lists it; false for Cadre's additions. */
  named: z.boolean(),
  /** An intelligence-tier feature without which the action answers as a preview. */
  requiresFeature: z.enum(FEATURE_FLAGS).nullable().default(null),
});

export const AgentDomainRoleSchema = z.strictObject({
  domain: z.enum(DOMAINS),
  /** The agent's role in this domain (contract wording). */
  role: text,
  /** The action the agent runs as a workflow or task step in this role, unless the step names one. */
  defaultAction: kebab,
});

export const AgentSchema = z
  .strictObject({
    id: agentId,
    displayName: text,
    description: text,
    domains: z.array(AgentDomainRoleSchema).min(1),
    tierTag: z.enum(TIER_TAGS).nullable(),
    availability: z.enum(AVAILABILITY_MODES),
    /** May open pull requests through the source-hosting app. */
    prCapable: z.boolean(),
    /** Concurrent steps; load = (running + queued) / capacity, backpressure above 85%. */
    capacity: z.number().int().positive().default(DEFAULT_AGENT_CAPACITY),
    actions: z.array(AgentActionSchema).min(1),
  })
  .superRefine((agent, ctx) => {
    reportDuplicates(ctx, agent.domains.map((d) => d.domain), 'domain', (i) => ['domains', i, 'domain']);
    reportDuplicates(ctx, agent.actions.map((a) => a.name), 'action', (i) => ['actions', i, 'name']);
    const names = new Set(agent.actions.map((a) => a.name));
    agent.domains.forEach((d, i) => {
      if (!names.has(d.defaultAction)) {
        ctx.addIssue({ code: 'custom', message: `default action '${d.defaultAction}' is not one of the agent's actions`, path: ['domains', i, 'defaultAction'] });
      }
    });
    // Contract, Availability: the commercial mode is exactly the PRO/ULTRA-tagged agents.
    if ((agent.availability === 'commercial') !== (agent.tierTag !== null)) {
      ctx.addIssue({ code: 'custom', message: 'availability is commercial exactly when the agent carries a tier tag', path: ['availability'] });
    }
    // Contract rule 4: a tagged agent's actions carry (at least) its tag.
    agent.actions.forEach((a, i) => {
      if (tierTagRank(a.tierTag) < tierTagRank(agent.tierTag)) {
        ctx.addIssue({ code: 'custom', message: `action tier tag must be at least the agent's (${String(agent.tierTag)})`, path: ['actions', i, 'tierTag'] });
      }
    });
  });

export const AgentsFileSchema = z.array(AgentSchema).superRefine((agents, ctx) => {
  reportDuplicates(ctx, agents.map((a) => a.id), 'agent id', (i) => [i, 'id']);
});

// ---------------------------------------------------------------------------------------------
// Domains
// ---------------------------------------------------------------------------------------------

export const DomainSchema = z
  .strictObject({
    id: z.enum(DOMAINS),
    displayName: text,
    description: text,
    tierTag: z.enum(TIER_TAGS).nullable(),
    /** Member agents in the order of the contract's table. */
    agents: z.array(agentId).min(1),
    /** Core agents belong to this domain only; shared agents also belong to another domain. */
    counts: z.strictObject({ core: z.number().int().nonnegative(), shared: z.number().int().nonnegative() }),
  })
  .superRefine((domain, ctx) => {
    reportDuplicates(ctx, domain.agents, 'agent', (i) => ['agents', i]);
    if (domain.counts.core + domain.counts.shared !== domain.agents.length) {
      ctx.addIssue({ code: 'custom', message: `core + shared must equal the ${domain.agents.length} agents listed`, path: ['counts'] });
    }
  });

export const DomainsFileSchema = z
  .strictObject({
    domains: z.array(DomainSchema),
    /** Domains that make up the PLATFORM capability. */
    platform: z.array(z.enum(DOMAINS)).min(1),
  })
  .superRefine((file, ctx) => {
    reportDuplicates(ctx, file.platform, 'platform domain', (i) => ['platform', i]);
    const ids = file.domains.map((d) => d.id);
    if (ids.length !== DOMAINS.length || ids.some((id, i) => id !== DOMAINS[i])) {
      ctx.addIssue({ code: 'custom', message: `domains must be exactly ${DOMAINS.join(', ')} in that order`, path: ['domains'] });
    }
  });

// ---------------------------------------------------------------------------------------------
// Products and intelligence tiers
// ---------------------------------------------------------------------------------------------

export const ProductSchema = z.strictObject({
  id: z.enum(CAPABILITIES),
  /** `core`: BUILD, OPERATE, SECURE, PLATFORM; `addon`: may be added to any core product. */
  kind: z.enum(PRODUCT_KINDS),
  displayName: text,
  description: text,
  domains: z.array(z.enum(DOMAINS)).min(1),
});

export const IntelligenceTierSchema = z.strictObject({
  id: z.enum(INTELLIGENCE_TIERS),
  displayName: text,
  modelClass: z.enum(MODEL_CLASSES),
  modelDescription: text,
  /** Features this tier adds on top of the tiers below it. */
  adds: z.array(z.enum(FEATURE_FLAGS)),
  /** Multiplier of the cost-budget gate's token budget (a bigger model class spends more tokens). */
  tokenBudgetFactor: z.number().positive(),
});

export const ProductsFileSchema = z
  .strictObject({
    products: z.array(ProductSchema).min(1),
    intelligenceTiers: z.array(IntelligenceTierSchema),
  })
  .superRefine((file, ctx) => {
    reportDuplicates(ctx, file.products.map((p) => p.id), 'product id', (i) => ['products', i, 'id']);
    const tierIds = file.intelligenceTiers.map((t) => t.id);
    if (tierIds.length !== INTELLIGENCE_TIERS.length || tierIds.some((id, i) => id !== INTELLIGENCE_TIERS[i])) {
      ctx.addIssue({ code: 'custom', message: `intelligence tiers must be exactly ${INTELLIGENCE_TIERS.join(', ')} in that order`, path: ['intelligenceTiers'] });
    }
    const features: FeatureFlag[] = [];
    const paths: PropertyKey[][] = [];
    file.intelligenceTiers.forEach((t, i) => t.adds.forEach((f, j) => { features.push(f); paths.push(['intelligenceTiers', i, 'adds', j]); }));
    reportDuplicates(ctx, features, 'feature', (k) => paths[k] ?? []);
  });

// ---------------------------------------------------------------------------------------------
// Workflows
// ---------------------------------------------------------------------------------------------

export const WorkflowStepSchema = z.strictObject({
  agent: agentId,
  /** The domain whose role the agent plays here; required for shared agents in templates. */
  domain: z.enum(DOMAINS).nullable().default(null),
  /** Contract's label of the step, e.g. OPERATE's detect / diagnose / coordinate. */
  stage: text.nullable().default(null),
  /** Action to run; null = the agent's default action for the step's domain. */
  action: kebab.nullable().default(null),
  condition: z.enum(STEP_CONDITIONS).default('always'),
  /** Fixed parameters of the step (e.g. deployment strategy). */
  params: z.record(z.string(), z.string()).default({}),
  note: text.nullable().default(null),
});

export const WorkflowSchema = z
  .strictObject({
    id: kebab,
    kind: z.enum(WORKFLOW_KINDS),
    displayName: text,
    description: text,
    /** Other accepted names of the `workflow` request value. */
    aliases: z.array(kebab).default([]),
    /** Domains the workflow spans: one for a domain workflow, in order of first appearance for a template. */
    capabilities: z.array(z.enum(DOMAINS)).min(1),
    /** The fixed, ordered agent pipeline. */
    pipeline: z.array(WorkflowStepSchema).min(1),
    /** Agents that run continuously alongside the pipeline (OPERATE's capacity-ai, backup-ai). */
    background: z.array(agentId).default([]),
    trigger: z.enum(WORKFLOW_TRIGGERS).default('on_demand'),
    finalize: z.enum(WORKFLOW_FINALIZERS).nullable().default(null),
    pattern: z.enum(WORKFLOW_PATTERNS),
    patternReason: text,
    /** Coordinator (hierarchical), aggregator (parallel), moderator (group_chat) or judge (debate). */
    lead: agentId.nullable().default(null),
  })
  .superRefine((wf, ctx) => {
    const agents = wf.pipeline.map((s) => s.agent);
    reportDuplicates(ctx, agents, 'pipeline agent', (i) => ['pipeline', i, 'agent']);
    reportDuplicates(ctx, wf.capabilities, 'capability', (i) => ['capabilities', i]);
    reportDuplicates(ctx, wf.aliases, 'alias', (i) => ['aliases', i]);
    if (wf.kind === 'domain' && wf.capabilities.length !== 1) {
      ctx.addIssue({ code: 'custom', message: 'a domain workflow has exactly one capability', path: ['capabilities'] });
    }
    wf.background.forEach((a, i) => {
      if (agents.includes(a)) ctx.addIssue({ code: 'custom', message: `background agent '${a}' is also a pipeline step`, path: ['background', i] });
    });
    if (wf.lead !== null && !agents.includes(wf.lead)) {
      ctx.addIssue({ code: 'custom', message: `lead '${wf.lead}' is not in the pipeline`, path: ['lead'] });
    }
    if (PATTERNS_NEEDING_LEAD.includes(wf.pattern) && wf.lead === null) {
      ctx.addIssue({ code: 'custom', message: `pattern ${wf.pattern} needs a lead`, path: ['lead'] });
    }
    if (wf.pattern === 'sequential' && wf.lead !== null) {
      ctx.addIssue({ code: 'custom', message: 'a sequential workflow has no lead', path: ['lead'] });
    }
  });

export const WorkflowsFileSchema = z.array(WorkflowSchema).superRefine((workflows, ctx) => {
  const names: string[] = [];
  const paths: PropertyKey[][] = [];
  workflows.forEach((wf, i) => {
    names.push(wf.id);
    paths.push([i, 'id']);
    wf.aliases.forEach((alias, j) => { names.push(alias); paths.push([i, 'aliases', j]); });
  });
  reportDuplicates(ctx, names, 'workflow id or alias', (k) => paths[k] ?? []);
});

// ---------------------------------------------------------------------------------------------
// Gates
// ---------------------------------------------------------------------------------------------

export const GateSchema = z
  .strictObject({
    /** 1-based position in gates.md; gates run in this order. */
    number: z.number().int().positive(),
    id: kebab,
    category: z.enum(GATE_CATEGORIES),
    /** When the gate passes (gates.md, "passes when"). */
    description: text,
    /** Key of the evaluator function. */
    check: z.string().regex(CAMEL_CASE_PATTERN, 'must be camelCase'),
    unit: z.enum(GATE_UNITS).nullable(),
    comparison: z.enum(GATE_COMPARISONS).nullable(),
    scaling: z.enum(GATE_SCALINGS).nullable(),
    thresholds: z.record(z.enum(SCOPES), z.number().nonnegative().nullable()),
    /**
     * Quality gates only: the strictest value the after-failure adjustment may reach (the cap of a
     * `min` gate, the floor of a `max` gate).
     */
    strictLimit: z.number().nonnegative().nullable(),
  })
  .superRefine((gate, ctx) => {
    const numeric = gate.comparison !== null;
    const values = SCOPES.map((s) => gate.thresholds[s]);
    const consistent =
      (gate.unit !== null) === numeric &&
      (gate.scaling !== null) === numeric &&
      values.every((v) => (v !== null) === numeric);
    if (!consistent) {
      ctx.addIssue({ code: 'custom', message: 'unit, scaling and every threshold are set exactly when comparison is set (null for a pass/fail gate)', path: ['comparison'] });
    }
    if ((gate.strictLimit !== null) !== (gate.scaling === 'quality')) {
      ctx.addIssue({ code: 'custom', message: 'strictLimit is set exactly for quality gates', path: ['strictLimit'] });
    }
    if (gate.scaling === 'budget' && gate.comparison !== 'max') {
      ctx.addIssue({ code: 'custom', message: 'a budget gate is a max gate', path: ['comparison'] });
    }
    if (gate.unit === 'ratio' && values.some((v) => v !== null && v > 1)) {
      ctx.addIssue({ code: 'custom', message: 'a ratio threshold lies in [0, 1]', path: ['thresholds'] });
    }
    if (gate.unit === 'percent' && values.some((v) => v !== null && v > 100)) {
      ctx.addIssue({ code: 'custom', message: 'a percent threshold lies in [0, 100]', path: ['thresholds'] });
    }
  });

export const GatesFileSchema = z.array(GateSchema).superRefine((gates, ctx) => {
  gates.forEach((g, i) => {
    if (g.number !== i + 1) ctx.addIssue({ code: 'custom', message: `gate number must be ${i + 1} (its position)`, path: [i, 'number'] });
  });
  reportDuplicates(ctx, gates.map((g) => g.id), 'gate id', (i) => [i, 'id']);
  reportDuplicates(ctx, gates.map((g) => g.check), 'gate check', (i) => [i, 'check']);
});

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

export type AgentActionDef = DeepReadonly<z.output<typeof AgentActionSchema>>;
export type AgentDomainRole = DeepReadonly<z.output<typeof AgentDomainRoleSchema>>;
export type AgentDef = DeepReadonly<z.output<typeof AgentSchema>>;
export type DomainDef = DeepReadonly<z.output<typeof DomainSchema>>;
export type DomainsFile = DeepReadonly<z.output<typeof DomainsFileSchema>>;
export type ProductDef = DeepReadonly<z.output<typeof ProductSchema>>;
export type IntelligenceTierDef = DeepReadonly<z.output<typeof IntelligenceTierSchema>>;
export type ProductsFile = DeepReadonly<z.output<typeof ProductsFileSchema>>;
export type WorkflowStep = DeepReadonly<z.output<typeof WorkflowStepSchema>>;
export type WorkflowDef = DeepReadonly<z.output<typeof WorkflowSchema>>;
export type GateDef = DeepReadonly<z.output<typeof GateSchema>>;

/** What the catalog source files may contain before validation (defaults may be left out). */
export type AgentInput = DeepReadonly<z.input<typeof AgentSchema>>;
export type DomainsFileInput = DeepReadonly<z.input<typeof DomainsFileSchema>>;
export type ProductsFileInput = DeepReadonly<z.input<typeof ProductsFileSchema>>;
export type WorkflowInput = DeepReadonly<z.input<typeof WorkflowSchema>>;
export type GateInput = DeepReadonly<z.input<typeof GateSchema>>;

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

/** Names of the catalog files, as they appear in load errors. */
export const CATALOG_FILES = {
  agents: 'catalog/agents.ts',
  domains: 'catalog/domains.ts',
  products: 'catalog/products.ts',
  workflows: 'catalog/workflows.ts',
  gates: 'catalog/gates.ts',
} as const;
export type CatalogFile = (typeof CATALOG_FILES)[keyof typeof CATALOG_FILES];

/** One problem found in a catalog file. */
export interface CatalogIssue {
  file: string;
  /** Path inside the file's exported value, e.g. `[3].actions[0].tierTag`. */
  path: string;
  message: string;
}

/** `[3].actions[0].tierTag` from `[3, 'actions', 0, 'tierTag']`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('').replace(/^\./, '') || '(root)';
}

/** The id (or name) of the outermost entry along `path`, so a message can say which agent or gate is wrong. */
function entryLabel(root: unknown, path: readonly PropertyKey[]): string | undefined {
  let node: unknown = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
    if (typeof node === 'object' && node !== null) {
      const label = (node as { id?: unknown; name?: unknown }).id ?? (node as { name?: unknown }).name;
      if (typeof label === 'string') return label;
    }
  }
  return undefined;
}

/** Issue with file, readable path and the entry it belongs to. */
export function catalogIssue(file: string, root: unknown, path: readonly PropertyKey[], message: string): CatalogIssue {
  const label = entryLabel(root, path);
  return { file, path: formatPath(path), message: label === undefined ? message : `${message} (entry '${label}')` };
}

/** The load error: ERR_CONFIG_INVALID, naming the file and the path inside it of the first issue. */
export function catalogError(issues: readonly CatalogIssue[]): EngineError {
  const [first] = issues;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  const message = first === undefined
    ? 'Invalid catalog'
    : `Invalid catalog file ${first.file} at ${first.path}: ${first.message}${more}`;
  return new EngineError('ERR_CONFIG_INVALID', message, { details: { issues: issues.map((i) => ({ ...i })) } });
}

/** Object.freeze on every object and array reachable from `value`; returns `value`. */
export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value as DeepReadonly<T>;
}

/**
 * Validates one catalog file's value against its schema and deep-freezes the result.
 * Throws ERR_CONFIG_INVALID naming `file` and the path inside it.
 */
export function parseCatalogFile<S extends z.ZodType>(file: string, schema: S, raw: unknown): DeepReadonly<z.output<S>> {
  const result = schema.safeParse(raw);
  if (!result.success) {
    throw catalogError(result.error.issues.map((issue) => catalogIssue(file, raw, issue.path, issue.message)));
  }
  return deepFreeze(result.data);
}
