import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  changePoints, detectSeries, parseCsvSeries, ErrorMinutes, errorBursts, histogramQuantiles, median, poissonTail, evaluateRule, parseDuration, parseLogs, parsePrometheus, parseRules, sloBurn, type AlertRule, type Series,
} from '../../../../server/src/skills/observe/index';

const FIX = path.resolve(__dirname, '../../../fixtures/observe');
const read = (f: string) => readFileSync(path.join(FIX, f), 'utf8');
const T0 = Date.UTC(2026, 2, 10, 10, 0, 0);
const at = (min: number) => new Date(T0 + min * 60_000).toISOString();

/** A seeded normal generator, so a failing series can be reproduced. */
function noise(seed: number): () => number {
  let a = seed >>> 0;
  const u = () => { a = (a + 0x6d2b79f5) >>> 0; let t = Math.imul(a ^ (a >>> 15), a | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  return () => Math.sqrt(-2 * Math.log(u() || 1e-12)) * Math.cos(2 * Math.PI * u());
}

function gauge(values: number[]): Series {
  return { name: 'queue_depth', labels: { queue: 'emails' }, kind: 'gauge', file: 'm.prom', points: values.map((v, i) => ({ t: T0 + i * 60_000, v, line: i + 1 })) };
}

describe('observe-ai detection', () => {
  describe('spikes and dips (robust z-score of the EWMA residual)', () => {
    const planted = parsePrometheus(read('anomalies.prom'), 'anomalies.prom').items;
    const clean = parsePrometheus(read('clean.prom'), 'clean.prom').items;

    it('finds the two planted anomalies at their times, with value, baseline, z and method, and nothing else', () => {
      const latency = planted.find((s) => s.name === 'api_latency_ms')!;
      const { anomalies, judged } = detectSeries(latency);
      assert.ok(judged);
      assert.deepEqual(anomalies.map((a) => [a.kind, a.start, a.end]), [['spike', at(70), at(70)], ['dip', at(140), at(140)]]);
      const [spike, dip] = anomalies;
      assert.equal(spike!.series, 'api_latency_ms{instance="10.0.0.1:9100",job="api"}');
      assert.ok(spike!.value - spike!.baseline > 30, JSON.stringify(spike));
      assert.ok(spike!.magnitude.z! >= 4.5 && spike!.magnitude.residual! > 30, JSON.stringify(spike!.magnitude));
      assert.ok(dip!.magnitude.z! <= -4.5 && dip!.magnitude.residual! < -25, JSON.stringify(dip!.magnitude));
      assert.match(spike!.method, /robust z-score \(median\/MAD of the previous 120 residuals, \|z\| >= 4\.5\) of the EWMA residual/);
      assert.deepEqual(spike!.lines, [73], 'the source line of the point (2 header lines + index 70 + 1)');
      assert.ok(['low', 'medium', 'high'].includes(spike!.severity));
    });

    it('the clean twin (the same series without the plants) raises nothing, and the steady counter is judged on its rate', () => {
      for (const s of clean) assert.deepEqual(detectSeries(s).anomalies, [], s.name);
      const counter = planted.find((s) => s.name === 'api_requests_total')!;
      const r = detectSeries(counter);
      assert.ok(r.judged);
      assert.deepEqual(r.anomalies, [], 'a counter that grows steadily is not a level shift');
    });

    it('a counter burst is found on its per-second rate, and a counter reset is not an anomaly', () => {
      const r = noise(3);
      let total = 0;
      const pts = Array.from({ length: 60 }, (_, i) => {
        total += 600 + Math.round(20 * r()) + (i === 40 ? 6000 : 0);
        if (i === 20) total = 600; // the process restarted
        return { t: T0 + i * 60_000, v: total };
      });
      const a = detectSeries({ name: 'jobs_total', labels: {}, kind: 'counter', file: 'm.prom', points: pts }).anomalies;
      assert.deepEqual(a.map((x) => [x.kind, x.start, x.series]), [['spike', at(40), 'rate(jobs_total)']]);
      assert.match(a[0]!.method, /per-second rate of the counter/);
    });

    it('a counter scraped without timestamps is judged on its increase per sample, its window given as sample indexes', () => {
      const lines = ['# TYPE jobs_total counter'];
      let total = 0;
      for (let i = 0; i < 40; i++) { total += 100 + (i % 3) + (i === 30 ? 900 : 0); lines.push(`jobs_total ${total}`); }
      const [s] = parsePrometheus(lines.join('\n'), 'scrapes.prom').items;
      const a = detectSeries(s!).anomalies;
      assert.deepEqual(a.map((x) => [x.kind, x.start, x.startIndex, x.lines]), [['spike', null, 29, [32]]], 'the 30th increase (index 29 of the increases, line 32)');
    });

    it('stated error rates: at most 20 false alarms in 100k points of Gaussian noise, and an 8-sigma spike found in at least 95 of 100 series', () => {
      const r = noise(2026);
      let alarms = 0; let found = 0;
      for (let s = 0; s < 200; s++) {
        const xs = Array.from({ length: 500 }, () => 100 + 2 * r());
        alarms += detectSeries(gauge(xs)).anomalies.length;
        if (s < 100) {
          xs[250]! += 16;
          if (detectSeries(gauge(xs)).anomalies.some((a) => a.kind === 'spike' && a.start === at(250))) found++;
        }
      }
      assert.ok(alarms <= 20, `${alarms} false alarms in 100k points`);
      assert.ok(found >= 95, `${found}/100 spikes found`);
    });

    it('a steady trend (a disk filling at a constant rate) is not a run of level shifts; a step on top of it is still the strongest shift', () => {
      const r = noise(11);
      const ramp = Array.from({ length: 300 }, (_, i) => 20 + 0.25 * i + r() * 0.8);
      assert.deepEqual(detectSeries(gauge(ramp)).anomalies.filter((a) => a.kind === 'level-shift'), [], 'a linear trend alone');
      const stepped = ramp.map((v, i) => (i >= 200 ? v + 15 : v));
      const shifts = detectSeries(gauge(stepped)).anomalies.filter((a) => a.kind === 'level-shift')
        .sort((x, y) => (y.magnitude.shiftSigma ?? 0) - (x.magnitude.shiftSigma ?? 0));
      assert.ok(shifts.length >= 1 && (shifts[0]!.magnitude.shiftSigma ?? 0) >= 8, JSON.stringify(shifts));
      const at = (Date.parse(shifts[0]!.start as string) - T0) / 60_000;
      assert.ok(Math.abs(at - 200) <= 2, `the step at index 200, found at ${at}`);
      const fixture = path.resolve(__dirname, '../../../fixtures/capacity/linear.csv');
      const disk = parseCsvSeries(readFileSync(fixture, 'utf8'), 'linear.csv').items;
      assert.ok(disk.length > 0);
      for (const series of disk) assert.deepEqual(detectSeries(series).anomalies.filter((a) => a.kind === 'level-shift'), [], `test/fixtures/capacity/linear.csv ${series.name}`);
    });

    it('too few points are examined but not judged', () => {
      assert.equal(detectSeries(gauge([1, 2, 3, 50, 2])).judged, false);
    });
  });

  it('median (by selection) equals the median of the sorted values, odd and even, with ties', () => {
    const r = noise(1);
    for (let n = 1; n < 60; n++) {
      const xs = Array.from({ length: n }, () => Math.round(r() * 3));
      const s = [...xs].sort((a, b) => a - b);
      const expected = n % 2 ? s[n >> 1]! : (s[(n >> 1) - 1]! + s[n >> 1]!) / 2;
      assert.ok(median(xs) === expected, `${median(xs)} vs ${expected}: ${JSON.stringify(xs)}`); // === : -0 and 0 are the same median
    }
  });

  describe('change points (two-window median shift)', () => {
    it('finds a level shift at index 90 of 160 within 2 points, and reports no spike for it', () => {
      const r = noise(11);
      const xs = Array.from({ length: 160 }, (_, i) => 50 + r() * 1.5 + (i >= 90 ? 8 : 0));
      const cps = changePoints(xs);
      assert.equal(cps.length, 1, JSON.stringify(cps));
      assert.ok(Math.abs(cps[0]!.index - 90) <= 2, `index ${cps[0]!.index}`);
      const a = detectSeries(gauge(xs)).anomalies;
      assert.deepEqual(a.map((x) => x.kind), ['level-shift'], JSON.stringify(a.map((x) => [x.kind, x.start])));
      assert.ok(Math.abs(Date.parse(a[0]!.start!) - (T0 + 90 * 60_000)) <= 2 * 60_000, a[0]!.start!);
      assert.ok(a[0]!.baseline < 51 && a[0]!.value > 57, JSON.stringify(a[0]));
      assert.ok(a[0]!.magnitude.shiftSigma! >= 3);
    });

    it('a stationary noisy series has no change point', () => {
      const r = noise(5);
      assert.deepEqual(changePoints(Array.from({ length: 200 }, () => 10 + r())), []);
    });
  });

  describe('SLO burn from request logs', () => {
    it('the access log\'s 5xx burst is a page-level availability burn with its window (10:40..10:50)', () => {
      const logs = parseLogs('access.log', read('access.log')).items;
      const r = sloBurn(logs);
      assert.equal(r.requests, 2700);
      assert.deepEqual(r.anomalies.map((a) => [a.kind, a.start, a.end, a.severity]), [['slo-burn-availability', at(40), at(50), 'critical']]);
      const b = r.anomalies[0]!.magnitude.burnRate!;
      assert.ok(b.long >= 14.4 && b.short >= 14.4, JSON.stringify(b));
      assert.deepEqual([b.longWindow, b.shortWindow], ['1h', '5m']);
      assert.equal(r.anomalies[0]!.value, 0.5, 'every other request of the window failed');
      assert.match(r.anomalies[0]!.method, /availability 99\.5%.*1h and 5m windows both >= 14\.4x \(page\)/);
    });

    it('the JSON log\'s slow hour is a latency burn with its window and p95; a stricter objective makes a fast log burn too', () => {
      const logs = parseLogs('app.jsonl', read('app.jsonl')).items;
      const r = sloBurn(logs);
      assert.deepEqual(r.anomalies.map((a) => [a.kind, a.start, a.end]), [['slo-burn-latency', at(10), at(60)]]);
      assert.equal(r.anomalies[0]!.magnitude.p95Ms, 900);
      const fast = logs.filter((l) => l.durationMs! < 500);
      assert.deepEqual(sloBurn(fast).anomalies, [], 'the fast requests alone burn nothing');
      assert.equal(sloBurn(fast, { availability: 0.995, latencyMs: 100, latencyTarget: 0.999 }).anomalies[0]?.kind, 'slo-burn-latency');
    });

    it('a log without the burst (the clean twin) burns nothing', () => {
      const logs = parseLogs('access.log', read('access.log')).items.filter((l) => l.status !== 502);
      assert.deepEqual(sloBurn(logs).anomalies, []);
    });
  });

  describe('latency quantiles from Prometheus histograms', () => {
    /** Cumulative buckets le 0.1 / 0.5 / 1 / +Inf every 15 s; `inc(i)` gives each interval's cumulative increases. */
    function histogram(n: number, inc: (i: number) => [number, number, number, number]): Series[] {
      const les = ['0.1', '0.5', '1', '+Inf'];
      const totals = [0, 0, 0, 0];
      const series = les.map((le) => ({ name: 'http_request_duration_seconds_bucket', labels: { le, job: 'api' }, kind: 'counter' as const, file: 'h.prom', points: [] as Array<{ t: number; v: number }> }));
      for (let i = 0; i < n; i++) {
        const d = i === 0 ? [0, 0, 0, 0] : inc(i);
        for (let b = 0; b < 4; b++) { totals[b]! += d[b]!; series[b]!.points.push({ t: T0 + i * 15_000, v: totals[b]! }); }
      }
      return series;
    }

    it('computes p95 per interval as histogram_quantile does (interpolated inside the bucket, +Inf answers the highest bound)', () => {
      const [p95] = histogramQuantiles(histogram(4, (i) => (i === 3 ? [10, 30, 60, 100] : [50, 90, 100, 100])));
      assert.equal(p95!.name, 'histogram_quantile(0.95, http_request_duration_seconds)');
      assert.deepEqual(p95!.labels, { job: 'api' });
      assert.deepEqual(p95!.points.map((p) => p.v), [0.75, 0.75, 1]);
    });

    it('a latency spike in the buckets is a spike of the p95 series (and of no bucket)', async () => {
      const series = histogram(80, (i) => (i === 50 ? [5, 20, 40, 100] : i % 2 ? [50, 90, 100, 100] : [52, 91, 100, 100]));
      const [p95] = histogramQuantiles(series);
      const a = detectSeries(p95!).anomalies;
      assert.deepEqual(a.map((x) => [x.kind, x.start, x.value]), [['spike', new Date(T0 + 50 * 15_000).toISOString(), 1]]);
      for (const s of series) assert.deepEqual(detectSeries(s).anomalies, [], 'buckets are left to the quantile');
    });
  });

  describe('error bursts in logs without a status (Poisson tail per minute)', () => {
    const logs = parseLogs('syslog-burst.log', read('syslog-burst.log')).items;

    it('finds the 11:00..11:05 burst of the syslog with its window, count, p-value and first line; the twin without it raises nothing', () => {
      const a = errorBursts(ErrorMinutes.of(logs));
      assert.deepEqual(a.map((x) => [x.kind, x.start, x.end, x.value, x.magnitude.errors, x.severity]), [['error-burst', at(60), at(65), 18, 90, 'high']]);
      assert.ok(a[0]!.magnitude.pValue! < 1e-6, String(a[0]!.magnitude.pValue));
      assert.ok(a[0]!.baseline < 0.2, 'an error every 20 minutes before it');
      assert.equal(logs.find((r) => r.line === a[0]!.lines[0])!.t, T0 + 60 * 60_000, 'the first line of 11:00');
      assert.match(a[0]!.method, /Poisson tail .* previous 60 minutes \(p < 1e-6, at least 5 in a minute\)/);
      assert.deepEqual(errorBursts(ErrorMinutes.of(logs.filter((r) => !/upstream/.test(r.message ?? '')))), []);
    });

    it('the Poisson tail is right near and far from the mean', () => {
      assert.ok(Math.abs(poissonTail(1, 2) - (1 - Math.exp(-2))) < 1e-12);
      assert.ok(Math.abs(poissonTail(5, 0.1) - 7.66780e-8) / 7.66780e-8 < 1e-3, String(poissonTail(5, 0.1)));
      assert.ok(poissonTail(60, 0.1) > 0 && poissonTail(60, 0.1) < 1e-100, 'far in the tail: tiny, not 0 or negative');
      assert.equal(poissonTail(0, 3), 1);
    });
  });

  describe('alert rules', () => {
    const series = parsePrometheus(read('anomalies.prom'), 'anomalies.prom').items;
    const rule = (expr: AlertRule['expr']): AlertRule => ({ name: 'HighLatency', expr, severity: 'page' });

    it('fires on the points over the threshold, with their times, values and lines; a `for` longer than the streak does not fire', () => {
      const r = evaluateRule(rule({ metric: 'api_latency_ms', labels: { job: 'api' }, op: '>', threshold: 130 }), series);
      assert.equal(r.seriesMatched, 1);
      assert.equal(r.pointsEvaluated, 180);
      assert.deepEqual(r.episodes.map((e) => [e.state, e.since, e.firedAt, e.until, e.pointCount]), [['resolved', at(70), at(70), at(70), 1]]);
      assert.deepEqual(r.episodes[0]!.points, [{ time: at(70), value: r.episodes[0]!.points[0]!.value, file: 'anomalies.prom', line: 73 }]);
      assert.ok(r.episodes[0]!.points[0]!.value > 130);
      assert.deepEqual(evaluateRule(rule({ metric: 'api_latency_ms', op: '>', threshold: 130, for: '2m' }), series).episodes, []);
    });

    it('`for` fires after the condition has held that long; still true at the last point is firing', () => {
      const s = gauge([1, 1, 9, 9, 9, 9, 1, 9, 9, 9]);
      const r = evaluateRule(rule({ metric: 'queue_depth', op: '>=', threshold: 5, for: '2m' }), [s]);
      assert.deepEqual(r.episodes.map((e) => [e.state, e.since, e.firedAt, e.until]), [['resolved', at(2), at(4), at(5)], ['firing', at(7), at(9), at(9)]]);
    });

    it('does not fire below the threshold, nor on another label set', () => {
      assert.deepEqual(evaluateRule(rule({ metric: 'api_latency_ms', op: '>', threshold: 500 }), series).episodes, []);
      const other = evaluateRule(rule({ metric: 'api_latency_ms', labels: { job: 'web' }, op: '>', threshold: 0 }), series);
      assert.equal(other.seriesMatched, 0);
      assert.deepEqual(other.episodes, []);
    });

    it('validates rules naming the rule and the field', () => {
      assert.deepEqual(parseRules([{ name: 'x', expr: { metric: 'up', op: '=', threshold: 1 } }]), { error: 'rules[0].expr.op must be one of >, <, >=, <=' });
      assert.deepEqual(parseRules({ rules: [{ name: 'x', expr: { metric: 'up', op: '<', threshold: 1, for: 'soon' } }] }), { error: 'rules[0].expr.for must be a duration such as 30s, 5m or 1h' });
      assert.equal(parseDuration('1h30m'), 5_400_000);
      assert.equal(parseDuration('5 minutes'), undefined);
    });
  });
});
