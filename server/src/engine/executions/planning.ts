/**
 * Planning an execution: which verb a task names, the plan context of a tenant (its subscription),
 * what can be refused before an execution exists (preflight), the steps of a plan, and the plan of an
 * accepted execution again after a restart (replan).
 */
import type { Capability, IntelligenceTier, Scope } from '../catalog/enums';
import { LOCAL_SUBSCRIPTION, type Subscription } from '../catalog/subscription';
import { findVerb, isTaskVerb, verbPrefix, type TaskVerb } from '../catalog/verbs';
import { EngineError } from '../errors';
import type { RigorPipeline } from '../rigor/pipeline';
import { DEFAULT_TENANT_ID } from '../tenants/tenant-id';
import { planCustom, planSingle, planTask, planVerb, planWorkflow, type Plan, type PlanContext, type PlannedStep } from './plan';
import { NO_GATES, type ExecutionKind, type ExecutionRecord, type ExecutionRequest, type StepRecord, type WorkflowDefinitionRecord } from './records';

export interface PlanningDeps {
  rigor: Pick<RigorPipeline, 'readiness' | 'checkInput'>;
  /** Intelligence and scope of a request that sets neither (read per request: `reconfigure` changes them). */
  defaults: { intelligence: IntelligenceTier; scope: Scope };
  /** The planning defaults of a request on `source` (its folder's own .cadre.yaml); undefined: `defaults`. */
  defaultsFor?: (source: string | null) => { intelligence: IntelligenceTier; scope: Scope } | undefined;
  /** What a tenant has bought (products, commercial tier); default: a local install, everything. */
  subscription?: (tenantId: string) => Subscription;
  /** The workspace of a request that names no `source` (the editor's folder, `--workspace`). */
  defaultWorkspace?: () => string | undefined;
}

export class Planning {
  constructor(private readonly deps: PlanningDeps) {}

  context(intelligence: IntelligenceTier, tenantId: string | undefined): PlanContext {
    return { intelligence, subscription: this.deps.subscription?.(tenantId ?? DEFAULT_TENANT_ID) ?? LOCAL_SUBSCRIPTION };
  }

  sourceOf(source: string | undefined): string | null {
    return source ?? this.deps.defaultWorkspace?.() ?? null;
  }

  /** Intelligence and scope of a request that does not set them: its folder's configuration, else the engine's. */
  defaults(source: string | undefined): { intelligence: IntelligenceTier; scope: Scope } {
    return this.deps.defaultsFor?.(this.sourceOf(source)) ?? this.deps.defaults;
  }

  /** The verb of a task: explicit, or the `verb:` prefix of its text when the verb belongs to a requested capability. */
  verbOf(t: { task: string; capabilities: Capability[]; verb?: TaskVerb }): { verb: TaskVerb; rest: string } | undefined {
    const covers = (verb: TaskVerb) => {
      const cap = findVerb(verb)!.capability;
      return t.capabilities.some((c) => c === cap || (c === 'PLATFORM' && ['BUILD', 'OPERATE', 'SECURE'].includes(cap)));
    };
    if (t.verb) {
      if (!covers(t.verb)) {
        const message = `verb ${t.verb} belongs to ${findVerb(t.verb)!.capability}, which is not among the capabilities ${t.capabilities.join(', ')}`;
        throw new EngineError('ERR_VALIDATION', message, { details: { errors: [{ field: 'verb', message }] } });
      }
      return { verb: t.verb, rest: verbPrefix(t.task)?.rest ?? t.task };
    }
    const pre = verbPrefix(t.task);
    return pre && covers(pre.verb) ? pre : undefined;
  }

  /**
   * What can be known before an execution exists is answered now, not after an hour of waiting:
   * a step whose skill needs a workspace when the request has none is 422 ERR_NEEDS_INPUT naming
   * `source`; a verb, RIGOR invocation or direct action whose agent cannot run at all (no skill, or
   * no model for a skill that needs one) is 501 ERR_SKILL_UNAVAILABLE with the reason. Workflows and
   * capability tasks keep such steps: they end in error with the same reason when reached.
   */
  preflight(kind: ExecutionKind, plan: Plan, request: ExecutionRequest): void {
    const what = plan.verb ? `${plan.verb}` : kind === 'rigor' || kind === 'action' ? `${request.agentId} ${request.action}` : `${request.workflow ?? kind}`;
    for (const s of plan.steps.filter((p) => !p.asNeeded)) {
      const r = this.deps.rigor.readiness(s.agentId, s.action);
      if (r.unavailable && (plan.verb || kind === 'rigor' || kind === 'action')) {
        throw new EngineError('ERR_SKILL_UNAVAILABLE', `${what} cannot run: ${r.unavailable}`, { details: { agentId: s.agentId, action: s.action, verb: plan.verb ?? null } });
      }
      if (r.needs.includes('workspace') && !request.source) {
        const message = `${s.agentId} ${s.action} needs a workspace: give source (a project folder) or open a folder in the editor`;
        throw new EngineError('ERR_NEEDS_INPUT', `${what} needs input: ${message}`, { details: { errors: [{ field: 'source', message }], agentId: s.agentId, action: s.action } });
      }
      // The input of a direct action or RIGOR invocation is that one skill's: checked against its schema now.
      if ((kind === 'rigor' || kind === 'action') && request.input) this.deps.rigor.checkInput(s.agentId, s.action, request.input);
    }
  }

  /** The plan of an accepted execution, again after a restart. */
  replan(rec: ExecutionRecord, definition: (id: string) => WorkflowDefinitionRecord | undefined): Plan {
    if (rec.definitionId) {
      const def = definition(rec.definitionId);
      if (def) return planCustom(def);
    }
    // Accepted work resumes as it was planned: the subscription was checked when it was accepted.
    const ctx: PlanContext = { intelligence: rec.request.intelligence, subscription: LOCAL_SUBSCRIPTION };
    if (rec.kind === 'task') return isTaskVerb(rec.request.verb) ? planVerb(rec.request.verb, ctx) : planTask(rec.request.capabilities as Capability[], ctx);
    if (rec.kind === 'workflow' && rec.request.workflow) return planWorkflow(rec.request.capabilities[0]!, rec.request.workflow, ctx);
    return planSingle(rec.request.agentId!, rec.request.action, ctx);
  }
}

/** A new step of an execution, pending. */
export function newStep(s: PlannedStep, index: number, round: number, addedBecause?: string): StepRecord {
  return {
    step: index, agentId: s.agentId, action: s.action, domain: s.domain, round, status: 'pending', attempts: 0, startedAt: null, completedAt: null,
    phases: [], passed: null, confidence: null, summary: null, output: null, gates: NO_GATES, error: null,
    ...(s.id ? { stepId: s.id } : {}), ...(addedBecause ? { addedBecause } : {}),
  };
}
