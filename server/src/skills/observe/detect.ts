/**
 * Anomaly detection with stated methods (docs/decisions.md, "observe-ai"):
 *
 *  - Spikes and dips: the EWMA residual of each point (its value minus the EWMA forecast made before
 *    it, alpha 0.3: the forecast follows level, trend and slow seasonality) scored with a robust
 *    z-score against the residuals of the trailing 120 points (0.6745 (r - median) / MAD); |z| >= 4.5
 *    is an anomaly. 3.5 (Iglewicz and Hoaglin's outlier label for one sample) gave ~130 false alarms per
 *    100k points of Gaussian noise in a streaming scan; 4.5 gives ~5. Consecutive anomalous points are one anomaly.
 *  - Level shifts (change points): the median of the m points after an index against the median of the
 *    m points before (m = n/6 within 8..30), in units of the two windows' pooled robust sigma; a shift of
 *    at least 3 sigma at a local maximum is a change point (the medians are computed only where the
 *    windows' means differ by one noise sigma at least: a prefilter for speed). A spike right after a change point that the
 *    new level explains (within 3 sigma of it) is part of the shift, not a spike. A series with a steady
 *    trend (robust slope moving the level by more than one noise sigma across a window) is tested around
 *    that trend, so a disk filling at a constant rate is not a run of level shifts.
 *  - Counters (Prometheus counters, `_total`, histogram/summary `_count` / `_sum`) are judged on their
 *    per-second rate (a decrease is a counter reset; without timestamps, the increase per sample); histogram `_bucket` series are left to their
 *    `_count` and `_sum`.
 *  - SLO burn from request logs (Google SRE workbook, multiwindow multi-burn-rate alerts): burn rate =
 *    error ratio / error budget over a long and a short window; a page when both the 1 h and the 5 min
 *    windows burn >= 14.4x, a ticket when both the 6 h and the 30 min windows burn >= 6x. Availability:
 *    a 5xx is an error, default objective 99.5%; latency: a request slower than the threshold is an
 *    error, default 95% of requests under 500 ms. A window with fewer than 10 requests is not judged; a
 *    long window longer than the data holds what the data has.
 *  - Error bursts in logs without HTTP status (syslog, application logs): error-level lines per minute
 *    against the mean of the previous 60 minutes, a Poisson tail P(X >= count) < 1e-6 with at least 5
 *    errors in the minute (the mean is floored at 0.1 a minute: a quiet log is not infinitely surprised).
 */
import { iso, seriesKey, type LogRecord, type Point, type Series } from './model';

export type AnomalySeverity = 'critical' | 'high' | 'medium' | 'low';
export type AnomalyKind = 'spike' | 'dip' | 'level-shift' | 'slo-burn-availability' | 'slo-burn-latency' | 'error-burst';

export interface Anomaly {
  kind: AnomalyKind;
  /** `name{labels}` (a counter: `rate(name{labels})`), or the log files for an SLO burn. */
  series: string;
  name: string;
  labels: Record<string, string>;
  file: string;
  /** ISO start and end of the window (null when the data has no timestamps: see startIndex/endIndex). */
  start: string | null;
  end: string | null;
  startIndex?: number;
  endIndex?: number;
  /** The value at the anomaly's peak (SLO burn: the error ratio of the window) and its baseline. */
  value: number;
  baseline: number;
  magnitude: {
    z?: number; residual?: number; shiftSigma?: number;
    burnRate?: { long: number; short: number; longWindow: string; shortWindow: string };
    p95Ms?: number; requests?: number; errors?: number;
    /** error-burst: the Poisson tail probability of the peak minute's count. */
    pValue?: number;
  };
  method: string;
  severity: AnomalySeverity;
  /** Source lines of the points (or log lines) involved, the first ones. */
  lines: number[];
}

/** |robust z| of an EWMA residual that makes a spike or dip (measured: ~5 false alarms per 100k points of Gaussian noise). */
export const Z_THRESHOLD = 4.5;
export const EWMA_ALPHA = 0.3;
/** Weight of the residuals' running mean and variance (the prefilter). */
const RESIDUAL_ALPHA = 0.1;
export const BASELINE_WINDOW = 120;
export const WARMUP = 20;
export const MIN_POINTS = 20;
export const SHIFT_THRESHOLD = 3;

