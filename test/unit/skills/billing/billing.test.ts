import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import { analyticsSkill, fitLine, forecastDaily, isoWeek, usageSkill, type AnalyticsData, type DayCount, type UsageData, type UsageFacts } from '../../../../server/src/skills/billing/index';
import { runSkill, skillContext } from '../../../support/skill-context';

const FACTS = JSON.parse(readFileSync(path.resolve(__dirname, '../../../fixtures/billing/usage-facts.json'), 'utf8')) as UsageFacts;

function run(action: 'usage' | 'analytics', input: Record<string, unknown>, executionId = 'act_self') {
  const c = skillContext({ agentId: 'billing-ai', action, input, tier: 'pro' });
  c.request.executionId = executionId;
  return runSkill(action === 'usage' ? usageSkill : analyticsSkill, c);
}

/** Facts of `counts[i]` executions on day i from 2026-02-01, all metered. */
function series(counts: number[]): UsageFacts {
  const executions = counts.flatMap((n, d) => Array.from({ length: n }, (_, i) => ({
    id: `t${d}_${i}`, kind: 'task', status: 'completed', owner: 'k', createdAt: new Date(Date.UTC(2026, 1, 1 + d, 8, i % 60)).toISOString(), completedAt: null,
    agents: ['observe-ai'], intelligence: 'core', capabilities: ['OPERATE'], project: '/p', tokens: 10,
  })));
  return { asOf: new Date(Date.UTC(2026, 1, counts.length, 20)).toISOString(), executions };
}

