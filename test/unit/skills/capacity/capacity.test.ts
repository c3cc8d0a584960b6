import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import {
  compareMethods, detectSeason, fitHoltWinters, fitLinear, forecastSkill, recommendSkill,
  type ForecastData, type RecommendData,
} from '../../../../server/src/skills/capacity/index';
import type { StepSummary } from '../../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/capacity');
const H = 3_600_000;
const dirs: string[] = [];

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-capacity-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"svc","version":"1.0.0"}\n');
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(path.join(FIX, from), path.join(dir, to));
  }
  return dir;
}

const run = (action: 'forecast' | 'recommend', ws: string | undefined, input: Record<string, unknown> = {}, previous: StepSummary[] = []) => {
  const c = skillContext({ agentId: 'capacity-ai', action, workspace: ws, input });
  c.request.previous = previous;
  return runSkill(action === 'forecast' ? forecastSkill : recommendSkill, c);
};

/** |a - b| in hours between two ISO times. */
const hoursOff = (a: string | null, b: string) => Math.abs(Date.parse(a ?? 'x') - Date.parse(b)) / H;

describe('capacity-ai', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('forecast and recommend are embedded skills', () => {
    assert.ok(skills.includes(forecastSkill));
    assert.ok(skills.includes(recommendSkill));
  });

  describe('methods (known answers)', () => {
    it('linear regression recovers the slope and intercept of an exact line', () => {
      const f = fitLinear(Array.from({ length: 50 }, (_, i) => 3 + 2 * i));
      assert.equal(f.params['slopePerStep'], 2);
      assert.equal(f.params['intercept'], 3);
      assert.equal(f.at(1), 3 + 2 * 50);
      assert.equal(f.halfWidth(1), 0, 'no residual: no interval');
    });

    it('the season of a sine of period 12 is found by autocorrelation; a trend alone has none', () => {
      const ys = Array.from({ length: 120 }, (_, i) => 10 + 0.1 * i + 5 * Math.sin((2 * Math.PI * i) / 12));
      assert.equal(detectSeason(ys)?.season, 12);
      assert.equal(detectSeason(Array.from({ length: 120 }, (_, i) => 10 + 0.1 * i)), undefined);
    });

    it('Holt-Winters forecasts a noise-free seasonal series within 1% one season ahead, and the comparison chooses it', () => {
      const f = (i: number) => 50 + 0.3 * i + 10 * Math.sin((2 * Math.PI * i) / 12);
      const ys = Array.from({ length: 96 }, (_, i) => f(i));
      const hw = fitHoltWinters(ys, 12)!;
      for (let h = 1; h <= 12; h++) assert.ok(Math.abs(hw.at(h) - f(95 + h)) / f(95 + h) < 0.01, `h=${h}: ${hw.at(h)} vs ${f(95 + h)}`);
      const c = compareMethods(ys);
      assert.equal(c.chosen, 'holt-winters');
      assert.deepEqual(c.scores.map((s) => s.method), ['linear', 'holt-winters']);
      assert.ok(c.scores[1]!.mae < c.scores[0]!.mae);
      assert.equal(c.holdout.points, 19);
    });
  });

  describe('forecast', () => {
    it('a linear series: linear is chosen, saturation against 200 within 3 hours of the known 2026-01-13T12:00Z (300 steps from the start)', async () => {
      const ws = workspace({ 'metrics/disk.csv': 'linear.csv' });
      const { proposed, artifact } = await run('forecast', ws, { limit: 200 });
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => [p.kind, p.paths]), [['read_metrics', ['metrics/disk.csv']], ['analyze', undefined]]);
      const f = (artifact.data as ForecastData).forecasts[0]!;
      assert.equal(f.series, 'disk_used_gb');
      assert.equal(f.chosen, 'linear');
      assert.equal(f.stepMs, H);
      assert.equal(f.holdout.points, 40);
      assert.ok(Math.abs(f.params['slopePerStep']! - 0.5) < 0.01, String(f.params['slopePerStep']));
      assert.equal(f.saturation.status, 'reached');
      assert.ok(hoursOff(f.saturation.at, '2026-01-13T12:00:00.000Z') <= 3, `${f.saturation.at}`);
      assert.ok(f.saturation.earliestSteps! <= f.saturation.steps!, 'the upper bound reaches the limit first');
      const last = f.forecast[f.forecast.length - 1]!;
      assert.equal(f.horizon.points, 100);
      assert.ok(last.lower < last.value && last.value < last.upper);
      assert.ok(artifact.confidence >= 0.75, String(artifact.confidence));
      assert.deepEqual(artifact.findingsAfter, { count: 1, maxSeverity: 2 }, 'saturation after the 100-step horizon');
      assert.match(artifact.summary, /disk_used_gb: linear \(held-out MAE [\d.]+, MAPE [\d.]+%\).*reaches 200 at 2026-01-13T1/);
      assert.equal(forecastSkill.outputSchema!.safeParse(artifact.data).success, true);
    });

    it('a seasonal series (Prometheus text): the daily season is found, Holt-Winters beats linear on the held-out tail, saturation within 6 hours of 2026-01-18T05:00Z', async () => {
      const ws = workspace({ 'metrics/sessions.prom': 'seasonal.prom' });
      const { artifact } = await run('forecast', ws, { limit: 200, horizon: '7d' });
      const f = (artifact.data as ForecastData).forecasts[0]!;
      assert.equal(f.series, 'sessions_active{service="web"}');
      assert.deepEqual(f.season && [f.season.points, f.season.from], [24, 'autocorrelation']);
      assert.equal(f.chosen, 'holt-winters');
      const [lin, hw] = f.scores;
      assert.ok(hw!.mape! < 3 && hw!.mae < lin!.mae / 2, JSON.stringify(f.scores));
      assert.equal(f.horizon.points, 168);
      assert.ok(hoursOff(f.saturation.at, '2026-01-18T05:00:00.000Z') <= 6, `${f.saturation.at}`);
      assert.deepEqual(artifact.findingsAfter, { count: 1, maxSeverity: 3 }, 'saturation inside the 7-day horizon');
      assert.match(artifact.text ?? '', /\| holt-winters \(chosen\) \|/);
    });

    it('the clean twin: a flat series never reaches the limit, nothing raised', async () => {
      const ws = workspace({ 'metrics/disk.csv': 'flat.csv' });
      const { artifact } = await run('forecast', ws, { limit: 200 });
      const f = (artifact.data as ForecastData).forecasts[0]!;
      assert.equal(f.saturation.status, 'not within the search');
      assert.equal(f.saturation.searchedSteps, 2000);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
      assert.ok(artifact.confidence >= 0.75);
    });

    it('input.series as [ts, v] pairs, no limit: the forecast says "no limit given"', async () => {
      const series = Array.from({ length: 30 }, (_, i) => [new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString(), 10 + i]);
      const { artifact } = await run('forecast', undefined, { series, horizon: 10 });
      const f = (artifact.data as ForecastData).forecasts[0]!;
      assert.equal(f.series, 'input.series');
      assert.equal(f.saturation.status, 'no limit given');
      assert.equal(f.forecast.length, 10);
      assert.equal(f.forecast[9]!.value, 49);
      assert.equal(f.forecast[9]!.time, '2026-02-09T00:00:00.000Z');
    });

    it('bad input is needs_input naming the field (and the file and line); no data in the workspace is not applicable', async () => {
      const bad = await run('forecast', undefined, { series: [[1, 2], ['x', 3]] });
      assert.deepEqual([bad.artifact.needsInput?.field, bad.artifact.unable], ['series', 'input.series[1] is not a [timestamp, value] pair with a readable time and a number']);
      const ws = workspace();
      writeFileSync(path.join(ws, 'broken.csv'), 'timestamp,x\nnot-a-time,1\n');
      const file = await run('forecast', ws, { metrics: 'broken.csv' });
      assert.equal(file.artifact.needsInput?.field, 'metrics');
      assert.match(file.artifact.unable ?? '', /^broken\.csv:2: /);
      const outside = await run('forecast', ws, { metrics: '/etc/passwd' });
      assert.match(outside.artifact.unable ?? '', /^input\.metrics: \/etc\/passwd is outside the workspace; not read$/);
      const limit = await run('forecast', ws, { series: [1, 2, 3, 4, 5, 6, 7, 8], limit: 'lots' });
      assert.equal(limit.artifact.needsInput?.field, 'limit');
      const untimed = await run('forecast', ws, { series: '1,2,3,4,5,6,7,8,9,10', horizon: '2d' });
      assert.deepEqual([untimed.artifact.needsInput?.field, untimed.artifact.unable], ['horizon', 'input.horizon is a duration but the series has no timestamps: give the horizon in points']);
      const few = await run('forecast', ws, { series: '1,2,3' });
      assert.deepEqual([few.artifact.needsInput?.field, few.artifact.unable], ['series', 'input.series (input.series) has 3 point(s); a forecast needs at least 8']);
      writeFileSync(path.join(ws, 'two.csv'), 'timestamp,short,long\n' + Array.from({ length: 12 }, (_, i) => `2026-01-01T${String(i).padStart(2, '0')}:00:00Z,${i < 3 ? i : ''},${i}`).join('\n') + '\n');
      const mixed = await run('forecast', ws, { metrics: 'two.csv' });
      assert.deepEqual((mixed.artifact.data as ForecastData).forecasts.map((f) => f.series), ['long']);
      assert.deepEqual((mixed.artifact.data as ForecastData).notes, ['short (two.csv): 3 point(s), fewer than 8: not forecast']);
      const none = await run('forecast', ws);
      assert.equal(none.artifact.notApplicable, 'no metric series to forecast: looked for input.series, input.metrics, metrics/, *.prom');
    });
  });

  describe('recommend', () => {
    it('from the previous forecast step: scale by the time the upper bound crosses the target utilisation minus the lead time, with the arithmetic', async () => {
      const ws = workspace({ 'metrics/disk.csv': 'linear.csv' });
      const fc = await run('forecast', ws, { limit: 200, horizon: '7d' });
      const prev: StepSummary = { step: 0, agentId: 'capacity-ai', action: 'forecast', passed: true, confidence: fc.artifact.confidence, summary: fc.artifact.summary, data: fc.artifact.data };
      const { proposed, artifact } = await run('recommend', ws, { headroom: 90, leadTime: '12h', unitCapacity: 50 }, [prev]);
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => p.kind), ['analyze'], 'nothing read: the forecast is the previous step\'s');
      const d = artifact.data as RecommendData;
      assert.equal(d.forecastFrom, 'step 0 (capacity-ai forecast)');
      const r = d.recommendations[0]!;
      assert.equal(r.action, 'scale by');
      // The line 50 + 0.5 i reaches 0.9 x 200 = 180 at i = 260, about 60 steps after the last point (i = 199); its upper bound a little earlier.
      const f = d.forecasts[0]!;
      const crossing = f.forecast.find((x) => x.upper >= 180)!;
      assert.ok(crossing.step > 50 && crossing.step <= 61, String(crossing.step));
      assert.equal(r.scaleBy, new Date(Date.parse(crossing.time!) - 12 * H).toISOString());
      assert.equal(r.neededCapacity, Math.round((r.peak.value / 0.9) * 1000) / 1000);
      assert.deepEqual(r.instances, { unitCapacity: 50, current: 4, needed: Math.ceil(r.neededCapacity / 50), add: Math.ceil(r.neededCapacity / 50) - 4 });
      assert.match(r.arithmetic.join('\n'), /capacity needed = peak \/ target utilisation = [\d.]+ \/ 0\.9 = [\d.]+/);
      assert.equal(recommendSkill.outputSchema!.safeParse(d).success, true);
    });

    it('the clean twin needs no scaling; without a limit it needs input naming limit', async () => {
      const ws = workspace({ 'metrics/disk.csv': 'flat.csv' });
      const ok = await run('recommend', ws, { limit: 200 });
      const r = (ok.artifact.data as RecommendData).recommendations[0]!;
      assert.equal(r.action, 'no scaling needed');
      assert.deepEqual(ok.artifact.findingsAfter, { count: 0, maxSeverity: 0 });
      const none = await run('recommend', ws, {});
      assert.equal(none.artifact.needsInput?.field, 'limit');
    });
  });
});