const round = (x: number, d = 3) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x > 0 ? 1e9 : -1e9);

/** The k-th smallest (0-based) of `a`, reordering `a` in place (Hoare's selection, average linear time). */
function select(a: number[], k: number): number {
  let lo = 0; let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo; let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) { const t = a[i]!; a[i] = a[j]!; a[j] = t; i++; j--; }
    }
    if (k <= j) hi = j; else if (k >= i) lo = i; else return a[k]!;
  }
  return a[k]!;
}

export function median(xs: readonly number[]): number {
  if (!xs.length) return NaN;
  const a = xs.slice();
  const m = a.length >> 1;
  const upper = select(a, m);
  if (a.length % 2) return upper;
  // After selecting m, everything left of it is <= it: the lower middle is their maximum.
  let lower = -Infinity;
  for (let i = 0; i < m; i++) if (a[i]! > lower) lower = a[i]!;
  return (lower + upper) / 2;
}

/** Robust sigma: 1.4826 MAD, else 1.2533 mean absolute deviation, else 1% of the median (never 0 unless all is 0). */
export function robustSigma(xs: readonly number[], med = median(xs)): number {
  const dev = xs.map((x) => Math.abs(x - med));
  const mad = median(dev);
  if (mad > 0) return 1.4826 * mad;
  const mean = dev.reduce((a, b) => a + b, 0) / (dev.length || 1);
  if (mean > 0) return 1.2533 * mean;
  return Math.abs(med) * 0.01 || 1e-12;
}

/** The values the detectors judge: a counter's per-second rate, else the values as they are. */
export function judgedPoints(s: Series): { points: Point[]; rate: boolean } {
  if (s.kind !== 'counter' || s.points.length < 2) return { points: s.points, rate: false };
  // Without timestamps (scrapes concatenated as they were taken), the increase per sample stands for the rate.
  const untimed = s.points.some((p) => p.t === null);
  const out: Point[] = [];
  for (let i = 1; i < s.points.length; i++) {
    const a = s.points[i - 1]!; const b = s.points[i]!;
    const dt = untimed ? 1 : (b.t! - a.t!) / 1000;
    if (dt <= 0) continue;
    const dv = b.v >= a.v ? b.v - a.v : b.v; // a decrease is a reset: the counter restarted from 0
    out.push({ t: untimed ? null : b.t, v: dv / dt, ...(b.line !== undefined ? { line: b.line } : {}) });
  }
  return { points: out, rate: true };
}

function severityOfZ(z: number): AnomalySeverity {
  const a = Math.abs(z);
  return a >= 10 ? 'high' : a >= 6 ? 'medium' : 'low';
}

interface ChangePoint { index: number; before: number; after: number; sigma: number; score: number; afterSigma: number; m: number }

/** Two-window median shift; indexes are of `xs`. */
export function changePoints(xs: readonly number[], threshold = SHIFT_THRESHOLD): ChangePoint[] {
  const n = xs.length;
  const m = Math.max(8, Math.min(30, Math.floor(n / 6)));
  if (n < 2 * m) return [];
  // Prefilter (speed only): the medians are computed where the two windows' means differ by at least
  // one noise sigma, estimated robustly from the first differences (a level shift does not inflate it).
  const diffs: number[] = [];
  for (let i = 1; i < n; i++) diffs.push(xs[i]! - xs[i - 1]!);
  const noise = robustSigma(diffs, median(diffs)) / Math.SQRT2;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + xs[i]!;
  const scored: ChangePoint[] = [];
  for (let k = m; k <= n - m; k++) {
    const meanShift = Math.abs((prefix[k + m]! - prefix[k]!) - (prefix[k]! - prefix[k - m]!)) / m;
    if (meanShift < noise) continue;
    const b = xs.slice(k - m, k); const a = xs.slice(k, k + m);
    const mb = median(b); const ma = median(a);
    const sb = robustSigma(b, mb); const sa = robustSigma(a, ma);
    const sigma = Math.sqrt((sb * sb + sa * sa) / 2);
    scored.push({ index: k, before: mb, after: ma, sigma, afterSigma: sa, score: Math.abs(ma - mb) / sigma, m });
  }
  // Local maxima above the threshold, the strongest first, none within m of a stronger one.
  const picked: ChangePoint[] = [];
  for (const c of [...scored].filter((c) => c.score >= threshold).sort((x, y) => y.score - x.score || x.index - y.index)) {
    if (picked.every((p) => Math.abs(p.index - c.index) >= m)) picked.push(c);
  }
  return picked.sort((x, y) => x.index - y.index);
}

