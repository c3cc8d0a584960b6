/**
 * govern-ai approval: the tenant's pending approvals, and a decision applied engine-side as the key
 * that started the execution (approver role, separation of duties, never its own execution, once),
 * recorded as `key:<id> via govern-ai (<execution id>)`; another tenant's approval is not found.
 */
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import type { ApprovalRecord } from '../../../server/src/engine/acmf/records';
import { approvalFacts, viaGovernActor } from '../../../server/src/engine/governance/approval-facts';
import { separationOfDuties } from '../../../server/src/engine/acmf/separation-of-duties';
import type { ApprovalData } from '../../../server/src/skills/govern/approval';
import { as, govEngine, newTenant, type GovEngine } from './engine';

describe('govern-ai approval (engine facts + skill)', function () {
  this.timeout(30_000);
  let g: GovEngine | undefined;
  afterEach(async () => g?.close());

  /** A pending approval of a (finished) execution of `who`. */
  async function pendingOf(who: ReturnType<typeof as>, risk: ApprovalRecord['risk'] = 'high', agentId = 'coder-ai'): Promise<ApprovalRecord> {
    const ex = await g!.run('review-ai', 'review', {}, who);
    return g!.engine.acmf.requestApproval({ executionId: ex.id, agentId, action: { kind: 'write_file', description: 'fix the login', paths: ['src/login.ts'] }, risk, reasons: ['touches auth'] });
  }

  it('separationOfDuties: own high-risk approval refused unless allowed; denying and low risk always allowed', () => {
    const approval = { id: 'appr_1', risk: 'high' as const, action: { kind: 'write_file', description: '' } };
    const q = { approval, ownerKeyId: 'key_a', deciderKeyId: 'key_a', approved: true, selfApprovalSetting: undefined, activeKeys: 2 };
    assert.equal(separationOfDuties(q).allowed, false);
    assert.deepEqual(separationOfDuties({ ...q, activeKeys: 1 }), { allowed: true, selfApproved: true });
    assert.deepEqual(separationOfDuties({ ...q, selfApprovalSetting: true }), { allowed: true, selfApproved: true });
    assert.equal(separationOfDuties({ ...q, activeKeys: 1, selfApprovalSetting: false }).allowed, false);
    assert.deepEqual(separationOfDuties({ ...q, approved: false }), { allowed: true, selfApproved: false });
    assert.deepEqual(separationOfDuties({ ...q, approval: { ...approval, risk: 'medium' } }), { allowed: true, selfApproved: false });
    assert.deepEqual(separationOfDuties({ ...q, deciderKeyId: 'key_b' }), { allowed: true, selfApproved: false });
  });

  it('lists only the tenant\'s pending approvals, riskiest first, with agent, action, reasons and age', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_op: 'operator' } });
    const b = await newTenant(g.engine, 'b');
    const low = await pendingOf(as('key_op'), 'low');
    const high = await pendingOf(as('key_op'), 'high');
    await pendingOf(as('key_op', b), 'critical');
    const done = await g.run('govern-ai', 'approval', {}, as('key_app'));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as ApprovalData;
    assert.deepEqual(d.pending.map((p) => p.id), [high.id, low.id]);
    assert.deepEqual([d.pending[0]!.agentId, d.pending[0]!.action.kind, d.pending[0]!.reasons], ['coder-ai', 'write_file', ['touches auth']]);
    assert.match(d.pending[0]!.age, /^\d+(s|m \d+s)$/);
    assert.equal(d.decision, null);
  });

  it('an approver key approves through govern-ai: recorded as the key via govern-ai, audited, listed no more', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_op: 'operator' } });
    const a = await pendingOf(as('key_op'));
    const done = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'approve', reason: 'reviewed the diff' } }, as('key_app'));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as ApprovalData;
    const by = viaGovernActor('key_app', done.id);
    assert.equal(by, `key:key_app via govern-ai (${done.id})`);
    assert.deepEqual([d.decision!.status, d.decision!.by, d.decision!.replayed, d.decision!.reason], ['approved', by, false, 'reviewed the diff']);
    assert.equal(d.pending.length, 0);
    const stored = g.engine.acmf.getApproval(a.id);
    assert.deepEqual([stored.status, stored.decidedBy], ['approved', by]);
    const audited = await g.audit.query({ kind: 'approval.decided' });
    assert.deepEqual(audited.map((r) => [r.actor, r.data['approvalId'], r.data['note']]), [[by, a.id, 'via govern-ai']]);
  });

  it('key ids as the host makes them (key_ + 12 hex) in the decision and the audit actors do not trip the secrets gate', async () => {
    const approver = `key_${randomBytes(6).toString('hex')}`;
    const op = `key_${randomBytes(6).toString('hex')}`;
    g = await govEngine({ roles: { [approver]: 'approver', [op]: 'operator' } });
    const a = await pendingOf(as(op));
    const done = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'approve' } }, as(approver));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const trail = await g.run('govern-ai', 'audit-trail', { kind: 'approval.decided' }, as(approver));
    assert.equal(trail.status, 'completed', JSON.stringify(trail.steps[0]?.reason));
  });

  it('denies too; an operator key is refused (role) and the approval stays pending', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_op: 'operator' } });
    const a = await pendingOf(as('key_app'));
    const refused = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'approve' } }, as('key_op'));
    assert.equal(refused.status, 'failed');
    assert.match(String(refused.steps[0]!.reason), /operator role: deciding an approval needs the approver role/);
    assert.equal(g.engine.acmf.getApproval(a.id).status, 'pending');
    const denied = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'deny', reason: 'no' } }, as('key_op2'));
    assert.equal(denied.status, 'failed', 'an unknown key is refused too');
    g.roles.set('key_adm', 'admin');
    const ok = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'deny', reason: 'not now' } }, as('key_adm'));
    assert.equal(ok.status, 'completed', JSON.stringify(ok.steps[0]?.reason));
    assert.equal(g.engine.acmf.getApproval(a.id).status, 'denied');
  });

  it('another tenant\'s approval answers exactly like a missing one (needs input, decide.approvalId)', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_b: 'approver' } });
    const b = await newTenant(g.engine, 'b');
    const theirs = await pendingOf(as('key_b', b));
    const r1 = await g.run('govern-ai', 'approval', { decide: { approvalId: theirs.id, decision: 'approve' } }, as('key_app'));
    const r2 = await g.run('govern-ai', 'approval', { decide: { approvalId: 'appr_missing', decision: 'approve' } }, as('key_app'));
    for (const r of [r1, r2]) {
      assert.equal(r.status, 'failed');
      assert.equal(r.steps[0]!.outcome, 'needs_input');
    }
    assert.equal(String(r1.steps[0]!.reason).replace(theirs.id, 'X'), String(r2.steps[0]!.reason).replace('appr_missing', 'X'));
    assert.equal(g.engine.acmf.getApproval(theirs.id).status, 'pending');
  });

  it('separation of duties: the key that started the execution may not approve its high-risk action (several keys)', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_other: 'approver' } });
    const a = await pendingOf(as('key_app'), 'critical');
    const r = await g.run('govern-ai', 'approval', { decide: { approvalId: a.id, decision: 'approve' } }, as('key_app'));
    assert.equal(r.status, 'failed');
    assert.match(String(r.steps[0]!.reason), /another key with the approver role must decide it/);
    assert.equal(g.engine.acmf.getApproval(a.id).status, 'pending');
  });

  it('never an approval of its own execution; applied once when the step runs again (replayed, one audit record)', async () => {
    g = await govEngine({ roles: { key_app: 'approver', key_op: 'operator' } });
    const a = await pendingOf(as('key_op'));
    const deps = {
      acmf: g.engine.acmf, keys: { roleOf: (id: string) => g!.roles.get(id) ?? null, activeKeys: () => 2 },
      executionTenant: () => 'tnt_default', ownerKeyOf: () => 'key_op', selfApprovalSetting: () => undefined, now: () => Date.now(),
    };
    const own = await approvalFacts(deps, { executionId: a.executionId, tenantId: 'tnt_default', ownerKeyId: 'key_app', input: { decide: { approvalId: a.id, decision: 'approve' } } }, '');
    assert.equal((own.decision as { error: { reason: string } }).error.reason, 'own_execution');
    const ctx = { executionId: 'act_gov1', tenantId: 'tnt_default', ownerKeyId: 'key_app', input: { decide: { approvalId: a.id, decision: 'approve' } } };
    const first = await approvalFacts(deps, ctx, '');
    const again = await approvalFacts(deps, ctx, '');
    assert.equal((first.decision as { replayed: boolean }).replayed, false);
    assert.equal((again.decision as { replayed: boolean }).replayed, true);
    assert.equal((await g.audit.query({ kind: 'approval.decided' })).length, 1);
    const other = await approvalFacts(deps, { ...ctx, executionId: 'act_gov2' }, '');
    assert.equal((other.decision as { error: { code: string } }).error.code, 'conflict');
  });
});
