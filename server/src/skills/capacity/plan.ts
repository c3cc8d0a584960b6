/**
 * capacity-ai's results as data: the forecast of each series (forecast.ts on the series of series.ts)
 * and the scaling recommendation drawn from it, with the arithmetic written out. Pure functions.
 */
import { compareMethods, saturation, type MethodName, type Score } from './forecast';
import { humanDuration, spacing, type LoadedSeries } from './series';

export const MAX_ROWS = 500;
/** How far ahead saturation is searched, in multiples of the series' own length. */
export const SATURATION_SEARCH = 10;

export interface ForecastRow { step: number; time: string | null; value: number; lower: number; upper: number }

export interface SeriesForecast {
  series: string;
  source: string;
  points: number;
  start: string | null;
  end: string | null;
  stepMs: number | null;
  /** Share of spacings more than 10% off the median step. */
  irregular: number;
  last: { time: string | null; value: number; line?: number };
  season: { points: number; from: string; acf?: number } | null;
  holdout: { points: number; share: number };
  scores: Score[];
  skipped: Array<{ method: MethodName; reason: string }>;
  chosen: MethodName;
  chosenBecause: string;
  params: Record<string, number>;
  horizon: { points: number; end: string | null };
  forecast: ForecastRow[];
  saturation: {
    limit: number | null;
    status: 'no limit given' | 'already at the limit' | 'reached' | 'not within the search';
    at: string | null;
    steps: number | null;
    /** ms from the last point (null without times). */
    inMs: number | null;
    earliestAt: string | null;
    earliestSteps: number | null;
    searchedSteps: number;
    text: string;
  };
}

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

export function forecastSeries(s: LoadedSeries, opts: { limit?: number; horizon?: { ms: number } | { points: number }; season?: number }): SeriesForecast {
  const n = s.values.length;
  const { stepMs, irregular } = spacing(s.times);
  const cmp = compareMethods(s.values, opts.season);
  const lastT = s.times[n - 1] ?? null;
  const timeAt = (h: number) => (lastT !== null && stepMs ? lastT + h * stepMs : null);
  let horizon = Math.max(1, Math.ceil(n / 2));
  if (opts.horizon && 'points' in opts.horizon) horizon = opts.horizon.points;
  else if (opts.horizon && stepMs) horizon = Math.max(1, Math.round(opts.horizon.ms / stepMs));
  const every = Math.max(1, Math.ceil(horizon / MAX_ROWS));
  const rows: ForecastRow[] = [];
  for (let h = every; h <= horizon; h += every) rows.push(row(h));
  if (rows[rows.length - 1]?.step !== horizon) rows.push(row(horizon));
  function row(h: number): ForecastRow {
    const v = cmp.fit.at(h); const w = cmp.fit.halfWidth(h);
    return { step: h, time: iso(timeAt(h)), value: round(v), lower: round(v - w), upper: round(v + w) };
  }
  const best = cmp.scores.find((x) => x.method === cmp.chosen)!;
  const other = cmp.scores.find((x) => x.method !== cmp.chosen);
  const chosenBecause = other
    ? `${cmp.chosen} has the smaller MAE on the held-out last ${cmp.holdout.points} points (${best.mae} vs ${other.mae} for ${other.method})`
    : `${cmp.chosen} is the only method that could be scored (${cmp.skipped.map((k) => `${k.method}: ${k.reason}`).join('; ')})`;
  const sat = saturationOf(cmp.fit, s.values[n - 1]!, opts.limit, n, timeAt, stepMs);
  return {
    series: s.key, source: s.source, points: n, start: iso(s.times[0] ?? null), end: iso(lastT), stepMs, irregular: round(irregular, 3),
    last: { time: iso(lastT), value: s.values[n - 1]!, ...(s.lines[n - 1] ? { line: s.lines[n - 1]! } : {}) },
    season: cmp.season, holdout: cmp.holdout, scores: cmp.scores, skipped: cmp.skipped, chosen: cmp.chosen, chosenBecause, params: cmp.fit.params,
    horizon: { points: horizon, end: iso(timeAt(horizon)) }, forecast: rows, saturation: sat,
  };
}

function saturationOf(fit: ReturnType<typeof compareMethods>['fit'], last: number, limit: number | undefined, n: number, timeAt: (h: number) => number | null, stepMs: number | null): SeriesForecast['saturation'] {
  const search = SATURATION_SEARCH * n;
  if (limit === undefined) return { limit: null, status: 'no limit given', at: null, steps: null, inMs: null, earliestAt: null, earliestSteps: null, searchedSteps: 0, text: 'no limit given (input.limit): time to saturation not computed' };
  const s = saturation(fit, last, limit, search);
  const at = s.steps === null ? null : iso(timeAt(s.steps));
  const inMs = s.steps !== null && stepMs ? s.steps * stepMs : null;
  const earliestAt = s.earliestSteps === null ? null : iso(timeAt(s.earliestSteps));
  const base = { limit, at, steps: s.steps, inMs, earliestAt, earliestSteps: s.earliestSteps, searchedSteps: s.searchedSteps };
  if (s.steps === 0) return { ...base, status: 'already at the limit', text: `already at the limit: the last value ${last} >= ${limit}` };
  const when = (steps: number, t: string | null) => (t ? `${t} (in ${humanDuration(steps * stepMs!)}, ${steps} steps)` : `in ${steps} steps`);
  if (s.steps === null) {
    return { ...base, status: 'not within the search', text: `the forecast does not reach ${limit} within ${search} steps${stepMs ? ` (${humanDuration(search * stepMs)})` : ''}${s.earliestSteps !== null ? `; the upper 95% bound does at ${when(s.earliestSteps, earliestAt)}` : ''}` };
  }
  return { ...base, status: 'reached', text: `reaches ${limit} at ${when(s.steps, at)}${s.earliestSteps !== null ? `; earliest (upper 95% bound) ${when(s.earliestSteps, earliestAt)}` : ''}` };
}

