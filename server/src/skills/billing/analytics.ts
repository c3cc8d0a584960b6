/**
 * billing-ai `analytics`: executions and tokens per day (every day from the first to the last, empty
 * days counted as 0) and per ISO week (also per agent, for the 10 busiest), the trend, and a forecast.
 *
 * Forecast: an ordinary least-squares line on the daily execution counts (x = day index), with its
 * error: the residual standard error s = sqrt(SSE / (n - 2)), R², and a 95% prediction interval per
 * forecast day, y ± t(0.975, n - 2) · s · sqrt(1 + 1/n + (x - mean x)² / Sxx), cut at 0 (a count is
 * never negative). With 8 days or more the line is also fitted without the last fifth of the days and
 * its mean absolute error on them is given (the error on days it did not see). Fewer than 3 days:
 * no forecast (a line through two points has no error to state), and it says so.
 */
import type { UsageRow } from './usage';

export interface DayCount { day: string; executions: number; completed: number; failed: number; tokens: number }
export interface WeekCount { week: string; executions: number; tokens: number }

export interface LinearFit { slope: number; intercept: number; n: number; r2: number | null; residualStdError: number }

export interface Forecast {
  method: string;
  horizonDays: number;
  fit: LinearFit;
  points: Array<{ day: string; executions: number; low: number; high: number }>;
  /** Mean absolute error on the held-out last days (the line fitted without them); null under 8 days. */
  heldOut: { days: number; mae: number } | null;
}

export interface Analytics {
  daily: DayCount[];
  weekly: WeekCount[];
  /** Executions per ISO week of the 10 agents that took part in the most. */
  weeklyByAgent: Array<{ agent: string; weeks: Array<{ week: string; executions: number }> }>;
  trend: { direction: 'rising' | 'falling' | 'flat'; perDay: number; lastWeek: number | null; weekBefore: number | null; weekOverWeek: number | null } | null;
  forecast: Forecast | null;
  /** Why there is no forecast, when there is none. */
  forecastNote: string | null;
}

const DAY = 86_400_000;
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const r = (n: number, d = 4) => Math.round(n * 10 ** d) / 10 ** d;

/** ISO 8601 week of a day: `2026-W10`. */
export function isoWeek(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  const wd = (d.getUTCDay() + 6) % 7; // Monday 0
  const thursday = new Date(d.getTime() + (3 - wd) * DAY);
  const y = thursday.getUTCFullYear();
  // The week belongs to the year of its Thursday; it is that Thursday's (day of year - 1) / 7, plus 1.
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(y, 0, 1)) / DAY / 7);
  return `${y}-W${String(week).padStart(2, '0')}`;
}

/** Two-sided 95% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond. */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];
export const t95 = (df: number): number => T95[df - 1] ?? 1.96;

export function fitLine(y: readonly number[]): LinearFit & { sxx: number; xMean: number } {
  const n = y.length;
  const xMean = (n - 1) / 2;
  const yMean = y.reduce((a, b) => a + b, 0) / n;
  let sxx = 0; let sxy = 0; let syy = 0;
  y.forEach((v, x) => { sxx += (x - xMean) ** 2; sxy += (x - xMean) * (v - yMean); syy += (v - yMean) ** 2; });
  const slope = sxx ? sxy / sxx : 0;
  const intercept = yMean - slope * xMean;
  const sse = y.reduce((a, v, x) => a + (v - (intercept + slope * x)) ** 2, 0);
  return { slope, intercept, n, r2: syy ? 1 - sse / syy : null, residualStdError: n > 2 ? Math.sqrt(sse / (n - 2)) : 0, sxx, xMean };
}

