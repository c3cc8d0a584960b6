/**
 * Gate results of a step live on the step record (issue 18, item 2): the doors (REST's RIGOR status, the
 * LSP rows) read the Review's 21 results there instead of rebuilding the table from the audit trail.
 */
import { strict as assert } from 'node:assert';
import type { GateResultData } from '../../../protocol/events';
import { rigorStatus } from '../../../server/src/engine/executions/views';
import { executionRow } from '../../../server/src/lsp/views';
import { anyone, createHarness, fleetSkills } from '../../support/engine-harness';

const yaml = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

describe('gate results on the step record', function () {
  this.timeout(30_000);

  it('a step keeps the 21 results of its Review, the same table as its phase.completed audit record', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'fast' }, anyone);
    const done = await h.engine.executions.whenSettled(rec.id, { timeoutMs: 20_000 });
    const results = done.steps[0]!.gates.results;
    assert.ok(results, 'the table is on the record');
    assert.equal(results.length, 21);
    const review = (await h.audit.query({ executionId: rec.id, kind: 'phase.completed' })).filter((r) => r.data['phase'] === 'Review').at(-1)!;
    assert.deepEqual(results, review.data['gates'] as GateResultData[]);
    assert.equal(results.filter((g) => g.status === 'fail').length, done.steps[0]!.gates.failed);
    await h.close();
  });

  it('the doors\' views read it from the record: RIGOR status and the LSP row carry 21 gates without the audit trail', async () => {
    const h = await createHarness({ skills: fleetSkills, yaml });
    const rec = await h.engine.executions.invokeRigor('coder-ai', { prompt: 'fast' }, anyone);
    const done = await h.engine.executions.whenSettled(rec.id, { timeoutMs: 20_000 });
    // Nothing may come from the trail: a query now fails the test.
    h.audit.query = () => Promise.reject(new Error('a view scanned the audit trail'));
    assert.equal(rigorStatus(done).gates.length, 21);
    assert.equal(executionRow(h.engine, done).steps[0]!.gates.length, 21);
    // A step stored before the table was kept shows its failed gates.
    const old = { ...done, steps: done.steps.map((s) => ({ ...s, gates: { passed: s.gates.passed, failed: s.gates.failed, notApplicable: s.gates.notApplicable, failures: s.gates.failures } })) };
    assert.deepEqual(rigorStatus(old).gates, done.steps[0]!.gates.failures);
    await h.close();
  });
});
