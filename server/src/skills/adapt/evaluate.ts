/**
 * adapt-ai `evaluate` [ULTRA]: how feedback and outcomes changed each agent, from the facts the engine
 * hands in (engine/governance/evaluate-facts.ts):
 *
 *  - per agent: ACMF mode and its changes, quality score, failed reviews and the stricter gate
 *    thresholds they cause now, feedback counts and good ratio, steps and mean confidence;
 *  - confidence calibration: steps bucketed by the confidence they reported, against the share that
 *    turned out good (rated good by a person when rated, else passed its Review);
 *  - false positives: findings rated down more than up, by fingerprint;
 *  - proposals (`tune_agent`, `suppress_finding`, catalog/action-kinds.ts): changes for ACMF to apply.
 *    Asked with `apply`, each becomes an action ACMF allows or asks a person about in Inspect; the
 *    engine applies what it let through once the execution ended (engine/governance/adaptations.ts).
 */
import type { AdaptationEffect, AdaptationRecord, ApplyingEntry } from '../../engine/governance/adaptations';
import type { EvaluateFacts } from '../../engine/governance/evaluate-facts';
import type { FeedbackRecord } from '../../engine/governance/feedback';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Skill, SkillContext } from '../../engine/rigor/skill';
import { factsOf, factsPhases, governanceFacts, isFactError, round } from '../governance/facts';
import { evaluateDataSchema, evaluateInputSchema } from './schemas';

const KIND = 'adaptation-report';
const LABEL = 'adapt-ai evaluate';
/** Steps an agent needs before its calibration gap means something. */
export const MIN_CALIBRATION_SAMPLES = 5;
/** Mean confidence above the good share by more than this: overconfident. */
export const OVERCONFIDENCE_GAP = 0.15;
/** Ratings an agent needs before its good ratio is acted on. */
export const MIN_RATINGS = 3;
const MODES = ['OBSERVE', 'LEARNING', 'ASSISTED', 'AUTONOMOUS'];
export const PROPOSALS_NOTE = 'proposals only: nothing applied; pass input.apply (proposal ids or "all") to apply them through ACMF';
export const APPLY_NOTE = 'the proposals in `applying` that ACMF allowed are applied when this execution ends; denied ones are not';

export interface Proposal {
  id: string;
  kind: 'tune_agent' | 'suppress_finding';
  agentId: string | null;
  target: string;
  change: string;
  why: string;
  evidence: Record<string, unknown>;
  status: 'proposed';
  effect: AdaptationEffect | null;
}

type StepFact = EvaluateFacts['steps'][number];

export interface EvaluateData {
  asOf: string;
  scope: string;
  agents: Array<{
    agentId: string; mode: string; quality: number; tasks: number; successRate: number | null; recentFailures: number;
    stricterGates: Array<{ gate: string; base: number; effective: number }>;
    modeChanges: EvaluateFacts['agents'][number]['modeChanges'];
    feedback: { up: number; down: number; total: number; goodRatio: number | null };
    steps: { count: number; passed: number; meanConfidence: number | null; goodShare: number | null; gap: number | null };
  }>;
  calibration: { samples: number; buckets: Array<{ from: number; to: number; steps: number; meanConfidence: number | null; goodShare: number | null; rated: number; gap: number | null }>; meanAbsoluteGap: number | null };
  falsePositives: Array<{ key: string; fingerprint: string | null; ruleId: string | null; file: string | null; agentId: string | null; down: number; up: number; reasons: string[] }>;
  proposals: Proposal[];
  applying: ApplyingEntry[];
  inForce: AdaptationRecord[];
  applied: boolean;
  note: string;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * Whether each step turned out good: a person's rating of the step (or of its execution when the
 * execution had only this agent) wins; else whether its Review passed. Null: neither is known.
 */
export function stepVerdicts(steps: StepFact[], feedback: FeedbackRecord[]): Array<{ step: StepFact; good: boolean | null; rated: boolean }> {
  const byStep = new Map<string, boolean[]>();
  for (const f of feedback) {
    if (f.finding) continue; // a finding's rating judges the finding, not the step's overall result
    const keys = f.step !== null ? [`${f.executionId}#${f.step}`] : f.agentId ? [`${f.executionId}@${f.agentId}`] : [];
    for (const k of keys) byStep.set(k, [...(byStep.get(k) ?? []), f.good]);
  }
  return steps.map((s) => {
    const votes = byStep.get(`${s.executionId}#${s.step}`) ?? byStep.get(`${s.executionId}@${s.agentId}`);
    if (votes && votes.length) return { step: s, good: votes.filter(Boolean).length * 2 >= votes.length, rated: true };
    return { step: s, good: s.passed, rated: false };
  });
}