/**
 * Change points of a series with a steady trend are looked for around that trend: a disk filling at a
 * constant rate moves the median of every window past the one before it (a "shift" at every index).
 * When the series' least-squares slope is significant (|t| >= 8 against the residuals' robust sigma) and
 * moves the level by more than that sigma across a window, the slope is taken out before the two-window
 * test and the reported levels are put back on the original scale; a trendless series is tested as it is.
 */
/** |t| of the least-squares slope from which a series counts as trending (noise: |t| ~ N(0, 1)). */
const TREND_T = 8;

export function trendAwareChangePoints(xs: readonly number[], threshold = SHIFT_THRESHOLD): ChangePoint[] {
  const n = xs.length;
  const m = Math.max(8, Math.min(30, Math.floor(n / 6)));
  if (n < 2 * m) return [];
  // Least-squares slope, judged by its t statistic against the residuals' robust sigma: pure noise has
  // |t| ~ N(0, 1) (a trend is taken only at |t| >= 8), a steady ramp has t in the hundreds.
  const mi = (n - 1) / 2;
  let mx = 0;
  for (const x of xs) mx += x;
  mx /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) { sxy += (i - mi) * (xs[i]! - mx); sxx += (i - mi) * (i - mi); }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const resid = xs.map((x, i) => x - mx - slope * (i - mi));
  const sd = robustSigma(resid, median(resid));
  const t = sd > 0 ? Math.abs(slope) * Math.sqrt(sxx) / sd : 0;
  if (!(t >= TREND_T && Math.abs(slope) * m > sd)) return changePoints(xs, threshold);
  const detrended = xs.map((x, i) => x - slope * i);
  return changePoints(detrended, threshold).map((c) => ({ ...c, before: c.before + slope * c.index, after: c.after + slope * c.index }));
}

interface Flag { i: number; z: number; residual: number; expected: number }

/**
 * Points whose EWMA residual (the value minus the EWMA forecast made before it) has a robust z-score of
 * at least Z_THRESHOLD against the residuals of the trailing BASELINE_WINDOW points. The EWMA follows
 * level, trend and slow seasonality; the median/MAD of its residuals is not moved by the outliers it
 * scores. A flagged point enters the EWMA and the residual history clipped to 3 sigma.
 */
export function spikeFlags(xs: readonly number[]): Flag[] {
  const flags: Flag[] = [];
  if (xs.length < MIN_POINTS) return flags;
  let m = xs[0]!;
  const res: number[] = [];
  // Exponentially weighted mean and variance of the residuals: a prefilter only (speed), so that the
  // median/MAD (two selections over the window) is computed where a point is at least 2 of these sigma out.
  let mu = 0; let v = 0;
  for (let i = 1; i < xs.length; i++) {
    const x = xs[i]!;
    const r = x - m;
    let kept = r;
    if (res.length >= WARMUP && (r - mu) * (r - mu) >= 4 * v) {
      const w = res.slice(-BASELINE_WINDOW);
      const med = median(w);
      const sigma = robustSigma(w, med); // 1.4826 MAD: z = 0.6745 (r - median) / MAD
      const z = (r - med) / sigma;
      if (Math.abs(z) >= Z_THRESHOLD) {
        flags.push({ i, z, residual: r, expected: m });
        kept = med + Math.sign(z) * 3 * sigma;
      }
    }
    res.push(kept);
    if (res.length > 4 * BASELINE_WINDOW) res.splice(0, res.length - BASELINE_WINDOW);
    const d = kept - mu;
    mu += RESIDUAL_ALPHA * d;
    v = (1 - RESIDUAL_ALPHA) * (v + RESIDUAL_ALPHA * d * d);
    m += EWMA_ALPHA * kept;
  }
  return flags;
}

