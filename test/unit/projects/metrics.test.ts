import { strict as assert } from 'node:assert';
import { issuesPreventedOf, mergePoints, performanceGainOf, projectMetrics, uptimeOf } from '../../../server/src/engine/projects/metrics';
import type { PredictionRecord, ProjectSeriesRecord } from '../../../server/src/engine/projects/records';

const series = (key: string, values: number[]): ProjectSeriesRecord => ({
  id: `proj_x|${key}`, projectId: 'proj_x', key, rate: false, limit: null, points: values.map((v, i) => [i * 1000, v]), updatedAt: '',
});
const pred = (status: 'open' | 'resolved', resolvedAt: string | null, willOccur: string) => ({ status, resolved_at: resolvedAt, will_occur_at: willOccur }) as PredictionRecord;

describe('project metrics from recorded data', () => {
  it('uptime is the share of health samples at 1, over every health series', () => {
    const u = uptimeOf([series('up{instance="a"}', [1, 1, 1, 0]), series('node_up', [1, 1, 1, 1]), series('cpu', [0, 0])]);
    assert.equal(u.value, 87.5);
    assert.match(u.basis, /7 of 8 samples/);
  });

  it('uptime is null with a reason without a health series', () => {
    const u = uptimeOf([series('cpu', [1, 2])]);
    assert.equal(u.value, null);
    assert.match(u.basis, /no health series/);
  });

  it('issues prevented counts predictions resolved before they would have occurred', () => {
    const i = issuesPreventedOf([
      pred('resolved', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'),
      pred('resolved', '2026-01-03T00:00:00.000Z', '2026-01-02T00:00:00.000Z'),
      pred('open', null, '2026-01-02T00:00:00.000Z'),
    ]);
    assert.equal(i.value, 1);
    assert.equal(issuesPreventedOf([]).value, null);
  });

  it('performance gain comes from the newest benchmark comparison', () => {
    assert.equal(performanceGainOf([
      { executionId: 'a', completedAt: '2026-01-01', ratio: 2, verdict: 'slower' },
      { executionId: 'b', completedAt: '2026-01-02', ratio: 0.8, verdict: 'faster' },
    ]).value, 25);
    assert.equal(performanceGainOf([{ executionId: 'c', completedAt: '2026-01-02', ratio: 0.97, verdict: 'no significant difference' }]).value, 0);
    assert.equal(performanceGainOf([]).value, null);
  });

  it('projectMetrics gathers the three with their basis', () => {
    const m = projectMetrics([series('up', [1, 0])], [], []);
    assert.deepEqual(m.metrics, { issues_prevented: null, uptime: 50, performance_gain: null });
    assert.equal(typeof m.basis.performance_gain, 'string');
  });

  it('mergePoints replaces a re-sent sample, sorts, and keeps the newest', () => {
    assert.deepEqual(mergePoints([[1, 1], [3, 3]], [[2, 2], [3, 30]], 10), [[1, 1], [2, 2], [3, 30]]);
    assert.deepEqual(mergePoints([[1, 1], [2, 2]], [[3, 3]], 2), [[2, 2], [3, 3]]);
  });
});
