/**
 * success-ai `health` [ULTRA]: a tenant's health score 0..100 from the store (engine/governance/
 * success-facts.ts hands the facts in): four components, each with its data, weight and reason.
 *
 *  - usage (0.3): days with activity over the window (active half the days scores full: 70%) and
 *    distinct agents used (three or more: 30%);
 *  - failures (0.3): the failed share of ended executions (none: 100, half or more: 0);
 *  - approvals (0.2): the median wait for a decision (an hour or less: 100, a day or more: 0, log
 *    scale between), pending ones counted at their age so far;
 *  - feedback (0.2): the share of ratings that are good.
 *
 * A component without data (no approvals asked, no rating given) is left out and its weight shared
 * by the others, saying so; a window without any execution is `inactive` with score 0.
 */
import type { SuccessFacts } from '../../engine/governance/success-facts';
import type { Skill } from '../../engine/rigor/skill';
import { factsOf, factsPhases, humanAge, round } from '../governance/facts';
import { healthDataSchema, healthInputSchema } from './schemas';

const KIND = 'health-score';
const LABEL = 'success-ai health';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface HealthComponent { name: 'usage' | 'failures' | 'approvals' | 'feedback'; weight: number; score: number | null; data: Record<string, unknown>; reason: string }
export interface HealthData { asOf: string; since: string; days: number; score: number; status: 'healthy' | 'at risk' | 'unhealthy' | 'inactive'; components: HealthComponent[]; reasons: string[] }

export const WEIGHTS = { usage: 0.3, failures: 0.3, approvals: 0.2, feedback: 0.2 } as const;

export function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function health(f: SuccessFacts): HealthData {
  const now = Date.parse(f.asOf);
  const days = 'days' in f.window ? f.window.days : f.window.weeks * 7;
  const ex = f.executions;
  const activeDays = new Set(ex.map((e) => e.createdAt.slice(0, 10))).size;
  const agents = new Set(ex.flatMap((e) => e.agents));
  const usageScore = ex.length ? round(100 * (0.7 * Math.min(1, activeDays / Math.max(1, days / 2)) + 0.3 * Math.min(1, agents.size / 3)), 1) : 0;
  const usage: HealthComponent = {
    name: 'usage', weight: WEIGHTS.usage, score: usageScore,
    data: { executions: ex.length, perDay: round(ex.length / days, 2), activeDays, days, activeAgents: agents.size, agents: [...agents].sort() },
    reason: ex.length ? `${ex.length} execution(s) on ${activeDays} of ${days} day(s) (${round(ex.length / days, 2)} a day), ${agents.size} agent(s) used` : `no execution in the last ${days} day(s)`,
  };
  const ended = ex.filter((e) => e.status === 'completed' || e.status === 'failed');
  const failed = ended.filter((e) => e.status === 'failed').length;
  const failShare = ended.length ? failed / ended.length : null;
  const failures: HealthComponent = {
    name: 'failures', weight: WEIGHTS.failures, score: failShare === null ? null : round(100 * Math.max(0, 1 - 2 * failShare), 1),
    data: { ended: ended.length, failed, failedShare: failShare === null ? null : round(failShare), cancelled: ex.filter((e) => e.status === 'cancelled').length },
    reason: failShare === null ? 'no execution ended in the window' : `${failed} of ${ended.length} ended execution(s) failed (${round(failShare * 100, 1)}%)`,
  };
  const waits = f.approvals.map((a) => (a.decidedAt ? Date.parse(a.decidedAt) : now) - Date.parse(a.requestedAt)).filter((w) => Number.isFinite(w) && w >= 0);
  const med = median(waits);
  const pending = f.approvals.filter((a) => a.status === 'pending');
  const overDay = pending.filter((a) => now - Date.parse(a.requestedAt) >= DAY).length;
  const waitScore = med === null ? null : med <= HOUR ? 100 : med >= DAY ? 0 : round(100 * (1 - Math.log(med / HOUR) / Math.log(DAY / HOUR)), 1);
  const approvals: HealthComponent = {
    name: 'approvals', weight: WEIGHTS.approvals, score: waitScore,
    data: { asked: f.approvals.length, pending: pending.length, pendingOverADay: overDay, medianWaitMs: med, medianWait: med === null ? null : humanAge(med), decided: f.approvals.filter((a) => a.decidedAt).length },
    reason: med === null ? 'no approval asked in the window' : `${f.approvals.length} approval(s) asked, median wait ${humanAge(med)}${pending.length ? `, ${pending.length} still pending${overDay ? ` (${overDay} for more than a day)` : ''}` : ''}`,
  };
  const good = f.feedback.filter((x) => x.good).length;
  const feedback: HealthComponent = {
    name: 'feedback', weight: WEIGHTS.feedback, score: f.feedback.length ? round((100 * good) / f.feedback.length, 1) : null,
    data: { ratings: f.feedback.length, good, bad: f.feedback.length - good },
    reason: f.feedback.length ? `${good} of ${f.feedback.length} rating(s) good` : 'no rating given in the window',
  };
  const components = [usage, failures, approvals, feedback];
  const scored = components.filter((c) => c.score !== null);
  const total = scored.reduce((n, c) => n + c.weight, 0);
  const score = ex.length === 0 ? 0 : round(scored.reduce((n, c) => n + c.weight * c.score!, 0) / total, 1);
  const status: HealthData['status'] = ex.length === 0 ? 'inactive' : score >= 80 ? 'healthy' : score >= 50 ? 'at risk' : 'unhealthy';
  const left = components.filter((c) => c.score === null).map((c) => c.name);
  const reasons = [
    ...components.map((c) => `${c.name}${c.score === null ? ' (not scored)' : ` ${c.score}/100 x ${c.weight}`}: ${c.reason}`),
    ...(left.length && ex.length ? [`${left.join(' and ')} had no data: their weight was shared by the other components`] : []),
  ];
  return { asOf: f.asOf, since: f.since, days, score, status, components, reasons };
}

export function renderHealth(d: HealthData): string {
  return ['# success-ai health', '', `Score ${d.score}/100 (${d.status}) over the last ${d.days} day(s), as of ${d.asOf}.`, '',
    '| component | weight | score | why |', '|---|---:|---:|---|', ...d.components.map((c) => `| ${c.name} | ${c.weight} | ${c.score ?? 'n/a'} | ${c.reason} |`), '',
    ...d.reasons.slice(4).map((r) => `${r}.`)].join('\n');
}

export const healthSkill: Skill = {
  agentId: 'success-ai',
  action: 'health',
  inputSchema: healthInputSchema,
  outputSchema: healthDataSchema,
  ...factsPhases<SuccessFacts>({
    kind: KIND, label: LABEL, facts: factsOf('health'),
    evidence: (f) => [{ source: 'engine: store', detail: `${f.executions.length} execution(s), ${f.approvals.length} approval(s), ${f.feedback.length} rating(s) since ${f.since}`, weight: 0.8 }],
    report(ctx, f) {
      const d = health(f);
      // The more components have data, the more the score says.
      const confidence = round(0.5 + 0.45 * (d.components.filter((c) => c.score !== null).length / d.components.length), 2);
      ctx.progress(100, confidence);
      const summary = `health ${d.score}/100 (${d.status}) over ${d.days} day(s): ${d.components.map((c) => `${c.name} ${c.score ?? 'n/a'}`).join(', ')}`;
      return { kind: KIND, summary, goalRef: ctx.request.goal.id, confidence, data: d, text: renderHealth(d), tokens: 0 };
    },
  }),
  propose() {
    return [{ kind: 'analyze', description: "score the tenant's activity the engine handed in" }];
  },
};
