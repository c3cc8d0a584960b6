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
 *    This version proposes only: nothing is applied, the output says so.
 */
import type { EvaluateFacts } from '../../engine/governance/evaluate-facts';
import type { FeedbackRecord } from '../../engine/governance/feedback';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { emptyEvidence, governanceFacts, isFactError, round, unableFor } from '../governance/facts';
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
export const PROPOSALS_NOTE = 'proposals only: this version applies no change; each proposal is an action of kind tune_agent or suppress_finding for ACMF, which a person applies (cadre agents mode, a cadre-ignore directive, the gate thresholds in .cadre.yaml)';

export interface Proposal {
  id: string;
  kind: 'tune_agent' | 'suppress_finding';
  agentId: string | null;
  target: string;
  change: string;
  why: string;
  evidence: Record<string, unknown>;
  status: 'proposed';
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
  applied: false;
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
      });
    }
    if (fb.length >= MIN_RATINGS && up * 2 < fb.length && st && st.mode !== 'OBSERVE') {
      const lower = MODES[Math.max(0, MODES.indexOf(st.mode) - 1)]!;
      proposals.push({
        id: `tune:${agentId}:mode`, kind: 'tune_agent', agentId, target: 'acmf mode', change: `lower ${agentId} from ${st.mode} to ${lower}`,
        why: `${fb.length - up} of ${fb.length} rating(s) of ${agentId}'s results are bad (good ratio ${row.feedback.goodRatio} < 0.5)`,
        evidence: { up, down: fb.length - up, reasons: fb.filter((x) => !x.good && x.reason).map((x) => x.reason).slice(0, 3) }, status: 'proposed',
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
    });
  }
  return { asOf: f.asOf, scope: f.scope, agents, calibration: calibration(only ? verdicts.filter((v) => v.step.agentId === only) : verdicts), falsePositives: fps, proposals, applied: false, note: PROPOSALS_NOTE };
}

export function renderEvaluate(d: EvaluateData): string {
  const out = ['# adapt-ai evaluation', '', `As of ${d.asOf}, scope ${d.scope}. ${d.note}.`, '', '## Agents', '',
    '| agent | mode | quality | failed reviews | stricter gates | ratings (up/down) | steps | mean confidence | good share |', '|---|---|---:|---:|---|---|---:|---:|---:|',
    ...d.agents.map((a) => `| ${a.agentId} | ${a.mode} | ${a.quality} | ${a.recentFailures} | ${a.stricterGates.map((g) => `${g.gate} ${g.base}->${g.effective}`).join(', ')} | ${a.feedback.up}/${a.feedback.down} | ${a.steps.count} | ${a.steps.meanConfidence ?? ''} | ${a.steps.goodShare ?? ''} |`),
    '', '## Confidence calibration', '', `${d.calibration.samples} step(s) with a known outcome; mean absolute gap ${d.calibration.meanAbsoluteGap ?? 'n/a'}.`, '',
    '| confidence | steps | mean confidence | good share | rated |', '|---|---:|---:|---:|---:|',
    ...d.calibration.buckets.map((b) => `| ${b.from.toFixed(1)}-${b.to.toFixed(1)} | ${b.steps} | ${b.meanConfidence ?? ''} | ${b.goodShare ?? ''} | ${b.rated} |`),
    '', '## False positives', '', ...(d.falsePositives.length ? d.falsePositives.map((x) => `- ${x.ruleId ?? '?'} ${x.file ?? ''} (${x.key}): down ${x.down}, up ${x.up}${x.reasons.length ? `: ${x.reasons.join('; ')}` : ''}`) : ['None rated down.']),
    '', '## Proposals', '', ...(d.proposals.length ? d.proposals.map((p) => `- [${p.kind}] ${p.change}: ${p.why}`) : ['No change proposed.'])];
  return out.join('\n');
}

export const evaluateSkill: Skill = {
  agentId: 'adapt-ai',
  action: 'evaluate',
  inputSchema: evaluateInputSchema,
  outputSchema: evaluateDataSchema,
  async research(ctx) {
    const evidence: Evidence = emptyEvidence();
    const f = governanceFacts<EvaluateFacts>(ctx, 'evaluate');
    if ('missing' in f) evidence.constraints.push(f.missing);
    else if (!isFactError(f)) {
      evidence.items.push({ source: 'engine: ACMF state', detail: `${f.agents.length} agent(s)`, weight: 0.8 });
      evidence.items.push({ source: 'engine: feedback and steps', detail: `${f.feedback.length} rating(s), ${f.steps.length} step(s) of ${f.executionsLooked} execution(s)`, weight: 0.8 });
    }
    ctx.progress(40, 0.5);
    return evidence;
  },
  propose() {
    // Proposals are reported, not taken: nothing here for ACMF to allow or ask about.
    return [{ kind: 'analyze', description: 'evaluate ACMF state, feedback and step outcomes the engine handed in' }];
  },
  async generate(ctx: SkillContext): Promise<Artifact> {
    const f = governanceFacts<EvaluateFacts>(ctx, 'evaluate');
    if ('missing' in f) return unableFor(ctx, KIND, LABEL, { message: f.missing });
    if (isFactError(f)) return unableFor(ctx, KIND, LABEL, f.error);
    const only = typeof ctx.request.input['agentId'] === 'string' ? ctx.request.input['agentId'] : undefined;
    const d = evaluate(f, only);
    if (!d.agents.length) {
      const why = `nothing to evaluate: no agent has ACMF state, steps or feedback${only ? ` (agent ${only})` : ''} in this tenant yet`;
      return { kind: KIND, summary: `${LABEL}: not applicable: ${why}`, goalRef: ctx.request.goal.id, confidence: 1, data: null, notApplicable: why, tokens: 0 };
    }
    // The reported state and counts are the store's; what grows firmer with more known outcomes
    // (rated or reviewed) is the calibration and the proposals drawn from it.
    const confidence = round(0.7 + 0.25 * Math.min(1, d.calibration.samples / 50), 2);
    ctx.progress(100, confidence);
    const summary = `${d.agents.length} agent(s) evaluated; calibration gap ${d.calibration.meanAbsoluteGap ?? 'n/a'} over ${d.calibration.samples} step(s); ${d.falsePositives.length} false positive(s); ${d.proposals.length} proposal(s) (${d.proposals.map((p) => p.id).slice(0, 4).join(', ') || 'none'}), not applied`;
    return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderEvaluate(d), tokens: 0 };
  },
};
