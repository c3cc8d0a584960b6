/** Statistical anomalies on an event-count series: rolling z-score plus a mean-shift change point. */
import { existsSync, readFileSync } from 'node:fs';
import { confinedInputFile } from '../workspace/files';

export interface SeriesPoint {
  t: string | number;
  count: number;
}

export interface Anomaly {
  t: string | number;
  index: number;
  value: number;
  /** Rolling mean of the window before the point. */
  expected: number;
  stdDev: number;
  z: number;
}

export interface ChangePoint {
  index: number;
  t: string | number;
  meanBefore: number;
  meanAfter: number;
  /** Welch t statistic of the shift. */
  score: number;
}

export interface AnomalyOptions {
  /** Points in the trailing window (default 10). */
  window?: number;
  /** |z| above which a point is flagged (default 3). */
  threshold?: number;
  /** Minimum points of history before scoring (default 5, capped at window). */
  minHistory?: number;
}

export interface AnomalyReport {
  points: number;
  window: number;
  threshold: number;
  anomalies: Anomaly[];
  changePoint?: ChangePoint;
}

/** input.series: an array of {t, count} (or `time`/`value` aliases), or a CSV path with a header. */
export function loadSeries(raw: unknown, workspace?: string): { series: SeriesPoint[]; pathRead?: string } | undefined {
  if (Array.isArray(raw)) {
    const series: SeriesPoint[] = [];
    raw.forEach((p, i) => {
      if (typeof p === 'number') series.push({ t: i, count: p });
      else if (p && typeof p === 'object') {
        const o = p as Record<string, unknown>;
        const c = Number(o['count'] ?? o['value'] ?? o['n']);
        const t = o['t'] ?? o['time'] ?? o['timestamp'] ?? i;
        if (Number.isFinite(c)) series.push({ t: typeof t === 'number' ? t : String(t), count: c });
      }
    });
    return { series };
  }
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  if (!workspace) return undefined;
  // Inside the workspace only: an outside path is not read (and its content never shown).
  let file: string | undefined;
  try { file = confinedInputFile(workspace, raw, 'input.series'); } catch { return undefined; }
  if (!file || !existsSync(file)) return undefined;
  return { series: parseSeriesCsv(readFileSync(file, 'utf8')), pathRead: file };
}

/** `t,count` CSV; a header row is detected and the count column found by name when present. */
export function parseSeriesCsv(text: string): SeriesPoint[] {
  const rows = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => l.split(/[,;\t]/).map((c) => c.trim()));
  if (!rows.length) return [];
  let tCol = 0, cCol = 1;
  const head = rows[0]!;
  if (head.every((c) => !Number.isFinite(Number(c)) || c === '') || !Number.isFinite(Number(head[1]))) {
    const lower = head.map((c) => c.toLowerCase());
    const ci = lower.findIndex((c) => ['count', 'value', 'n', 'events'].includes(c));
    const ti = lower.findIndex((c) => ['t', 'time', 'timestamp', 'date', 'ts'].includes(c));
    if (ci >= 0) cCol = ci;
    if (ti >= 0) tCol = ti;
    rows.shift();
  }
  const out: SeriesPoint[] = [];
  for (const r of rows) {
    const c = Number(r[cCol]);
    if (Number.isFinite(c)) out.push({ t: r[tCol] ?? String(out.length), count: c });
  }
  return out;
}

function meanStd(xs: readonly number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.length > 1 ? xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1) : 0;
  return { mean, std: Math.sqrt(variance) };
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Rolling z-score: each point against the mean and sample standard deviation of the `window`
 * points before it. Flagged points are replaced by their expected value in later baselines so one
 * spike does not mask the next. A flat baseline (std 0) uses a Poisson floor sqrt(max(mean, 1)).
 */
export function detectAnomalies(series: readonly SeriesPoint[], opts: AnomalyOptions = {}): AnomalyReport {
  const window = Math.max(2, Math.floor(opts.window ?? 10));
  const threshold = opts.threshold ?? 3;
  const minHistory = Math.max(2, Math.min(window, Math.floor(opts.minHistory ?? 5)));
  const baseline: number[] = [];
  const anomalies: Anomaly[] = [];
  series.forEach((p, i) => {
    const hist = baseline.slice(-window);
    if (hist.length >= minHistory) {
      const { mean, std } = meanStd(hist);
      const sd = std > 0 ? std : Math.sqrt(Math.max(Math.abs(mean), 1));
      const z = (p.count - mean) / sd;
      if (Math.abs(z) > threshold) {
        anomalies.push({ t: p.t, index: i, value: p.count, expected: round(mean), stdDev: round(sd), z: round(z, 2) });
        baseline.push(mean);
        return;
      }
    }
    baseline.push(p.count);
  });
  const report: AnomalyReport = { points: series.length, window, threshold, anomalies };
  const cp = changePoint(series);
  if (cp) report.changePoint = cp;
  return report;
}

/**
 * Mean shift between the two halves of the series (Welch t statistic); reported when |t| > 3 and
 * the means differ by at least 20% of the larger one. Needs at least 3 points per half.
 */
export function changePoint(series: readonly SeriesPoint[], minScore = 3): ChangePoint | undefined {
  const n = series.length;
  if (n < 6) return undefined;
  const mid = Math.floor(n / 2);
  const a = meanStd(series.slice(0, mid).map((p) => p.count));
  const b = meanStd(series.slice(mid).map((p) => p.count));
  const se = Math.sqrt(a.std ** 2 / mid + b.std ** 2 / (n - mid));
  const diff = b.mean - a.mean;
  const score = se > 0 ? diff / se : diff === 0 ? 0 : Math.sign(diff) * Infinity;
  const rel = Math.abs(diff) / Math.max(Math.abs(a.mean), Math.abs(b.mean), 1e-9);
  if (Math.abs(score) <= minScore || rel < 0.2) return undefined;
  return { index: mid, t: series[mid]!.t, meanBefore: round(a.mean), meanAfter: round(b.mean), score: Number.isFinite(score) ? round(score, 2) : Math.sign(score) * 1e6 };
}
