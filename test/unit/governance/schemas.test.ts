/**
 * The six fact-backed actions publish an input and a result schema (the OpenAPI document is built from
 * the listing), and the input schemas refuse what the engine would refuse anyway at submission, naming
 * the field: a rating out of range, a decision that is neither approve nor deny.
 */
import { strict as assert } from 'node:assert';
import { checkSkillInput } from '../../../server/src/engine/rigor/skill';
import { listSkills } from '../../../server/src/workers/skill-manifest';
import { ours } from './engine';

describe('governance skills: input and result schemas', () => {
  it('each of the six actions lists an input and a result JSON schema with its documented fields', () => {
    const listed = Object.fromEntries(listSkills(ours).map((l) => [`${l.agentId}/${l.action}`, l]));
    const want: Record<string, string[]> = {
      'govern-ai/audit-trail': ['executionId', 'agentId', 'kind', 'since', 'until', 'limit'], 'govern-ai/approval': ['decide'],
      'adapt-ai/feedback': ['executionId', 'step', 'finding', 'rating', 'reason'], 'adapt-ai/evaluate': ['agentId'],
      'success-ai/health': ['days'], 'success-ai/engagement': ['weeks'],
    };
    assert.deepEqual(Object.keys(listed).sort(), Object.keys(want).sort());
    for (const [key, fields] of Object.entries(want)) {
      const l = listed[key]!;
      assert.equal(l.outputSchema, true, key);
      assert.ok(l.outputJsonSchema, `${key} result schema`);
      const props = Object.keys((l.inputJsonSchema as { properties?: Record<string, unknown> }).properties ?? {});
      for (const f of fields) assert.ok(props.includes(f), `${key} input documents ${f} (has ${props.join(', ')})`);
    }
  });

  it('input schemas refuse bad input naming the field (input.<field>)', () => {
    const skill = (k: string) => ours.find((s) => `${s.agentId}/${s.action}` === k)!;
    const field = (k: string, input: Record<string, unknown>) => {
      try {
        checkSkillInput(skill(k), input);
        return null;
      } catch (err) {
        return ((err as { details: { errors: Array<{ field: string }> } }).details.errors).map((e) => e.field);
      }
    };
    assert.deepEqual(field('adapt-ai/feedback', { executionId: 'act_1', rating: 0 }), ['input.rating']);
    assert.deepEqual(field('adapt-ai/feedback', { rating: 'up' }), ['input.executionId']);
    assert.equal(field('adapt-ai/feedback', { executionId: 'act_1', rating: '4', step: '0' }), null, 'text forms of the GET query pass');
    assert.deepEqual(field('govern-ai/approval', { decide: { approvalId: 'appr_1', decision: 'maybe' } }), ['input.decide.decision']);
    assert.deepEqual(field('govern-ai/audit-trail', { limit: 'many' }), ['input.limit']);
    assert.equal(field('success-ai/health', { days: '14' }), null);
    assert.deepEqual(field('success-ai/engagement', { weeks: 'soon' }), ['input.weeks']);
  });
});
