import assert from 'node:assert/strict';
import { runGrowthBench, runStoreBench } from '../../../bench/store';

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

describe('store: bench/store.ts growth smoke run', () => {
  it('runGrowthBench measures both stores at each size and reports the ratio last / first', async function () {
    this.timeout(30_000);
    const r = await runGrowthBench({ sizes: [100, 400], commits: 5, baselineCommits: 3, recordBytes: 256 });
    assert.deepEqual(r.points.map((p) => p.records), [100, 400]);
    assert.ok(r.points.every((p) => p.journalMs > 0 && (p.wholeFileMs ?? 0) > 0));
    assert.equal(r.journalRatio, r.points[1]!.journalMs / r.points[0]!.journalMs);
    assert.match(r.summary, /^store growth: commit latency 400\/100 records = [\d.]+x \(goal < 1.5x\); whole-file baseline [\d.]+x$/);
  });
});
