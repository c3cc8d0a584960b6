/**
 * capacity-ai's embedded skills, read-only and deterministic (no model, no network):
 *
 *  - `forecast` (the default action): each series (series.ts) forecast by the better of a linear and a
 *    seasonal method on a held-out tail (forecast.ts), with its 95% interval and the time to saturation
 *    against `input.limit`.
 *  - `recommend`: a scaling recommendation (plan.ts) from the forecast of a previous capacity-ai step, or
 *    from a forecast made here of the same input; the arithmetic is part of the result.
 *
 * A series that reaches its limit is a finding of the data, never a failed gate.
 */
import { existsSync } from 'node:fs';
import type { Artifact, Evidence, Skill, SkillContext, StepSummary } from '../../engine/rigor/skill';
import type { ProposedAction } from '../../engine/acmf/records';
import { MIN_POINTS } from './forecast';
import { forecastSeries, recommend, type Recommendation, type SeriesForecast } from './plan';
import { loadSeries, parseSpan, type Loaded } from './series';
import { forecastDataSchema, recommendDataSchema } from './schemas';
import { capacityInputSchema } from '../operate-inputs';

export interface ForecastData {
  forecasts: SeriesForecast[];
  examined: { series: number; points: number; files: string[]; origin: string };
  limit: number | null;
  notes: string[];
}

export interface RecommendData {
  recommendations: Recommendation[];
  /** Where the forecast came from: a previous step, or made by this step. */
  forecastFrom: string;
  forecasts: SeriesForecast[];
}

type Opts = { limit?: number; horizon?: { ms: number } | { points: number }; season?: number };

function optionsOf(input: Record<string, unknown>): Opts | { field: string; message: string } {
  const o: Opts = {};
  const limit = input['limit'];
  if (limit !== undefined && limit !== null && limit !== '') {
    const v = typeof limit === 'string' ? Number(limit) : limit;
    if (typeof v !== 'number' || !Number.isFinite(v)) return { field: 'limit', message: 'input.limit must be a number (the capacity the series must stay under)' };
    o.limit = v;
  }
  if (input['horizon'] !== undefined) {
    const h = parseSpan(input['horizon']);
    if (!h) return { field: 'horizon', message: 'input.horizon must be a number of points or a duration (12h, 30d, 2w)' };
    o.horizon = h;
  }
  if (input['season'] !== undefined) {
    const s = typeof input['season'] === 'string' ? Number(input['season']) : input['season'];
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 2) return { field: 'season', message: 'input.season must be the season length in points, an integer >= 2' };
    o.season = s;
  }
  return o;
}

/** Below 20 points a forecast is a guess; irregular spacing and a large held-out error lower it further. */
export function forecastConfidence(fs: readonly SeriesForecast[]): number {
  if (!fs.length) return 0;
  const one = (f: SeriesForecast) => {
    const best = f.scores.find((s) => s.method === f.chosen);
    const mape = best?.mape ?? null;
    let c = f.points >= 20 ? 0.9 : 0.6;
    c *= 1 - f.irregular / 2;
    if (mape !== null && mape > 25) c *= 0.8;
    return c;
  };
  return Math.round(Math.min(...fs.map(one)) * 100) / 100;
}

function satRank(f: SeriesForecast): number {
  const s = f.saturation;
  if (s.status === 'already at the limit') return 4;
  if (s.status === 'reached') return s.steps! <= f.horizon.points ? 3 : 2;
  return 0;
}

function forecastLine(f: SeriesForecast): string {
  const best = f.scores.find((s) => s.method === f.chosen)!;
  const end = f.forecast[f.forecast.length - 1]!;
  return `${f.series}: ${f.chosen} (held-out MAE ${best.mae}${best.mape !== null ? `, MAPE ${best.mape}%` : ''}), ${end.value} [${end.lower}, ${end.upper}] at ${end.time ?? `step ${end.step}`}; ${f.saturation.text}`;
}

