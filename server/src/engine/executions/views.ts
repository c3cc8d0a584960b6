/**
 * Status views: the shapes the contract names (task status, workflow status, RIGOR execution
 * result), computed from an execution record. Pure; the doors serialise them.
 */
import { PHASES, type GateResultData, type Phase, type StepOutcome } from '../../../../protocol/events';
import type { ExecutionRecord, ExecutionStatus, StepRecord } from './records';

export interface TaskAcceptedView {
  taskId: string;
  status: ExecutionStatus;
  estimatedCompletion: string;
  agentsAssigned: string[];
  statusUrl: string;
}

export interface TaskStatusView {
  taskId: string;
  status: ExecutionStatus;
  progress: number;
  currentAgent: string | null;
  completedPhases: string[];
  estimatedCompletion: string;
  output: ExecutionRecord['output'];
  error: ExecutionRecord['error'];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export interface StepView {
  step: number;
  agentId: string;
  action: string;
  domain: string | null;
  round: number;
  status: StepRecord['status'];
  attempts: number;
  phases: Array<{ phase: Phase; status: 'Completed' | 'Running' | 'Pending' | 'Failed' | 'Skipped'; durationMs: number | null }>;
  /** How the step ended (completed, not_applicable, needs_input, failed, error); null while it runs. */
  outcome: StepOutcome | null;
  /** Why it did not complete; null when it did. */
  reason: string | null;
  confidence: number | null;
  passed: boolean | null;
  summary: string | null;
  gates: { passed: number; failed: number; notApplicable: number; failedGates: string[] };
  error: StepRecord['error'];
  addedBecause: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface WorkflowStatusView {
  workflowId: string;
  workflow: string | null;
  status: ExecutionStatus;
  pattern: string;
  progress: number;
  currentAgent: string | null;
  phases: StepView[];
  output: ExecutionRecord['output'];
  error: ExecutionRecord['error'];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export interface RigorExecutionView {
  executionId: string;
  agentId: string;
  action: string;
  status: ExecutionStatus;
  /** The mode the agent acted under (its own, capped by the request's acmfMode). */
  acmfMode: string | null;
  /** The request's acmfMode (a cap). */
  acmfModeCap: string | null;
  outcome: StepOutcome | null;
  reason: string | null;
  phases: StepView['phases'];
  confidence: number | null;
  passed: boolean | null;
  /** The full gate table of the Review (from the audit trail), or only the failures when unavailable. */
  gates: GateResultData[];
  output: unknown;
  error: ExecutionRecord['error'];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

/** Phase states of a step; a running step with no phase record yet shows all Pending. */
function phasesOf(s: StepRecord): StepView['phases'] {
  if (s.phases.length > 0) return s.phases.map((p) => ({ phase: p.phase, status: p.status, durationMs: p.durationMs }));
  return PHASES.map((phase) => ({ phase, status: 'Pending' as const, durationMs: null }));
}

/**
 * Percent done: steps that reached an outcome plus a fifth of a step per phase of the running one.
 * A completed execution is 100. A failed or cancelled one says how far it got: the share of its steps
 * that reached an outcome (steps skipped because it stopped do not count), so a BUILD run that failed
 * at its fourth of seven steps reads 57, never a misleading 99. A running one stays below 100.
 */
export function progressOf(rec: ExecutionRecord, livePhase?: { step: number; phase: Phase; completed: boolean }): number {
  if (rec.status === 'completed') return 100;
  const total = rec.steps.length;
  if (total === 0) return 0;
  const reached = (s: StepRecord) => s.outcome !== undefined || s.status === 'completed' || s.status === 'failed';
  let done = rec.steps.filter(reached).length;
  if (rec.status === 'failed' || rec.status === 'cancelled') return Math.floor((done / total) * 100);
  if (livePhase && rec.steps[livePhase.step]?.status === 'running') done += (PHASES.indexOf(livePhase.phase) + (livePhase.completed ? 1 : 0)) / PHASES.length;
  return Math.min(99, Math.floor((done / total) * 100));
}

export function stepView(s: StepRecord): StepView {
  return {
    step: s.step, agentId: s.agentId, action: s.action, domain: s.domain, round: s.round, status: s.status, outcome: s.outcome ?? null, reason: s.reason ?? null, attempts: s.attempts, phases: phasesOf(s),
    confidence: s.confidence, passed: s.passed, summary: s.summary,
    gates: { passed: s.gates.passed, failed: s.gates.failed, notApplicable: s.gates.notApplicable, failedGates: s.gates.failures.map((g) => g.gate) },
    error: s.error, addedBecause: s.addedBecause ?? null, startedAt: s.startedAt, completedAt: s.completedAt,
  };
}

export function taskAccepted(rec: ExecutionRecord, statusUrl: string): TaskAcceptedView {
  return { taskId: rec.id, status: rec.status, estimatedCompletion: rec.estimatedCompletion, agentsAssigned: rec.agents, statusUrl };
}

export function taskStatus(rec: ExecutionRecord, live?: LivePhase): TaskStatusView {
  return {
    taskId: rec.id, status: rec.status, progress: progressOf(rec, live), currentAgent: rec.currentAgent,
    completedPhases: completedPhases(rec, live), estimatedCompletion: rec.estimatedCompletion, output: rec.output, error: rec.error,
    createdAt: rec.createdAt, startedAt: rec.startedAt, completedAt: rec.completedAt,
  };
}

export interface LivePhase {
  step: number;
  phase: Phase;
  completed: boolean;
}

/** The RIGOR phases completed by the current step (or the last one, once the execution ended). */
export function completedPhases(rec: ExecutionRecord, live?: LivePhase): string[] {
  const running = rec.steps.find((s) => s.status === 'running');
  if (running && live && live.step === running.step) return PHASES.slice(0, PHASES.indexOf(live.phase) + (live.completed ? 1 : 0));
  const last = [...rec.steps].reverse().find((s) => s.phases.length > 0);
  return last ? last.phases.filter((p) => p.status === 'Completed').map((p) => p.phase) : [];
}

export function workflowStatus(rec: ExecutionRecord, live?: LivePhase): WorkflowStatusView {
  return {
    workflowId: rec.id, workflow: rec.request.workflow, status: rec.status, pattern: rec.pattern, progress: progressOf(rec, live), currentAgent: rec.currentAgent,
    phases: rec.steps.map((s) => (live && s.status === 'running' && s.step === live.step ? { ...stepView(s), phases: livePhases(live) } : stepView(s))),
    output: rec.output, error: rec.error, createdAt: rec.createdAt, startedAt: rec.startedAt, completedAt: rec.completedAt,
  };
}

function livePhases(live: LivePhase): StepView['phases'] {
  const at = PHASES.indexOf(live.phase);
  return PHASES.map((phase, i) => ({
    phase, durationMs: null,
    status: i < at || (i === at && live.completed) ? ('Completed' as const) : i === at ? ('Running' as const) : ('Pending' as const),
  }));
}

/** A RIGOR execution's status with its step's full gate table (the failed gates only on steps stored before the table was kept). */
export function rigorStatus(rec: ExecutionRecord, live?: LivePhase): RigorExecutionView {
  const s = rec.steps[0]!;
  const phases = live && s.status === 'running' ? livePhases(live) : phasesOf(s);
  return {
    executionId: rec.id, agentId: s.agentId, action: s.action, status: rec.status, acmfMode: s.acmfMode ?? null, acmfModeCap: rec.request.acmfMode,
    outcome: s.outcome ?? null, reason: s.reason ?? null, phases,
    confidence: s.confidence, passed: s.passed, gates: s.gates.results ?? s.gates.failures, output: s.output, error: rec.error,
    createdAt: rec.createdAt, startedAt: rec.startedAt, completedAt: rec.completedAt,
  };
}
