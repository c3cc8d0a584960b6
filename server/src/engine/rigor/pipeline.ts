/**
 * The RIGOR pipeline: runs one agent step through Research, Inspect, Generate, Optimize and Review,
 * in that order, never skipping one. It decides; skills, ACMF, the audit trail and the gate checks
 * are reached through ports, so the phase logic stays testable and resumable.
 */
import { PHASES, type EngineEventInput, type GateResultData, type Phase, type StepOutcome } from '../../../../protocol/events';
import type { ApprovalRecord, ProposedAction } from '../acmf/records';
import { isMutatingKind } from '../catalog/action-kinds';
import type { AcmfMode, GateCategory, IntelligenceTier, Scope } from '../catalog/enums';
import { EngineError, isEngineError } from '../errors';
import type { AuditEntry, AuditRecord, AuditTrail, Clock, WriteOptions } from '../ports';
import { GATE_EVALUATORS, type GateCheck } from './gate-evaluators';
import type { ActionDecision, PolicyRule, ReviewChecks, ReviewSubject } from './review-subject';
import type { Artifact, CompletionRequest, EffectInfo, Evidence, OnceOptions, Skill, SkillContext, SkillModel, SkillNeed, SkillRegistry, StepRequest, TokenUsage } from './skill';
import { checkSkillInput } from './skill';

/** The gate definition the pipeline needs from the catalog. */
export interface GateSpec {
  id: string;
  number: number;
  category: GateCategory;
  check: GateCheck;
}

export type GateResult = GateResultData;

/** ACMF as the pipeline sees it (implemented by AcmfService). */
export interface AutonomyPort {
  /** `executionId`: the settings of the execution's folder apply (multi-root: its own .cadre.yaml). */
  evaluate(agentId: string, actions: ProposedAction[], scope: Scope, modeCap?: AcmfMode, executionId?: string): Promise<ActionDecision[]>;
  requestApproval(req: { executionId: string; agentId: string; decision: ActionDecision }): Promise<ApprovalRecord>;
  waitForDecision(approvalId: string, signal: AbortSignal): Promise<ApprovalRecord>;
  recordOutcome(agentId: string, outcome: { executionId: string; reviewPassed: boolean; failedGates: string[] }): Promise<void>;
  /**
   * recordOutcome that resolves once the counters changed in memory, with `durable` for their store write
   * (absent: the pipeline awaits recordOutcome, one more durable write per step).
   */
  recordOutcomeStaged?(agentId: string, outcome: { executionId: string; reviewPassed: boolean; failedGates: string[] }, opts?: WriteOptions): Promise<{ durable: Promise<void> }>;
  /** Failed reviews since the last pass: makes thresholds stricter. */
  strictness(agentId: string): number;
  /** The mode the agent acts under in a step: its own, capped by the request's acmfMode. */
  effectiveMode?(agentId: string, cap?: AcmfMode, executionId?: string): Promise<AcmfMode>;
  protectedPaths(agentId: string, executionId?: string): string[];
}

export interface RigorDeps {
  skills: SkillRegistry;
  autonomy: AutonomyPort;
  audit: AuditTrail;
  clock: Clock;
  gates: readonly GateSpec[];
  /** `agentId`: thresholds adapt-ai tightened for that agent (engine/governance/adaptations.ts) apply too. */
  threshold(gateId: string, ctx: { scope: Scope; tier: IntelligenceTier; recentFailures: number }, agentId?: string): number | null;
  checks: ReviewChecks;
  /** Of the execution's folder (its own .cadre.yaml), else the engine's. */
  policies(executionId?: string): PolicyRule[];
  deniedLicenses(executionId?: string): string[];
  /** Publishes execution events (stamped with seq/ts by the caller). */
  emit(event: EngineEventInput): void;
  /** Patterns learned so far (Optimize reads them). */
  learnedPatterns(agentId: string): readonly string[];
  /** Publishes a learned pattern on `learning.pattern.detected`. */
  publishPattern(agentId: string, executionId: string, pattern: string): void;
  /** The side-effect ledger (absent: effects run every time, for tests without a store). */
  sideEffects?: SideEffectLedger;
  /** Called when an approval is requested, so doors can show it; the pipeline then waits. */
  onApprovalRequested?(approval: ApprovalRecord): void;
  /** The language model skills reach as `ctx.model` (absent: none; see `useLanguageModel`). */
  languageModel?: LanguageModelSource | null;
}

