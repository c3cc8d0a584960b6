/**
 * success-ai `engagement` [ULTRA]: weekly trends of a tenant over the last N weeks (executions,
 * distinct agents, failure rate, approvals asked, ratings), with the data of every week. Weeks before
 * the tenant's first execution are shown but not trended (they did not exist yet, they are not
 * zero use); fewer than three weeks of history says "not enough history" instead of a trend.
 */
import type { SuccessFacts } from '../../engine/governance/success-facts';
import type { Skill } from '../../engine/rigor/skill';
import { factsOf, factsPhases, round } from '../governance/facts';
import { engagementDataSchema, engagementInputSchema } from './schemas';

const KIND = 'engagement-trends';
const LABEL = 'success-ai engagement';
const WEEK = 7 * 86_400_000;
/** Weeks of history a trend needs. */
export const MIN_TREND_WEEKS = 3;

export interface WeekRow { from: string; to: string; beforeFirstActivity: boolean; executions: number; agents: number; failed: number; failureRate: number | null; approvals: number; ratings: number; goodRatings: number }
export interface Trend { direction: 'rising' | 'falling' | 'flat'; perWeek: number; first: number; last: number }
export interface EngagementData {
  asOf: string; since: string; weeks: number; firstActivity: string | null; enoughHistory: boolean; note: string | null;
  series: WeekRow[];
  trends: { executions: Trend | null; agents: Trend | null; failureRate: Trend | null; approvals: Trend | null; ratings: Trend | null };
}

/** Least-squares slope per week; direction by the slope relative to the mean (10% a week). */
export function trendOf(values: number[]): Trend | null {
  if (values.length < MIN_TREND_WEEKS) return null;
  const n = values.length;
  const mx = (n - 1) / 2;
  const my = values.reduce((a, b) => a + b, 0) / n;
  let sxy = 0, sxx = 0;
  values.forEach((y, x) => { sxy += (x - mx) * (y - my); sxx += (x - mx) ** 2; });
  const slope = sxx ? sxy / sxx : 0;
  const rel = my === 0 ? (slope === 0 ? 0 : Math.sign(slope)) : slope / Math.abs(my);
  return { direction: rel > 0.1 ? 'rising' : rel < -0.1 ? 'falling' : 'flat', perWeek: round(slope, 3), first: round(values[0]!, 3), last: round(values[n - 1]!, 3) };
}

export function engagement(f: SuccessFacts): EngagementData {
  const weeks = 'weeks' in f.window ? f.window.weeks : Math.ceil(f.window.days / 7);
  const end = Date.parse(f.asOf);
  const first = f.firstActivity ? Date.parse(f.firstActivity) : null;
  const series: WeekRow[] = [];
  for (let i = weeks - 1; i >= 0; i--) {
    const to = end - i * WEEK, from = to - WEEK;
    const inW = (t: string): boolean => { const x = Date.parse(t); return x >= from && x < to; };
    const ex = f.executions.filter((e) => inW(e.createdAt));
    const ended = ex.filter((e) => e.status === 'completed' || e.status === 'failed');
    const failed = ended.filter((e) => e.status === 'failed').length;
    const fb = f.feedback.filter((x) => inW(x.at));
    series.push({
      from: new Date(from).toISOString(), to: new Date(to).toISOString(), beforeFirstActivity: first === null || first >= to,
      executions: ex.length, agents: new Set(ex.flatMap((e) => e.agents)).size, failed, failureRate: ended.length ? round(failed / ended.length) : null,
      approvals: f.approvals.filter((a) => inW(a.requestedAt)).length, ratings: fb.length, goodRatings: fb.filter((x) => x.good).length,
    });
  }
  const lived = series.filter((w) => !w.beforeFirstActivity);
  const enoughHistory = lived.length >= MIN_TREND_WEEKS;
  const t = (pick: (w: WeekRow) => number | null): Trend | null => {
    if (!enoughHistory) return null;
    const vals = lived.map(pick).filter((v): v is number => v !== null);
    return trendOf(vals);
  };
  const note = first === null ? 'not enough history: this tenant has no execution yet'
    : !enoughHistory ? `not enough history: ${lived.length} week(s) since the first execution (${f.firstActivity}); a trend needs at least ${MIN_TREND_WEEKS}`
    : null;
  return {
    asOf: f.asOf, since: f.since, weeks, firstActivity: f.firstActivity, enoughHistory, note, series,
    trends: { executions: t((w) => w.executions), agents: t((w) => w.agents), failureRate: t((w) => w.failureRate), approvals: t((w) => w.approvals), ratings: t((w) => w.ratings) },
  };
}

export function renderEngagement(d: EngagementData): string {
  const tr = (name: string, x: Trend | null) => `- ${name}: ${x ? `${x.direction} (${x.perWeek} a week, ${x.first} -> ${x.last})` : 'n/a'}`;
  return ['# success-ai engagement', '', `Last ${d.weeks} week(s) as of ${d.asOf}.${d.note ? ` ${d.note}.` : ''}`, '', '## Trends', '',
    tr('executions', d.trends.executions), tr('agents', d.trends.agents), tr('failure rate', d.trends.failureRate), tr('approvals', d.trends.approvals), tr('ratings', d.trends.ratings), '',
    '## Weeks', '', '| week from | executions | agents | failed | failure rate | approvals | ratings (good) |', '|---|---:|---:|---:|---:|---:|---:|',
    ...d.series.map((w) => `| ${w.from.slice(0, 10)}${w.beforeFirstActivity ? ' (before first use)' : ''} | ${w.executions} | ${w.agents} | ${w.failed} | ${w.failureRate ?? ''} | ${w.approvals} | ${w.ratings} (${w.goodRatings}) |`)].join('\n');
}

export const engagementSkill: Skill = {
  agentId: 'success-ai',
  action: 'engagement',
  inputSchema: engagementInputSchema,
  outputSchema: engagementDataSchema,
  ...factsPhases<SuccessFacts>({
    kind: KIND, label: LABEL, facts: factsOf('engagement'),
    evidence: (f) => [{ source: 'engine: store', detail: `${f.executions.length} execution(s), ${f.approvals.length} approval(s), ${f.feedback.length} rating(s) since ${f.since}`, weight: 0.8 }],
    report(ctx, f) {
      const d = engagement(f);
      // The weekly counts are the store's; trends over more lived weeks say more. Without enough history
      // the report claims no trend, only the data, which is as sure as the store.
      const lived = d.series.filter((w) => !w.beforeFirstActivity).length;
      const confidence = round(d.enoughHistory ? 0.7 + 0.25 * Math.min(1, lived / 8) : 0.7, 2);
      ctx.progress(100, confidence);
      const e = d.trends.executions;
      const summary = d.enoughHistory
        ? `over ${lived} week(s): executions ${e?.direction ?? 'n/a'} (${e?.first} -> ${e?.last}), agents ${d.trends.agents?.direction ?? 'n/a'}, failure rate ${d.trends.failureRate?.direction ?? 'n/a'}, ratings ${d.trends.ratings?.direction ?? 'n/a'}`
        : `${d.note}; ${d.series.reduce((n, w) => n + w.executions, 0)} execution(s) in the last ${d.weeks} week(s)`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderEngagement(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'analyze', description: "trend the tenant's weekly activity the engine handed in" }];
  },
};
