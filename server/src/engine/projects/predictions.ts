/**
 * From a capacity-ai forecast of one ingested series to a prediction (pure; docs/api.md "Predictions").
 *
 * A series with a limit is predicted to breach it when capacity-ai's point forecast reaches the limit
 * within its saturation search (ten times the series' own length ahead) or the last value already
 * is at it. Nothing else is a prediction: a forecast that stays under the limit resolves an open one.
 *
 *  - type: from the series name: error/5xx/failure rates → error_rate_breach; latency, duration,
 *    response time → latency_regression; anything else (disk, memory, connections, queue depth...) →
 *    capacity_exhaustion.
 *  - severity: by the time left: already at the limit or under 1 hour → critical, under 1 day → high,
 *    under 7 days → medium, later → low.
 *  - confidence: capacity-ai's own confidence of the forecast (points, regularity, held-out error),
 *    lowered by half the share of the time left that the 95% interval leaves uncertain (the earliest
 *    plausible time against the point forecast).
 *  - predicted_impact: Cadre has no figures of users or revenue; the fields are null with the basis said.
 *
 * observe-ai's anomalies on the project's workspace metrics (`metrics_path`) are predictions too
 * (`predictionFromAnomaly`, below).
 */
import type { PredictionSeverity, PredictionType } from './records';

/** The part of capacity-ai's SeriesForecast a prediction reads (server/src/skills/capacity/plan.ts). */
export interface ForecastView {
  series: string;
  points: number;
  chosen: string;
  last: { time: string | null; value: number };
  saturation: {
    limit: number | null;
    status: 'no limit given' | 'already at the limit' | 'reached' | 'not within the search';
    at: string | null;
    inMs: number | null;
    earliestAt: string | null;
    text: string;
  };
}