/** Spikes, dips and level shifts of one series. */
export function detectSeries(s: Series): { anomalies: Anomaly[]; judged: boolean; points: number } {
  if (s.name.endsWith('_bucket')) return { anomalies: [], judged: false, points: s.points.length };
  const { points, rate } = judgedPoints(s);
  const xs = points.map((p) => p.v);
  if (xs.length < MIN_POINTS) return { anomalies: [], judged: false, points: s.points.length };
  const key = rate ? `rate(${seriesKey(s.name, s.labels)})` : seriesKey(s.name, s.labels);
  const base = { series: key, name: s.name, labels: s.labels, file: s.file };
  const window = (a: number, b: number) => ({
    start: iso(points[a]!.t), end: iso(points[b]!.t),
    ...(points[a]!.t === null ? { startIndex: a, endIndex: b } : {}),
  });
  const linesOf = (a: number, b: number) => points.slice(a, b + 1).map((p) => p.line).filter((l): l is number => l !== undefined).slice(0, 20);
  const out: Anomaly[] = [];
  const cps = trendAwareChangePoints(xs);
  for (const c of cps) {
    const end = Math.min(xs.length - 1, c.index + c.m - 1);
    out.push({
      kind: 'level-shift', ...base, ...window(c.index, end), value: round(c.after), baseline: round(c.before),
      magnitude: { shiftSigma: round(c.score, 2) },
      method: `change point: median of the ${c.m} points after vs the ${c.m} before, shift >= ${SHIFT_THRESHOLD} pooled robust sigma${rate ? ' (per-second rate of the counter)' : ''}`,
      severity: c.score >= 8 ? 'high' : 'medium', lines: linesOf(c.index, Math.min(end, c.index + 2)),
    });
  }
  const explained = (f: Flag) => cps.some((c) => f.i >= c.index - 1 && f.i < c.index + c.m && Math.sign(f.z) === Math.sign(c.after - c.before) && Math.abs(xs[f.i]! - c.after) <= 3 * c.afterSigma);
  const flags = spikeFlags(xs).filter((f) => !explained(f));
  for (let g = 0; g < flags.length;) {
    let h = g;
    while (h + 1 < flags.length && flags[h + 1]!.i - flags[h]!.i <= 2 && Math.sign(flags[h + 1]!.z) === Math.sign(flags[g]!.z)) h++;
    const group = flags.slice(g, h + 1);
    const peak = group.reduce((p, f) => (Math.abs(f.z) > Math.abs(p.z) ? f : p));
    const up = peak.z > 0;
    out.push({
      kind: up ? 'spike' : 'dip', ...base, ...window(group[0]!.i, group[group.length - 1]!.i),
      value: round(xs[peak.i]!), baseline: round(peak.expected),
      magnitude: { z: round(peak.z, 2), residual: round(peak.residual) },
      method: `robust z-score (median/MAD of the previous ${BASELINE_WINDOW} residuals, |z| >= ${Z_THRESHOLD}) of the EWMA residual (alpha ${EWMA_ALPHA}: the value minus the forecast before it)${rate ? ' (per-second rate of the counter)' : ''}`,
      severity: severityOfZ(peak.z), lines: linesOf(group[0]!.i, group[group.length - 1]!.i),
    });
    g = h + 1;
  }
  return { anomalies: out, judged: true, points: s.points.length };
}

// ---------------------------------------------------------------- SLO burn

export interface Slo {
  /** Availability objective, 0..1 (99.5% = 0.995). */
  availability: number;
  /** Latency threshold in ms and the share of requests that must be under it (0..1). */
  latencyMs: number;
  latencyTarget: number;
}

export const DEFAULT_SLO: Slo = { availability: 0.995, latencyMs: 500, latencyTarget: 0.95 };