/** The one language model of the host, as the pipeline hands it to skills. */
export interface LanguageModelSource {
  model: SkillModel;
  /** Counts every completion per execution (e.g. the llm module's TokenMeter). */
  meter?: { record(executionId: string, usage: TokenUsage, estimated?: boolean): void };
  /** False while the model cannot answer (an editor relay not connected yet): skills then see no model. */
  available?(): boolean;
}

/** The side-effect ledger (executions/side-effect-ledger.ts): intent before the effect, outcome after, reconcile on resume. */
export interface SideEffectLedger {
  once<T>(executionId: string, step: number, attempt: number, key: string, effect: (info: EffectInfo) => Promise<T>, opts?: OnceOptions<T>): Promise<T>;
}

/** `Skipped`: the phases after Generate of a step that had nothing to do (outcome not_applicable). */
export type PhaseStatus = 'Completed' | 'Running' | 'Pending' | 'Failed' | 'Skipped';

export interface StepResult {
  executionId: string;
  step: number;
  agentId: string;
  action: string;
  passed: boolean;
  /** How the step ended (protocol/events.ts STEP_OUTCOMES); `reason` says why when it did not complete. */
  outcome: StepOutcome;
  reason: string | null;
  /** The ACMF mode the agent acted under (null when the step ended before Inspect). */
  acmfMode: AcmfMode | null;
  confidence: number;
  artifact: Artifact | null;
  phases: Array<{ phase: Phase; status: PhaseStatus; durationMs: number | null }>;
  gates: GateResult[];
  decisions: ActionDecision[];
  error: { code: string; message: string; retryable?: boolean } | null;
  durationMs: number;
}

interface StepState {
  req: StepRequest;
  /** Set when Generate found nothing to do: the reason (the step ends not_applicable after it). */
  notApplicable?: string;
  /** The ACMF mode of Inspect (the agent's, capped by the request). */
  acmfMode?: AcmfMode;
  /** Milliseconds Inspect spent waiting for people's decisions. */
  waitedMs?: number;
  skill: Skill;
  signal: AbortSignal;
  phase: Phase;
  confidence: number;
  durations: Partial<Record<Phase, number>>;
  /** The step's audit entries, appended together when it ends: one write and one fsync for the step. */
  staged: AuditEntry[];
  evidence?: Evidence;
  decisions: ActionDecision[];
  artifact?: Artifact;
  /** The step's handle on the model (absent without one) and the tokens its completions used. */
  model?: SkillModel;
  tokens: number;
  /** Resolves once the execution's earlier steps have ended durably (step-ends.ts); absent: they have. */
  earlierEnds?: () => Promise<void>;
}

/** How a caller that runs steps back to back tells the pipeline when the steps before are durable. */
export interface StagedStepOptions {
  /** Waited for before an effect is allowed or asked for: an effect never rests on evidence a crash could undo. */
  earlierEnds?: () => Promise<void>;
}

const NEVER: AbortSignal = new AbortController().signal;

export class RigorPipeline {
  private llm: LanguageModelSource | null;

  constructor(private readonly deps: RigorDeps) {
    this.llm = deps.languageModel ?? null;
  }

  /** Sets (or with null removes) the language model of later steps. */
  useLanguageModel(source: LanguageModelSource | null): void {
    this.llm = source;
  }

