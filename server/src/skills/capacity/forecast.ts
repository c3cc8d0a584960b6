/**
 * Forecasting methods of capacity-ai, pure functions of a regularly spaced series (docs/decisions.md,
 * "capacity-ai"):
 *
 *  - `linear`: ordinary least squares of the value on the step index; its 95% prediction interval is
 *    the textbook one, 1.96 s sqrt(1 + 1/n + (x - x̄)² / Sxx).
 *  - `holt-winters`: additive Holt-Winters (level, trend, season of m points), α, β, γ chosen on a grid
 *    of 0.05..0.95 (step 0.1; beta <= min(alpha, 0.35)) by the smallest one-step squared error on the data it is fitted to; its 95%
 *    interval is 1.96 σ sqrt(1 + Σ_{j<h} (α(1 + jβ) + γ[j mod m = 0])²) with σ the one-step residual
 *    deviation (Hyndman et al., additive error model). It needs two full seasons to start.
 *  - The season m: `input.season` when given, else the lag (2..min(n/3, 2000)) of the highest autocorrelation of the
 *    linearly detrended series that is a local maximum and at least 0.3; none such: no seasonal method.
 *
 * Both are scored on a held-out tail (the last 20% of the points, at least one season when there is one):
 * fitted on the points before it, forecast over it, MAE, RMSE and MAPE (over the non-zero actuals). The
 * method with the smaller MAE is chosen, refitted on the whole series and used for the forecast.
 */

export type MethodName = 'linear' | 'holt-winters';

export interface Fitted {
  method: MethodName;
  /** Point forecast h steps after the last fitted point (h >= 1). */
  at(h: number): number;
  /** Half-width of the 95% interval h steps ahead. */
  halfWidth(h: number): number;
  params: Record<string, number>;
}

export const Z95 = 1.96;
export const HOLDOUT_SHARE = 0.2;
export const MIN_POINTS = 8;
export const ACF_MIN = 0.3;
export const MAX_SEASON = 2000;
/**
 * The trend smoothing is kept at or under 0.35 (and under alpha): on a series with a second, shorter
 * cycle, a beta of 0.95 gave the smallest one-step error and a forecast 200 points ahead off by 100+.
 */
export const MAX_BETA = 0.35;

const r = (x: number, d = 4) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

export function fitLinear(ys: readonly number[]): Fitted {
  const n = ys.length;
  let sx = 0; let sy = 0;
  for (let i = 0; i < n; i++) { sx += i; sy += ys[i]!; }
  const mx = sx / n; const my = sy / n;
  let sxx = 0; let sxy = 0;
  for (let i = 0; i < n; i++) { sxx += (i - mx) ** 2; sxy += (i - mx) * (ys[i]! - my); }
  const slope = sxx ? sxy / sxx : 0;
  const intercept = my - slope * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += (ys[i]! - intercept - slope * i) ** 2;
  const s = n > 2 ? Math.sqrt(sse / (n - 2)) : 0;
  const x = (h: number) => n - 1 + h;
  return {
    method: 'linear',
    at: (h) => intercept + slope * x(h),
    halfWidth: (h) => Z95 * s * Math.sqrt(1 + 1 / n + (sxx ? (x(h) - mx) ** 2 / sxx : 0)),
    params: { intercept: r(intercept), slopePerStep: r(slope, 6), residualSd: r(s) },
  };
}

interface HwState { level: number; trend: number; season: number[]; sse: number; steps: number }

function runHoltWinters(ys: readonly number[], m: number, a: number, b: number, g: number): HwState {
  let level = 0;
  for (let i = 0; i < m; i++) level += ys[i]!;
  level /= m;
  let second = 0;
  for (let i = m; i < 2 * m; i++) second += ys[i]!;
  let trend = (second / m - level) / m;
  const season = ys.slice(0, m).map((y) => y - level);
  // The first season initialises the state; from the second on each point is a one-step forecast.
  level += trend * (m - 1);
  let sse = 0; let steps = 0;
  for (let i = m; i < ys.length; i++) {
    const s = season[i % m]!;
    const f = level + trend + s;
    const e = ys[i]! - f;
    sse += e * e; steps++;
    const prev = level;
    level = a * (ys[i]! - s) + (1 - a) * (level + trend);
    trend = b * (level - prev) + (1 - b) * trend;
    season[i % m] = g * (ys[i]! - level) + (1 - g) * s;
  }
  return { level, trend, season, sse, steps };
}

const GRID = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95];

export function fitHoltWinters(ys: readonly number[], m: number): Fitted | undefined {
  if (m < 2 || ys.length < 2 * m + 2) return undefined;
  let best: { a: number; b: number; g: number; st: HwState } | undefined;
  for (const a of GRID) for (const b of GRID) for (const g of GRID) {
    if (b > a || b > MAX_BETA) continue; // a smooth trend: one that chases the last points wrecks the forecast seasons ahead
    const st = runHoltWinters(ys, m, a, b, g);
    if (!best || st.sse < best.st.sse) best = { a, b, g, st };
  }
  const { a, b, g, st } = best!;
  const n = ys.length;
  const sigma = Math.sqrt(st.sse / Math.max(1, st.steps - 3));
  const variances = [1];
  return {
    method: 'holt-winters',
    at: (h) => st.level + h * st.trend + st.season[(n + h - 1) % m]!,
    halfWidth: (h) => {
      // The variance sums grow with h: kept, so a saturation search far ahead stays linear in its steps.
      while (variances.length < h) {
        const j = variances.length;
        variances.push(variances[j - 1]! + (a * (1 + j * b) + (j % m === 0 ? g : 0)) ** 2);
      }
      return Z95 * sigma * Math.sqrt(variances[h - 1]!);
    },
    params: { alpha: a, beta: b, gamma: g, season: m, residualSd: r(sigma) },
  };
}

