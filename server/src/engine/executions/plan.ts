/**
 * Planning: which agents an execution runs, in which order and pattern, decided from the catalog.
 * Tasks are routed by the orchestrator of each requested capability; workflows follow their template
 * exactly; customer workflows are validated (unknown agents, empty steps, cycles).
 */
import {
  domainWorkflowOf, domainsOfCapability, findAction, findAgent, findVerb, findWorkflow, stepAction, stepDomain, tierHasFeature,
  type AgentDef, type TaskVerb, type WorkflowDef,
} from '../catalog/index';
import type { Capability, Domain, IntelligenceTier } from '../catalog/enums';
import { subscriptionRefusal, type Subscription } from '../catalog/subscription';
import { EngineError } from '../errors';
import type { ExecutionPattern, WorkflowDefinitionRecord } from './records';

/** What a plan is checked against: the request's intelligence (features) and the install's subscription (products, commercial tags). */
export interface PlanContext {
  intelligence: IntelligenceTier;
  subscription: Subscription;
}

export interface PlannedStep {
  agentId: string;
  action: string;
  domain: string | null;
  /** Runs only when the orchestrator calls for it (BUILD's debug-ai). */
  asNeeded: boolean;
  params: Record<string, string>;
  /** Customer workflow: step id, dependencies and input mapping. */
  id?: string;
  dependsOn?: string[];
  input?: Record<string, unknown>;
}

export interface Plan {
  pattern: ExecutionPattern;
  lead: string | null;
  steps: PlannedStep[];
  orchestrator: { tier: 1 | 2; domains: string[] };
  workflowId: string | null;
  finalize: string | null;
  /** The task verb that chose the steps, when a verb did. */
  verb?: TaskVerb;
}

function defaultAction(agent: AgentDef, domain: string | null): string {
  const role = agent.domains.find((d) => d.domain === domain) ?? agent.domains[0]!;
  return role.defaultAction;
}

function stepsOf(wf: WorkflowDef): PlannedStep[] {
  return wf.pipeline.map((s) => ({
    agentId: s.agent,
    action: stepAction(wf, s),
    domain: stepDomain(wf, s),
    asNeeded: s.condition === 'as_needed',
    params: { ...s.params },
  }));
}

/** A refusal of the subscription carries the preview the contract promises: what would run, and what it needs. */
export function tierError(what: string, reason: string, details: Record<string, unknown>, preview: Record<string, unknown>): EngineError {
  return new EngineError('ERR_TIER_REQUIRED', `${what}: ${reason}; this is a preview of what it would do`, { details: { ...details, preview } });
}

/** Every agent (and action) of a plan must be covered by the subscription. */
function requireSubscription(steps: Array<{ agentId: string; action?: string; domain?: string | null }>, ctx: PlanContext, what: string, preview: Record<string, unknown>): void {
  for (const s of steps) {
    const agent = findAgent(s.agentId);
    if (!agent) continue;
    const action = s.action ? findAction(s.agentId, s.action) : undefined;
    // A shared agent (review-ai, debug-ai) plays the role of the step's domain.
    const domain = (s.domain ?? agent.domains[0]!.domain) as Domain;
    const refusal = subscriptionRefusal(ctx.subscription, { domains: [domain], tag: action?.tierTag ?? agent.tierTag });
    if (refusal) throw tierError(what, `${s.agentId}${s.action ? ` ${s.action}` : ''}: ${refusal.reason}`, { ...refusal, agentId: s.agentId, commercialTier: ctx.subscription.commercialTier, products: [...ctx.subscription.products] }, preview);
  }
}

/** An action that needs a feature of a higher intelligence tier (attack-path analysis at ULTRA). */
function requireFeature(agentId: string, action: string, ctx: PlanContext): void {
  const def = findAction(agentId, action);
  if (def?.requiresFeature && !tierHasFeature(ctx.intelligence, def.requiresFeature)) {
    throw new EngineError('ERR_TIER_REQUIRED', `${agentId} ${action} needs ${def.requiresFeature}, a feature of a higher intelligence tier than ${ctx.intelligence} (set intelligence)`, {
      details: { feature: def.requiresFeature, intelligence: ctx.intelligence, preview: { agent: agentId, action, description: def.description } },
    });
  }
}

