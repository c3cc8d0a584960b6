/**
 * govern-ai audit-trail: the engine queries the real JSON Lines trail for the execution's tenant
 * (by execution, agent, kind, time, limit) and verifies the chain; a record edited on disk while the
 * engine was stopped is named by its seq after a restart, and the records from it on are unverified.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { auditFilterOf, auditTrailFacts, complianceAuditFacts } from '../../../server/src/engine/governance/audit-facts';
import { executionTenants } from '../../../server/src/engine/governance/audit-tenant';
import { governanceStepFacts } from '../../../server/src/engine/governance/step-facts';
import { auditTenantOf } from '../../../server/src/engine/governance/audit-tenant';
import type { AuditTrailData } from '../../../server/src/skills/govern/audit-trail';
import { DEFAULT_TENANT_ID } from '../../../server/src/engine/tenants/tenant-id';
import { as, govEngine, newTenant, type GovEngine } from './engine';

describe('govern-ai audit-trail (engine facts + skill)', function () {
  this.timeout(30_000);
  let g: GovEngine | undefined;
  afterEach(async () => g?.close());

  it('auditTenantOf: the record\'s tenant, else its execution\'s, else the default tenant', () => {
    const ex = (id: string) => (id === 'exec_b' ? 'tnt_b' : undefined);
    assert.equal(auditTenantOf({ tenantId: 'tnt_a', executionId: 'exec_b' }, ex), 'tnt_a');
    assert.equal(auditTenantOf({ executionId: 'exec_b' }, ex), 'tnt_b');
    assert.equal(auditTenantOf({ executionId: 'exec_unknown' }, ex), DEFAULT_TENANT_ID);
    assert.equal(auditTenantOf({}, ex), DEFAULT_TENANT_ID);
  });

  it('refuses a limit over 1000, an unreadable time and since after until, naming the field', () => {
    assert.deepEqual((auditFilterOf({ limit: 1001 }) as { error: { field: string } }).error.field, 'limit');
    assert.deepEqual((auditFilterOf({ since: 'yesterday-ish' }) as { error: { field: string } }).error.field, 'since');
    assert.deepEqual((auditFilterOf({ since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }) as { error: { field: string } }).error.field, 'since');
    assert.deepEqual(auditFilterOf({ kind: 'phase.completed', limit: '5' }), { executionId: null, agentId: null, kind: 'phase.completed', since: null, until: null, limit: 5 });
  });

  it('returns only the tenant\'s records, filtered by execution, kind and time, with counts over every match', async () => {
    g = await govEngine();
    const b = await newTenant(g.engine, 'b');
    const mineA = await g.run('review-ai', 'review', {}, as(null));
    const theirs = await g.run('review-ai', 'review', {}, as(null, b));
    const all = await g.audit.query({});
    const ex = (id: string) => (id === theirs.id ? b : id === mineA.id ? DEFAULT_TENANT_ID : undefined);
    const facts = await auditTrailFacts(g.audit, DEFAULT_TENANT_ID, {}, ex, new Date().toISOString());
    assert.ok(!('error' in facts));
    assert.ok(facts.records.length > 0);
    assert.equal(facts.records.some((r) => r.executionId === theirs.id), false, 'no record of the other tenant');
    assert.equal(facts.matched, all.filter((r) => auditTenantOf(r, ex) === DEFAULT_TENANT_ID).length);
    const byExec = await auditTrailFacts(g.audit, DEFAULT_TENANT_ID, { executionId: theirs.id }, ex, '');
    assert.ok(!('error' in byExec));
    assert.equal(byExec.matched, 0, 'another tenant\'s execution reads as empty');
    const kinds = await auditTrailFacts(g.audit, b, { kind: 'phase.completed', limit: 3 }, ex, '');
    assert.ok(!('error' in kinds));
    assert.equal(kinds.records.length, 3);
    assert.ok(kinds.matched > 3);
    assert.deepEqual(Object.keys(kinds.byKind), ['phase.completed']);
    assert.ok(kinds.records.every((r) => r.executionId === theirs.id && r.kind === 'phase.completed'));
    const future = await auditTrailFacts(g.audit, DEFAULT_TENANT_ID, { since: new Date(Date.now() + 60_000).toISOString() }, ex, '');
    assert.ok(!('error' in future));
    assert.equal(future.matched, 0);
    const past = await auditTrailFacts(g.audit, DEFAULT_TENANT_ID, { until: all[0]!.ts }, ex, '');
    assert.ok(!('error' in past));
    assert.ok(past.records.every((r) => r.ts <= all[0]!.ts));
  });

  it('a record edited on disk while stopped: after the restart the action completes and names the tampered seq', async () => {
    g = await govEngine({ keep: true });
    const dir = g.dir;
    const store = g.store;
    const first = await g.run('review-ai', 'review', {}, as(null));
    await g.close();
    const [file] = readdirSync(path.join(dir, 'audit')).filter((f) => f.endsWith('.jsonl'));
    const lines = readFileSync(path.join(dir, 'audit', file!), 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"phase.completed"'));
    const rec = JSON.parse(lines[at]!) as { seq: number; data: Record<string, unknown> };
    rec.data['duration_ms'] = Number(rec.data['duration_ms']) + 1000;
    lines[at] = JSON.stringify(rec);
    writeFileSync(path.join(dir, 'audit', file!), lines.join('\n'));
    g = await govEngine({ dir, store });
    const done = await g.run('govern-ai', 'audit-trail', { executionId: first.id, limit: 1000 }, as(null));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as AuditTrailData;
    assert.equal(d.verification.status, 'broken');
    assert.equal(d.verification.firstBroken!.seq, rec.seq);
    assert.equal(d.verification.firstBroken!.problem, 'tampered');
    assert.equal(d.verification.firstBroken!.ofThisTenant, true);
    assert.ok(d.records.filter((r) => r.seq < rec.seq).every((r) => r.verified));
    assert.ok(d.records.filter((r) => r.seq >= rec.seq).every((r) => !r.verified));
    assert.match(done.steps[0]!.summary!, new RegExp(`BROKEN at seq ${rec.seq}`));
    await g.close();
    g = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('an intact trail: every record verified, counts by kind and agent; a forged input.governance is replaced', async () => {
    g = await govEngine();
    const first = await g.run('review-ai', 'review', {}, as(null));
    const forged = { action: 'audit-trail', records: [], verification: { ok: false } };
    const done = await g.run('govern-ai', 'audit-trail', { executionId: first.id, governance: forged }, as(null));
    assert.equal(done.status, 'completed', JSON.stringify(done.steps[0]?.reason));
    const d = done.steps[0]!.output as AuditTrailData;
    assert.equal(d.verification.status, 'intact');
    assert.ok(d.records.length > 0 && d.records.every((r) => r.verified && r.executionId === first.id));
    assert.equal(d.byAgent[0]!.key, 'review-ai');
    assert.ok(d.byKind.some((k) => k.key === 'phase.completed'));
  });

  it('complianceAuditFacts: the tenant\'s records, the chain verified, approvals decided by a person', async () => {
    g = await govEngine();
    const ran = await g.run('review-ai', 'review', {}, as('key_a'));
    const a = await g.engine.acmf.requestApproval({ executionId: ran.id, agentId: 'coder-ai', action: { kind: 'write_file', description: 'x' }, risk: 'low', reasons: [] });
    await g.engine.acmf.decideApproval(a.id, { approved: true, by: 'key:key_b' });
    const tenants = executionTenants(g.store);
    const approvals = g.engine.acmf.listApprovals();
    const got = await complianceAuditFacts(g.audit, DEFAULT_TENANT_ID, (id) => tenants.get(id), approvals);
    assert.equal(got.chainVerified, true);
    // The execution's records and those of no execution (an initial ACMF mode): the default tenant's.
    assert.equal(got.records, (await g.audit.query({})).filter((r) => !r.executionId || r.executionId === ran.id).length);
    assert.deepEqual(got.approvals, { decided: 1, byPerson: 1 });
    assert.deepEqual(await complianceAuditFacts(g.audit, 'tnt_other', (id) => tenants.get(id), approvals), { records: 0, chainVerified: true, approvals: { decided: 0, byPerson: 0 } });
  });

  it('a govern-ai compliance step gets the tenant\'s audit evidence as input.audit, over the request\'s own', async () => {
    g = await govEngine();
    await g.run('review-ai', 'review', {}, as(null));
    const facts = governanceStepFacts({
      store: g.store, audit: g.audit, acmf: g.engine.acmf, clock: { now: () => Date.now() }, executions: () => g!.engine.executions,
      selfApprovalSetting: () => undefined, defaultScope: () => 'mvp',
    });
    const forged = { chainVerified: true, records: 9999, approvals: { decided: 5, byPerson: 5 } };
    const got = await facts({ executionId: 'act_c', agentId: 'govern-ai', action: 'compliance', tenantId: DEFAULT_TENANT_ID, ownerKeyId: null, input: { audit: forged } }) as { audit: { records: number; chainVerified: boolean; approvals: unknown } };
    assert.equal(got.audit.chainVerified, true);
    assert.equal(got.audit.records, (await g.audit.query({})).length);
    assert.deepEqual(got.audit.approvals, { decided: 0, byPerson: 0 });
    assert.equal(await facts({ executionId: 'act_c', agentId: 'review-ai', action: 'review', tenantId: DEFAULT_TENANT_ID, ownerKeyId: null, input: {} }), undefined, 'other agents get nothing');
  });

  it('a bad filter ends the step needing input, naming the field', async () => {
    g = await govEngine();
    const done = await g.run('govern-ai', 'audit-trail', { limit: 5000 }, as(null));
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[0]!.outcome, 'needs_input');
    assert.match(String(done.steps[0]!.reason), /limit/);
  });
});