export function renderForecast(d: ForecastData): string {
  const out = ['# capacity-ai forecast', '', `Examined: ${d.examined.series} series, ${d.examined.points} points (${d.examined.origin}${d.examined.files.length ? `: ${d.examined.files.join(', ')}` : ''}).`, ''];
  for (const f of d.forecasts) {
    out.push(`## ${f.series}`, '', `${f.points} points${f.start ? `, ${f.start} .. ${f.end}, step ${f.stepMs} ms` : ''} (${f.source}). Season: ${f.season ? `${f.season.points} points (${f.season.from}${f.season.acf !== undefined ? `, autocorrelation ${f.season.acf}` : ''})` : 'none'}.`, '');
    out.push(`| method | MAE | RMSE | MAPE | on the held-out last ${f.holdout.points} points |`, '|---|---|---|---|---|');
    for (const s of f.scores) out.push(`| ${s.method}${s.method === f.chosen ? ' (chosen)' : ''} | ${s.mae} | ${s.rmse} | ${s.mape ?? 'n/a'}${s.mape !== null ? '%' : ''} | ${Object.entries(s.params).map(([k, v]) => `${k} ${v}`).join(', ')} |`);
    for (const k of f.skipped) out.push(`| ${k.method} | - | - | - | not scored: ${k.reason} |`);
    out.push('', `Chosen: ${f.chosenBecause}.`, '');
    const end = f.forecast[f.forecast.length - 1]!;
    out.push(`Forecast over ${f.horizon.points} steps: ${end.value} (95% interval ${end.lower} .. ${end.upper}) at ${end.time ?? `step ${end.step}`}.`, '', `Saturation: ${f.saturation.text}.`, '');
  }
  if (d.notes.length) out.push('## Notes', '', ...d.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

export function renderRecommend(d: RecommendData): string {
  const out = ['# capacity-ai scaling recommendation', '', `Forecast from ${d.forecastFrom}.`, ''];
  for (const r of d.recommendations) out.push(`## ${r.series}`, '', `**${r.text}**`, '', 'Arithmetic:', '', ...r.arithmetic.map((a) => `- ${a}`), '');
  return out.join('\n');
}

function propose(loaded: Loaded | undefined): ProposedAction[] {
  if (!loaded || !loaded.ok) return [];
  return [
    ...(loaded.files.length ? [{ kind: 'read_metrics', description: 'read the metric series', paths: loaded.files }] : []),
    { kind: 'analyze', description: 'fit and score the forecasting methods' },
  ];
}

/** The newest capacity-ai forecast among the previous steps. */
export function previousForecast(previous: readonly StepSummary[]): { step: number; data: ForecastData } | undefined {
  const s = [...previous].reverse().find((p) => p.agentId === 'capacity-ai' && p.action === 'forecast' && p.data && Array.isArray((p.data as ForecastData).forecasts));
  return s ? { step: s.step, data: s.data as ForecastData } : undefined;
}

function makeSkill(action: 'forecast' | 'recommend'): Skill {
  const prepared = new WeakMap<Evidence, Loaded>();
  const kind = `capacity-${action}`;
  return {
    agentId: 'capacity-ai',
    action,
    inputSchema: capacityInputSchema,
    outputSchema: action === 'forecast' ? forecastDataSchema : recommendDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const prev = action === 'recommend' ? previousForecast(ctx.request.previous) : undefined;
      if (prev && ctx.request.input['series'] === undefined && ctx.request.input['metrics'] === undefined) {
        evidence.items.push({ source: `step ${prev.step} capacity-ai forecast`, detail: `${prev.data.forecasts.length} forecast(s)`, weight: 0.8 });
        return evidence;
      }
      const ws = ctx.request.workspace && existsSync(ctx.request.workspace) ? ctx.request.workspace : undefined;
      const loaded = loadSeries(ws, ctx.request.input);
      prepared.set(evidence, loaded);
      if (loaded.ok) {
        for (const s of loaded.series) evidence.items.push({ source: s.source, detail: `${s.key}: ${s.values.length} points`, weight: s.values.length >= 20 ? 0.8 : 0.4 });
        evidence.pathsRead.push(...loaded.files);
        evidence.constraints.push(...loaded.notes);
      }
      ctx.progress(40, loaded.ok ? 0.6 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      const l = prepared.get(evidence);
      return l ? propose(l) : [{ kind: 'analyze', description: 'draw the recommendation from the previous forecast' }];
    },
    async generate(ctx: SkillContext, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const input = ctx.request.input;
      const unable = (why: string, field: string): Artifact => ({ kind, summary: `capacity-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, needsInput: { field }, tokens: 0 });
      const opts = optionsOf(input);
      if ('field' in opts) return unable(opts.message, opts.field);
      let forecasts: SeriesForecast[]; let from: string; let data: ForecastData | undefined;
      const loaded = prepared.get(evidence);
      if (!loaded) {
        const prev = previousForecast(ctx.request.previous)!;
        forecasts = prev.data.forecasts; from = `step ${prev.step} (capacity-ai forecast)`;
        if (opts.limit === undefined && prev.data.limit !== null) opts.limit = prev.data.limit;
      } else {
        if (!loaded.ok) {
          if ('notApplicable' in loaded) {
            if (action === 'recommend' || !ctx.request.workspace) return unable(`no forecast to draw from: give input.series or input.metrics, or run capacity-ai forecast first (${loaded.notApplicable})`, 'series');
            return { kind, summary: `capacity-ai ${action}: not applicable: ${loaded.notApplicable}`, goalRef, confidence: 1, data: null, notApplicable: loaded.notApplicable, tokens: 0 };
          }
          return unable(loaded.message, loaded.field);
        }
        if (opts.horizon && 'ms' in opts.horizon && loaded.series.some((s) => s.times[0] === null)) return unable('input.horizon is a duration but the series has no timestamps: give the horizon in points', 'horizon');
        // A short series among others is noted and left out; alone, the request must give a longer one.
        const usable = loaded.series.filter((s) => s.values.length >= MIN_POINTS);
        const short = loaded.series.filter((s) => s.values.length < MIN_POINTS);
        if (!usable.length) return unable(`${short[0]!.key} (${short[0]!.source}) has ${short[0]!.values.length} point(s); a forecast needs at least ${MIN_POINTS}`, 'series');
        loaded.notes.push(...short.map((s) => `${s.key} (${s.source}): ${s.values.length} point(s), fewer than ${MIN_POINTS}: not forecast`));
        forecasts = usable.map((s) => forecastSeries(s, opts));
        from = 'this step';
        data = { forecasts, examined: { series: forecasts.length, points: forecasts.reduce((a, f) => a + f.points, 0), files: loaded.files, origin: loaded.origin }, limit: opts.limit ?? null, notes: loaded.notes };
      }
      const confidence = forecastConfidence(forecasts);
      ctx.progress(100, confidence);
      if (action === 'forecast') {
        const d = data!;
        const hits = d.forecasts.filter((f) => satRank(f) > 0);
        const first = [...d.forecasts].sort((a, b) => satRank(b) - satRank(a) || (a.saturation.steps ?? Infinity) - (b.saturation.steps ?? Infinity))[0]!;
        const summary = `${d.forecasts.length} series forecast; ${forecastLine(first)}${d.forecasts.length > 1 ? `; and ${d.forecasts.length - 1} more` : ''}`;
        return {
          kind, summary, goalRef, confidence, data: d, text: renderForecast(d), tokens: 0,
          findingsAfter: { count: hits.length, maxSeverity: hits.reduce((m, f) => Math.max(m, satRank(f)), 0) },
        };
      }
      if (opts.limit === undefined) return unable('no capacity given: input.limit is the capacity (same unit as the series) a recommendation scales', 'limit');
      const h = input['headroom'];
      let headroom = 0.7;
      if (h !== undefined) {
        const v = typeof h === 'string' ? Number(h) : h;
        if (typeof v !== 'number' || !(v > 0) || v >= 100) return unable('input.headroom is the target utilisation: a share (0.7) or a percent (70) below 100', 'headroom');
        headroom = v > 1 ? v / 100 : v;
      }
      const lead = input['leadTime'] === undefined ? { ms: 86_400_000 } : parseSpan(input['leadTime']);
      if (!lead) return unable('input.leadTime must be a number of points or a duration (12h, 7d)', 'leadTime');
      const unit = input['unitCapacity'] === undefined ? undefined : Number(input['unitCapacity']);
      if (unit !== undefined && !(unit > 0)) return unable('input.unitCapacity must be a positive number (the capacity of one instance)', 'unitCapacity');
      const inst = input['instances'] === undefined ? undefined : Number(input['instances']);
      if (inst !== undefined && !(Number.isInteger(inst) && inst >= 0)) return unable('input.instances must be a whole number', 'instances');
      const recs = forecasts.map((f) => recommend(f, { limit: opts.limit!, headroom, leadTime: lead, leadFrom: input['leadTime'] === undefined ? 'default 1 day' : 'input.leadTime', ...(unit ? { unitCapacity: unit } : {}), ...(inst !== undefined ? { instances: inst } : {}) }));
      const d: RecommendData = { recommendations: recs, forecastFrom: from, forecasts };
      const act = recs.filter((r) => r.action !== 'no scaling needed');
      return {
        kind, summary: recs.map((r) => r.text).join('; '), goalRef, confidence, data: d, text: renderRecommend(d), tokens: 0,
        findingsAfter: { count: act.length, maxSeverity: act.some((r) => r.action === 'scale now') ? 3 : act.length ? 2 : 0 },
      };
    },
  };
}

export const forecastSkill: Skill = makeSkill('forecast');
export const recommendSkill: Skill = makeSkill('recommend');