  /** The model skills would get now, or null (`none`, or not available yet). */
  private activeModel(): LanguageModelSource | null {
    const src = this.llm;
    if (!src || src.model.id === 'none') return null;
    return src.available && !src.available() ? null : src;
  }

  /**
   * Whether a step of `agentId action` can run at all, known before it is accepted: no skill, or a
   * skill that needs a model when none is configured, is `unavailable` with the reason; `needs` lists
   * what the request must give (Skill.needs).
   */
  readiness(agentId: string, action: string): { unavailable: string | null; needs: readonly SkillNeed[] } {
    const skill = this.deps.skills.get(agentId, action);
    if (!skill) return { unavailable: `${agentId} ${action} has no embedded skill in this version`, needs: [] };
    if (skill.requiresModel && !this.activeModel()) return { unavailable: `${agentId} ${action} needs a language model and none is configured (llm.provider)`, needs: skill.needs ?? [] };
    return { unavailable: null, needs: skill.needs ?? [] };
  }

  /** ERR_NEEDS_INPUT naming each field of `input` that does not fit the skill's input schema (none: nothing to check). */
  checkInput(agentId: string, action: string, input: Record<string, unknown>): void {
    const skill = this.deps.skills.get(agentId, action);
    if (skill) checkSkillInput(skill, input);
  }

  /**
   * Runs one step. Resolves with the result (passed or not) once the step's audit records and ACMF
   * counters are durable; rejects with ERR_CANCELLED, or when those writes fail.
   */
  async runStep(req: StepRequest): Promise<StepResult> {
    const { result, durable } = await this.runStepStaged(req);
    await durable;
    return result;
  }