/** The SRE workbook's two alert pairs: long and short windows (minutes) and the burn rate both must reach. */
export const BURN_ALERTS = [
  { name: 'page', long: 60, short: 5, burn: 14.4, severity: 'critical' as const },
  { name: 'ticket', long: 360, short: 30, burn: 6, severity: 'medium' as const },
];
export const MIN_WINDOW_REQUESTS = 10;

const MINUTE = 60_000;
const label = (min: number) => (min % 60 === 0 ? `${min / 60}h` : `${min}m`);

export interface SloReport {
  requests: number;
  withDuration: number;
  errors: number;
  slow: number;
  anomalies: Anomaly[];
}

/** One minute of requests: counts, the durations (for the p95 of a window) and the first line seen. */
interface Minute { total: number; errors: number; durations: number[]; file: string; line: number }

/**
 * Requests (log records with a status and a time) aggregated per minute, in any order: what the SLO
 * burn needs, so a log of any size is judged without keeping its records.
 */
export class RequestMinutes {
  readonly minutes = new Map<number, Minute>();
  requests = 0;
  readonly files = new Set<string>();

  add(r: LogRecord): void {
    if (r.t === null || r.status === undefined) return;
    const k = Math.floor(r.t / MINUTE);
    let m = this.minutes.get(k);
    if (!m) this.minutes.set(k, (m = { total: 0, errors: 0, durations: [], file: r.file, line: r.line }));
    else if (r.file === m.file && r.line < m.line) m.line = r.line;
    m.total++;
    this.requests++;
    this.files.add(r.file);
    if (r.status >= 500) m.errors++;
    if (r.durationMs !== undefined) m.durations.push(r.durationMs);
  }

  static of(records: readonly LogRecord[]): RequestMinutes {
    const a = new RequestMinutes();
    for (const r of records) a.add(r);
    return a;
  }
}