export function calibration(verdicts: ReturnType<typeof stepVerdicts>): EvaluateData['calibration'] {
  const edges = [0, 0.2, 0.4, 0.6, 0.8, 1.0001];
  const usable = verdicts.filter((v) => v.good !== null && typeof v.step.confidence === 'number');
  const buckets = edges.slice(0, -1).map((from, i) => {
    const to = edges[i + 1]!;
    const inB = usable.filter((v) => v.step.confidence! >= from && v.step.confidence! < to);
    const mc = mean(inB.map((v) => v.step.confidence!));
    const gs = mean(inB.map((v) => (v.good ? 1 : 0)));
    return { from, to: Math.min(1, to), steps: inB.length, meanConfidence: mc === null ? null : round(mc), goodShare: gs === null ? null : round(gs), rated: inB.filter((v) => v.rated).length, gap: mc === null || gs === null ? null : round(mc - gs) };
  });
  const weighted = buckets.filter((b) => b.gap !== null).reduce((n, b) => n + Math.abs(b.gap!) * b.steps, 0);
  return { samples: usable.length, buckets, meanAbsoluteGap: usable.length ? round(weighted / usable.length) : null };
}

export function falsePositives(feedback: FeedbackRecord[]): EvaluateData['falsePositives'] {
  const groups = new Map<string, FeedbackRecord[]>();
  for (const f of feedback) {
    if (!f.finding) continue;
    const key = f.finding.fingerprint ?? f.finding.id ?? '';
    if (key) groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const out: EvaluateData['falsePositives'] = [];
  for (const [key, fs] of groups) {
    const down = fs.filter((f) => !f.good).length;
    const up = fs.length - down;
    if (down <= up) continue;
    const first = fs[0]!.finding!;
    out.push({ key, fingerprint: first.fingerprint, ruleId: first.ruleId, file: first.file, agentId: fs[0]!.agentId, down, up, reasons: fs.filter((f) => !f.good && f.reason).map((f) => f.reason!).slice(0, 5) });
  }
  return out.sort((a, b) => b.down - a.down || a.key.localeCompare(b.key));
}

export function evaluate(f: EvaluateFacts, only?: string): EvaluateData {
  const verdicts = stepVerdicts(f.steps, f.feedback);
  const agentIds = new Set([...f.agents.map((a) => a.agentId), ...f.steps.map((s) => s.agentId), ...f.feedback.flatMap((x) => (x.agentId ? [x.agentId] : []))]);
  const states = new Map(f.agents.map((a) => [a.agentId, a]));
  const proposals: Proposal[] = [];
  const agents: EvaluateData['agents'] = [];
  for (const agentId of [...agentIds].sort()) {
    if (only && agentId !== only) continue;
    const st = states.get(agentId);
    const fb = f.feedback.filter((x) => x.agentId === agentId && !x.finding);
    const up = fb.filter((x) => x.good).length;
    const mine = verdicts.filter((v) => v.step.agentId === agentId);
    const known = mine.filter((v) => v.good !== null && typeof v.step.confidence === 'number');
    const mc = mean(known.map((v) => v.step.confidence!));
    const gs = mean(known.map((v) => (v.good ? 1 : 0)));
    const gap = known.length >= MIN_CALIBRATION_SAMPLES && mc !== null && gs !== null ? round(mc - gs) : null;
    const row: EvaluateData['agents'][number] = {
      agentId, mode: st?.mode ?? 'unknown', quality: st?.quality ?? 0, tasks: st?.tasks ?? 0, successRate: st && st.tasks ? round(st.successes / st.tasks) : null,
      recentFailures: st?.recentFailures ?? 0,
      stricterGates: (st?.thresholds ?? []).filter((t) => t.effective !== t.base).map((t) => ({ gate: t.gate, base: t.base, effective: t.effective })),
      modeChanges: st?.modeChanges ?? [],
      feedback: { up, down: fb.length - up, total: fb.length, goodRatio: fb.length ? round(up / fb.length) : null },
      steps: { count: mine.length, passed: mine.filter((v) => v.step.passed === true).length, meanConfidence: mc === null ? null : round(mc), goodShare: gs === null ? null : round(gs), gap },
    };
    agents.push(row);
    if (gap !== null && gap > OVERCONFIDENCE_GAP) {
      const conf = st?.thresholds.find((t) => t.gate === 'confidence');
      const now = conf?.effective ?? null;
      const next = now === null ? null : Math.min(1, Math.ceil((now + gap) * 20) / 20);
      proposals.push({
        id: `tune:${agentId}:confidence`, kind: 'tune_agent', agentId, target: 'gate confidence',
        change: now === null ? `hold ${agentId}'s results to a higher confidence threshold` : `raise ${agentId}'s confidence threshold from ${now} to ${next} at scope ${f.scope}`,
        why: `${agentId} reported a mean confidence of ${row.steps.meanConfidence} over ${known.length} step(s) while ${round((gs ?? 0) * 100, 1)}% turned out good (gap ${gap} > ${OVERCONFIDENCE_GAP})`,
        evidence: { steps: known.length, meanConfidence: row.steps.meanConfidence, goodShare: row.steps.goodShare, rated: known.filter((v) => v.rated).length }, status: 'proposed',
        effect: next === null ? null : { gate: 'confidence', threshold: next },
      });
    }
    if (fb.length >= MIN_RATINGS && up * 2 < fb.length && st && st.mode !== 'OBSERVE') {
      const lower = MODES[Math.max(0, MODES.indexOf(st.mode) - 1)]!;
      proposals.push({
        id: `tune:${agentId}:mode`, kind: 'tune_agent', agentId, target: 'acmf mode', change: `lower ${agentId} from ${st.mode} to ${lower}`,
        why: `${fb.length - up} of ${fb.length} rating(s) of ${agentId}'s results are bad (good ratio ${row.feedback.goodRatio} < 0.5)`,
        evidence: { up, down: fb.length - up, reasons: fb.filter((x) => !x.good && x.reason).map((x) => x.reason).slice(0, 3) }, status: 'proposed',
        effect: { mode: lower },
      });
    }
  }
  const fps = falsePositives(f.feedback).filter((x) => !only || x.agentId === only);
  for (const fp of fps) {
    proposals.push({
      id: `suppress:${fp.key}`, kind: 'suppress_finding', agentId: fp.agentId, target: fp.key,
      change: `suppress ${fp.ruleId ?? 'the finding'}${fp.file ? ` in ${fp.file}` : ''} (fingerprint ${fp.key}): cadre-ignore ${fp.ruleId ?? '<rule>'}: ${fp.reasons[0] ?? 'rated a false positive'}`,
      why: `rated down ${fp.down} time(s), up ${fp.up}: people judged it a false positive`,
      evidence: { down: fp.down, up: fp.up, reasons: fp.reasons }, status: 'proposed',
      effect: fp.fingerprint ? { fingerprint: fp.fingerprint } : null,
    });
  }
  return { asOf: f.asOf, scope: f.scope, agents, calibration: calibration(only ? verdicts.filter((v) => v.step.agentId === only) : verdicts), falsePositives: fps, proposals, applying: [], inForce: [...(f.adaptations ?? [])], applied: false, note: PROPOSALS_NOTE };
}

export function renderEvaluate(d: EvaluateData): string {
  const out = ['# adapt-ai evaluation', '', `As of ${d.asOf}, scope ${d.scope}. ${d.note}.`, '', '## Agents', '',
    '| agent | mode | quality | failed reviews | stricter gates | ratings (up/down) | steps | mean confidence | good share |', '|---|---|---:|---:|---|---|---:|---:|---:|',
    ...d.agents.map((a) => `| ${a.agentId} | ${a.mode} | ${a.quality} | ${a.recentFailures} | ${a.stricterGates.map((g) => `${g.gate} ${g.base}->${g.effective}`).join(', ')} | ${a.feedback.up}/${a.feedback.down} | ${a.steps.count} | ${a.steps.meanConfidence ?? ''} | ${a.steps.goodShare ?? ''} |`),
    '', '## Confidence calibration', '', `${d.calibration.samples} step(s) with a known outcome; mean absolute gap ${d.calibration.meanAbsoluteGap ?? 'n/a'}.`, '',
    '| confidence | steps | mean confidence | good share | rated |', '|---|---:|---:|---:|---:|',
    ...d.calibration.buckets.map((b) => `| ${b.from.toFixed(1)}-${b.to.toFixed(1)} | ${b.steps} | ${b.meanConfidence ?? ''} | ${b.goodShare ?? ''} | ${b.rated} |`),
    '', '## False positives', '', ...(d.falsePositives.length ? d.falsePositives.map((x) => `- ${x.ruleId ?? '?'} ${x.file ?? ''} (${x.key}): down ${x.down}, up ${x.up}${x.reasons.length ? `: ${x.reasons.join('; ')}` : ''}`) : ['None rated down.']),
    '', '## Proposals', '', ...(d.proposals.length ? d.proposals.map((p) => `- [${p.kind}] ${p.id}: ${p.change}: ${p.why}`) : ['No change proposed.'])];
  if (d.applying.length) out.push('', '## Applying (through ACMF)', '', ...d.applying.map((a) => `- ${a.id}: ${a.status}${a.status === 'allowed' ? ' (applied when the execution ends)' : ''}: ${a.change}`));
  if (d.inForce.length) out.push('', '## Adaptations in force', '', ...d.inForce.map((a) => `- ${a.change} (${a.by}, ${a.appliedAt}, ${a.executionId})`));
  return out.join('\n');
}

/** `input.apply`: proposal ids, `all`, or null when nothing is to be applied. */
function applyRequest(ctx: SkillContext): 'all' | string[] | null {
  const a = ctx.request.input['apply'];
  if (a === 'all') return 'all';
  return Array.isArray(a) && a.every((x) => typeof x === 'string') ? (a as string[]) : null;
}

function chosenProposals(ctx: SkillContext): Proposal[] {
  const asked = applyRequest(ctx);
  const f = governanceFacts<EvaluateFacts>(ctx, 'evaluate');
  if (asked === null || 'missing' in f || isFactError(f)) return [];
  const only = typeof ctx.request.input['agentId'] === 'string' ? ctx.request.input['agentId'] : undefined;
  const { proposals } = evaluate(f, only);
  return asked === 'all' ? proposals : proposals.filter((p) => asked.includes(p.id));
}

/** What ACMF decided for each proposal asked to be applied (by kind: one action per kind in Inspect). */
export function applyingFor(proposals: readonly Proposal[], asked: 'all' | string[], allowed: (kind: string) => boolean): ApplyingEntry[] {
  const ids = asked === 'all' ? proposals.map((p) => p.id) : asked;
  return ids.map((id): ApplyingEntry => {
    const p = proposals.find((x) => x.id === id);
    if (!p || p.effect === null) {
      return { id, kind: p?.kind ?? 'tune_agent', agentId: p?.agentId ?? null, change: p ? `${p.change} (nothing machine-applicable)` : 'no such proposal now', effect: null, status: 'not_proposed', by: null };
    }
    return { id, kind: p.kind, agentId: p.agentId, change: p.change, effect: p.effect, status: allowed(p.kind) ? 'allowed' : 'denied', by: null };
  });
}

export const evaluateSkill: Skill = {
  agentId: 'adapt-ai',
  action: 'evaluate',
  inputSchema: evaluateInputSchema,
  outputSchema: evaluateDataSchema,
  ...factsPhases<EvaluateFacts>({
    kind: KIND, label: LABEL, facts: factsOf('evaluate'),
    evidence: (f) => [
      { source: 'engine: ACMF state', detail: `${f.agents.length} agent(s)`, weight: 0.8 },
      { source: 'engine: feedback and steps', detail: `${f.feedback.length} rating(s), ${f.steps.length} step(s) of ${f.executionsLooked} execution(s)`, weight: 0.8 },
    ],
    report(ctx, f) {
      const only = typeof ctx.request.input['agentId'] === 'string' ? ctx.request.input['agentId'] : undefined;
      const d = evaluate(f, only);
      const asked = applyRequest(ctx);
      if (asked !== null) {
        d.applying = applyingFor(d.proposals, asked, (kind) => ctx.allowed(kind));
        d.applied = d.applying.some((a) => a.status === 'allowed');
        d.note = APPLY_NOTE;
      }
      if (!d.agents.length) {
        const why = `nothing to evaluate: no agent has ACMF state, steps or feedback${only ? ` (agent ${only})` : ''} in this tenant yet`;
        return { kind: KIND, summary: `${LABEL}: not applicable: ${why}`, goalRef: ctx.request.goal.id, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      // The reported state and counts are the store's; what grows firmer with more known outcomes
      // (rated or reviewed) is the calibration and the proposals drawn from it.
      const confidence = round(0.7 + 0.25 * Math.min(1, d.calibration.samples / 50), 2);
      ctx.progress(100, confidence);
      const summary = `${d.agents.length} agent(s) evaluated; calibration gap ${d.calibration.meanAbsoluteGap ?? 'n/a'} over ${d.calibration.samples} step(s); ${d.falsePositives.length} false positive(s); ${d.proposals.length} proposal(s) (${d.proposals.map((p) => p.id).slice(0, 4).join(', ') || 'none'}), ${d.applying.length ? `${d.applying.filter((a) => a.status === 'allowed').length} of ${d.applying.length} allowed by ACMF, applied when the execution ends` : 'not applied'}`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderEvaluate(d), tokens: 0 };
    },
  }),
  propose(ctx) {
    const actions: ProposedAction[] = [{ kind: 'analyze', description: 'evaluate ACMF state, feedback and step outcomes the engine handed in' }];
    // Asked to apply: one action per kind, naming every change, for ACMF to allow or put to a person.
    const chosen = chosenProposals(ctx);
    for (const kind of ['tune_agent', 'suppress_finding'] as const) {
      const mine = chosen.filter((p) => p.kind === kind && p.effect !== null);
      if (mine.length > 0) actions.push({ kind, description: `adapt-ai: ${mine.map((p) => p.change).join('; ')}` });
    }
    return actions;
  },
};
