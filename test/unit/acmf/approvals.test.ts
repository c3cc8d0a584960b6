import assert from 'node:assert/strict';
import { denialReason, isApproved } from '../../../server/src/engine/acmf/acmf-service';
import type { ProposedAction } from '../../../server/src/engine/acmf/records';
import { isEngineError } from '../../../server/src/engine/errors';
import { createHarness, type Harness } from './harness';

const deploy: ProposedAction = { kind: 'deploy', description: 'deploy to production', production: true };

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => isEngineError(err) && err.code === code);
}

function request(h: Harness, over: { executionId?: string; timeoutMs?: number } = {}) {
  return h.service.requestApproval({
    executionId: over.executionId ?? 'task_1',
    agentId: 'deploy-ai',
    action: deploy,
    risk: 'critical',
    reasons: ['targets production (deploy)'],
    ...(over.timeoutMs === undefined ? {} : { timeoutMs: over.timeoutMs }),
  });
}

/** Settles once the microtask queue drains: lets us assert that a promise is still pending. */
async function isPending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(() => (settled = true), () => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return !settled;
}

describe('acmf service: approvals', () => {
  it('requestApproval persists a pending record durably and audits approval.requested', async () => {
    const h = createHarness();
    const writesBefore = h.approvals.writes;
    const r = await request(h, { timeoutMs: 60_000 });
    assert.equal(h.approvals.writes, writesBefore + 1, 'the write was awaited');
    assert.deepEqual(h.approvals.get(r.id), r);
    assert.equal(r.status, 'pending');
    assert.equal(r.requestedAt, '2025-06-02T12:00:00.000Z');
    assert.equal(r.expiresAt, '2025-06-02T12:01:00.000Z');
    assert.deepEqual(r.riskReasons, ['targets production (deploy)']);
    const [audit] = await h.audit.query({ kind: 'approval.requested' });
    assert.ok(audit);
    assert.deepEqual([audit.actor, audit.agentId, audit.executionId, audit.data.approvalId, audit.data.risk], ['deploy-ai', 'deploy-ai', 'task_1', r.id, 'critical']);
    assert.deepEqual(h.service.pendingApprovals().map((a) => a.id), [r.id]);
  });

  it('validates the request', async () => {
    const h = createHarness();
    await rejectsWith(h.service.requestApproval({ executionId: '', agentId: 'a', action: deploy, risk: 'high', reasons: [] }), 'ERR_VALIDATION');
    await rejectsWith(h.service.requestApproval({ executionId: 'e', agentId: 'a', action: deploy, risk: 'extreme' as never, reasons: [] }), 'ERR_VALIDATION');
    await rejectsWith(h.service.requestApproval({ executionId: 'e', agentId: 'a', action: deploy, risk: 'high', reasons: [], timeoutMs: 0 }), 'ERR_VALIDATION');
  });

  it('decideApproval records who and when, and audits approval.decided', async () => {
    const h = createHarness();
    const r = await request(h);
    h.clock.advance(5_000);
    const d = await h.service.decideApproval(r.id, { approved: true, by: 'user:bob', reason: 'change window open' });
    assert.equal(d.status, 'approved');
    assert.equal(d.decidedBy, 'user:bob');
    assert.equal(d.decidedAt, '2025-06-02T12:00:05.000Z');
    assert.equal(d.reason, 'change window open');
    assert.deepEqual(h.approvals.get(r.id), d);
    assert.ok(isApproved(d));
    assert.equal(denialReason(d), null);
    const [audit] = await h.audit.query({ kind: 'approval.decided' });
    assert.ok(audit);
    assert.equal(audit.actor, 'user:bob');
    assert.equal(audit.ts, '2025-06-02T12:00:05.000Z');
    assert.deepEqual([audit.data.decidedBy, audit.data.decidedAt, audit.data.approved, audit.executionId], ['user:bob', '2025-06-02T12:00:05.000Z', true, 'task_1']);
    assert.deepEqual(h.service.pendingApprovals(), []);
  });

  it('a denial is recorded with a clear reason', async () => {
    const h = createHarness();
    const r = await request(h);
    const d = await h.service.decideApproval(r.id, { approved: false, by: 'user:bob', reason: 'freeze' });
    assert.equal(d.status, 'denied');
    assert.equal(isApproved(d), false);
    assert.match(denialReason(d)!, /denied by user:bob at 2025-06-02T12:00:00.000Z: freeze/);
  });

  it('deciding twice is ERR_CONFLICT, an unknown id ERR_NOT_FOUND, a missing `by` ERR_VALIDATION', async () => {
    const h = createHarness();
    const r = await request(h);
    await rejectsWith(h.service.decideApproval(r.id, { approved: true, by: '' }), 'ERR_VALIDATION');
    await rejectsWith(h.service.decideApproval(r.id, { approved: true } as never), 'ERR_VALIDATION');
    await h.service.decideApproval(r.id, { approved: true, by: 'user:bob' });
    await rejectsWith(h.service.decideApproval(r.id, { approved: false, by: 'user:eve' }), 'ERR_CONFLICT');
    assert.equal(h.approvals.get(r.id)!.decidedBy, 'user:bob', 'the first decision stands');
    await rejectsWith(h.service.decideApproval('apr_nope', { approved: true, by: 'user:bob' }), 'ERR_NOT_FOUND');
    assert.equal((await h.audit.query({ kind: 'approval.decided' })).length, 1);
  });

  it('two concurrent decisions: exactly one wins', async () => {
    const h = createHarness();
    const r = await request(h);
    const results = await Promise.allSettled([
      h.service.decideApproval(r.id, { approved: true, by: 'user:a' }),
      h.service.decideApproval(r.id, { approved: false, by: 'user:b' }),
    ]);
    assert.deepEqual(results.map((x) => x.status), ['fulfilled', 'rejected']);
  });

  describe('expiry', () => {
    it('expireDue marks pending approvals past expiresAt as expired (counts as denied), audited', async () => {
      const h = createHarness();
      const r = await request(h, { timeoutMs: 1_000 });
      const noDeadline = await request(h, { executionId: 'task_2' });
      h.clock.advance(999);
      assert.deepEqual(await h.service.expireDue(h.clock.now()), []);
      h.clock.advance(1);
      const expired = await h.service.expireDue(h.clock.now());
      assert.deepEqual(expired.map((e) => e.id), [r.id]);
      const rec = h.approvals.get(r.id)!;
      assert.equal(rec.status, 'expired');
      assert.equal(isApproved(rec), false);
      assert.match(denialReason(rec)!, /expired at 2025-06-02T12:00:01.000Z without a decision \(an expired approval counts as denied\)/);
      assert.equal(h.approvals.get(noDeadline.id)!.status, 'pending');
      const [audit] = await h.audit.query({ kind: 'approval.expired' });
      assert.ok(audit);
      assert.deepEqual([audit.actor, audit.data.approvalId, audit.data.outcome], ['engine', r.id, 'denied']);
      assert.deepEqual(await h.service.expireDue(h.clock.now()), [], 'idempotent');
      await rejectsWith(h.service.decideApproval(r.id, { approved: true, by: 'user:bob' }), 'ERR_CONFLICT');
    });

    it('a decision arriving after the deadline is refused, and the approval is expired', async () => {
      const h = createHarness();
      const r = await request(h, { timeoutMs: 1_000 });
      h.clock.advance(2_000);
      await rejectsWith(h.service.decideApproval(r.id, { approved: true, by: 'user:bob' }), 'ERR_CONFLICT');
      assert.equal(h.approvals.get(r.id)!.status, 'expired');
    });

    it('expiry wakes a waiter with the expired record', async () => {
      const h = createHarness();
      const r = await request(h, { timeoutMs: 1_000 });
      const waiting = h.service.waitForDecision(r.id);
      h.clock.advance(1_000);
      await h.service.expireDue();
      assert.equal((await waiting).status, 'expired');
    });
  });

  describe('waitForDecision', () => {
    it('resolves when the approval is decided', async () => {
      const h = createHarness();
      const r = await request(h);
      const waiting = h.service.waitForDecision(r.id);
      const second = h.service.waitForDecision(r.id);
      assert.equal(await isPending(waiting), true);
      await h.service.decideApproval(r.id, { approved: true, by: 'user:bob' });
      assert.equal((await waiting).status, 'approved');
      assert.equal((await second).decidedBy, 'user:bob');
    });

    it('resolves at once when already decided', async () => {
      const h = createHarness();
      const r = await request(h);
      await h.service.decideApproval(r.id, { approved: false, by: 'user:bob' });
      assert.equal((await h.service.waitForDecision(r.id)).status, 'denied');
    });

    it('works after a restart (a new service over the same repositories)', async () => {
      const h = createHarness();
      const pending = await request(h);
      const decided = await request(h, { executionId: 'task_2' });
      await h.service.decideApproval(decided.id, { approved: true, by: 'user:bob' });

      const restarted = h.restart();
      assert.deepEqual(restarted.pendingApprovals().map((a) => a.id), [pending.id]);
      assert.equal((await restarted.waitForDecision(decided.id)).status, 'approved');
      const waiting = restarted.waitForDecision(pending.id);
      assert.equal(await isPending(waiting), true);
      await restarted.decideApproval(pending.id, { approved: true, by: 'user:carol' });
      const out = await waiting;
      assert.deepEqual([out.status, out.decidedBy], ['approved', 'user:carol']);
    });

    it('after a restart, a pending approval already past its deadline is expired on read', async () => {
      const h = createHarness();
      const r = await request(h, { timeoutMs: 1_000 });
      h.clock.advance(10_000);
      const out = await h.restart().waitForDecision(r.id);
      assert.equal(out.status, 'expired');
      assert.equal((await h.audit.query({ kind: 'approval.expired' })).length, 1);
    });

    it('rejects with ERR_CANCELLED on abort, and ERR_NOT_FOUND for an unknown id', async () => {
      const h = createHarness();
      const r = await request(h);
      const ac = new AbortController();
      const waiting = h.service.waitForDecision(r.id, ac.signal);
      ac.abort();
      await rejectsWith(waiting, 'ERR_CANCELLED');
      await rejectsWith(h.service.waitForDecision(r.id, ac.signal), 'ERR_CANCELLED');
      await rejectsWith(h.service.waitForDecision('apr_nope'), 'ERR_NOT_FOUND');
      // The cancelled waiter is gone; a decision still resolves other waiters.
      const other = h.service.waitForDecision(r.id);
      await h.service.decideApproval(r.id, { approved: true, by: 'user:bob' });
      assert.equal((await other).status, 'approved');
    });
  });

  it('pendingApprovals and listApprovals filter by execution, agent and status, oldest first', async () => {
    const h = createHarness();
    const a = await request(h, { executionId: 'task_1' });
    h.clock.advance(1);
    const b = await request(h, { executionId: 'task_2' });
    h.clock.advance(1);
    const c = await request(h, { executionId: 'task_1' });
    await h.service.decideApproval(c.id, { approved: true, by: 'user:bob' });
    assert.deepEqual(h.service.pendingApprovals().map((x) => x.id), [a.id, b.id]);
    assert.deepEqual(h.service.pendingApprovals({ executionId: 'task_1' }).map((x) => x.id), [a.id]);
    assert.deepEqual(h.service.listApprovals({ executionId: 'task_1' }).map((x) => x.id), [a.id, c.id]);
    assert.deepEqual(h.service.listApprovals({ status: 'approved' }).map((x) => x.id), [c.id]);
    assert.deepEqual(h.service.listApprovals({ agentId: 'other' }), []);
  });
});
