import { strict as assert } from 'node:assert';
import type { SkillContext, StepRequest, StepSummary } from '../../../../server/src/engine/rigor/skill';
import {
  analyzeRequirements, analyzeSkill, deriveStory, requirementSkills, splitStatements, validateSkill, validateStories, validateStory, type UserStory,
} from '../../../../server/src/skills/requirements';

function ctx(partial: { prompt?: string; input?: Record<string, unknown>; previous?: StepSummary[]; action?: string }): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 1, agentId: 'req-ai', action: partial.action ?? 'analyze',
    goal: { id: 'goal-req', prompt: partial.prompt ?? '' }, input: partial.input ?? {}, scope: 'workspace' as StepRequest['scope'],
    tier: 'standard' as StepRequest['tier'], previous: partial.previous ?? [],
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => false, once: (_k, f) => f() };
}

const TEXT = `Checkout
- Registered users can save their cart so that they can finish the purchase later.
- If payment fails, the customer should see an error message and/or a retry button.
- The system must send a confirmation email when an order ships.
- As an admin, I want to export orders to CSV, so that finance can reconcile them.
The search page should be fast and user-friendly, e.g. for mobile, etc. Admins must approve refunds over 100 EUR.`;

describe('req-ai skills', () => {
  describe('analyze', () => {
    it('splits bullets and sentences, keeping abbreviations inside a sentence and dropping headings', () => {
      assert.deepEqual(splitStatements(TEXT), [
        'Registered users can save their cart so that they can finish the purchase later.',
        'If payment fails, the customer should see an error message and/or a retry button.',
        'The system must send a confirmation email when an order ships.',
        'As an admin, I want to export orders to CSV, so that finance can reconcile them.',
        'The search page should be fast and user-friendly, e.g. for mobile, etc.',
        'Admins must approve refunds over 100 EUR.',
      ]);
    });
    it('detects the actor, capability and benefit of a statement', () => {
      const s = deriveStory('Registered users can save their cart so that they can finish the purchase later.', 'S1')!;
      assert.equal(s.role, 'registered user');
      assert.equal(s.roleMissing, false);
      assert.equal(s.capability, 'save their cart');
      assert.equal(s.benefit, 'they can finish the purchase later');
      assert.equal(s.text, 'As a registered user, I want to save their cart, so that they can finish the purchase later.');
    });
    it('derives Given-When-Then from if/when conditions and should/must outcomes', () => {
      const fail = deriveStory('If payment fails, the customer should see an error message.', 'S2')!;
      assert.deepEqual(fail.acceptanceCriteria, [{ given: 'a customer and payment fails', when: 'the customer attempts to see an error message', then: 'the customer should see an error message' }]);
      const mail = deriveStory('The system must send a confirmation email when an order ships.', 'S3')!;
      assert.equal(mail.roleMissing, true, 'no actor: defaulted and flagged');
      assert.equal(mail.role, 'user');
      assert.equal(mail.capability, 'the system to send a confirmation email');
      assert.deepEqual(mail.acceptanceCriteria[0], { given: 'a user', when: 'an order ships', then: 'the system must send a confirmation email' });
    });
    it('parses stories already written as "As a ..., I want ..., so that ..."', () => {
      const s = deriveStory('As an admin, I want to export orders to CSV, so that finance can reconcile them.', 'S4')!;
      assert.deepEqual([s.role, s.capability, s.benefit], ['admin', 'export orders to CSV', 'finance can reconcile them']);
    });
    it('does not take "user-friendly" for an actor', () => {
      const s = deriveStory('The search page should be fast and user-friendly.', 'S5')!;
      assert.equal(s.roleMissing, true);
    });
    it('numbers the stories', () => {
      assert.deepEqual(analyzeRequirements(TEXT).map((s) => s.id), ['S1', 'S2', 'S3', 'S4', 'S5', 'S6']);
    });
  });

  describe('validate (INVEST)', () => {
    it('passes a well-formed story on all six criteria', () => {
      const v = validateStory(deriveStory('As an admin, I want to export orders to CSV, so that finance can reconcile them.', 'S1')!);
      assert.equal(v.score, 1, JSON.stringify(v.checks));
      assert.deepEqual(v.ambiguities, []);
    });
    it('flags ambiguous words, missing actor, missing benefit and untestable criteria, with reasons', () => {
      const v = validateStory(deriveStory('The search page should be fast and user-friendly, etc.', 'S1')!);
      assert.deepEqual(v.ambiguities.map((a) => a.term).sort(), ['etc.', 'fast', 'should', 'user-friendly'].sort());
      assert.equal(v.missingActor, true);
      const failed = v.checks.filter((c) => !c.passed).map((c) => c.criterion);
      assert.deepEqual(failed, ['Valuable', 'Estimable', 'Small', 'Testable']);
      assert.match(v.untestableCriteria[0]!.reason, /vague term/);
      assert.match(v.checks.find((c) => c.criterion === 'Valuable')!.reason, /no actor named; no benefit/);
      assert.equal(v.score, 0.33);
    });
    it('fails Independent on references to other stories, Negotiable on prescribed implementation, Small on compound stories', () => {
      const dep = validateStory(deriveStory('Users can edit their profile after story S1 so that they keep it current.', 'S2')!);
      assert.equal(dep.checks.find((c) => c.criterion === 'Independent')!.passed, false);
      const impl = validateStory(deriveStory('Admins can list invoices using a MySQL stored procedure so that they can audit them.', 'S3')!);
      assert.equal(impl.checks.find((c) => c.criterion === 'Negotiable')!.passed, false);
      const big = validateStory(deriveStory('Users can create, edit, delete and share documents and folders so that they organise their work.', 'S4')!);
      assert.equal(big.checks.find((c) => c.criterion === 'Small')!.passed, false);
    });
    it('flags and/or, as needed and appropriate', () => {
      const v = validateStory(deriveStory('Managers can notify staff by email and/or SMS as needed with appropriate wording so that shifts are covered.', 'S1')!);
      for (const term of ['and/or', 'as needed', 'appropriate']) assert.ok(v.ambiguities.some((a) => a.term === term), term);
    });
    it('averages scores and counts passing criteria', () => {
      const r = validateStories(analyzeRequirements(TEXT));
      assert.equal(r.stories.length, 6);
      assert.ok(r.score > 0 && r.score < 1);
      assert.equal(r.passing.Valuable, 2);
    });
  });

  describe('through the Skill interface', () => {
    it('exports analyze and validate for req-ai', () => {
      assert.deepEqual(requirementSkills.map((s) => `${s.agentId}/${s.action}`), ['req-ai/analyze', 'req-ai/validate']);
    });
    it('analyze: research → propose → generate on the goal prompt', async () => {
      const c = ctx({ prompt: TEXT });
      const ev = await analyzeSkill.research(c);
      assert.deepEqual(await analyzeSkill.propose(c, ev), []);
      const a = await analyzeSkill.generate(c, ev);
      assert.equal(a.goalRef, 'goal-req');
      assert.equal(a.unable, undefined);
      assert.equal((a.data as { stories: UserStory[] }).stories.length, 6);
      assert.match(a.text!, /Given a customer and payment fails/);
      assert.ok(a.confidence > 0.3 && a.confidence < 0.95);
      const better = await analyzeSkill.generate(ctx({ input: { text: 'As an admin, I want to export orders to CSV, so that finance can reconcile them.' } }), ev);
      assert.ok(better.confidence > a.confidence, 'complete stories give more confidence');
    });
    it('validate: takes the stories of a previous req-ai analyze step', async () => {
      const stories = analyzeRequirements(TEXT);
      const previous: StepSummary[] = [{ step: 0, agentId: 'req-ai', action: 'analyze', passed: true, confidence: 0.8, summary: '', data: { stories } }];
      const c = ctx({ action: 'validate', prompt: 'check the stories', previous });
      const ev = await validateSkill.research(c);
      const a = await validateSkill.generate(c, ev);
      assert.equal(a.goalRef, 'goal-req');
      const data = a.data as { source: string; stories: Array<{ id: string; score: number }> };
      assert.equal(data.source, 'previous');
      assert.equal(data.stories.length, 6);
      assert.match(a.text!, /FAIL Valuable/);
    });
    it('says unable with no requirement text', async () => {
      const c = ctx({ prompt: '   ' });
      const a = await analyzeSkill.generate(c, await analyzeSkill.research(c));
      assert.match(a.unable ?? '', /no requirement text/);
      const v = await validateSkill.generate(c, await validateSkill.research(c));
      assert.match(v.unable ?? '', /no user stories/);
      assert.deepEqual(v.needsInput, { field: 'stories' }, 'nothing to validate is missing input, not a failure of req-ai');
    });
  });
});
