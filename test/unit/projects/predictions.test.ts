import { strict as assert } from 'node:assert';
import { anomalyType, changedFields, predictionFrom, predictionFromAnomaly, predictionType, severityFor, SLO_PERIOD_MS, type AnomalyView, type ForecastView } from '../../../server/src/engine/projects/predictions';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const MIN = 60_000;

function forecast(over: Partial<ForecastView['saturation']> = {}, series = 'disk_used_bytes'): ForecastView {
  return {
    series, points: 60, chosen: 'linear', last: { time: new Date(T0).toISOString(), value: 130 },
    saturation: { limit: 250, status: 'reached', at: new Date(T0 + 61 * MIN).toISOString(), inMs: 61 * MIN, earliestAt: new Date(T0 + 55 * MIN).toISOString(), text: 'reaches 250 in 61 minutes', ...over },
  };
}

describe('predictions from capacity-ai forecasts', () => {
  it('a forecast that reaches its limit is a prediction at the saturation time', () => {
    const p = predictionFrom(forecast(), 0.9, T0)!;
    assert.equal(p.will_occur_at, new Date(T0 + 61 * MIN).toISOString());
    assert.equal(p.earliest_at, new Date(T0 + 55 * MIN).toISOString());
    assert.equal(p.type, 'capacity_exhaustion');
    assert.equal(p.severity, 'high');
    assert.equal(p.detail.limit, 250);
  });

  it('no prediction when the forecast stays under the limit, or no limit was given', () => {
    assert.equal(predictionFrom(forecast({ status: 'not within the search', at: null, inMs: null, earliestAt: null }), 0.9, T0), null);
    assert.equal(predictionFrom(forecast({ limit: null, status: 'no limit given' }), 0.9, T0), null);
  });

  it('a series without timestamps gives no prediction (no made-up date)', () => {
    assert.equal(predictionFrom({ ...forecast({ at: null }), last: { time: null, value: 1 } }, 0.9, T0), null);
  });

  it('already at the limit is critical and occurs at the last sample', () => {
    const p = predictionFrom(forecast({ status: 'already at the limit', at: null, earliestAt: null }), 0.9, T0 + 5 * MIN)!;
    assert.equal(p.severity, 'critical');
    assert.equal(p.will_occur_at, new Date(T0).toISOString());
  });

  it('severity follows the time left: < 1 h critical, < 1 day high, < 7 days medium, later low', () => {
    assert.equal(severityFor(59 * MIN), 'critical');
    assert.equal(severityFor(60 * MIN), 'high');
    assert.equal(severityFor(23 * 60 * MIN), 'high');
    assert.equal(severityFor(24 * 60 * MIN), 'medium');
    assert.equal(severityFor(7 * 24 * 60 * MIN), 'low');
  });

  it('confidence is lowered by the uncertain share of the time left', () => {
    const tight = predictionFrom(forecast({ earliestAt: new Date(T0 + 61 * MIN).toISOString() }), 0.9, T0)!;
    const wide = predictionFrom(forecast({ earliestAt: new Date(T0 + 1 * MIN).toISOString() }), 0.9, T0)!;
    assert.equal(tight.confidence, 0.9);
    assert.ok(wide.confidence < tight.confidence && wide.confidence >= 0.45, `${wide.confidence}`);
  });

  it('the type comes from the series name', () => {
    assert.equal(predictionType('http_errors_per_second'), 'error_rate_breach');
    assert.equal(predictionType('rate(http_requests_5xx_total)'), 'error_rate_breach');
    assert.equal(predictionType('request_latency_p95_ms'), 'latency_regression');
    assert.equal(predictionType('memory_used_bytes{host="a"}'), 'capacity_exhaustion');
  });

  it('changedFields names what moved (drives prediction.updated)', () => {
    const p = predictionFrom(forecast(), 0.9, T0)!;
    assert.deepEqual(changedFields({ severity: p.severity, will_occur_at: p.will_occur_at, confidence: p.confidence }, p), []);
    assert.deepEqual(changedFields({ severity: 'low', will_occur_at: 'x', confidence: 0.5 }, p), ['severity', 'will_occur_at', 'confidence']);
  });

  describe('from observe-ai anomalies', () => {
    const anomaly = (over: Partial<AnomalyView> = {}): AnomalyView => ({
      kind: 'spike', series: 'api_latency_ms', file: 'metrics/api.prom', start: new Date(T0).toISOString(), end: new Date(T0 + MIN).toISOString(),
      value: 900, baseline: 100, magnitude: {}, method: 'ewma-residual', severity: 'high', ...over,
    });

    it('a spike is an observed anomaly that began at its start', () => {
      const p = predictionFromAnomaly(anomaly(), 0.8, T0 + 10 * MIN)!;
      assert.equal(p.type, 'anomaly');
      assert.equal(p.detail.observed, true);
      assert.equal(p.will_occur_at, new Date(T0).toISOString());
      assert.equal(p.severity, 'high');
    });

    it('an SLO burn predicts when the 30-day error budget runs out at the long-window burn rate', () => {
      const p = predictionFromAnomaly(anomaly({ kind: 'slo-burn-availability', magnitude: { burnRate: { long: 15 } }, severity: 'critical' }), 0.8, T0)!;
      assert.equal(p.type, 'error_rate_breach');
      assert.equal(p.detail.observed, false);
      assert.equal(p.will_occur_at, new Date(T0 + MIN + SLO_PERIOD_MS / 15).toISOString());
      assert.equal(anomalyType('slo-burn-latency'), 'latency_regression');
      assert.equal(anomalyType('error-burst'), 'error_rate_breach');
    });

    it('an anomaly without times is none', () => {
      assert.equal(predictionFromAnomaly(anomaly({ start: null, end: null }), 0.8, T0), null);
    });
  });
});
