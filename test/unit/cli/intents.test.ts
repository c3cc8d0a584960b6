/** The natural-language router (server/src/engine/catalog/intents.ts) on a table of instructions with the agents expected. */
import { strict as assert } from 'node:assert';
import { agentsOf, classifyIntent, INTENT_RULES, targetName } from '../../../server/src/engine/catalog/intents';
import { TASK_VERBS } from '../../../server/src/engine/catalog/verbs';
import { findWorkflow } from '../../../server/src/engine/catalog/workflows';

const TABLE: Array<[instruction: string, target: string, agents: string[]]> = [
  ['review the payment module for injection bugs', 'review', ['review-ai', 'security-ai']],
  ['Review src/auth.ts please', 'review', ['review-ai', 'security-ai']],
  ['scan the repo for leaked secrets and credentials', 'security', ['security-ai', 'threathunter-ai']],
  ['are there any SQL injection vulnerabilities in the API?', 'security', ['security-ai', 'threathunter-ai']],
  ['run the tests', 'test', ['tester-ai']],
  ['what is our test coverage', 'test', ['tester-ai']],
  ['why does the login page crash with TypeError: x is undefined', 'debug', ['debug-ai']],
  ['debug this stack trace', 'debug', ['debug-ai']],
  ['add a health endpoint to the server', 'code', ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai']],
  ['implement rate limiting', 'code', ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai', 'tester-ai', 'debug-ai']],
  ['deploy main to staging', 'deploy', ['deploy-ai']],
  ['is this ready to deploy?', 'deploy', ['deploy-ai']],
  ['checkout is down, sev1 outage', 'incident', ['incident-ai']],
  ['look for anomalies in the latency metrics', 'monitor', ['observe-ai']],
  ['when will the disk run out of space, forecast it', 'capacity', ['capacity-ai']],
  ['back up the workspace before the migration', 'backup', ['backup-ai']],
  ['weekly maintenance and cleanup of stale branches', 'maintain', ['maintain-ai']],
  ['take this feature end to end, from requirements to production', 'full-sdlc', ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'tester-ai', 'review-ai', 'security-ai', 'deploy-ai', 'observe-ai']],
  ['prioritize our tech debt', 'technical-debt-prioritization', []],
  ['our cloud bill doubled: cost anomaly', 'cost-anomaly-remediation', []],
];

describe('natural-language router (catalog/intents.ts)', () => {
  for (const [instruction, target, agents] of TABLE) {
    it(`"${instruction}" → ${target}`, () => {
      const intent = classifyIntent(instruction);
      assert.ok(intent, 'some phrase matched');
      assert.equal(targetName(intent.target), target, intent.reason);
      const expected = agents.length > 0 ? agents : (findWorkflow(target)?.pipeline.map((s) => s.agent) ?? []);
      assert.deepEqual(intent.agents.map((a) => a.agent), expected);
      assert.match(intent.reason, /^".+" points? to the /);
    });
  }

  it('says nothing when no phrase of the table occurs (the CLI then asks for a verb)', () => {
    assert.equal(classifyIntent('hello there'), null);
    assert.equal(classifyIntent(''), null);
  });

  it('is deterministic and explains the choice with the phrases that decided it', () => {
    const a = classifyIntent('review the payment module for injection bugs')!;
    const b = classifyIntent('review the payment module for injection bugs')!;
    assert.deepEqual(a, b);
    assert.equal(a.reason, '"review", "bugs" point to the review verb (score 5)');
    assert.deepEqual(a.alternatives.map((x) => targetName(x.target)), ['security']);
    // The tier note of review's security-ai step travels with the agents.
    assert.deepEqual(a.agents.find((x) => x.agent === 'security-ai'), { agent: 'security-ai', minIntelligence: 'ultra' });
  });

  it('gives the imperative first word one more point than the same word later', () => {
    const first = classifyIntent('deploy after the tests pass')!;
    assert.equal(targetName(first.target), 'deploy', first.reason);
    const later = classifyIntent('run the tests before we deploy')!;
    assert.equal(targetName(later.target), 'test', later.reason);
  });

  it('matches a word ending in * as a prefix and only whole words otherwise', () => {
    assert.equal(targetName(classifyIntent('find vulnerabilities')!.target), 'security');
    // "contest" contains "test" but is not the word "test".
    assert.equal(classifyIntent('the contest results'), null);
  });

  it('routes only to verbs and workflows that exist', () => {
    for (const rule of INTENT_RULES) {
      if (rule.target.kind === 'verb') assert.ok((TASK_VERBS as readonly string[]).includes(rule.target.verb), rule.target.verb);
      else assert.ok(findWorkflow(rule.target.workflow), rule.target.workflow);
      assert.ok(agentsOf(rule.target).length > 0);
    }
  });
});
