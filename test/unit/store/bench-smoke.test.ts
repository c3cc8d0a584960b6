import assert from 'node:assert/strict';
import { runStoreBench } from '../../../bench/store';

describe('store: bench/store.ts smoke run', () => {
  it('runStoreBench returns both rates and their ratio', async function () {
    this.timeout(20_000);
    const r = await runStoreBench({ seedRecords: 200, groupInserts: 128, concurrency: 16, baselineSeconds: 0.2 });
    assert.equal(r.seedRecords, 200);
    assert.ok(r.groupCommit.inserts === 128 && r.groupCommit.perSecond > 0);
    assert.ok(r.perMutation.inserts > 0 && r.perMutation.writes === r.perMutation.inserts, 'one write per mutation');
    assert.ok(r.groupCommit.writes < r.groupCommit.inserts, 'group commit coalesces');
    assert.equal(r.ratio, r.groupCommit.perSecond / r.perMutation.perSecond);
    assert.match(r.summary, /^store: group-commit \d+\/s, per-mutation \d+\/s, ratio [\d.]+x \(goal >= 20x\)$/);
  });
});
