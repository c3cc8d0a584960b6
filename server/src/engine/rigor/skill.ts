/**
 * The one interface through which agent skills plug into the RIGOR pipeline. A skill does the I/O
 * (reading the workspace, running git, calling a model); the pipeline decides what runs when.
 */
import type { ProposedAction } from '../acmf/records';
import type { AcmfMode, IntelligenceTier, Scope } from '../catalog/enums';
import type { CompletionRequest, CompletionResult } from './language-model';
import { EngineError } from '../errors';

export type { ChatMessage, CompletionRequest, CompletionResult, TokenUsage } from './language-model';

/** What every agent of an execution receives: the goal, not only its own input (contract). */
export interface GoalContext {
  /** Stable id of the goal (the execution id that set it). */
  id: string;
  prompt: string;
  capability?: string;
  workflow?: string;
}

/** A summary of a finished step, handed to the steps after it. */
export interface StepSummary {
  step: number;
  agentId: string;
  action: string;
  passed: boolean;
  confidence: number;
  summary: string;
  data: unknown;
}

export interface StepRequest {
  executionId: string;
  /** Position of the step in its execution, from 0. */
  step: number;
  agentId: string;
  action: string;
  goal: GoalContext;
  input: Record<string, unknown>;
  scope: Scope;
  tier: IntelligenceTier;
  previous: StepSummary[];
  /** Absolute path of the workspace / task source the step may touch. */
  workspace?: string;
  signal?: AbortSignal;
  /** Attempt of this step, from 1 (retries and resumes count up). */
  attempt?: number;
  /** Caps the agent's ACMF mode for this execution (a RIGOR invocation's `acmfMode`); never raises it. */
  acmfModeCap?: AcmfMode;
}

/** One piece of evidence gathered in Research: where it came from and what it says. */
export interface EvidenceItem {
  source: string;
  detail: string;
  /** How much this item supports the task, 0..1. */
  weight: number;
}

export interface Evidence {
  items: EvidenceItem[];
  constraints: string[];
  /** Paths read while gathering it (checked by the scope-boundary gate). */
  pathsRead: string[];
}

export interface FileChange {
  /** Workspace-relative path. */
  path: string;
  kind: 'create' | 'modify' | 'delete';
  /** New content (create/modify), for the syntax and secrets gates. */
  content?: string;
  linesAdded: number;
  linesRemoved: number;
  /**
   * Whether the change was actually written (to the workspace, a branch, ...). `false`: only
   * proposed (a diff in the artifact), nothing was written, so the rollback-ready gate does not
   * count it. Absent counts as written: a skill that does not say is held to a rollback.
   */
  applied?: boolean;
}

export interface Artifact {
  kind: string;
  summary: string;
  /** The goal id this artifact answers (goal-trace gate). */
  goalRef: string;
  /** 0..1, computed from evidence, never a constant. */
  confidence: number;
  data: unknown;
  /** Text that leaves the step (report, PR body, generated code) for the secrets gate. */
  text?: string;
  changes?: FileChange[];
  pathsWritten?: string[];
  actionsTaken?: ProposedAction[];
  /** Tests run after the step's own change (or, for a plain test run, the run itself: a finding). */
  tests?: { passed: number; failed: number; skipped: number };
  /** The same tests before the step's change: tests-pass fails only when the change broke some. */
  testsBefore?: { passed: number; failed: number; skipped: number };
  /** Line coverage percent measured by the step. */
  coverage?: number;
  /** Highest cyclomatic complexity among the functions the step wrote or changed (never of code it only read). */
  complexity?: { max: number; where: string };
  findingsBefore?: { count: number; maxSeverity: number };
  findingsAfter?: { count: number; maxSeverity: number };
  dependenciesAdded?: Array<{ name: string; version: string; license: string }>;
  rollback?: { kind: 'branch' | 'snapshot' | 'revert' | 'none_needed'; ref: string };
  /** Language-model tokens used (0 with no model). */
  tokens?: number;
  /** Set by a skill that could not do its job: the step ends in error with this reason, no finding invented. */
  unable?: string;
  /**
   * With `unable`: the request lacks what the step needs (outcome needs_input), naming the field
   * (`trace`, `files`, ...). Does not count against the agent's quality.
   */
  needsInput?: { field: string };
  /** Set by a skill that had nothing to do (no logs to hunt in): the step ends not_applicable with this reason. */
  notApplicable?: string;
}