/** SLO burn of the requests (log records with a status and a time, or their per-minute aggregate). */
export function sloBurn(input: readonly LogRecord[] | RequestMinutes, slo: Slo = DEFAULT_SLO): SloReport {
  const agg = input instanceof RequestMinutes ? input : RequestMinutes.of(input);
  const report: SloReport = { requests: agg.requests, withDuration: 0, errors: 0, slow: 0, anomalies: [] };
  if (!agg.requests) return report;
  let t0 = Infinity; let t1 = -Infinity;
  for (const k of agg.minutes.keys()) { if (k < t0) t0 = k; if (k > t1) t1 = k; }
  const n = t1 - t0 + 1;
  const total = new Float64Array(n); const errors = new Float64Array(n);
  const timed = new Float64Array(n); const slow = new Float64Array(n);
  const durations: number[][] = new Array(n);
  const firstLine: Array<{ file: string; line: number } | undefined> = new Array(n);
  for (const [k, m] of agg.minutes) {
    const j = k - t0;
    total[j] = m.total; errors[j] = m.errors; timed[j] = m.durations.length;
    let sl = 0;
    for (const d of m.durations) if (d > slo.latencyMs) sl++;
    slow[j] = sl;
    durations[j] = m.durations;
    firstLine[j] = { file: m.file, line: m.line };
    report.errors += m.errors; report.withDuration += m.durations.length; report.slow += sl;
  }
  const prefix = (a: Float64Array) => { const p = new Float64Array(a.length + 1); for (let i = 0; i < a.length; i++) p[i + 1] = p[i]! + a[i]!; return p; };
  const files = [...agg.files];
  const judge = (kind: 'slo-burn-availability' | 'slo-burn-latency', bad: Float64Array, all: Float64Array, budget: number) => {
    const pb = prefix(bad); const pa = prefix(all);
    const sum = (p: Float64Array, end: number, len: number) => p[end + 1]! - p[Math.max(0, end + 1 - len)]!;
    for (const alert of BURN_ALERTS) {
      const flagged: Array<{ j: number; long: number; short: number }> = [];
      for (let j = 0; j < n; j++) {
        const sa = sum(pa, j, alert.short); const la = sum(pa, j, alert.long);
        if (sa < MIN_WINDOW_REQUESTS || la < MIN_WINDOW_REQUESTS) continue;
        const short = sum(pb, j, alert.short) / sa / budget;
        const long = sum(pb, j, alert.long) / la / budget;
        if (short >= alert.burn && long >= alert.burn) flagged.push({ j, long, short });
      }
      for (let g = 0; g < flagged.length;) {
        let h = g;
        while (h + 1 < flagged.length && flagged[h + 1]!.j - flagged[h]!.j <= alert.short) h++;
        const span = flagged.slice(g, h + 1);
        const peak = span.reduce((p, f) => (f.short > p.short ? f : p));
        // The incident itself: the minutes, from the short window before the first alerting minute to
        // the last, whose own bad ratio burns at the alert's rate (a minute with no request is not bad).
        let a = -1; let b = -1;
        for (let j = Math.max(0, span[0]!.j - alert.short + 1); j <= span[span.length - 1]!.j; j++) {
          if (all[j]! > 0 && bad[j]! / all[j]! / budget >= alert.burn) { if (a === -1) a = j; b = j; }
        }
        if (a === -1) { a = span[0]!.j; b = span[span.length - 1]!.j; }
        // The burn began before the long window noticed it: extend over the consecutive bad minutes.
        const isBad = (j: number) => all[j]! > 0 && bad[j]! / all[j]! / budget >= alert.burn;
        while (a > 0 && isBad(a - 1)) a--;
        while (b + 1 < n && isBad(b + 1)) b++;
        let req = 0; let errs = 0; const d: number[] = [];
        for (let j = a; j <= b; j++) { req += all[j]!; errs += bad[j]!; if (kind === 'slo-burn-latency') for (const x of durations[j] ?? []) d.push(x); }
        const ratio = req ? errs / req : 0;
        const already = report.anomalies.some((x) => x.kind === kind && x.start === iso((t0 + a) * MINUTE));
        if (!already) {
          report.anomalies.push({
            kind, series: files.join(', '), name: kind === 'slo-burn-availability' ? 'availability' : 'latency', labels: {}, file: firstLine[a]?.file ?? files[0]!,
            start: iso((t0 + a) * MINUTE), end: iso((t0 + b + 1) * MINUTE),
            value: round(ratio, 4), baseline: round(budget, 4),
            magnitude: {
              burnRate: { long: round(peak.long, 2), short: round(peak.short, 2), longWindow: label(alert.long), shortWindow: label(alert.short) },
              requests: req, errors: errs, ...(kind === 'slo-burn-latency' && d.length ? { p95Ms: round(percentile(d, 0.95), 1) } : {}),
            },
            method: kind === 'slo-burn-availability'
              ? `SLO burn rate (availability ${round(slo.availability * 100, 3)}%: 5xx are errors, budget ${round(budget * 100, 3)}%): ${label(alert.long)} and ${label(alert.short)} windows both >= ${alert.burn}x (${alert.name})`
              : `SLO burn rate (latency: ${round(slo.latencyTarget * 100, 3)}% of requests under ${slo.latencyMs} ms, budget ${round(budget * 100, 3)}%): ${label(alert.long)} and ${label(alert.short)} windows both >= ${alert.burn}x (${alert.name})`,
            severity: alert.severity,
            // The first line of each minute of the window, in the file the window starts in.
            lines: firstLine.slice(a, b + 1).filter((l): l is { file: string; line: number } => !!l && l.file === firstLine[a]?.file).map((l) => l.line).slice(0, 20),
          });
        }
        g = h + 1;
      }
    }
  };
  judge('slo-burn-availability', errors, total, 1 - slo.availability);
  if (report.withDuration) judge('slo-burn-latency', slow, timed, 1 - slo.latencyTarget);
  // A ticket that covers the same incident as a page adds nothing: keep the page.
  report.anomalies = report.anomalies.filter((x) => x.severity === 'critical' || !report.anomalies.some((y) => y !== x && y.kind === x.kind && y.severity === 'critical' && overlaps(x, y)));
  return report;
}

function overlaps(a: Anomaly, b: Anomaly): boolean {
  return !!a.start && !!a.end && !!b.start && !!b.end && a.start <= b.end && b.start <= a.end;
}

export function percentile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1));
  return s[i]!;
}

export const SEVERITY_RANK: Record<AnomalySeverity, number> = { critical: 4, high: 3, medium: 2, low: 1 };