  /**
   * Runs one step without waiting for its writes to reach the disk. The result is final when this
   * resolves; `durable` resolves when the step's audit records (one append, one fsync: they are
   * appended together at the end) and its ACMF counters (the store's group commit) are on disk, then
   * emits `step_completed`. A caller that checkpoints the step writes its checkpoint before awaiting
   * `durable`: the checkpoint joins the counters' group commit and the audit fsync overlaps it, so a
   * step waits for one fsync per file, in parallel, and concurrent steps share them.
   *
   * With `opts.unit` the audit records and the counters join the caller's write unit: they are written
   * when the caller commits it (with its checkpoint), in one journal record: one fsync, all or nothing.
   */
  async runStepStaged(req: StepRequest, opts: WriteOptions = {}, staged: StagedStepOptions = {}): Promise<{ result: StepResult; durable: Promise<void> }> {
    const started = this.deps.clock.now();
    const skill = this.deps.skills.get(req.agentId, req.action);
    if (!skill) throw new EngineError('ERR_SKILL_UNAVAILABLE', `${req.agentId} has no embedded skill for "${req.action}" yet`, { details: { agentId: req.agentId, action: req.action } });
    const llm = this.activeModel();
    if (skill.requiresModel && !llm) {
      throw new EngineError('ERR_SKILL_UNAVAILABLE', `${req.agentId} "${req.action}" needs a language model and none is configured (llm.provider)`, { details: { agentId: req.agentId, action: req.action, needs: 'llm' } });
    }
    const st: StepState = { req, skill, signal: req.signal ?? NEVER, phase: 'Research', confidence: 0, durations: {}, staged: [], decisions: [], tokens: 0, ...(staged.earlierEnds ? { earlierEnds: staged.earlierEnds } : {}) };
    if (llm) st.model = stepModel(st, llm);
    let gates: GateResult[] = [];
    let error: StepResult['error'] = null;
    try {
      for (const phase of PHASES) {
        st.phase = phase;
        if (phase === 'Review') gates = await this.timed(st, phase, () => this.review(st));
        else await this.timed(st, phase, () => this.runPhase(st, phase));
        // Nothing to do: the agent acted on nothing, so there is nothing to optimise or review.
        if (st.notApplicable !== undefined) {
          this.audit(st, 'step.not_applicable', { reason: st.notApplicable });
          break;
        }
      }
    } catch (err) {
      if (isEngineError(err) && err.code === 'ERR_CANCELLED') {
        await Promise.allSettled(this.appendAudits(st));
        throw err;
      }
      // An unexpected throw is a crash worth retrying; an engine error says itself whether it is.
      error = isEngineError(err)
        ? { code: err.code, message: err.message, retryable: err.retryable }
        : { code: 'ERR_SKILL_FAILED', message: `${req.agentId} failed in ${st.phase}: ${(err as Error)?.message ?? String(err)}`, retryable: true };
    }
    const failedGates = gates.filter((g) => g.status === 'fail').map((g) => g.gate);
    const passed = error === null && failedGates.length === 0 && gates.length > 0;
    if (error === null && failedGates.length > 0) {
      const detail = gates.filter((g) => g.status === 'fail').map((g) => `${g.gate} (${g.reason})`).join('; ');
      error = { code: 'ERR_GATE_FAILED', message: `Review failed ${failedGates.length} gate(s): ${detail}` };
    }
    const outcome: StepOutcome = passed ? 'completed'
      : st.notApplicable !== undefined && error === null ? 'not_applicable'
        : error?.code === 'ERR_GATE_FAILED' ? 'failed'
          : error?.code === 'ERR_NEEDS_INPUT' ? 'needs_input' : 'error';
    const reason = outcome === 'completed' ? null : outcome === 'not_applicable' ? `not applicable: ${st.notApplicable}` : error?.message ?? null;
    // The step's records go first (in chain order before a mode change the outcome may audit), all in
    // this tick, so they are one batch of the trail's group commit.
    const audits = Promise.all(this.appendAudits(st, opts)).then(verifyStepChain);
    audits.catch(() => undefined); // awaited through `durable`
    // Only a Review that ran can regress ACMF; a crashed skill is the orchestrator's retry matter.
    let counters: Promise<void> = Promise.resolve();
    if (gates.length > 0) {
      const outcome = { executionId: req.executionId, reviewPassed: failedGates.length === 0, failedGates };
      const { autonomy } = this.deps;
      if (autonomy.recordOutcomeStaged) counters = (await autonomy.recordOutcomeStaged(req.agentId, outcome, opts)).durable;
      else await autonomy.recordOutcome(req.agentId, outcome);
    }
    const durationMs = this.deps.clock.now() - started;
    const result: StepResult = {
      executionId: req.executionId, step: req.step, agentId: req.agentId, action: req.action, passed, outcome, reason, acmfMode: st.acmfMode ?? null, confidence: st.confidence,
      artifact: st.artifact ?? null, gates, decisions: st.decisions, error, durationMs,
      phases: PHASES.map((p) => ({ phase: p, status: phaseStatus(p, st, error), durationMs: st.durations[p] ?? null })),
    };
    const durable = Promise.all([audits, counters]).then(() => {
      this.deps.emit({ type: 'step_completed', execution_id: req.executionId, step: req.step, agent_id: req.agentId, passed, outcome, reason, confidence: st.confidence, duration_ms: durationMs });
    });
    durable.catch(() => undefined); // the caller awaits it; this only keeps an early failure from being reported as unhandled
    return { result, durable };
  }

  private async timed<T>(st: StepState, phase: Phase, body: () => Promise<T>): Promise<T> {
    if (st.signal.aborted) throw new EngineError('ERR_CANCELLED', `cancelled before ${phase}`);
    const { req } = st;
    const t0 = this.deps.clock.now();
    this.deps.emit({ type: 'phase_started', execution_id: req.executionId, phase, agent_id: req.agentId });
    const out = await body();
    const duration = this.deps.clock.now() - t0;
    st.durations[phase] = duration;
    this.deps.emit({ type: 'work_progress', execution_id: req.executionId, phase, progress: 100, confidence: st.confidence, agent_id: req.agentId });
    this.deps.emit({ type: 'phase_completed', execution_id: req.executionId, phase, duration_ms: duration, agent_id: req.agentId });
    if (phase !== 'Review') this.audit(st, 'phase.completed', { phase, duration_ms: duration, ...phaseSummary(st, phase) });
    return out;
  }

