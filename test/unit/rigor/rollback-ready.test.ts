import { strict as assert } from 'node:assert';
import { GATE_EVALUATORS } from '../../../server/src/engine/rigor/gate-evaluators';
import type { ReviewSubject } from '../../../server/src/engine/rigor/review-subject';
import type { Artifact, FileChange } from '../../../server/src/engine/rigor/skill';
import { reviewChecks } from '../../../server/src/skills/review-checks';

function subject(artifact: Partial<Artifact>): ReviewSubject {
  return {
    request: { executionId: 'exec_rb', step: 0, agentId: 'coder-ai', action: 'fix', goal: { id: 'goal_rb', prompt: 'fix it' }, input: {}, scope: 'mvp', tier: 'core', previous: [] },
    evidence: { items: [], constraints: [], pathsRead: [] },
    artifact: { kind: 'code-fix', summary: 's', goalRef: 'goal_rb', confidence: 0.9, data: null, ...artifact },
    decisions: [], phaseDurations: {}, audit: { recorded: [], intact: true }, protectedPaths: [], policies: [], deniedLicenses: [], checks: reviewChecks,
  };
}

const change = (over: Partial<FileChange> = {}): FileChange => ({ path: 'src/a.ts', kind: 'modify', content: 'x\n', linesAdded: 1, linesRemoved: 1, ...over });
const rollbackReady = (a: Partial<Artifact>) => GATE_EVALUATORS.rollbackReady(subject(a));

describe('rollback-ready gate', () => {
  it('is not applicable when the step changed nothing', () => {
    assert.equal(rollbackReady({}).status, 'not_applicable');
  });

  it('does not count changes that were only proposed (applied: false): nothing was written', () => {
    const r = rollbackReady({ changes: [change({ applied: false }), change({ path: 'src/b.ts', applied: false })], actionsTaken: [], rollback: { kind: 'none_needed', ref: '' } });
    assert.equal(r.status, 'not_applicable');
    assert.match(r.reason, /2 change\(s\) only proposed, none written/);
  });

  it('a written change still needs a rollback, also when marked applied: true', () => {
    for (const c of [change(), change({ applied: true })]) {
      assert.equal(rollbackReady({ changes: [c] }).status, 'fail');
      assert.equal(rollbackReady({ changes: [c], rollback: { kind: 'none_needed', ref: '' } }).status, 'fail');
      const ok = rollbackReady({ changes: [c], rollback: { kind: 'branch', ref: 'cadre/x-fix' } });
      assert.equal(ok.status, 'pass');
      assert.equal(ok.value, 'cadre/x-fix');
    }
  });

  it('counts a proposal mixed with a written change, and a mutating action taken without changes', () => {
    assert.equal(rollbackReady({ changes: [change({ applied: false }), change({ path: 'src/b.ts' })] }).status, 'fail');
    assert.equal(rollbackReady({ changes: [change({ applied: false })], actionsTaken: [{ kind: 'git_commit', description: 'committed' }] }).status, 'fail');
  });
});