export interface PredictionDraft {
  type: PredictionType;
  severity: PredictionSeverity;
  confidence: number;
  description: string;
  will_occur_at: string;
  earliest_at: string | null;
  recommended_action: { type: string; description: string; can_auto_apply: boolean };
  detail: { limit: number; lastValue: number; lastAt: string | null; method: string; text: string; observed?: boolean; kind?: string };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function predictionType(seriesKey: string): Exclude<PredictionType, 'anomaly'> {
  const name = seriesKey.toLowerCase();
  if (/error|5xx|fail|exception/.test(name)) return 'error_rate_breach';
  if (/latency|duration|response_time|p9\d/.test(name)) return 'latency_regression';
  return 'capacity_exhaustion';
}

export function severityFor(msLeft: number): PredictionSeverity {
  if (msLeft < HOUR) return 'critical';
  if (msLeft < DAY) return 'high';
  if (msLeft < 7 * DAY) return 'medium';
  return 'low';
}

const ACTIONS: Record<Exclude<PredictionType, 'anomaly'>, (key: string, limit: number) => string> = {
  capacity_exhaustion: (k, l) => `add capacity for ${k} before it reaches ${l} (capacity-ai recommend gives the scale-by figure)`,
  error_rate_breach: (k, l) => `find and fix the cause of the rising ${k} before it crosses ${l} (debug-ai / incident-ai on the service)`,
  latency_regression: (k, l) => `find the slow path behind ${k} before it crosses ${l} (optimize-ai profile)`,
};

/**
 * The prediction a forecast makes, or null when the series stays under its limit. `now` is the
 * detection time (ms); `forecastConfidence` the confidence of the capacity-ai step.
 */
export function predictionFrom(f: ForecastView, forecastConfidence: number, now: number): PredictionDraft | null {
  const s = f.saturation;
  if (s.limit === null) return null;
  if (s.status !== 'reached' && s.status !== 'already at the limit') return null;
  const type = predictionType(f.series);
  const lastAt = f.last.time ? Date.parse(f.last.time) : now;
  const occursAt = s.status === 'already at the limit' ? lastAt : s.at ? Date.parse(s.at) : NaN;
  // A series without timestamps cannot say when: no prediction with a made-up date.
  if (!Number.isFinite(occursAt)) return null;
  const msLeft = Math.max(0, occursAt - now);
  const earliest = s.earliestAt ? Date.parse(s.earliestAt) : occursAt;
  const span = occursAt - lastAt;
  const uncertain = span > 0 ? Math.min(1, Math.max(0, (occursAt - earliest) / span)) : 0;
  const confidence = Math.round(Math.max(0, Math.min(1, forecastConfidence * (1 - uncertain / 2))) * 100) / 100;
  const when = s.status === 'already at the limit' ? 'is already at' : `reaches`;
  return {
    type,
    severity: s.status === 'already at the limit' ? 'critical' : severityFor(msLeft),
    confidence,
    description: `${f.series} ${when} its limit ${s.limit} (last ${f.last.value}${f.last.time ? ` at ${f.last.time}` : ''}); ${s.text}`,
    will_occur_at: new Date(occursAt).toISOString(),
    earliest_at: Number.isFinite(earliest) ? new Date(earliest).toISOString() : null,
    recommended_action: { type: type === 'capacity_exhaustion' ? 'scale' : 'investigate', description: ACTIONS[type](f.series, s.limit), can_auto_apply: false },
    detail: { limit: s.limit, lastValue: f.last.value, lastAt: f.last.time, method: f.chosen, text: s.text },
  };
}

/** What changed between the open prediction and a new detection (drives prediction.updated). */
export function changedFields(before: { severity: string; will_occur_at: string; confidence: number }, after: PredictionDraft): string[] {
  const out: string[] = [];
  if (before.severity !== after.severity) out.push('severity');
  if (before.will_occur_at !== after.will_occur_at) out.push('will_occur_at');
  if (Math.abs(before.confidence - after.confidence) >= 0.01) out.push('confidence');
  return out;
}

/** The part of observe-ai's anomaly a prediction reads (server/src/skills/observe/detect.ts). */
export interface AnomalyView {
  kind: 'spike' | 'dip' | 'level-shift' | 'slo-burn-availability' | 'slo-burn-latency' | 'error-burst';
  series: string;
  file: string;
  start: string | null;
  end: string | null;
  value: number;
  baseline: number;
  magnitude: { burnRate?: { long: number } };
  method: string;
  severity: PredictionSeverity;
}

/** The SLO period an error budget covers (the SRE workbook's 30 days): a burn rate of b spends it in 30/b days. */
export const SLO_PERIOD_MS = 30 * DAY;

export function anomalyType(kind: AnomalyView['kind']): PredictionType {
  if (kind === 'slo-burn-availability' || kind === 'error-burst') return 'error_rate_breach';
  if (kind === 'slo-burn-latency') return 'latency_regression';
  return 'anomaly';
}

/**
 * An observe-ai anomaly as a prediction. An SLO burn predicts when the error budget of the SLO
 * period runs out at the long-window burn rate (from the end of the window); the other anomalies
 * (spike, dip, level shift, error burst) are already in the data: `will_occur_at` is when they began
 * and `detail.observed` says so. An anomaly without times (samples without timestamps) is none.
 */
export function predictionFromAnomaly(a: AnomalyView, confidence: number, now: number): PredictionDraft | null {
  const start = a.start ? Date.parse(a.start) : NaN;
  const end = a.end ? Date.parse(a.end) : start;
  if (!Number.isFinite(start)) return null;
  const type = anomalyType(a.kind);
  const burn = a.magnitude.burnRate?.long;
  const slo = a.kind === 'slo-burn-availability' || a.kind === 'slo-burn-latency';
  const occurs = slo && burn && burn > 0 ? end + SLO_PERIOD_MS / burn : start;
  const what = slo && burn ? `the ${a.kind === 'slo-burn-latency' ? 'latency' : 'availability'} error budget of a 30-day SLO runs out at burn rate ${burn}` : `${a.kind} in ${a.series} (value ${a.value}, baseline ${a.baseline}) since ${a.start}`;
  const action = type === 'error_rate_breach' ? 'find and fix the cause of the errors (incident-ai / debug-ai on the service)'
    : type === 'latency_regression' ? 'find the slow path (optimize-ai profile) before the latency budget is spent'
      : `look at what changed around ${a.start} in ${a.series}`;
  return {
    type,
    severity: slo ? (occurs - now < DAY ? 'critical' : a.severity) : a.severity,
    confidence: Math.round(Math.max(0, Math.min(1, confidence)) * 100) / 100,
    description: `${what} (observe-ai, ${a.method}; ${a.file})`,
    will_occur_at: new Date(occurs).toISOString(),
    earliest_at: null,
    recommended_action: { type: 'investigate', description: action, can_auto_apply: false },
    detail: { limit: a.baseline, lastValue: a.value, lastAt: a.end, method: a.method, text: what, observed: !slo, kind: a.kind },
  };
}