  private context(st: StepState): SkillContext {
    return {
      request: st.req,
      signal: st.signal,
      progress: (percent, confidence) => {
        if (confidence !== undefined) st.confidence = clamp01(confidence);
        this.deps.emit({ type: 'work_progress', execution_id: st.req.executionId, phase: st.phase, progress: Math.max(0, Math.min(100, Math.round(percent))), confidence: st.confidence, agent_id: st.req.agentId });
      },
      allowed: (kind) => st.decisions.some((d) => d.action.kind === kind && (d.decision === 'allow' || d.approval?.status === 'approved')),
      once: (key, effect, opts) => (this.deps.sideEffects ? this.deps.sideEffects.once(st.req.executionId, st.req.step, st.req.attempt ?? 1, key, effect, opts) : effect()),
      ...(st.model ? { model: st.model } : {}),
    };
  }

  private async runPhase(st: StepState, phase: Exclude<Phase, 'Review'>): Promise<void> {
    const ctx = this.context(st);
    switch (phase) {
      case 'Research': {
        checkSkillInput(st.skill, st.req.input);
        st.evidence = await st.skill.research(ctx);
        st.confidence = evidenceConfidence(st.evidence);
        return;
      }
      case 'Inspect':
        return this.inspect(st, ctx);
      case 'Generate': {
        const artifact = withTokens(await st.skill.generate(ctx, st.evidence!), st.tokens);
        st.artifact = artifact;
        st.confidence = clamp01(artifact.confidence);
        if (artifact.notApplicable) {
          st.notApplicable = artifact.notApplicable;
          return;
        }
        if (artifact.unable && artifact.needsInput) {
          throw new EngineError('ERR_NEEDS_INPUT', `${st.req.agentId} ${st.req.action} needs input: ${artifact.unable}`, { details: { unable: artifact.unable, errors: [{ field: artifact.needsInput.field, message: artifact.unable }] } });
        }
        if (artifact.unable) throw new EngineError('ERR_SKILL_FAILED', `${st.req.agentId} could not do this: ${artifact.unable}`, { details: { unable: artifact.unable } });
        return;
      }
      case 'Optimize': {
        if (!st.skill.optimize) return;
        const { artifact: optimized, patterns } = await st.skill.optimize(ctx, st.artifact!, this.deps.learnedPatterns(st.req.agentId));
        const artifact = withTokens(optimized, st.tokens);
        st.artifact = artifact;
        st.confidence = clamp01(artifact.confidence);
        for (const p of patterns) this.deps.publishPattern(st.req.agentId, st.req.executionId, p);
        return;
      }
    }
  }

  /** Inspect: rate every proposed action, ask a person where the ACMF mode requires it, and wait. */
  private async inspect(st: StepState, ctx: SkillContext): Promise<void> {
    const { req } = st;
    const actions = await st.skill.propose(ctx, st.evidence!);
    st.decisions = await this.deps.autonomy.evaluate(req.agentId, actions, req.scope, req.acmfModeCap, req.executionId);
    // An effect (a change allowed, or a person asked about one) rests on what the steps before found: their
    // ends are durable first, so a crash cannot undo the evidence it ran on (they would run again after it).
    if (st.earlierEnds && st.decisions.some((d) => d.decision !== 'observe_only' && isMutatingKind(d.action.kind))) await st.earlierEnds();
    if (this.deps.autonomy.effectiveMode) st.acmfMode = await this.deps.autonomy.effectiveMode(req.agentId, req.acmfModeCap, req.executionId);
    for (const d of st.decisions) {
      if (d.decision !== 'approval_required') continue;
      const approval = await this.deps.autonomy.requestApproval({ executionId: req.executionId, agentId: req.agentId, decision: d });
      d.approval = approval;
      this.deps.emit({ type: 'approval_requested', execution_id: req.executionId, agent_id: req.agentId, approval_id: approval.id, action: d.action.kind, risk: d.risk });
      this.deps.onApprovalRequested?.(approval);
    }
    for (const d of st.decisions) {
      if (!d.approval || d.approval.status !== 'pending') continue;
      const waitStarted = this.deps.clock.now();
      d.approval = await this.deps.autonomy.waitForDecision(d.approval.id, st.signal);
      // Time spent waiting for a person is not the agent's: the phase-latency gate does not count it.
      st.waitedMs = (st.waitedMs ?? 0) + (this.deps.clock.now() - waitStarted);
      this.deps.emit({ type: 'approval_decided', execution_id: req.executionId, agent_id: req.agentId, approval_id: d.approval.id, approved: d.approval.status === 'approved', by: d.approval.decidedBy ?? 'unknown' });
    }
  }

