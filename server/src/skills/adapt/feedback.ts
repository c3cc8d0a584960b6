/**
 * adapt-ai `feedback` [ULTRA]: a person rates a result (an execution, one of its steps, or one finding
 * of a step: up/down or 1-5 stars, with a reason). The engine validates the target in the caller's
 * tenant and records the rating once per adapt-ai execution (engine/governance/feedback.ts), as the
 * key that started the execution; this skill reports what was recorded.
 */
import type { FeedbackFacts, FeedbackRecord } from '../../engine/governance/feedback';
import type { Skill } from '../../engine/rigor/skill';
import { factsOf, factsPhases, isFactError, type FactErrorShape } from '../governance/facts';
import { feedbackDataSchema, feedbackInputSchema } from './schemas';

const KIND = 'feedback-record';
const LABEL = 'adapt-ai feedback';

export interface FeedbackData {
  recorded: Omit<FeedbackRecord, 'tenantId' | 'via' | 'confidence' | 'outcome'> & { replayed: boolean };
  sameTarget: FeedbackFacts['sameTarget'];
}

const ratingText = (r: FeedbackRecord['rating']): string => (r.scale === 'thumbs' ? r.value : `${r.value}/5`);

export function feedbackReport(f: FeedbackFacts & { recorded: FeedbackRecord & { replayed: boolean } }): FeedbackData {
  const { tenantId: _t, via: _v, confidence: _c, outcome: _o, ...recorded } = f.recorded;
  return { recorded, sameTarget: f.sameTarget };
}

function targetText(r: FeedbackData['recorded']): string {
  return `${r.finding ? `finding ${r.finding.fingerprint ?? r.finding.id}${r.finding.ruleId ? ` (${r.finding.ruleId}${r.finding.file ? ` in ${r.finding.file}` : ''})` : ''} of ` : ''}${r.step !== null ? `step ${r.step} (${r.agentId}) of ` : ''}execution ${r.executionId}`;
}

/** The rating recorded, once `failed` has ruled out the engine's refusal. */
const recorded = (f: FeedbackFacts) => f.recorded as Exclude<FeedbackFacts['recorded'], FactErrorShape>;

export const feedbackSkill: Skill = {
  agentId: 'adapt-ai',
  action: 'feedback',
  inputSchema: feedbackInputSchema,
  outputSchema: feedbackDataSchema,
  ...factsPhases<FeedbackFacts>({
    kind: KIND, label: LABEL, facts: factsOf('feedback'),
    evidence: (f) => [{ source: 'engine: feedback store', detail: `rating ${recorded(f).id} of execution ${recorded(f).executionId}`, weight: 0.9 }],
    failed: (f) => (isFactError(f.recorded) ? f.recorded : undefined),
    report(ctx, f) {
      const d = feedbackReport({ ...f, recorded: recorded(f) });
      const r = d.recorded;
      // A rating tied to a step or a finding says more about an agent than one on a whole execution.
      const confidence = r.finding ? 0.95 : r.step !== null || r.agentId ? 0.9 : 0.8;
      ctx.progress(100, confidence);
      const summary = `${r.replayed ? 'already recorded' : 'recorded'} ${ratingText(r.rating)} (${r.good ? 'good' : 'bad'}) for ${targetText(r)} by ${r.by}${r.reason ? `: ${r.reason}` : ''}; this target has ${d.sameTarget.up} up / ${d.sameTarget.down} down`;
      const text = ['# adapt-ai feedback', '', `${summary}.`, '', `Rating id ${r.id}, at ${r.at}.`].join('\n');
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text, tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'read', description: 'read the rating the engine recorded' }];
  },
};
