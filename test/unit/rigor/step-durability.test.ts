/**
 * One durability batch per RIGOR step: a step's audit records reach the trail in one write (one
 * fsync), and its ACMF counters ride the same store group commit as the execution's checkpoint of
 * that step, so a step waits for one fsync per file (the two overlapping) rather than one per record.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { CollectionStore, Identified, Repository } from '../../../server/src/engine/ports';
import type { StepRecord } from '../../../server/src/engine/executions/records';
import { openStore, storeFilePath, type Store } from '../../../server/src/store/lowdb-store';
import { anyone, createHarness, settled, testSkill } from '../../support/engine-harness';
import { standInForEveryAction } from '../../../bench/workflow-submit';

/** The real store, with every mutation noted with the number of the store write that carried it. */
class TappedStore implements CollectionStore {
  readonly log: Array<{ collection: string; id: string; value: Record<string, unknown>; write: number }> = [];
  constructor(private readonly inner: Store) {}
  collection<T extends Identified>(name: string): Repository<T> {
    const repo = this.inner.collection<T>(name);
    const note = (id: string, value: Record<string, unknown>) => this.log.push({ collection: name, id, value, write: this.inner.stats().writes });
    return new Proxy(repo, {
      get: (target, prop, receiver) => {
        if (prop === 'put') return (rec: T) => target.put(rec).then(() => note(rec.id, rec as unknown as Record<string, unknown>));
        if (prop === 'update') return (id: string, patch: Partial<T>) => target.update(id, patch).then((r) => (note(id, patch as Record<string, unknown>), r));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}

describe('RIGOR step durability: one batch per step', () => {
  it("appends a step's five phase records in one write of the audit trail, chained one after the other", async () => {
    const h = await createHarness({ skills: [testSkill()] });
    try {
      // The agent's first step also records its initial ACMF mode; the step measured is the next one.
      await h.engine.rigor.runStep(h.request());
      const before = h.audit.stats().writes;
      const req = h.request();
      const result = await h.engine.rigor.runStep(req);
      assert.equal(result.passed, true, JSON.stringify(result.error));
      assert.equal(h.audit.stats().writes - before, 1, 'one trail write for the whole step');
      const records = await h.audit.query({ executionId: req.executionId });
      assert.deepEqual(records.map((r) => r.data['phase']), ['Research', 'Inspect', 'Generate', 'Optimize', 'Review']);
      for (let i = 1; i < records.length; i++) {
        assert.equal(records[i]!.seq, records[i - 1]!.seq + 1);
        assert.equal(records[i]!.prevHash, records[i - 1]!.hash);
      }
      // Review's audit gate saw the four earlier phases recorded.
      assert.equal(result.gates.find((g) => g.gate === 'audit-complete')?.status, 'pass');
    } finally {
      await h.close();
    }
  });

  it("writes each step's ACMF counters in the same store commit as the execution's checkpoint of that step", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-step-durability-'));
    const store = await openStore({ file: storeFilePath(dir), log: () => {} });
    const tapped = new TappedStore(store);
    const h = await createHarness({ store: tapped, yaml: 'defaults:\n  acmf_mode: AUTONOMOUS\n' });
    try {
      // Every step action the plan resolves to gets a test skill (a run starts before invokeWorkflow resolves).
      standInForEveryAction(h.engine.skills, (agentId, action) => testSkill({ agentId, action }));
      const probe = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'durability' } }, anyone);
      const rec = await settled(h.engine, probe.id);
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      for (const [index, step] of rec.steps.entries()) {
        // The checkpoint: the first executions write in which this step is completed.
        const checkpoint = tapped.log.find((m) => m.collection === 'executions' && m.id === rec.id && ((m.value['steps'] as StepRecord[] | undefined)?.[index]?.status === 'completed'));
        assert.ok(checkpoint, `checkpoint of step ${index}`);
        const counters = tapped.log.filter((m) => m.collection === 'agents' && m.id === step.agentId && m.write === checkpoint.write);
        assert.ok(counters.length >= 1, `step ${index} (${step.agentId}): counters in store write ${checkpoint.write} with its checkpoint; agent writes: ${JSON.stringify(tapped.log.filter((m) => m.collection === 'agents' && m.id === step.agentId).map((m) => m.write))}`);
      }
    } finally {
      await h.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