export interface SkillContext {
  request: StepRequest;
  signal: AbortSignal;
  /** Report progress of the current phase, 0..100, with the confidence so far. */
  progress(percent: number, confidence?: number): void;
  /** Actions ACMF allowed in Inspect; a skill performs only these. */
  allowed(kind: string): boolean;
  /**
   * Runs an external side effect (push, PR, deploy, webhook) once per execution step: the ledger
   * records the intent (on disk) before it and the outcome after it; a retried or resumed step gets
   * the recorded outcome instead of repeating it. After a crash between the two, `opts.reconcile`
   * looks in the world (returns the outcome if the effect happened, undefined to run it again), and
   * `opts.resources` (temporary worktrees the effect creates) are removed by the host. Use a
   * deterministic name for what the effect creates, so a reconcile can find it.
   */
  once<T>(key: string, effect: () => Promise<T>, opts?: OnceOptions<T>): Promise<T>;
  /**
   * The configured language model, absent when there is none (`llm.provider: none`, or an editor
   * relay not connected yet). Completions are cancelled with the step's signal, and their tokens are
   * added to the step's `artifact.tokens` by the pipeline (the cost-budget gate reads it). In a worker
   * thread the completion is relayed to the main thread, which holds the one model.
   */
  model?: SkillModel;
}

/** Something an effect creates that must not outlive it: removed after a failure and at start-up after a crash. */
export interface EffectResource {
  kind: 'worktree';
  /** Repository top level the worktree is registered in. */
  repo: string;
  /** The worktree's directory (a `cadre-wt-` name). */
  path: string;
}

export interface OnceOptions<T> {
  /** After an interrupted attempt: the outcome if the effect already happened (found in the world), else undefined. */
  reconcile?: () => Promise<T | undefined>;
  /** Recorded with the intent, before the effect creates them. */
  resources?: EffectResource[];
}

/** What the ledger tells an effect: its stable id (the same on every attempt) and how many times it was started. */
export interface EffectInfo {
  effectId: string;
  tries: number;
}

/** A skill's handle on the language model (see SkillContext.model). */
export interface SkillModel {
  /** `openai-compatible`, `editor`, ... */
  readonly id: string;
  complete(req: CompletionRequest): Promise<CompletionResult>;
}

/** Minimal validator shape (zod's safeParse) for an artifact's `data`. */
export interface OutputSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { message: string } };
}

/** A schema of the action's `input` (zod's safeParse is one): issues name the path of each bad field. */
export interface InputSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
}

/**
 * Checks a request's `input` against a skill's input schema: ERR_NEEDS_INPUT naming each bad field
 * (`input.<path>`), so the step ends needs_input and a GET direct action answers 422. Runs where the
 * schema is (the agent's worker, or the pipeline for a skill in this thread), before Research.
 */
export function checkSkillInput(skill: { agentId: string; action: string; inputSchema?: InputSchema }, input: Record<string, unknown>): void {
  if (!skill.inputSchema) return;
  const r = skill.inputSchema.safeParse(input);
  if (r.success) return;
  const errors = r.error.issues.slice(0, 20).map((i) => ({ field: ['input', ...i.path.map(String)].join('.'), message: i.message }));
  throw new EngineError('ERR_NEEDS_INPUT', `${skill.agentId} ${skill.action}: invalid input: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { details: { errors } });
}

export type SkillNeed = 'workspace';

export interface Skill {
  readonly agentId: string;
  readonly action: string;
  readonly outputSchema?: OutputSchema;
  /** The shape of the action's `input` (checked before Research; published in the OpenAPI document). */
  readonly inputSchema?: InputSchema;
  /** The skill only works with a language model: without one the step answers ERR_SKILL_UNAVAILABLE, as if it did not exist. */
  readonly requiresModel?: boolean;
  /**
   * What the request must give for the skill to work at all (`workspace`: a source folder). Checked
   * when the work is submitted: a request without it is answered 422 naming the field, before any
   * execution exists (docs/decisions.md, "Step outcomes").
   */
  readonly needs?: readonly SkillNeed[];
  /** Research: gather context, validate assumptions, identify constraints. */
  research(ctx: SkillContext): Promise<Evidence>;
  /** Inspect input: the actions the step would take, rated by ACMF before anything happens. */
  propose(ctx: SkillContext, evidence: Evidence): ProposedAction[] | Promise<ProposedAction[]>;
  /** Generate: do the work and return the artifact. */
  generate(ctx: SkillContext, evidence: Evidence): Promise<Artifact>;
  /** Optimize: rank, de-duplicate, apply learned patterns; returns patterns worth publishing. */
  optimize?(ctx: SkillContext, artifact: Artifact, learned: readonly string[]): Promise<{ artifact: Artifact; patterns: string[] }>;
}

/** Finds the skill for an agent action. */
export interface SkillRegistry {
  get(agentId: string, action: string): Skill | undefined;
}

export function createSkillRegistry(skills: Skill[]): SkillRegistry & { add(skill: Skill): void } {
  const map = new Map<string, Skill>();
  const key = (a: string, b: string) => `${a}/${b}`;
  for (const s of skills) map.set(key(s.agentId, s.action), s);
  return {
    get: (agentId, action) => map.get(key(agentId, action)),
    add: (skill) => void map.set(key(skill.agentId, skill.action), skill),
  };
}