// ---------------------------------------------------------------- error bursts (logs without status)

export const BURST_P = 1e-6;
export const BURST_MIN_ERRORS = 5;
export const BURST_HISTORY_MINUTES = 60;
const BURST_MIN_RATE = 0.1;
const BURST_WARMUP_MINUTES = 10;

/** Error-level log records without an HTTP status, per minute, in any order (the first line of each minute kept). */
export class ErrorMinutes {
  readonly minutes = new Map<number, { errors: number; file: string; line: number }>();
  /** Records without a status that carry a time, and the error-level ones among them. */
  records = 0;
  errors = 0;
  /** First and last minute of those records (errors or not): the span the rate is judged over. */
  first = Infinity;
  last = -Infinity;

  add(r: LogRecord): void {
    if (r.t === null || r.status !== undefined) return;
    const k = Math.floor(r.t / MINUTE);
    if (k < this.first) this.first = k;
    if (k > this.last) this.last = k;
    this.records++;
    if (r.level !== 'error') return;
    this.errors++;
    const m = this.minutes.get(k);
    if (!m) this.minutes.set(k, { errors: 1, file: r.file, line: r.line });
    else { m.errors++; if (r.file === m.file && r.line < m.line) m.line = r.line; }
  }

  static of(records: readonly LogRecord[]): ErrorMinutes {
    const a = new ErrorMinutes();
    for (const r of records) a.add(r);
    return a;
  }
}

