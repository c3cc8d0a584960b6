/**
 * The five execution patterns. They decide the order in which an execution's steps run; the set and
 * order of a template's agents never change (only as-needed, re-routing and discussion-round steps
 * are added, each with the reason). Semantics in docs/decisions.md.
 */
import { EngineError } from '../errors';
import type { StepSummary } from '../rigor/skill';
import type { Plan, PlannedStep } from './plan';
import type { StepRecord } from './records';

/** What a pattern may do with its execution. */
export interface PatternHost {
  signal: AbortSignal;
  steps(): StepRecord[];
  runStep(index: number, extra?: { transcript?: StepSummary[] }): Promise<StepRecord>;
  addStep(planned: PlannedStep, round: number, addedBecause: string, before?: number): Promise<number>;
  /** Marks a failed step as retried by a later one. */
  supersede(index: number): Promise<void>;
  /** Asks a person whether to continue past a failed step; false = stop. */
  escalate(index: number, reason: string): Promise<boolean>;
}

/** Rounds of a group chat at most, the first included. */
export const GROUP_CHAT_MAX_ROUNDS = 3;

export async function runPattern(plan: Plan, host: PatternHost): Promise<void> {
  switch (plan.pattern) {
    case 'sequential':
    case 'hierarchical':
      return sequential(plan, host);
    case 'parallel':
      return parallel(plan, host);
    case 'group_chat':
      return groupChat(plan, host);
    case 'debate':
      return debate(plan, host);
  }
}

function transcript(steps: StepRecord[], upTo = steps.length): StepSummary[] {
  return steps.slice(0, upTo).filter((s) => s.status === 'completed' || s.status === 'failed').map((s) => ({
    step: s.step, agentId: s.agentId, action: s.action, passed: s.passed === true, confidence: s.confidence ?? 0, summary: s.summary ?? s.error?.message ?? '', data: s.output,
  }));
}

function plannedOf(plan: Plan, s: StepRecord): PlannedStep {
  return plan.steps.find((p) => p.agentId === s.agentId && p.action === s.action) ?? { agentId: s.agentId, action: s.action, domain: s.domain, asNeeded: false, params: {} };
}

/**
 * Whether a person could make a step's failure worth going on past: only a failed gate of the
 * agent's own artifact or an error (crash, timeout) are escalated; nobody can fix a missing skill,
 * model or input by approving, so those stop the chain at once with their reason.
 */
function escalable(s: StepRecord): boolean {
  if (s.outcome === 'needs_input' || s.outcome === 'not_applicable') return false;
  return s.error?.code !== 'ERR_SKILL_UNAVAILABLE' && s.error?.code !== 'ERR_NEEDS_INPUT';
}

/** Steps after `index` that will still run: they consume its output in a sequential chain. */
function laterSteps(host: PatternHost, index: number): number {
  return host.steps().filter((s, i) => i > index && s.status === 'pending').length;
}

/**
 * A failed step of a sequential chain: BUILD's as-needed debug-ai diagnoses a failed review or test
 * and the step is tried once more; a step that failed repeatedly before a deploy gets a security scan
 * added before it; then, only when later steps need its output and a person could change anything, a
 * person decides whether to go on. Returns false when the execution must stop (it then ends failed
 * with the step's reason; no approval is asked for a last step).
 */
async function handleFailure(plan: Plan, host: PatternHost, index: number): Promise<{ go: boolean; index: number }> {
  let failed = host.steps()[index]!;
  if (!escalable(failed)) return { go: false, index };
  const debug = plan.steps.find((p) => p.asNeeded);
  if (debug && (failed.agentId === 'review-ai' || failed.agentId === 'tester-ai') && !failed.addedBecause) {
    const d = await host.addStep(debug, failed.round, `as needed: ${failed.agentId} ${failed.action} failed`, index + 1);
    await host.runStep(d);
    const again = await host.addStep(plannedOf(plan, failed), failed.round, `retry of step ${index} after debug-ai's diagnosis`, d + 1);
    await host.supersede(index);
    failed = await host.runStep(again);
    index = again;
    if (failed.status === 'completed') return { go: true, index };
  }
  if (failed.attempts >= 2) await rerouteBeforeDeploy(host, index);
  if (laterSteps(host, index) === 0) return { go: false, index };
  const go = await host.escalate(index, failed.error?.message ?? `${failed.agentId} failed`);
  return { go, index };
}

/**
 * Parallel, group-chat and debate steps do not consume one another's output (each works on the same
 * input, or on the transcript, which carries the failure): a failed one is reported in the result and
 * the others go on; no person is asked. The execution ends failed with the step's reason.
 */