  /** Review: all 21 gates with the scope's thresholds (stricter after failures), each recorded. */
  private async review(st: StepState): Promise<GateResult[]> {
    const { req } = st;
    const subject: ReviewSubject = {
      request: req, evidence: st.evidence!, artifact: st.artifact!, decisions: st.decisions,
      ...(st.skill.outputSchema ? { outputSchema: st.skill.outputSchema } : {}),
      // The agent's own time per phase: Inspect without the wait for a person's decision.
      phaseDurations: { ...st.durations, ...(st.durations.Inspect !== undefined && st.waitedMs ? { Inspect: Math.max(0, st.durations.Inspect - st.waitedMs) } : {}) },
      audit: stagedAuditState(st.staged),
      protectedPaths: this.deps.autonomy.protectedPaths(req.agentId, req.executionId),
      policies: this.deps.policies(req.executionId),
      deniedLicenses: this.deps.deniedLicenses(req.executionId),
      checks: this.deps.checks,
    };
    const strictness = this.deps.autonomy.strictness(req.agentId);
    const results = this.deps.gates.map((g): GateResult => {
      const threshold = this.deps.threshold(g.id, { scope: req.scope, tier: req.tier, recentFailures: strictness }, req.agentId);
      let outcome;
      try {
        outcome = GATE_EVALUATORS[g.check](subject, threshold);
      } catch (err) {
        outcome = { status: 'fail' as const, value: null, reason: `could not be evaluated: ${(err as Error).message}` };
      }
      return { gate: g.id, number: g.number, category: g.category, threshold, ...outcome };
    });
    this.deps.emit({ type: 'gate_results', execution_id: req.executionId, agent_id: req.agentId, passed: results.every((r) => r.status !== 'fail'), gates: results });
    // One record holds all 21 results: each result is in the trail, at one hash per step rather than 21.
    this.audit(st, 'phase.completed', { phase: 'Review', gates: results, strictness, passed: results.every((r) => r.status !== 'fail') });
    return results;
  }

  private audit(st: StepState, kind: string, data: Record<string, unknown>): void {
    st.staged.push({ kind, actor: st.req.agentId, executionId: st.req.executionId, agentId: st.req.agentId, data: { step: st.req.step, action: st.req.action, ...data } });
  }

  /** Appends the step's staged records in one go (same tick: one batch of the trail's group commit). */
  private appendAudits(st: StepState, opts: WriteOptions = {}): Array<Promise<AuditRecord>> {
    const written = st.staged.splice(0).map((e) => this.deps.audit.append(e, opts));
    for (const p of written) p.catch(() => undefined); // awaited by the caller
    return written;
  }
}