describe('billing-ai skills', () => {
  it('are the embedded skills of billing-ai usage and analytics', () => {
    assert.ok(skills.includes(usageSkill));
    assert.ok(skills.includes(analyticsSkill));
  });

  describe('usage', () => {
    it('counts executions per agent, tier, capability, project and key with their tokens; the asking execution is left out; older summaries count as unknown, said so', async () => {
      const { artifact, proposed } = await run('usage', { usage: FACTS });
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => p.kind), ['analyze']);
      const u = artifact.data as UsageData;
      assert.equal(u.executions.total, 5);
      assert.deepEqual(u.excluded, { self: 'act_self', outsideWindow: 0 });
      const pick = (l: Array<{ key: string; executions: number; tokens: number }>) => l.map((c) => [c.key, c.executions, c.tokens]);
      assert.deepEqual(pick(u.byAgent), [['cost-ai', 2, 0], ['coder-ai', 1, 1200], ['planner-ai', 1, 1200], ['req-ai', 1, 1200], ['observe-ai', 1, 0], ['unknown', 1, 0]]);
      assert.deepEqual(pick(u.byTier), [['pro', 2, 1200], ['core', 1, 0], ['ultra', 1, 0], ['unknown', 1, 0]]);
      assert.deepEqual(pick(u.byCapability), [['(none: direct action or workflow)', 2, 0], ['BUILD', 1, 1200], ['OPERATE', 1, 0], ['unknown', 1, 0]]);
      assert.deepEqual(pick(u.byProject), [['/srv/api', 2, 1200], ['/srv/infra', 2, 0], ['unknown', 1, 0]]);
      assert.deepEqual(pick(u.byOwner), [['k1', 3, 1200], ['k2', 2, 0]]);
      assert.deepEqual(u.tokens, { total: 1200, executionsWithModel: 1, notReported: 2 });
      assert.equal(u.unknown.executions, 1);
      assert.match(u.unknown.note ?? '', /summarised before Cadre kept metering facts/);
      assert.ok(artifact.confidence >= 0.75 && artifact.confidence < 0.9, String(artifact.confidence));
      assert.match(artifact.summary, /^5 execution\(s\): by agent cost-ai 2, coder-ai 1, planner-ai 1; by tier pro 2, core 1, ultra 1; .*1 stored before metering, counted as unknown$/);
      assert.equal(usageSkill.outputSchema!.safeParse(u).success, true);
    });

    it('a window (since/until, a day includes all of it) meters only what was created in it', async () => {
      const { artifact } = await run('usage', { usage: FACTS, since: '2026-03-03', until: '2026-03-03' });
      const u = artifact.data as UsageData;
      assert.deepEqual([u.executions.total, u.excluded.outsideWindow, u.window], [2, 3, { since: '2026-03-03T00:00:00.000Z', until: '2026-03-03T23:59:59.999Z' }]);
    });

    it('nothing to meter is not applicable, saying where it looked; no facts from the engine is unable; a bad window needs input', async () => {
      const empty = await run('usage', { usage: { asOf: FACTS.asOf, executions: [FACTS.executions[5]] } });
      assert.equal(empty.artifact.notApplicable, "no execution to meter: looked in Cadre's execution store (the summaries the engine hands in as input.usage) (1 execution(s), this one left out)");
      const none = await run('usage', {});
      assert.match(none.artifact.unable ?? '', /^no usage facts: the engine hands billing-ai/);
      assert.equal(none.artifact.needsInput, undefined);
      assert.deepEqual(none.proposed, []);
      const bad = await run('usage', { usage: FACTS, since: 'last tuesday' });
      assert.deepEqual([bad.artifact.unable, bad.artifact.needsInput], ['input.since must be a date (2026-03-01) or an ISO time', { field: 'since' }]);
    });
  });

  describe('analytics', () => {
    it('a least-squares line recovers a known line exactly, with no error', () => {
      const f = fitLine([3, 5, 7, 9, 11]);
      assert.deepEqual([f.slope, f.intercept, f.r2, f.residualStdError], [2, 3, 1, 0]);
    });

    it('the forecast of a noisy line is within its stated error, and the held-out error is measured on days it did not see', () => {
      // y = 10 + 0.5 x + a known +-1 alternation: residual standard error sqrt(sum e^2 / (n - 2)) ~ 1.
      const counts = Array.from({ length: 20 }, (_, x) => 10 + 0.5 * x + (x % 2 ? 1 : -1));
      const daily: DayCount[] = counts.map((n, i) => ({ day: `2026-02-${String(i + 1).padStart(2, '0')}`, executions: n, completed: n, failed: 0, tokens: 0 }));
      const f = forecastDaily(daily, 7);
      assert.ok(Math.abs(f.fit.slope - 0.5) < 0.05, String(f.fit.slope));
      assert.ok(f.fit.residualStdError > 0.8 && f.fit.residualStdError < 1.3, String(f.fit.residualStdError));
      assert.equal(f.points.length, 7);
      assert.equal(f.points[0]!.day, '2026-02-21');
      const truth = 10 + 0.5 * 26; // day index 26 = 2026-02-27
      const last = f.points[6]!;
      assert.ok(last.low <= truth && truth <= last.high, `${truth} in ${last.low}..${last.high}`);
      assert.ok(Math.abs(last.executions - truth) < 1, String(last.executions));
      assert.deepEqual(f.heldOut?.days, 4);
      assert.ok(f.heldOut!.mae < 2, String(f.heldOut!.mae));
    });

    it('ISO weeks', () => {
      assert.equal(isoWeek('2026-01-01'), '2026-W01');
      assert.equal(isoWeek('2025-12-29'), '2026-W01');
      assert.equal(isoWeek('2027-01-01'), '2026-W53');
      assert.equal(isoWeek('2026-03-09'), '2026-W11');
    });

    it('daily and weekly counts zero-fill quiet days, the trend says rising, the forecast extends the line', async () => {
      const counts = [2, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
      const { artifact } = await run('analytics', { usage: series(counts), horizon: 3 });
      const a = artifact.data as AnalyticsData;
      assert.equal(a.total, counts.reduce((x, y) => x + y, 0));
      assert.deepEqual(a.daily.map((d) => d.executions), counts);
      assert.equal(a.daily[1]!.day, '2026-02-02');
      assert.deepEqual(a.weekly.map((w) => [w.week, w.executions]), [['2026-W05', 2], ['2026-W06', 0 + 4 + 5 + 6 + 7 + 8 + 9], ['2026-W07', 10 + 11 + 12 + 13 + 14 + 15]]);
      assert.deepEqual(a.weeklyByAgent, [{ agent: 'observe-ai', weeks: a.weekly.map((w) => ({ week: w.week, executions: w.executions })) }]);
      assert.equal(a.trend!.direction, 'rising');
      assert.deepEqual([a.trend!.lastWeek, a.trend!.weekBefore], [9 + 10 + 11 + 12 + 13 + 14 + 15, 2 + 0 + 4 + 5 + 6 + 7 + 8]);
      assert.deepEqual(a.forecast!.points.map((p) => p.day), ['2026-02-15', '2026-02-16', '2026-02-17']);
      assert.ok(a.forecast!.points[0]!.executions > 15 && a.forecast!.points[0]!.executions < 18, String(a.forecast!.points[0]!.executions));
      assert.ok(artifact.confidence >= 0.75);
      assert.equal(analyticsSkill.outputSchema!.safeParse(a).success, true);
      assert.match(artifact.summary, /trend rising/);
    });

    it('fewer than 3 days: no forecast, and it says why (less confident)', async () => {
      const { artifact } = await run('analytics', { usage: series([3, 4]) });
      const a = artifact.data as AnalyticsData;
      assert.equal(a.forecast, null);
      assert.equal(a.forecastNote, 'no forecast: 2 day(s) of data, a line needs 3 to state its error');
      assert.ok(artifact.confidence < 0.75);
      const bad = await run('analytics', { usage: series([3, 4]), horizon: 0 });
      assert.deepEqual(bad.artifact.needsInput, { field: 'horizon' });
    });
  });
});