function goOn(_host: PatternHost, _r: StepRecord): Promise<boolean> {
  return Promise.resolve(true);
}

async function rerouteBeforeDeploy(host: PatternHost, failedIndex: number): Promise<void> {
  const steps = host.steps();
  const deploy = steps.findIndex((s, i) => i > failedIndex && s.agentId === 'deploy-ai' && s.status === 'pending');
  if (deploy < 0 || steps[deploy - 1]?.agentId === 'security-ai') return;
  await host.addStep({ agentId: 'security-ai', action: 'scan', domain: 'SECURE', asNeeded: false, params: {} }, 1, `re-routed: ${steps[failedIndex]!.agentId} failed ${steps[failedIndex]!.attempts} times, scanning before deploy-ai`, deploy);
}

async function sequential(plan: Plan, host: PatternHost): Promise<void> {
  for (let i = 0; i < host.steps().length; i++) {
    const before = host.steps()[i]!;
    // A step that failed before a restart and was escalated still needs its person's decision (asked once, waited on again).
    if (before.status === 'failed' && !before.superseded) {
      const ask = before.escalationId !== undefined || (escalable(before) && laterSteps(host, i) > 0);
      if (!ask || !(await host.escalate(i, before.error?.message ?? `${before.agentId} failed`))) return;
    }
    if (before.status !== 'pending') continue; // completed before a restart
    const r = await host.runStep(i);
    if (r.status === 'failed') {
      const { go, index } = await handleFailure(plan, host, i);
      if (!go) return;
      i = index;
    }
  }
}

async function parallel(plan: Plan, host: PatternHost): Promise<void> {
  const lead = plan.lead;
  const workers = host.steps().map((s, i) => ({ s, i })).filter(({ s }) => s.agentId !== lead && s.status === 'pending');
  const done = await Promise.all(workers.map(({ i }) => host.runStep(i)));
  for (const r of done) {
    if (r.status === 'failed' && !(await goOn(host, r))) return;
  }
  const leadIndex = host.steps().findIndex((s) => s.agentId === lead && s.status === 'pending');
  if (leadIndex >= 0) {
    const r = await host.runStep(leadIndex, { transcript: transcript(host.steps()) });
    if (r.status === 'failed') await goOn(host, r);
  }
}

/** Agents take turns on one transcript until a round adds nothing new, or the round limit. */
async function groupChat(plan: Plan, host: PatternHost): Promise<void> {
  const agents = plan.steps.filter((p) => !p.asNeeded);
  for (let round = 1; round <= GROUP_CHAT_MAX_ROUNDS; round++) {
    if (round > 1 && !host.steps().some((s) => s.round === round)) {
      for (const p of agents) await host.addStep(p, round, `group chat round ${round}`);
    }
    const indices = host.steps().map((s, i) => ({ s, i })).filter(({ s }) => s.round === round);
    for (const { i } of indices) {
      if (host.steps()[i]!.status !== 'pending') continue;
      const r = await host.runStep(i, { transcript: transcript(host.steps(), i) });
      if (r.status === 'failed' && !(await goOn(host, r))) return;
    }
    const now = host.steps().filter((s) => s.round === round);
    const before = host.steps().filter((s) => s.round === round - 1);
    const changed = round === 1 || now.some((s) => before.find((b) => b.agentId === s.agentId)?.summary !== s.summary);
    if (!changed) return; // agreement: the round repeated what was said
  }
}

/** Every agent but the judge states a position, then answers the others once; the judge decides. */
async function debate(plan: Plan, host: PatternHost): Promise<void> {
  const judge = plan.lead;
  if (!judge) throw new EngineError('ERR_VALIDATION', 'a debate needs a judge (lead)');
  const debaters = plan.steps.filter((p) => p.agentId !== judge && !p.asNeeded);
  const run = async (round: number) => {
    for (const [i, s] of host.steps().entries()) {
      if (s.round !== round || s.agentId === judge || s.status !== 'pending') continue;
      const r = await host.runStep(i, { transcript: transcript(host.steps(), i) });
      if (r.status === 'failed' && !(await goOn(host, r))) return false;
    }
    return true;
  };
  if (!(await run(1))) return;
  if (!host.steps().some((s) => s.round === 2)) for (const p of debaters) await host.addStep(p, 2, 'debate: answers the other positions');
  if (!(await run(2))) return;
  const j = host.steps().findIndex((s) => s.agentId === judge && s.status === 'pending');
  if (j >= 0) {
    // The judge speaks last, after both rounds.
    const r = await host.runStep(j, { transcript: transcript(host.steps()) });
    if (r.status === 'failed') await goOn(host, r);
  }
}
