/**
 * Two seams of the execution service (issue 18, items 2 and 3): `whenSettled(id)`, the one wait every
 * door uses for an execution to end, and the "continued past a failure" state kept as data on the step
 * (`continuedBy`), with records of the old format (the decision in the error message) migrated when
 * they resume.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isEngineError } from '../../../server/src/engine/errors';
import { migrateContinued } from '../../../server/src/engine/executions/escalation';
import type { ExecutionRecord, StepRecord } from '../../../server/src/engine/executions/records';
import { COLLECTIONS } from '../../../server/src/engine/ports';
import { openStore, storeFilePath } from '../../../server/src/store/lowdb-store';
import { anyone, createHarness, fleetSkills, settled } from '../../support/engine-harness';

const yaml = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

describe('whenSettled: the one wait for an execution to end', function () {
  this.timeout(30_000);

  it('resolves with the final record, written, when the execution ends (no earlier)', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'slow:coder-ai:150' }, anyone);
    let resolvedWith: ExecutionRecord | null = null;
    const wait = h.engine.executions.whenSettled(rec.id).then((r) => (resolvedWith = r));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(resolvedWith, null, 'not settled while the step runs');
    const ended = await wait;
    assert.equal(ended.status, 'completed', JSON.stringify(ended.error));
    assert.ok(ended.completedAt, 'the final record (completedAt) is what it resolves with');
    assert.equal(h.engine.executions.get(rec.id).status, 'completed');
    await h.close();
  });

  it('resolves at once for an ended execution; ERR_NOT_FOUND for an unknown one', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'fast' }, anyone);
    await settled(h.engine, rec.id);
    assert.equal((await h.engine.executions.whenSettled(rec.id)).id, rec.id);
    await assert.rejects(h.engine.executions.whenSettled('exec_nope'), (err: unknown) => isEngineError(err) && err.code === 'ERR_NOT_FOUND');
    await h.close();
  });

  it('rejects with ERR_TIMEOUT naming the status after timeoutMs, and with the reason when the signal aborts; the execution goes on', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'slow:coder-ai:300' }, anyone);
    await assert.rejects(h.engine.executions.whenSettled(rec.id, { timeoutMs: 10 }), (err: unknown) => isEngineError(err) && err.code === 'ERR_TIMEOUT' && /still in_progress|still queued/.test(err.message));
    const ctrl = new AbortController();
    const aborted = h.engine.executions.whenSettled(rec.id, { signal: ctrl.signal });
    ctrl.abort(new Error('caller went away'));
    await assert.rejects(aborted, /caller went away/);
    assert.equal((await h.engine.executions.whenSettled(rec.id)).status, 'completed');
    await h.close();
  });

  it('resolves for a cancelled execution too', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'slow:coder-ai:2000' }, anyone);
    const wait = h.engine.executions.whenSettled(rec.id);
    await new Promise((r) => setTimeout(r, 20));
    await h.engine.executions.cancel(rec.id, 'user:test');
    assert.equal((await wait).status, 'cancelled');
    await h.close();
  });

  it('ran(id) resolves once the run has returned (not before), at once when nothing runs', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'slow:coder-ai:300' }, anyone);
    assert.equal(h.engine.executions.isRunning(rec.id), true);
    let ran = false;
    const done = h.engine.executions.ran(rec.id).then(() => (ran = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ran, false, 'still running');
    await done;
    assert.equal(h.engine.executions.isRunning(rec.id), false);
    assert.ok(['completed', 'failed'].includes(h.engine.executions.get(rec.id).status));
    await h.engine.executions.ran('exec_unknown');
    await h.close();
  });
});

describe('the continued state is data on the step', function () {
  this.timeout(30_000);

  const step = (error: StepRecord['error'], extra: Partial<StepRecord> = {}): StepRecord => ({
    step: 0, agentId: 'architect-ai', action: 'design', domain: null, round: 1, status: 'failed', attempts: 3, startedAt: null, completedAt: null,
    phases: [], passed: false, confidence: null, summary: null, output: null, gates: { passed: 0, failed: 0, notApplicable: 0, failures: [] }, error, ...extra,
  });

  it('migration rule: "<message> (continued by <who>)" becomes continuedBy and the message without the suffix; other steps are unchanged', () => {
    const old = migrateContinued(step({ code: 'ERR_SKILL_FAILED', message: 'crash (attempt 3) (continued by user:alice)' }));
    assert.equal(old.continuedBy, 'user:alice');
    assert.equal(old.error!.message, 'crash (attempt 3)');
    const plain = step({ code: 'ERR_SKILL_FAILED', message: 'the word continued by itself is no decision' });
    assert.equal(migrateContinued(plain), plain);
    const current = step({ code: 'ERR_SKILL_FAILED', message: 'x (continued by user:bob)' }, { continuedBy: 'user:carol' });
    assert.equal(migrateContinued(current), current, 'a step with continuedBy is already data');
  });

  it('an in-flight record of the old format resumes past the step a person continued after, and is stored with continuedBy', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-continued-'));
    const store1 = await openStore({ file: storeFilePath(dir) });
    const h1 = await createHarness({ skills: fleetSkills, yaml: yaml.replace('AUTONOMOUS', 'ASSISTED'), store: store1, dir });
    const rec = await h1.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'crash:architect-ai:99' } }, anyone);
    while (h1.engine.acmf.pendingApprovals({ executionId: rec.id }).length === 0) await new Promise((r) => setTimeout(r, 5));
    await h1.close();
    await store1.close();

    // The record as the first version wrote it once a person had said go on: the decision in the message.
    const store2 = await openStore({ file: storeFilePath(dir) });
    const repo = store2.collection<ExecutionRecord>(COLLECTIONS.executions);
    const stored = repo.get(rec.id)!;
    const failedAt = stored.steps.findIndex((s) => s.status === 'failed');
    assert.ok(failedAt >= 0);
    const legacy = stored.steps.map((s, i) => {
      if (i !== failedAt) return s;
      const { escalationId: _dropped, continuedBy: _none, ...rest } = s;
      return { ...rest, error: { code: s.error!.code, message: `${s.error!.message} (continued by user:old)` } };
    });
    await repo.update(rec.id, { steps: legacy });
    const h2 = await createHarness({ skills: fleetSkills, yaml, store: store2, dir });
    await h2.engine.executions.resumeInFlight();
    const done = await h2.engine.executions.whenSettled(rec.id, { timeoutMs: 20_000 });
    assert.equal(done.status, 'completed', `the continued step no longer decides the outcome: ${JSON.stringify(done.error)}`);
    const migrated = done.steps[failedAt]!;
    assert.equal(migrated.continuedBy, 'user:old');
    assert.doesNotMatch(migrated.error!.message, /continued by/);
    assert.equal(h2.engine.acmf.pendingApprovals({ executionId: rec.id }).length, 0, 'nobody is asked again');
    await h2.close();
    await store2.close();
  });
});
