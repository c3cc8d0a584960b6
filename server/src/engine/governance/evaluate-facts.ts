/**
 * adapt-ai `evaluate`: what the engine knows about how feedback and outcomes changed each agent,
 * handed to the skill (which computes calibration, ratios and proposals): the ACMF state of every
 * agent (mode, counters, failed reviews and the stricter gate thresholds they cause, mode changes),
 * the tenant's feedback, and the tenant's recent steps with their confidence and Review outcome.
 * ACMF state is the install's (one autonomy per agent); feedback and steps are the tenant's.
 */
import type { AgentAcmfState, ModeChange } from '../acmf/records';
import { qualityScore } from '../acmf/acmf-service';
import type { AdaptationRecord } from './adaptations';
import type { Scope } from '../catalog/enums';
import { adjustedThreshold, GATES } from '../catalog/gates';
import type { ExecutionRecord } from '../executions/records';
import { COLLECTIONS, type CollectionStore } from '../ports';
import { tenantFeedback, type FeedbackRecord } from './feedback';

/** Executions of the tenant whose steps are looked at (newest first): enough for calibration, bounded in memory. */
export const EVALUATE_EXECUTIONS = 200;
/** Newest feedback records looked at. */
export const EVALUATE_FEEDBACK = 5000;

export interface AgentEvaluationFacts {
  agentId: string;
  mode: string;
  tasks: number;
  successes: number;
  consecutiveSuccess: number;
  /** Failed reviews since the last passed one: each makes the quality gates stricter. */
  recentFailures: number;
  quality: number;
  recentOutcomes: boolean[];
  pendingPromotion: { to: string; reason: string } | null;
  /** The last mode changes (newest last). */
  modeChanges: ModeChange[];
  /** Numeric gates at the default scope: the catalog's threshold and the one this agent is held to now. */
  thresholds: Array<{ gate: string; comparison: 'min' | 'max'; base: number; effective: number }>;
}

export interface StepFact {
  executionId: string;
  step: number;
  agentId: string;
  action: string;
  confidence: number | null;
  passed: boolean | null;
  outcome: string | null;
  completedAt: string | null;
  failedGates: string[];
}

export interface EvaluateFacts {
  action: 'evaluate';
  tenantId: string;
  asOf: string;
  scope: Scope;
  agents: AgentEvaluationFacts[];
  feedback: FeedbackRecord[];
  steps: StepFact[];
  /** How many executions the steps come from (the newest EVALUATE_EXECUTIONS of the tenant). */
  executionsLooked: number;
  /** Adaptations in force for the tenant (its suppressions, the install's tunings), applied through ACMF. */
  adaptations: AdaptationRecord[];
}

function thresholdsOf(scope: Scope, recentFailures: number): AgentEvaluationFacts['thresholds'] {
  const out: AgentEvaluationFacts['thresholds'] = [];
  for (const g of GATES) {
    const base = g.thresholds[scope];
    if (base === null || g.comparison === null) continue;
    const effective = adjustedThreshold(g, scope, recentFailures);
    if (effective === null) continue;
    out.push({ gate: g.id, comparison: g.comparison, base, effective });
  }
  return out;
}

export function evaluateFacts(
  deps: { store: CollectionStore; recentExecutions(tenantId: string, limit: number): ExecutionRecord[]; adaptations?(tenantId: string): AdaptationRecord[] },
  tenantId: string, scope: Scope, asOf: string, self: string,
): EvaluateFacts {
  const states = deps.store.collection<AgentAcmfState>(COLLECTIONS.agents).list().sort((a, b) => a.id.localeCompare(b.id));
  const agents = states.map((s): AgentEvaluationFacts => ({
    agentId: s.id, mode: s.mode, tasks: s.tasks, successes: s.successes, consecutiveSuccess: s.consecutiveSuccess, recentFailures: s.recentFailures,
    quality: qualityScore(s), recentOutcomes: [...(s.recentOutcomes ?? [])],
    pendingPromotion: s.pendingPromotion ? { to: s.pendingPromotion.to, reason: s.pendingPromotion.reason } : null,
    modeChanges: s.history.slice(-10), thresholds: thresholdsOf(scope, s.recentFailures),
  }));
  const executions = deps.recentExecutions(tenantId, EVALUATE_EXECUTIONS).filter((e) => e.id !== self);
  const steps: StepFact[] = executions.flatMap((e) => e.steps.filter((s) => s.status === 'completed' || s.status === 'failed').map((s) => ({
    executionId: e.id, step: s.step, agentId: s.agentId, action: s.action, confidence: s.confidence, passed: s.passed, outcome: s.outcome ?? null,
    completedAt: s.completedAt, failedGates: (s.gates?.failures ?? []).map((f) => f.gate),
  })));
  return { action: 'evaluate', tenantId, asOf, scope, agents, feedback: tenantFeedback(deps.store, tenantId).slice(-EVALUATE_FEEDBACK), steps, executionsLooked: executions.length, adaptations: deps.adaptations?.(tenantId) ?? [] };
}
