/**
 * Engine events: what an execution emits, in order. They are the SSE wire format too: `event:` is
 * `type`, `data:` the JSON of the event, `id:` its `seq` within the execution. No runtime code here.
 */

export const PHASES = ['Research', 'Inspect', 'Generate', 'Optimize', 'Review'] as const;
export type Phase = (typeof PHASES)[number];

export type GateStatus = 'pass' | 'fail' | 'not_applicable';

/**
 * How a step ended (docs/decisions.md, "Step outcomes"):
 * - completed: the agent did its job and its artifact passed Review (findings or not);
 * - not_applicable: there was nothing to do (no logs to hunt in); skipped with its reason, the execution goes on;
 * - needs_input: the request lacks what the step needs (no trace to debug); the field is named;
 * - failed: the agent's own artifact failed a quality gate (the only outcome that counts against its ACMF quality);
 * - error: a crash, a timeout or an unavailable dependency (no skill, no model).
 * Only failed and error escalate, and only when later steps need the step's output.
 */
export const STEP_OUTCOMES = ['completed', 'not_applicable', 'needs_input', 'failed', 'error'] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

interface Base {
  /** Execution this event belongs to (`task_`, `wf_` or `exec_` id). */
  execution_id: string;
  /** Per-execution sequence number, from 1, without gaps. */
  seq: number;
  /** ISO 8601 UTC. */
  ts: string;
}

export interface ExecutionStartedEvent extends Base { type: 'execution_started'; kind: 'task' | 'workflow' | 'rigor'; agents: string[] }
export interface StepStartedEvent extends Base { type: 'step_started'; step: number; agent_id: string; action: string }
/** Contract: phase_started {phase, agent_id}. */
export interface PhaseStartedEvent extends Base { type: 'phase_started'; phase: Phase; agent_id: string }
/** Contract: work_progress {phase, progress 0-100, confidence 0-1}. */
export interface WorkProgressEvent extends Base { type: 'work_progress'; phase: Phase; progress: number; confidence: number; agent_id: string }
/** Contract: phase_completed {phase, duration_ms}. */
export interface PhaseCompletedEvent extends Base { type: 'phase_completed'; phase: Phase; duration_ms: number; agent_id: string }
/** One gate's outcome in Review. */
export interface GateResultData {
  gate: string;
  number: number;
  category: 'safety' | 'correctness' | 'performance' | 'compliance';
  status: GateStatus;
  value: number | string | boolean | null;
  threshold: number | null;
  reason: string;
}
/** All 21 gate results of a step's Review, in gate order (they are evaluated together). */
export interface GateResultsEvent extends Base { type: 'gate_results'; agent_id: string; passed: boolean; gates: GateResultData[] }
export interface ApprovalRequestedEvent extends Base { type: 'approval_requested'; agent_id: string; approval_id: string; action: string; risk: string }
export interface ApprovalDecidedEvent extends Base { type: 'approval_decided'; agent_id: string; approval_id: string; approved: boolean; by: string }
/** `reason`: why a step did not complete (the failed gates, the error, what was not applicable or missing); null when it completed. */
export interface StepCompletedEvent extends Base { type: 'step_completed'; step: number; agent_id: string; passed: boolean; outcome: StepOutcome; reason: string | null; confidence: number; duration_ms: number }
export interface ExecutionCompletedEvent extends Base { type: 'execution_completed'; status: 'completed' }
export interface ExecutionFailedEvent extends Base { type: 'execution_failed'; status: 'failed' | 'cancelled'; error: { code: string; message: string } }

export type EngineEvent =
  | ExecutionStartedEvent
  | StepStartedEvent
  | PhaseStartedEvent
  | WorkProgressEvent
  | PhaseCompletedEvent
  | GateResultsEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | StepCompletedEvent
  | ExecutionCompletedEvent
  | ExecutionFailedEvent;

export type EngineEventType = EngineEvent['type'];

/** An event before the execution log stamps it with seq and ts. */
export type EngineEventInput = EngineEvent extends infer E ? (E extends EngineEvent ? Omit<E, 'seq' | 'ts'> : never) : never;

/**
 * The incident chain's topics (contract, "Message-bus topics"), in the order they are published for one
 * incident. The PR-create topic names the source host: `agent.github.pr.create`.
 */
export const PIPELINE_TOPICS = [
  'incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.<host>.pr.create',
  'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging',
] as const;
export type PipelineTopic = Exclude<(typeof PIPELINE_TOPICS)[number], 'agent.<host>.pr.create'> | `agent.${string}.pr.create`;

/**
 * One step of an incident chain on the caller's tenant stream (`GET /api/admin/events/stream` without
 * `execution_id`; docs/api.md "Service event stream"). Not an execution event: the chain spans several
 * executions (the fix, the PR review, the staging deploy) and outlives each of them, so its events are
 * numbered per tenant (`seq`, the SSE `id:`, from 1 without gaps) and the stream never ends by itself.
 */
export interface PipelineEvent {
  type: 'pipeline_event';
  /** Per-tenant sequence number of the service stream, from 1, without gaps. */
  seq: number;
  /** ISO 8601 UTC, when Cadre saw the topic published. */
  ts: string;
  topic: PipelineTopic;
  incident_id: string;
  /** The execution the step concerns (the fix, for the fix, PR and review steps), or null when none exists (the resolution). */
  execution_id: string | null;
  agent_id: string | null;
  /** The pull request, once one is requested (Cadre's `pr_` id and GitHub's number). */
  pr_id: string | null;
  pr_number: number | null;
}

/** Events of the tenant's service stream. */
export type ServiceStreamEvent = PipelineEvent;
