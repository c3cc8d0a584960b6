import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openStore, storeFilePath } from '../../../server/src/store/lowdb-store';
import { anyone, createHarness, fleetSkills, settled } from '../../support/engine-harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const fleet = require('../../fixtures/skills/fleet-skills.cjs') as { generateCalls(id: string): number };
const effects = () => (globalThis as { __cadreEffects?: string[] }).__cadreEffects ?? [];

describe('durable executions', function () {
  this.timeout(30_000);
  const yaml = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

  it('resume after a restart from the last completed step; a retried side effect runs once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-resume-'));
    const store1 = await openStore({ file: storeFilePath(dir) });
    const h1 = await createHarness({ skills: fleetSkills, yaml, store: store1, dir });
    const rec = await h1.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'effect:architect-ai crash:architect-ai:1 slow:coder-ai:400' } }, anyone);
    for (;;) {
      const s = h1.engine.executions.get(rec.id).steps;
      if (s[3]!.status === 'running') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    // The process goes away while coder-ai works: nothing is marked, the store keeps the checkpoints.
    await h1.close();
    await store1.close();
    const callsBefore = fleet.generateCalls(rec.id);

    const store2 = await openStore({ file: storeFilePath(dir) });
    const h2 = await createHarness({ skills: fleetSkills, yaml, store: store2, dir });
    const checkpoint = h2.engine.executions.get(rec.id);
    assert.equal(checkpoint.status, 'in_progress');
    assert.deepEqual(checkpoint.steps.map((s) => s.status), ['completed', 'completed', 'completed', 'running', 'pending', 'pending']);
    assert.deepEqual(await h2.engine.executions.resumeInFlight(), [rec.id]);
    const done = await settled(h2.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.resumes, 1);
    // Only coder-ai (interrupted), review-ai and tester-ai ran again: three generate calls.
    assert.equal(fleet.generateCalls(rec.id) - callsBefore, 3);
    assert.equal(effects().filter((k) => k.startsWith(`${rec.id}:2`)).length, 1, 'the side effect of the retried architect step ran once');
    const events = await h2.engine.executions.eventSource(rec.id).replay(0);
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'event numbering continues without a gap or a repeat');
    await h2.close();
    await store2.close();
  });

  it('an execution whose start mark was lost in a crash (its events were not) resumes without a second execution_started', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-resume-'));
    const store1 = await openStore({ file: storeFilePath(dir) });
    const h1 = await createHarness({ skills: fleetSkills, yaml, store: store1, dir });
    const rec = await h1.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'slow:req-ai:400' } }, anyone);
    while (h1.engine.executions.get(rec.id).steps[0]!.status !== 'running') await new Promise((r) => setTimeout(r, 5));
    await h1.close();
    // The start mark rides the first step's checkpoint: a crash before it leaves the record as created.
    await store1.collection<{ id: string; status: string; startedAt: string | null }>('executions').update(rec.id, { status: 'queued', startedAt: null });
    await store1.close();

    const store2 = await openStore({ file: storeFilePath(dir) });
    const h2 = await createHarness({ skills: fleetSkills, yaml, store: store2, dir });
    assert.deepEqual(await h2.engine.executions.resumeInFlight(), [rec.id]);
    const done = await settled(h2.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.ok(done.startedAt, 'started, marked by the resumed run');
    const events = await h2.engine.executions.eventSource(rec.id).replay(0);
    assert.equal(events.filter((e) => e.type === 'execution_started').length, 1, 'one execution_started in the stream');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'event numbering continues without a gap or a repeat');
    await h2.close();
    await store2.close();
  });

  it('an escalation waiting for a person survives a restart and is not asked twice', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-resume-'));
    const store1 = await openStore({ file: storeFilePath(dir) });
    const h1 = await createHarness({ skills: fleetSkills, yaml: yaml.replace('AUTONOMOUS', 'ASSISTED'), store: store1, dir });
    const rec = await h1.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'build', input: { prompt: 'crash:architect-ai:99' } }, anyone);
    for (;;) {
      if (h1.engine.acmf.pendingApprovals({ executionId: rec.id }).length > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await h1.close();
    await store1.close();

    const store2 = await openStore({ file: storeFilePath(dir) });
    const h2 = await createHarness({ skills: fleetSkills, yaml, store: store2, dir });
    await h2.engine.executions.resumeInFlight();
    await new Promise((r) => setTimeout(r, 50));
    const pending = h2.engine.acmf.pendingApprovals({ executionId: rec.id });
    assert.equal(pending.length, 1, 'the same approval, not a second one');
    assert.equal(h2.engine.executions.get(rec.id).status, 'awaiting_approval');
    await h2.engine.acmf.decideApproval(pending[0]!.id, { approved: true, by: 'user:erin' });
    const done = await settled(h2.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.steps.filter((s) => s.agentId === 'architect-ai').length, 1, 'the failed step is not run again');
    await h2.close();
    await store2.close();
  });
});
