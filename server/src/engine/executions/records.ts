/**
 * What the store keeps of an execution (a task, a workflow run, a RIGOR invocation or a direct agent
 * action). Every completed step is checkpointed here, so a restart resumes from the last one.
 */
import type { GateResultData, Phase, StepOutcome } from '../../../../protocol/events';
import type { IntelligenceTier, Priority, Scope } from '../catalog/enums';

export const EXECUTION_KINDS = ['task', 'workflow', 'rigor', 'action'] as const;
export type ExecutionKind = (typeof EXECUTION_KINDS)[number];

/** Id prefix per kind (contract: tasks start with `task_`). */
export const ID_PREFIX: Record<ExecutionKind, string> = { task: 'task', workflow: 'wf', rigor: 'exec', action: 'act' };

export const EXECUTION_STATUSES = ['queued', 'in_progress', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set(['completed', 'failed', 'cancelled']);

export type ExecutionPattern = 'sequential' | 'parallel' | 'hierarchical' | 'group_chat' | 'debate';

export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

export interface PhaseState {
  phase: Phase;
  status: 'Completed' | 'Running' | 'Pending' | 'Failed' | 'Skipped';
  durationMs: number | null;
}

export interface StepRecord {
  /** Position in the plan, from 0. Steps of later rounds (group chat, debate) get new positions. */
  step: number;
  agentId: string;
  action: string;
  /** Domain whose role the agent plays in this step (shared agents). */
  domain: string | null;
  /** Round of a group chat or debate (1 for other patterns). */
  round: number;
  /** A later step retried this one (its failure no longer decides the outcome). */
  superseded?: boolean;
  /** The approval asked for when this step failed for good (survives restarts). */
  escalationId?: string;
  /** Step id of a customer workflow (its input mapping refers to it). */
  stepId?: string;
  /** Why the orchestrator added this step when it is not in the template (re-routing, as-needed). */
  addedBecause?: string;
  status: StepStatus;
  /**
   * How the step ended (protocol/events.ts STEP_OUTCOMES): completed (status completed), not_applicable
   * (status skipped), needs_input, failed or error (status failed). Absent while it has not ended,
   * and on steps skipped or cancelled because the execution stopped.
   */
  outcome?: StepOutcome;
  /** Why it did not complete: the failed gates, the error, what was missing or not applicable. */
  reason?: string | null;
  /** The ACMF mode the agent acted under in this step (its mode, capped by the request's acmfMode). */
  acmfMode?: string | null;
  /** A person chose to go on past this failed step (who, from the approval). */
  continuedBy?: string;
  attempts: number;
  startedAt: string | null;
  completedAt: string | null;
  phases: PhaseState[];
  passed: boolean | null;
  confidence: number | null;
  summary: string | null;
  output: unknown;
  /** The Review: counts, the failed gates, and the whole table (doors read it here, not from the audit trail). */
  gates: GateSummary;
  error: { code: string; message: string } | null;
  /** Language-model tokens of the step's artifact (0 without a model); absent when the step ended without one, and on steps stored before it was kept. */
  tokens?: number;
}

export interface GateSummary {
  passed: number;
  failed: number;
  notApplicable: number;
  failures: GateResultData[];
  /**
   * All 21 results of the step's Review, in gate order (the same table its `phase.completed` audit record
   * holds). Absent on steps stored before it was kept (their views show `failures`) and on steps that
   * reached no Review.
   */
  results?: GateResultData[];
}

export const NO_GATES: GateSummary = { passed: 0, failed: 0, notApplicable: 0, failures: [] };

/** The request as accepted (validated), kept for resume and for the status views. */
export interface ExecutionRequest {
  prompt: string;
  capabilities: string[];
  intelligence: IntelligenceTier;
  scope: Scope;
  priority: Priority;
  source: string | null;
  callbackUrl: string | null;
  workflow: string | null;
  /** Agent and action of a RIGOR invocation or direct action. */
  agentId: string | null;
  action: string | null;
  acmfMode: string | null;
  input: Record<string, unknown>;
  /** The task verb that planned a task (catalog/verbs.ts), when one did. */
  verb?: string;
}

export interface ExecutionRecord {
  id: string;
  kind: ExecutionKind;
  status: ExecutionStatus;
  request: ExecutionRequest;
  pattern: ExecutionPattern;
  /** Lead (hierarchical), aggregator (parallel), moderator (group chat) or judge (debate). */
  lead: string | null;
  /** Orchestrators that own the execution: a domain orchestrator (tier 1) or the meta-orchestrator (tier 2). */
  orchestrator: { tier: 1 | 2; domains: string[] };
  /** The planned agents, in order (`agentsAssigned`). */
  agents: string[];
  steps: StepRecord[];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  updatedAt: string;
  estimatedCompletion: string;
  currentAgent: string | null;
  output: ExecutionOutput | null;
  error: ExecutionErrorInfo | null;
  /** Key that submitted it (coordination view and callback signature). */
  ownerKeyId: string | null;
  /** Tenant that owns it (absent: stored before tenants, the default tenant; tenants/tenant-id.ts). */
  tenantId?: string;
  /** Times the execution was resumed after a restart. */
  resumes: number;
  /** Customer workflow definition id, when it runs one. */
  definitionId?: string;
  /** The door's idempotency claim of the request that created it (Principal.idempotencyId). */
  idempotencyId?: string;
}

/** `output` of a finished execution (documented in docs/api.md). */
export interface ExecutionOutput {
  summary: string;
  passed: boolean;
  steps: Array<{ step: number; agentId: string; action: string; passed: boolean | null; outcome: StepOutcome | null; reason: string | null; confidence: number | null; summary: string | null }>;
  /** The last step's artifact data (the execution's main result). */
  result: unknown;
}

/** `error` of a failed or cancelled execution. */
export interface ExecutionErrorInfo {
  code: string;
  message: string;
  step: number | null;
  agentId: string | null;
}

/** A side effect performed by a step, recorded so a resumed or retried step never repeats it. */
export interface SideEffectRecord {
  /** `${executionId}:${step}:${key}` */
  id: string;
  executionId: string;
  step: number;
  attempt: number;
  key: string;
  at: string;
  /** `state: 'intent'`: written (durably) before the effect; the outcome (`result`) is unknown. Absent or 'done': the outcome. See side-effect-ledger.ts. */
  state?: 'intent' | 'done';
  /** Stable across every attempt of the effect: a callback's delivery id (X-Cadre-Delivery). */
  effectId?: string;
  /** Times the effect was started. */
  tries?: number;
  intentAt?: string;
  /** What the effect creates and must not outlive it (temporary worktrees), released after a failure or a crash. */
  resources?: Array<{ kind: 'worktree'; repo: string; path: string }>;
  /** The outcome was found in the world (a step resumed after a crash), not returned by the effect. */
  reconciled?: boolean;
  lastError?: string;
  result: unknown;
}

/** Measured step durations per agent, for `estimatedCompletion`. */
export interface AgentTiming {
  id: string;
  samples: number;
  meanMs: number;
}

/** A customer-defined workflow (POST /v1/customer/workflow). */
export interface WorkflowDefinitionRecord {
  id: string;
  name: string;
  pattern: ExecutionPattern;
  lead: string | null;
  steps: Array<{ id: string; agentId: string; action: string; dependsOn: string[]; input: Record<string, unknown> }>;
  createdAt: string;
  ownerKeyId: string | null;
}

/** What lists, retention and start-up scans read of an execution: kept in memory when the record is cold. */
export interface ExecutionSummary {
  id: string;
  kind: ExecutionKind;
  status: ExecutionStatus;
  ownerKeyId: string | null;
  /** Absent: the default tenant (summaries stored before tenants). */
  tenantId?: string;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** The request named a callback URL (start-up redelivers the ones not delivered). */
  callback: boolean;
  /** The idempotency claim of the request that created it (a retry after a crash finds it). */
  idempotencyId?: string;
  /**
   * Metering facts (billing-ai usage): the agents planned, the intelligence tier, the capabilities and
   * the project (request source) asked for, and the model tokens its steps reported (null when no step
   * reported any). Absent on summaries stored before they were kept: count those as unknown.
   */
  agents?: string[];
  intelligence?: string;
  capabilities?: string[];
  project?: string | null;
  tokens?: number | null;
}

export function summarizeExecution(r: ExecutionRecord): ExecutionSummary {
  const metered = (r.steps ?? []).filter((s) => typeof s.tokens === 'number');
  return {
    id: r.id, kind: r.kind, status: r.status, ownerKeyId: r.ownerKeyId ?? null, ...(r.tenantId ? { tenantId: r.tenantId } : {}), createdAt: r.createdAt, updatedAt: r.updatedAt,
    completedAt: r.completedAt ?? null, callback: r.request?.callbackUrl != null, ...(r.idempotencyId ? { idempotencyId: r.idempotencyId } : {}),
    agents: r.agents ?? [], intelligence: r.request?.intelligence ?? 'core', capabilities: r.request?.capabilities ?? [], project: r.request?.source ?? null,
    tokens: metered.length ? metered.reduce((n, s) => n + s.tokens!, 0) : null,
  };
}

/**
 * An ended execution is cold: its record (steps, artifacts, output: tens of KB) leaves memory for the
 * store's cold segment, and only its summary stays; reading it by id reads it from disk. So the
 * server's memory holds the running executions and a few hundred bytes per ended one.
 */
export const EXECUTION_TIERING = {
  isCold: (r: ExecutionRecord): boolean => TERMINAL_STATUSES.has(r.status),
  summary: summarizeExecution,
};
