/**
 * The shapes of capacity-ai's artifact data (docs/api.md, "capacity-ai actions"), checked by the
 * artifact-schema gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const iso = z.string().nullable();
const score = z.object({ method: z.enum(['linear', 'holt-winters']), mae: z.number(), rmse: z.number(), mape: z.number().nullable(), params: z.record(z.string(), z.number()) });
export const seriesForecastSchema = z.object({
  series: z.string().min(1), source: z.string(), points: z.number().int().min(1), start: iso, end: iso,
  stepMs: z.number().nullable(), irregular: z.number().min(0).max(1),
  last: z.object({ time: iso, value: z.number(), line: z.number().int().min(1).optional() }),
  season: z.object({ points: z.number().int().min(2), from: z.string(), acf: z.number().optional() }).nullable(),
  holdout: z.object({ points: z.number().int().min(1), share: z.number() }),
  scores: z.array(score).min(1),
  skipped: z.array(z.object({ method: z.string(), reason: z.string() })),
  chosen: z.enum(['linear', 'holt-winters']), chosenBecause: z.string().min(1), params: z.record(z.string(), z.number()),
  horizon: z.object({ points: z.number().int().min(1), end: iso }),
  forecast: z.array(z.object({ step: z.number().int().min(1), time: iso, value: z.number(), lower: z.number(), upper: z.number() })).min(1),
  saturation: z.object({
    limit: z.number().nullable(), status: z.enum(['no limit given', 'already at the limit', 'reached', 'not within the search']),
    at: iso, steps: z.number().int().min(0).nullable(), inMs: z.number().nullable(), earliestAt: iso, earliestSteps: z.number().int().min(0).nullable(),
    searchedSteps: z.number().int().min(0), text: z.string().min(1),
  }),
});

export const forecastDataSchema = z.object({
  forecasts: z.array(seriesForecastSchema).min(1),
  examined: z.object({ series: z.number().int().min(1), points: z.number().int().min(1), files: z.array(z.string()), origin: z.string() }),
  limit: z.number().nullable(),
  notes: z.array(z.string()),
}).nullable();

export const recommendDataSchema = z.object({
  recommendations: z.array(z.object({
    series: z.string(), limit: z.number(), headroomTarget: z.number().gt(0).lt(1),
    leadTime: z.object({ ms: z.number().nullable(), steps: z.number().int().min(0), from: z.string() }),
    planningHorizon: z.object({ points: z.number().int().min(1), end: iso }),
    peak: z.object({ value: z.number(), time: iso, step: z.number().int().min(1) }),
    neededCapacity: z.number(), action: z.enum(['scale now', 'scale by', 'no scaling needed']), scaleBy: z.string().nullable(),
    increase: z.object({ absolute: z.number().min(0), percent: z.number().min(0), factor: z.number() }),
    instances: z.object({ unitCapacity: z.number(), current: z.number().int(), needed: z.number().int(), add: z.number().int() }).optional(),
    arithmetic: z.array(z.string()).min(3), text: z.string().min(1),
  })).min(1),
  forecastFrom: z.string(),
  forecasts: z.array(seriesForecastSchema).min(1),
}).nullable();
