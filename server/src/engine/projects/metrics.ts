/**
 * A project's `metrics` (contract: issues_prevented, uptime, performance_gain), computed from what
 * Cadre recorded, never constants. A figure without data is null and `metrics_basis` says why.
 *
 *  - uptime (percent): the share of samples at 1 of the ingested health series (`up`, Prometheus'
 *    scrape health, or any series named `up` / `health` / `*_up`), over all of them.
 *  - issues_prevented: predictions of the project that were resolved before their will_occur_at
 *    (the breach they forecast did not happen), plus security findings a later security-ai scan of
 *    the project's workspace no longer found (security.vulnerability_fixed).
 *  - performance_gain (percent): the newest optimize-ai benchmark on the project's workspace that
 *    compared against a baseline: (1 / ratio - 1) x 100 with ratio = median(command) / median(baseline);
 *    0 when the comparison found no significant difference.
 */
import type { PredictionRecord, ProjectSeriesRecord } from './records';

export interface ProjectMetrics {
  issues_prevented: number | null;
  uptime: number | null;
  performance_gain: number | null;
}
export type MetricsBasis = Record<keyof ProjectMetrics, string>;

export interface BenchmarkComparison {
  executionId: string;
  completedAt: string;
  ratio: number;
  verdict: 'faster' | 'slower' | 'no significant difference';
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function isHealthSeries(key: string): boolean {
  const name = key.replace(/\{.*$/, '').toLowerCase();
  return name === 'up' || name === 'health' || name.endsWith('_up');
}

export function uptimeOf(series: readonly ProjectSeriesRecord[]): { value: number | null; basis: string } {
  const health = series.filter((s) => isHealthSeries(s.key));
  let up = 0; let all = 0;
  for (const s of health) for (const [, v] of s.points) { all++; if (v >= 1) up++; }
  if (!all) return { value: null, basis: 'no health series ingested (a series named up, health or *_up with 1 = up, 0 = down)' };
  return { value: r3((100 * up) / all), basis: `${up} of ${all} samples up in ${health.map((s) => s.key).join(', ')}` };
}

export function issuesPreventedOf(predictions: readonly PredictionRecord[], findingsFixed = 0): { value: number | null; basis: string } {
  if (!predictions.length && !findingsFixed) return { value: null, basis: 'no prediction made and no security finding fixed on this project yet' };
  const prevented = predictions.filter((p) => p.status === 'resolved' && p.resolved_at !== null && p.resolved_at < p.will_occur_at).length;
  return { value: prevented + findingsFixed, basis: `${prevented} of ${predictions.length} predictions resolved before their will_occur_at, ${findingsFixed} security finding(s) a later scan of the workspace no longer found` };
}

export function performanceGainOf(benchmarks: readonly BenchmarkComparison[]): { value: number | null; basis: string } {
  const newest = [...benchmarks].sort((a, b) => (a.completedAt < b.completedAt ? 1 : -1))[0];
  if (!newest) return { value: null, basis: 'no optimize-ai benchmark with a baseline on this project\'s workspace' };
  const gain = newest.verdict === 'no significant difference' ? 0 : r3((1 / newest.ratio - 1) * 100);
  return { value: gain, basis: `optimize-ai benchmark ${newest.executionId}: ratio ${newest.ratio} (${newest.verdict})` };
}

export function projectMetrics(series: readonly ProjectSeriesRecord[], predictions: readonly PredictionRecord[], benchmarks: readonly BenchmarkComparison[], findingsFixed = 0): { metrics: ProjectMetrics; basis: MetricsBasis } {
  const u = uptimeOf(series); const i = issuesPreventedOf(predictions, findingsFixed); const p = performanceGainOf(benchmarks);
  return {
    metrics: { issues_prevented: i.value, uptime: u.value, performance_gain: p.value },
    basis: { issues_prevented: i.basis, uptime: u.basis, performance_gain: p.basis },
  };
}

/** Points merged by time (a re-sent sample replaces the earlier value), sorted, the newest `max` kept. */
export function mergePoints(existing: ReadonlyArray<[number, number]>, added: ReadonlyArray<[number, number]>, max: number): Array<[number, number]> {
  const byTime = new Map<number, number>();
  for (const [t, v] of existing) byTime.set(t, v);
  for (const [t, v] of added) byTime.set(t, v);
  const all = [...byTime.entries()].sort((a, b) => a[0] - b[0]);
  return all.slice(Math.max(0, all.length - max));
}