/** Tasks: each requested capability's domain orchestrator contributes its domain workflow. */
export function planTask(capabilities: Capability[], ctx: PlanContext): Plan {
  const domains: Domain[] = [];
  for (const cap of capabilities) for (const d of domainsOfCapability(cap)) if (!domains.includes(d)) domains.push(d);
  const steps: PlannedStep[] = [];
  for (const d of domains) {
    for (const s of stepsOf(domainWorkflowOf(d))) {
      if (!steps.some((x) => x.agentId === s.agentId && x.action === s.action)) steps.push(s);
    }
  }
  const single = domains.length === 1 ? domainWorkflowOf(domains[0]!) : null;
  const active = steps.filter((s) => !s.asNeeded);
  requireSubscription(active, ctx, `capabilities ${capabilities.join(', ')}`, { agents: active.map((s) => s.agentId), domains });
  return {
    // One domain: its own orchestrator and pattern. Several: the meta-orchestrator chains them in order.
    pattern: single?.pattern ?? 'sequential',
    lead: single?.lead ?? null,
    steps,
    orchestrator: { tier: single ? 1 : 2, domains },
    workflowId: single?.id ?? null,
    finalize: single?.finalize ?? null,
  };
}

/**
 * A task verb: the agents and actions of its row in catalog/verbs.ts (`code`: the BUILD workflow).
 * Steps above the request's intelligence (review's ULTRA security scan) are left out.
 */
export function planVerb(verb: TaskVerb, ctx: PlanContext): Plan {
  const def = findVerb(verb)!;
  if (def.workflow) {
    const plan = planWorkflow(def.capability, def.workflow, ctx);
    return { ...plan, verb };
  }
  const rank = (t: IntelligenceTier) => ['core', 'pro', 'ultra'].indexOf(t);
  const steps: PlannedStep[] = def.steps
    .filter((s) => !s.minIntelligence || rank(ctx.intelligence) >= rank(s.minIntelligence))
    .map((s) => ({ agentId: s.agent, action: s.action, domain: def.capability, asNeeded: false, params: {} }));
  requireSubscription(steps, ctx, `${verb}`, { verb, agents: steps.map((s) => `${s.agentId} ${s.action}`) });
  for (const s of steps) requireFeature(s.agentId, s.action, ctx);
  return { pattern: def.pattern, lead: null, steps, orchestrator: { tier: 1, domains: [def.capability] }, workflowId: null, finalize: null, verb };
}

/** Workflows: the template's exact pipeline; `capability` must be one the workflow spans. */
export function planWorkflow(capability: string, name: string, ctx: PlanContext): Plan {
  const wf = findWorkflow(name);
  if (!wf) throw new EngineError('ERR_VALIDATION', `unknown workflow "${name}"`, { details: { errors: [{ field: 'workflow', message: `unknown workflow "${name}"` }] } });
  const spans = capability === 'PLATFORM' ? wf.capabilities.every((c) => (['BUILD', 'OPERATE', 'SECURE'] as string[]).includes(c)) : (wf.capabilities as string[]).includes(capability);
  if (!spans) {
    const message = `workflow ${wf.id} spans ${wf.capabilities.join(', ')}, not ${capability}`;
    throw new EngineError('ERR_VALIDATION', message, { details: { errors: [{ field: 'capability', message }] } });
  }
  const steps = stepsOf(wf);
  requireSubscription(steps.filter((s) => !s.asNeeded), ctx, `workflow ${wf.id}`, { workflow: wf.id, agents: steps.map((s) => s.agentId), pattern: wf.pattern });
  return {
    pattern: wf.pattern, lead: wf.lead, steps, workflowId: wf.id, finalize: wf.finalize,
    orchestrator: wf.kind === 'template' ? { tier: 2, domains: [...wf.capabilities] } : { tier: 1, domains: [...wf.capabilities] },
  };
}

/** A RIGOR invocation or a direct action: one agent, one step. */
export function planSingle(agentId: string, action: string | null, ctx: PlanContext): Plan {
  const agent = findAgent(agentId);
  if (!agent) throw new EngineError('ERR_NOT_FOUND', `unknown agent "${agentId}"`, { details: { agentId } });
  const name = action ?? defaultAction(agent, null);
  const def = findAction(agentId, name);
  if (!def) throw new EngineError('ERR_NOT_FOUND', `${agentId} has no action "${name}" (actions: ${agent.actions.map((a) => a.name).join(', ')})`, { details: { agentId, action: name } });
  const domain = agent.domains[0]!.domain;
  requireSubscription([{ agentId, action: name, domain }], ctx, `${agentId} ${name}`, { agent: agentId, action: name, description: def.description });
  requireFeature(agentId, name, ctx);
  return { pattern: 'sequential', lead: null, steps: [{ agentId, action: name, domain, asNeeded: false, params: {} }], orchestrator: { tier: 1, domains: [domain] }, workflowId: null, finalize: null };
}