function phaseSummary(st: StepState, phase: Phase): Record<string, unknown> {
  switch (phase) {
    case 'Research':
      return { evidence: st.evidence?.items.length ?? 0, constraints: st.evidence?.constraints ?? [] };
    case 'Inspect':
      return { decisions: st.decisions.map((d) => ({ kind: d.action.kind, risk: d.risk, decision: d.decision, approval: d.approval?.id ?? null, status: d.approval?.status ?? null })) };
    case 'Generate':
    case 'Optimize':
      return { kind: st.artifact?.kind ?? null, summary: st.artifact?.summary ?? null, confidence: st.confidence, ...(st.model ? { model: st.model.id, tokens: st.tokens } : {}) };
    default:
      return {};
  }
}

/**
 * What Review knows of the step's audit records: they are staged and go to the trail together when the
 * step ends, so the phases recorded are the staged ones; their chain is checked once they are written
 * ({@link verifyStepChain}), and a break fails the step then.
 */
function stagedAuditState(staged: readonly AuditEntry[]): ReviewSubject['audit'] {
  const recorded = staged.filter((e) => e.kind === 'phase.completed').map((e) => e.data['phase'] as Phase);
  return { recorded, intact: true };
}

/** The step's records as the trail wrote them must follow each other in the chain. */
function verifyStepChain(records: AuditRecord[]): void {
  const state = auditState(records);
  if (!state.intact) throw new EngineError('ERR_AUDIT_BROKEN', `audit chain of the step broken: ${state.reason ?? 'unknown'}`);
}

function auditState(records: AuditRecord[]): ReviewSubject['audit'] {
  const recorded = records.filter((r) => r.kind === 'phase.completed').map((r) => r.data['phase'] as Phase);
  // The trail chained and hashed these records when it wrote them; here they must follow each other
  // in the chain (a record of another execution may sit between two of ours).
  for (let i = 1; i < records.length; i++) {
    const r = records[i]!;
    if (r.seq <= records[i - 1]!.seq) return { recorded, intact: false, reason: `record ${r.seq} out of order` };
    if (r.seq === records[i - 1]!.seq + 1 && r.prevHash !== records[i - 1]!.hash) return { recorded, intact: false, reason: `record ${r.seq} does not link to ${records[i - 1]!.seq}` };
  }
  return { recorded, intact: true };
}

function phaseStatus(phase: Phase, st: StepState, error: StepResult['error']): PhaseStatus {
  if (st.durations[phase] !== undefined) return 'Completed';
  if (st.notApplicable !== undefined) return 'Skipped';
  if (phase === st.phase) return error ? 'Failed' : 'Running';
  return 'Pending';
}

/**
 * The step's handle on the model: every completion runs under the step's signal (as well as the
 * caller's), and its usage is added to the step's tokens and the execution's meter.
 */
function stepModel(st: StepState, src: LanguageModelSource): SkillModel {
  return {
    id: src.model.id,
    complete: async (req: CompletionRequest) => {
      const signals = [st.signal, req.signal].filter((s): s is AbortSignal => s !== undefined && s !== NEVER);
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      if (signal?.aborted) throw new EngineError('ERR_CANCELLED', 'language model request cancelled');
      const { signal: _ignored, ...rest } = req;
      const out = await src.model.complete({ ...rest, ...(signal ? { signal } : {}) });
      st.tokens += out.usage.totalTokens;
      src.meter?.record(st.req.executionId, out.usage, out.usageEstimated === true);
      return out;
    },
  };
}

/** The artifact with the tokens the step's completions used (never fewer than the skill reported itself). */
function withTokens(artifact: Artifact, used: number): Artifact {
  if (used <= 0 || !artifact || typeof artifact !== 'object') return artifact;
  return { ...artifact, tokens: Math.max(artifact.tokens ?? 0, used) };
}

/** Confidence from evidence: saturating in the total weight, never a constant. */
export function evidenceConfidence(e: Evidence): number {
  const total = e.items.reduce((n, i) => n + clamp01(i.weight), 0);
  return Number((1 - Math.exp(-total)).toFixed(3));
}

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.min(1, n)) : 0;
}