/** The season length in points by autocorrelation of the detrended series, or undefined (see the header). */
export function detectSeason(ys: readonly number[]): { season: number; acf: number } | undefined {
  const n = ys.length;
  if (n < 12) return undefined;
  const lin = fitLinear(ys);
  const res = ys.map((y, i) => y - (lin.params['intercept']! + lin.params['slopePerStep']! * i));
  const mean = res.reduce((s, x) => s + x, 0) / n;
  let den = 0;
  for (const x of res) den += (x - mean) ** 2;
  if (!den) return undefined;
  // Capped: the autocorrelation costs n x lags, and 2000 lags hold a day of minutes or a quarter of hours.
  const maxLag = Math.min(MAX_SEASON, Math.floor(n / 3));
  const acf: number[] = [1];
  for (let k = 1; k <= maxLag + 1; k++) {
    let num = 0;
    for (let i = k; i < n; i++) num += (res[i]! - mean) * (res[i - k]! - mean);
    acf.push(num / den);
  }
  let best: { season: number; acf: number } | undefined;
  for (let k = 2; k <= maxLag; k++) {
    if (acf[k]! >= ACF_MIN && acf[k]! >= acf[k - 1]! && acf[k]! >= acf[k + 1]! && (!best || acf[k]! > best.acf + 0.05)) best = { season: k, acf: r(acf[k]!, 3) };
  }
  return best;
}

export interface Score { method: MethodName; mae: number; rmse: number; mape: number | null; params: Record<string, number> }

export function score(method: MethodName, fit: Fitted, actual: readonly number[]): Score {
  let ae = 0; let se = 0; let pe = 0; let pn = 0;
  for (let h = 1; h <= actual.length; h++) {
    const e = actual[h - 1]! - fit.at(h);
    ae += Math.abs(e); se += e * e;
    if (actual[h - 1] !== 0) { pe += Math.abs(e / actual[h - 1]!); pn++; }
  }
  const k = actual.length || 1;
  return { method, mae: r(ae / k), rmse: r(Math.sqrt(se / k)), mape: pn ? r((100 * pe) / pn, 3) : null, params: fit.params };
}

export interface Comparison {
  holdout: { points: number; share: number };
  season: { points: number; from: 'input.season' | 'autocorrelation'; acf?: number } | null;
  scores: Score[];
  /** Why a method was not scored (too short, no season). */
  skipped: Array<{ method: MethodName; reason: string }>;
  chosen: MethodName;
  fit: Fitted;
}

/** Scores both methods on the held-out tail, picks the smaller MAE, refits it on the whole series. */
export function compareMethods(ys: readonly number[], seasonGiven?: number): Comparison {
  const n = ys.length;
  const detected = seasonGiven ? undefined : detectSeason(ys);
  const m = seasonGiven ?? detected?.season;
  const season = m ? { points: m, from: seasonGiven ? 'input.season' as const : 'autocorrelation' as const, ...(detected ? { acf: detected.acf } : {}) } : null;
  let hold = Math.max(2, Math.round(n * HOLDOUT_SHARE));
  if (m && hold < m && n - m >= 2 * m + 2) hold = m;
  const train = ys.slice(0, n - hold);
  const test = ys.slice(n - hold);
  const scores: Score[] = [score('linear', fitLinear(train), test)];
  const skipped: Comparison['skipped'] = [];
  if (!m) skipped.push({ method: 'holt-winters', reason: `no season: no autocorrelation of the detrended series >= ${ACF_MIN} at a lag of 2..${Math.min(MAX_SEASON, Math.floor(n / 3))} points (give input.season)` });
  else {
    const hw = fitHoltWinters(train, m);
    if (hw) scores.push(score('holt-winters', hw, test));
    else skipped.push({ method: 'holt-winters', reason: `too short: ${train.length} training points for a season of ${m} (needs ${2 * m + 2})` });
  }
  const chosen = scores.reduce((p, s) => (s.mae < p.mae ? s : p)).method;
  const fit = chosen === 'holt-winters' ? fitHoltWinters(ys, m!) ?? fitLinear(ys) : fitLinear(ys);
  return { holdout: { points: hold, share: r(hold / n, 3) }, season, scores, skipped, chosen: fit.method, fit };
}

export interface Saturation {
  limit: number;
  /** Steps after the last point when the point forecast first reaches the limit (0: already there), null: not within the search. */
  steps: number | null;
  /** The same for the upper 95% bound: the earliest plausible saturation. */
  earliestSteps: number | null;
  searchedSteps: number;
}

/** The first step (1..max) at which the forecast reaches the limit; 0 when the last value already does. */
export function saturation(fit: Fitted, last: number, limit: number, maxSteps: number): Saturation {
  if (last >= limit) return { limit, steps: 0, earliestSteps: 0, searchedSteps: 0 };
  let steps: number | null = null; let earliest: number | null = null;
  if (fit.method === 'linear') {
    // Closed form for the point forecast, then the bound stepwise up to it.
    const slope = fit.params['slopePerStep']!;
    if (slope > 0) {
      const h = Math.max(1, Math.ceil((limit - fit.at(0)) / slope - 1e-9));
      if (h <= maxSteps) steps = h;
    }
  }
  for (let h = 1; h <= maxSteps && (earliest === null || (steps === null && fit.method !== 'linear')); h++) {
    const p = fit.at(h);
    if (earliest === null && p + fit.halfWidth(h) >= limit) earliest = h;
    if (steps === null && fit.method !== 'linear' && p >= limit) steps = h;
  }
  return { limit, steps, earliestSteps: earliest, searchedSteps: maxSteps };
}