/** P(X >= k) for X ~ Poisson(lambda), by the complement of the lower sum (k is small: counts per minute). */
export function poissonTail(k: number, lambda: number): number {
  if (k <= 0) return 1;
  let term = Math.exp(-lambda);
  let below = term;
  for (let i = 1; i < k; i++) { term *= lambda / i; below += term; }
  const tail = 1 - below;
  if (tail > 1e-12) return tail;
  // Far in the tail the complement loses precision: sum the upper terms instead (they shrink fast).
  let t = Math.exp(-lambda + k * Math.log(lambda) - logFactorial(k));
  let sum = 0;
  for (let i = k; t > sum * 1e-16 && i < k + 1000; i++) { sum += t; t *= lambda / (i + 1); }
  return sum;
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

/** Minutes whose error count is improbable under the previous hour's rate, merged into bursts. */
export function errorBursts(agg: ErrorMinutes): Anomaly[] {
  if (!agg.errors || !Number.isFinite(agg.first)) return [];
  const t0 = agg.first;
  const n = agg.last - t0 + 1;
  const counts = new Float64Array(n);
  for (const [k, m] of agg.minutes) counts[k - t0] = m.errors;
  const flagged: Array<{ j: number; p: number; rate: number }> = [];
  let windowSum = 0;
  for (let j = 0; j < n; j++) {
    if (j > BURST_HISTORY_MINUTES) windowSum -= counts[j - BURST_HISTORY_MINUTES - 1]!;
    const history = Math.min(j, BURST_HISTORY_MINUTES);
    if (history >= BURST_WARMUP_MINUTES && counts[j]! >= BURST_MIN_ERRORS) {
      const rate = Math.max(BURST_MIN_RATE, windowSum / history);
      const p = poissonTail(counts[j]!, rate);
      if (p < BURST_P) flagged.push({ j, p, rate });
    }
    // A flagged minute joins the history at the rate it was judged against, so a long burst stays one.
    const f = flagged.length && flagged[flagged.length - 1]!.j === j ? flagged[flagged.length - 1]! : undefined;
    windowSum += f ? f.rate : counts[j]!;
  }
  const out: Anomaly[] = [];
  for (let g = 0; g < flagged.length;) {
    let h = g;
    while (h + 1 < flagged.length && flagged[h + 1]!.j - flagged[h]!.j <= 2) h++;
    const span = flagged.slice(g, h + 1);
    const peak = span.reduce((a, b) => (counts[b.j]! > counts[a.j]! ? b : a));
    const first = agg.minutes.get(t0 + span[0]!.j)!;
    let errors = 0;
    for (let j = span[0]!.j; j <= span[span.length - 1]!.j; j++) errors += counts[j]!;
    out.push({
      kind: 'error-burst', series: `error-level lines of ${first.file}`, name: 'log_errors_per_minute', labels: { file: first.file }, file: first.file,
      start: iso((t0 + span[0]!.j) * MINUTE), end: iso((t0 + span[span.length - 1]!.j + 1) * MINUTE),
      value: counts[peak.j]!, baseline: round(peak.rate, 3),
      magnitude: { errors, pValue: Number(peak.p.toPrecision(3)) },
      method: `Poisson tail of error-level log lines per minute against the mean of the previous ${BURST_HISTORY_MINUTES} minutes (p < ${BURST_P.toExponential()}, at least ${BURST_MIN_ERRORS} in a minute)`,
      severity: peak.p < 1e-12 ? 'high' : 'medium',
      lines: span.map((f) => agg.minutes.get(t0 + f.j)).filter((m): m is { errors: number; file: string; line: number } => !!m && m.file === first.file).map((m) => m.line).slice(0, 20),
    });
    g = h + 1;
  }
  return out;
}

// ---------------------------------------------------------------- latency quantiles from histograms

/**
 * The q-quantile over time of each Prometheus histogram (its `_bucket` series grouped by the labels
 * other than `le`), as Prometheus' `histogram_quantile(q, rate(x_bucket[interval]))` computes it for one
 * scrape interval: the increase of each cumulative bucket between two consecutive samples, the bucket
 * where the rank q x total falls, linear interpolation inside it (the +Inf bucket answers the highest
 * finite bound). An interval where a bucket decreased (a reset) or nothing was observed has no point.
 */
export function histogramQuantiles(series: readonly Series[], q = 0.95): Series[] {
  const groups = new Map<string, { name: string; labels: Record<string, string>; file: string; buckets: Array<{ le: number; s: Series }> }>();
  for (const s of series) {
    if (!s.name.endsWith('_bucket') || s.labels['le'] === undefined) continue;
    const le = s.labels['le'] === '+Inf' ? Infinity : Number(s.labels['le']);
    if (Number.isNaN(le)) continue;
    const rest = Object.fromEntries(Object.entries(s.labels).filter(([k]) => k !== 'le'));
    const name = s.name.slice(0, -'_bucket'.length);
    const key = seriesKey(name, rest);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { name, labels: rest, file: s.file, buckets: [] }));
    g.buckets.push({ le, s });
  }
  const out: Series[] = [];
  for (const g of groups.values()) {
    const b = g.buckets.sort((x, y) => x.le - y.le);
    if (b.length < 2 || b[b.length - 1]!.le !== Infinity) continue;
    // The times every bucket has a sample at, in order.
    const byTime = b.map((x) => new Map(x.s.points.filter((p) => p.t !== null).map((p) => [p.t!, p])));
    const times = [...byTime[0]!.keys()].filter((t) => byTime.every((m) => m.has(t))).sort((x, y) => x - y);
    const points: Point[] = [];
    for (let i = 1; i < times.length; i++) {
      const inc = byTime.map((m) => m.get(times[i]!)!.v - m.get(times[i - 1]!)!.v);
      if (inc.some((d) => d < 0)) continue;
      const total = inc[inc.length - 1]!;
      if (!(total > 0)) continue;
      const rank = q * total;
      const k = inc.findIndex((c) => c >= rank);
      let v: number;
      if (k === inc.length - 1) v = b[b.length - 2]!.le;
      else {
        const lower = k === 0 ? 0 : b[k - 1]!.le;
        const below = k === 0 ? 0 : inc[k - 1]!;
        const inBucket = inc[k]! - below;
        v = inBucket > 0 ? lower + (b[k]!.le - lower) * ((rank - below) / inBucket) : b[k]!.le;
      }
      const line = byTime[0]!.get(times[i]!)!.line;
      points.push({ t: times[i]!, v, ...(line !== undefined ? { line } : {}) });
    }
    if (points.length) out.push({ name: `histogram_quantile(${q}, ${g.name})`, labels: g.labels, kind: 'gauge', file: g.file, points });
  }
  return out;
}
