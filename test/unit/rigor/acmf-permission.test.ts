import { strict as assert } from 'node:assert';
import { GATE_EVALUATORS } from '../../../server/src/engine/rigor/gate-evaluators';
import type { ActionDecision, ReviewSubject } from '../../../server/src/engine/rigor/review-subject';
import type { Artifact } from '../../../server/src/engine/rigor/skill';
import { reviewChecks } from '../../../server/src/skills/review-checks';

function subject(artifact: Partial<Artifact>, decisions: ActionDecision[]): ReviewSubject {
  return {
    request: { executionId: 'exec_p', step: 0, agentId: 'coder-ai', action: 'fix', goal: { id: 'goal_p', prompt: 'fix it' }, input: {}, scope: 'mvp', tier: 'core', previous: [] },
    evidence: { items: [], constraints: [], pathsRead: [] },
    artifact: { kind: 'code-fix', summary: 's', goalRef: 'goal_p', confidence: 0.9, data: null, ...artifact },
    decisions, phaseDurations: {}, audit: { recorded: [], intact: true }, protectedPaths: [], policies: [], deniedLicenses: [], checks: reviewChecks,
  };
}

const declared = (kind: string, description: string, paths: string[] | undefined, decision: ActionDecision['decision'], approvedBy?: string): ActionDecision => ({
  action: { kind, description, ...(paths ? { paths } : {}) }, risk: 'medium', reasons: [], decision,
  ...(approvedBy ? { approval: { status: 'approved', decidedBy: approvedBy } as unknown as NonNullable<ActionDecision['approval']> } : {}),
});

const gate = (taken: Artifact['actionsTaken'], decisions: ActionDecision[]) => GATE_EVALUATORS.acmfPermission(subject({ actionsTaken: taken ?? [] }, decisions));

describe('acmf-permission gate', () => {
  it('an action reported in the skill\'s own words is covered by the declared action of the same kind over the same paths', () => {
    // coder-ai declares "apply 3 edits to 1 file…" and reports "wrote 1 file…": the paths tie them.
    const decisions = [declared('write_file', 'apply 3 edits to 1 files in a temporary git worktree', ['util.js'], 'approval_required', 'user:dana'), declared('git_commit', 'commit the edits on a new branch', ['util.js'], 'approval_required', 'user:dana')];
    const r = gate([{ kind: 'write_file', description: 'wrote 1 files in a temporary worktree', paths: ['util.js'] }, { kind: 'git_commit', description: 'committed abc on new branch cadre/x', paths: ['util.js'] }], decisions);
    assert.equal(r.status, 'pass', r.reason);
  });

  it('a path that was not declared, a kind never declared, or a declaration still awaiting a person fails', () => {
    const write = declared('write_file', 'apply edits', ['util.js'], 'allow');
    assert.equal(gate([{ kind: 'write_file', description: 'wrote', paths: ['util.js', 'secret.js'] }], [write]).status, 'fail');
    assert.match(gate([{ kind: 'git_push', description: 'pushed' }], [write]).reason, /git_push \(not declared in Inspect\)/);
    const pending = declared('write_file', 'apply edits', ['util.js'], 'approval_required');
    assert.match(gate([{ kind: 'write_file', description: 'wrote', paths: ['util.js'] }], [pending]).reason, /write_file \(approval_required\)/);
  });

  it('without paths on either side the kind decides (e.g. a test command)', () => {
    assert.equal(gate([{ kind: 'run_command', description: 'ran npm test' }], [declared('run_command', 'run the test command: npm test', undefined, 'allow')]).status, 'pass');
  });
});