export function forecastDaily(daily: readonly DayCount[], horizon: number): Forecast {
  const y = daily.map((d) => d.executions);
  const f = fitLine(y);
  const n = y.length;
  const t = t95(n - 2);
  const last = Date.parse(`${daily[n - 1]!.day}T00:00:00Z`);
  const points = Array.from({ length: horizon }, (_, i) => {
    const x = n + i;
    const yhat = f.intercept + f.slope * x;
    const half = t * f.residualStdError * Math.sqrt(1 + 1 / n + (x - f.xMean) ** 2 / f.sxx);
    return { day: dayOf(last + (i + 1) * DAY), executions: r(Math.max(0, yhat), 2), low: r(Math.max(0, yhat - half), 2), high: r(Math.max(0, yhat + half), 2) };
  });
  let heldOut: Forecast['heldOut'] = null;
  if (n >= 8) {
    const k = Math.max(2, Math.round(n / 5));
    const g = fitLine(y.slice(0, n - k));
    const mae = y.slice(n - k).reduce((a, v, i) => a + Math.abs(v - (g.intercept + g.slope * (n - k + i))), 0) / k;
    heldOut = { days: k, mae: r(mae, 3) };
  }
  return {
    method: 'least-squares line on the daily execution counts; 95% prediction interval from the residual standard error (Student t)',
    horizonDays: horizon,
    fit: { slope: r(f.slope), intercept: r(f.intercept), n, r2: f.r2 === null ? null : r(f.r2), residualStdError: r(f.residualStdError) },
    points, heldOut,
  };
}

export function analyze(rows: readonly UsageRow[], horizon: number, until?: number): Analytics {
  const byDay = new Map<string, DayCount>();
  let lo = Infinity; let hi = -Infinity;
  for (const row of rows) {
    const t = Date.parse(row.createdAt);
    if (t < lo) lo = t; if (t > hi) hi = t;
    const day = dayOf(t);
    const d = byDay.get(day) ?? { day, executions: 0, completed: 0, failed: 0, tokens: 0 };
    d.executions++;
    if (row.status === 'completed') d.completed++;
    if (row.status === 'failed') d.failed++;
    d.tokens += typeof row.tokens === 'number' ? row.tokens : 0;
    byDay.set(day, d);
  }
  if (!Number.isFinite(lo)) return { daily: [], weekly: [], weeklyByAgent: [], trend: null, forecast: null, forecastNote: 'no execution to count' };
  const end = until !== undefined && Number.isFinite(until) ? Math.max(hi, Math.min(until, hi + 366 * DAY)) : hi;
  const daily: DayCount[] = [];
  for (let t = Date.parse(`${dayOf(lo)}T00:00:00Z`); t <= end; t += DAY) daily.push(byDay.get(dayOf(t)) ?? { day: dayOf(t), executions: 0, completed: 0, failed: 0, tokens: 0 });
  const weeks = new Map<string, WeekCount>();
  for (const d of daily) {
    const w = isoWeek(d.day);
    const c = weeks.get(w) ?? { week: w, executions: 0, tokens: 0 };
    c.executions += d.executions; c.tokens += d.tokens;
    weeks.set(w, c);
  }
  const weekly = [...weeks.values()];
  const perAgent = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const week = isoWeek(dayOf(Date.parse(row.createdAt)));
    for (const agent of new Set(row.agents ?? ['unknown'])) {
      const m = perAgent.get(agent) ?? new Map<string, number>();
      m.set(week, (m.get(week) ?? 0) + 1);
      perAgent.set(agent, m);
    }
  }
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const weeklyByAgent = [...perAgent].sort((a, b) => total(b[1]) - total(a[1]) || a[0].localeCompare(b[0])).slice(0, 10)
    .map(([agent, m]) => ({ agent, weeks: weekly.map((w) => ({ week: w.week, executions: m.get(w.week) ?? 0 })) }));
  const lastWeek = daily.length >= 7 ? daily.slice(-7).reduce((a, d) => a + d.executions, 0) : null;
  const weekBefore = daily.length >= 14 ? daily.slice(-14, -7).reduce((a, d) => a + d.executions, 0) : null;
  const enough = daily.length >= 3;
  const forecast = enough ? forecastDaily(daily, horizon) : null;
  const slope = enough ? forecast!.fit.slope : daily.length === 2 ? daily[1]!.executions - daily[0]!.executions : 0;
  // Flat: the line moves less than 5% of the mean daily count a day.
  const mean = daily.reduce((a, d) => a + d.executions, 0) / daily.length;
  const direction = Math.abs(slope) <= 0.05 * mean ? 'flat' : slope > 0 ? 'rising' : 'falling';
  return {
    daily, weekly, weeklyByAgent,
    trend: { direction, perDay: r(slope), lastWeek, weekBefore, weekOverWeek: lastWeek !== null && weekBefore ? r((lastWeek - weekBefore) / weekBefore) : null },
    forecast, forecastNote: enough ? null : `no forecast: ${daily.length} day(s) of data, a line needs 3 to state its error`,
  };
}