export interface Recommendation {
  series: string;
  limit: number;
  /** Target utilisation: the peak should stay at or under this share of the capacity. */
  headroomTarget: number;
  leadTime: { ms: number | null; steps: number; from: string };
  planningHorizon: { points: number; end: string | null };
  /** The highest upper 95% bound over the planning horizon, with its time. */
  peak: { value: number; time: string | null; step: number };
  neededCapacity: number;
  action: 'scale now' | 'scale by' | 'no scaling needed';
  scaleBy: string | null;
  increase: { absolute: number; percent: number; factor: number };
  instances?: { unitCapacity: number; current: number; needed: number; add: number };
  arithmetic: string[];
  text: string;
}

/** The recommendation from a forecast: keep the upper bound under `headroom` x capacity over the horizon. */
export function recommend(f: SeriesForecast, o: { limit: number; headroom: number; leadTime: { ms: number } | { points: number }; leadFrom: string; unitCapacity?: number; instances?: number }): Recommendation {
  const rows = f.forecast;
  const peak = rows.reduce((p, r) => (r.upper > p.upper ? r : p), rows[0]!);
  const target = o.headroom * o.limit;
  const needed = round(peak.upper / o.headroom, 3);
  const leadSteps = 'points' in o.leadTime ? o.leadTime.points : f.stepMs ? Math.ceil(o.leadTime.ms / f.stepMs) : 0;
  const leadMs = 'ms' in o.leadTime ? o.leadTime.ms : f.stepMs ? o.leadTime.points * f.stepMs : null;
  const crossing = f.last.value >= target ? undefined : rows.find((r) => r.upper >= target);
  const arithmetic = [
    `target utilisation ${round(o.headroom * 100, 2)}% of the capacity ${o.limit} = ${round(target, 3)}`,
    `peak of the upper 95% bound over the next ${f.horizon.points} steps${f.horizon.end ? ` (to ${f.horizon.end})` : ''} = ${peak.upper}${peak.time ? ` at ${peak.time}` : ` at step ${peak.step}`}`,
    `capacity needed = peak / target utilisation = ${peak.upper} / ${o.headroom} = ${needed}`,
  ];
  const absolute = round(Math.max(0, needed - o.limit), 3);
  const factor = round(needed / o.limit, 4);
  const increase = { absolute, percent: round(Math.max(0, factor - 1) * 100, 2), factor };
  let action: Recommendation['action']; let scaleBy: string | null = null;
  if (needed <= o.limit && !(f.last.value >= target)) {
    action = 'no scaling needed';
    arithmetic.push(`${needed} <= ${o.limit}: the capacity holds the peak with the headroom over the horizon`);
  } else {
    arithmetic.push(`increase = ${needed} - ${o.limit} = ${absolute} (x${factor}, +${increase.percent}%)`);
    const stepAt = crossing ? crossing.step - leadSteps : 0;
    if (!crossing || stepAt <= 0) {
      action = 'scale now';
      arithmetic.push(crossing ? `the upper bound reaches the target ${round(target, 3)} at step ${crossing.step}${crossing.time ? ` (${crossing.time})` : ''}, within the lead time of ${leadSteps} steps: scale now` : `the last value ${f.last.value} is already at or over the target ${round(target, 3)}: scale now`);
    } else {
      action = 'scale by';
      const lastT = f.last.time ? Date.parse(f.last.time) : null;
      scaleBy = lastT !== null && f.stepMs ? new Date(lastT + stepAt * f.stepMs).toISOString() : `step ${stepAt}`;
      arithmetic.push(`the upper bound reaches the target ${round(target, 3)} at step ${crossing.step}${crossing.time ? ` (${crossing.time})` : ''}; minus the lead time of ${leadSteps} steps = step ${stepAt}: scale by ${scaleBy}`);
    }
  }
  let instances: Recommendation['instances'];
  if (o.unitCapacity && o.unitCapacity > 0) {
    const current = o.instances ?? Math.round(o.limit / o.unitCapacity);
    const need = Math.max(current, Math.ceil(needed / o.unitCapacity - 1e-9));
    instances = { unitCapacity: o.unitCapacity, current, needed: need, add: need - current };
    arithmetic.push(`instances = ceil(${needed} / ${o.unitCapacity}) = ${Math.ceil(needed / o.unitCapacity - 1e-9)} (at least the ${current} running): add ${need - current}`);
  }
  const text = action === 'no scaling needed'
    ? `no scaling needed for ${f.series} over the next ${f.horizon.points} steps: the peak upper bound ${peak.upper} is ${round((peak.upper / o.limit) * 100, 1)}% of ${o.limit} (target ${round(o.headroom * 100, 1)}%)`
    : `${action === 'scale now' ? 'scale now' : `scale by ${scaleBy}`}: ${f.series} needs ${needed} (+${increase.percent}% over ${o.limit})${instances ? `, ${instances.needed} instances (add ${instances.add})` : ''} to keep ${round((1 - o.headroom) * 100, 1)}% headroom over the peak ${peak.upper}`;
  return {
    series: f.series, limit: o.limit, headroomTarget: o.headroom, leadTime: { ms: leadMs, steps: leadSteps, from: o.leadFrom },
    planningHorizon: f.horizon, peak: { value: peak.upper, time: peak.time, step: peak.step }, neededCapacity: needed, action, scaleBy, increase,
    ...(instances ? { instances } : {}), arithmetic, text,
  };
}