export interface CustomWorkflowInput {
  name: string;
  pattern: ExecutionPattern;
  lead?: string | null;
  steps: Array<{ id?: string; agent: string; action?: string; depends_on?: string[]; input?: Record<string, unknown> }>;
}

/** Validates a customer workflow and orders its steps (stable topological order). */
export function validateCustomWorkflow(def: CustomWorkflowInput, ctx: PlanContext): { steps: WorkflowDefinitionRecord['steps']; lead: string | null } {
  const errors: Array<{ field: string; message: string }> = [];
  if (def.steps.length === 0) errors.push({ field: 'steps', message: 'a workflow needs at least one step' });
  const ids = def.steps.map((s, i) => s.id ?? `step${i + 1}`);
  ids.forEach((id, i) => {
    if (ids.indexOf(id) !== i) errors.push({ field: `steps[${i}].id`, message: `duplicate step id "${id}"` });
  });
  def.steps.forEach((s, i) => {
    const agent = findAgent(s.agent);
    if (!agent) return void errors.push({ field: `steps[${i}].agent`, message: `unknown agent "${s.agent}"` });
    const action = s.action ?? defaultAction(agent, null);
    if (!findAction(s.agent, action)) errors.push({ field: `steps[${i}].action`, message: `${s.agent} has no action "${action}"` });
    (s.depends_on ?? []).forEach((d, j) => {
      if (!ids.includes(d)) errors.push({ field: `steps[${i}].depends_on[${j}]`, message: `unknown step "${d}"` });
      if (d === ids[i]) errors.push({ field: `steps[${i}].depends_on[${j}]`, message: 'a step cannot depend on itself' });
    });
  });
  const lead = def.lead ?? null;
  if ((def.pattern === 'hierarchical' || def.pattern === 'debate') && !lead) errors.push({ field: 'lead', message: `pattern ${def.pattern} needs a lead agent` });
  if (lead && !def.steps.some((s) => s.agent === lead)) errors.push({ field: 'lead', message: `lead "${lead}" is not one of the steps` });
  if (errors.length > 0) throw new EngineError('ERR_VALIDATION', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { details: { errors } });

  // Kahn's algorithm, taking steps in their listed order when several are ready.
  const remaining = def.steps.map((s, i) => ({ id: ids[i]!, deps: new Set(s.depends_on ?? []), s }));
  const ordered: WorkflowDefinitionRecord['steps'] = [];
  while (remaining.length > 0) {
    const idx = remaining.findIndex((r) => [...r.deps].every((d) => ordered.some((o) => o.id === d)));
    if (idx < 0) {
      const cycle = remaining.map((r) => r.id).join(' -> ');
      throw new EngineError('ERR_VALIDATION', `the steps form a cycle: ${cycle}`, { details: { errors: [{ field: 'steps', message: `dependency cycle among ${cycle}` }] } });
    }
    const [r] = remaining.splice(idx, 1);
    const agent = findAgent(r!.s.agent)!;
    ordered.push({ id: r!.id, agentId: r!.s.agent, action: r!.s.action ?? defaultAction(agent, null), dependsOn: [...r!.deps], input: r!.s.input ?? {} });
  }
  requireSubscription(ordered, ctx, `workflow ${def.name}`, { steps: ordered.map((s) => `${s.agentId} ${s.action}`) });
  for (const s of ordered) requireFeature(s.agentId, s.action, ctx);
  return { steps: ordered, lead };
}

export function planCustom(def: WorkflowDefinitionRecord): Plan {
  return {
    pattern: def.pattern, lead: def.lead, workflowId: null, finalize: null,
    steps: def.steps.map((s) => ({ agentId: s.agentId, action: s.action, domain: findAgent(s.agentId)?.domains[0]?.domain ?? null, asNeeded: false, params: {}, id: s.id, dependsOn: s.dependsOn, input: s.input })),
    orchestrator: { tier: 2, domains: [...new Set(def.steps.flatMap((s) => findAgent(s.agentId)?.domains.map((d) => d.domain) ?? []))] },
  };
}

