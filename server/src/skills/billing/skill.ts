/**
 * billing-ai's embedded skills [PRO], deterministic (no model, no file, no network):
 *
 *  - `usage` (the default action): executions per agent, tier, capability, project, owner key, kind and
 *    status, with the model tokens (usage.ts).
 *  - `analytics`: per day and ISO week, the trend and a least-squares forecast with its error (analytics.ts).
 *
 * Both meter the facts the engine hands in as `input.usage` (the skill may not read Cadre's data
 * directory), for the window `input.since` .. `input.until`; the execution asking is left out (it is
 * still running). No execution in the window is not applicable, saying so.
 */
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { analyze, type Analytics } from './analytics';
import { analyticsDataSchema, usageDataSchema } from './schemas';
import { meter, selectRows, UNKNOWN_NOTE, usageFactsOf, windowOf, type Count, type UsageFacts, type UsageReport, type Window } from './usage';
import { billingInputSchema } from '../operate-inputs';

export type UsageData = UsageReport;
export type AnalyticsData = Analytics & { asOf: string; window: Window; total: number; unknown: UsageReport['unknown']; excluded: UsageReport['excluded'] };

const LOOKED_AT = "Cadre's execution store (the summaries the engine hands in as input.usage)";

/** Calibrated on the evidence: complete metering facts are confident; executions stored before metering lower it in proportion. */
export function billingConfidence(total: number, unknown: number, forecastMissing = false): number {
  const knownShare = total ? (total - unknown) / total : 1;
  const base = forecastMissing ? 0.7 : 0.9;
  return Math.round(base * (0.6 + 0.4 * knownShare) * 100) / 100;
}

const top = (list: Count[], n = 3) => list.slice(0, n).map((c) => `${c.key} ${c.executions}`).join(', ');
const windowText = (w: Window) => (w.since || w.until ? ` from ${w.since ?? 'the start'} to ${w.until ?? 'now'}` : '');

export function renderUsage(u: UsageReport): string {
  const table = (title: string, list: Count[]) => [`## ${title}`, '', '| | executions | tokens |', '|---|---:|---:|', ...list.map((c) => `| ${c.key} | ${c.executions} | ${c.tokens} |`), ''];
  return [
    '# billing-ai usage', '', `${u.executions.total} execution(s)${windowText(u.window)} as of ${u.asOf}; ${u.tokens.total} model token(s) in ${u.tokens.executionsWithModel} of them.`, '',
    ...(u.unknown.executions ? [`${u.unknown.executions} execution(s) ${u.unknown.note}.`, ''] : []),
    ...table('By agent', u.byAgent), ...table('By intelligence tier', u.byTier), ...table('By capability', u.byCapability),
    ...table('By project', u.byProject), ...table('By key', u.byOwner), ...table('By status', u.executions.byStatus), ...table('By kind', u.executions.byKind),
  ].join('\n');
}

export function renderAnalytics(a: AnalyticsData): string {
  const out = ['# billing-ai analytics', '', `${a.total} execution(s) over ${a.daily.length} day(s)${windowText(a.window)}.`, ''];
  if (a.trend) out.push(`Trend: ${a.trend.direction} (${a.trend.perDay} a day)${a.trend.weekOverWeek !== null ? `; last 7 days ${a.trend.lastWeek} vs ${a.trend.weekBefore} before (${(a.trend.weekOverWeek * 100).toFixed(1)}%)` : ''}.`, '');
  out.push('## Per week', '', ...a.weekly.map((w) => `- ${w.week}: ${w.executions} execution(s), ${w.tokens} token(s)`), '');
  if (a.weeklyByAgent.length) out.push('## Per week and agent', '', `| agent | ${a.weekly.map((w) => w.week).join(' | ')} |`, `|---|${a.weekly.map(() => '---:').join('|')}|`, ...a.weeklyByAgent.map((x) => `| ${x.agent} | ${x.weeks.map((w) => w.executions).join(' | ')} |`), '');
  out.push('## Per day', '', ...a.daily.map((d) => `- ${d.day}: ${d.executions} (${d.completed} completed, ${d.failed} failed), ${d.tokens} token(s)`), '');
  if (a.forecast) {
    const f = a.forecast;
    out.push('## Forecast', '', `${f.method}: executions = ${f.fit.intercept} + ${f.fit.slope} x day (n ${f.fit.n}, R² ${f.fit.r2 ?? 'n/a'}, residual standard error ${f.fit.residualStdError})${f.heldOut ? `; mean absolute error ${f.heldOut.mae} on the last ${f.heldOut.days} day(s) held out` : ''}.`, '',
      ...f.points.map((p) => `- ${p.day}: ${p.executions} (95%: ${p.low} .. ${p.high})`));
  } else out.push(a.forecastNote ?? '');
  return out.join('\n');
}

function makeBillingSkill(action: 'usage' | 'analytics'): Skill {
  const kind = action === 'usage' ? 'billing-usage' : 'billing-analytics';
  const prepared = new WeakMap<Evidence, UsageFacts>();
  return {
    agentId: 'billing-ai',
    action,
    inputSchema: billingInputSchema,
    outputSchema: action === 'usage' ? usageDataSchema : analyticsDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const facts = usageFactsOf(ctx.request.input['usage']);
      if ('error' in facts) { evidence.constraints.push(facts.error); return evidence; }
      prepared.set(evidence, facts);
      const unknown = facts.executions.filter((r) => !Array.isArray(r.agents)).length;
      evidence.items.push({ source: 'engine: execution summaries', detail: `${facts.executions.length} execution(s) as of ${facts.asOf}${unknown ? `, ${unknown} ${UNKNOWN_NOTE}` : ''}`, weight: 0.9 });
      ctx.progress(40, 0.6);
      return evidence;
    },
    propose(_ctx, evidence) {
      return prepared.has(evidence) ? [{ kind: 'analyze', description: "meter Cadre's executions from the store summaries the engine handed in" }] : [];
    },
    async generate(ctx: SkillContext, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const input = ctx.request.input;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `billing-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      const facts = prepared.get(evidence) ?? usageFactsOf(input['usage']);
      if ('error' in facts) return unable(facts.error);
      const w = windowOf(input);
      if ('error' in w) return unable(w.error, w.field);
      const horizonRaw = input['horizon'];
      const horizon = horizonRaw === undefined || horizonRaw === '' ? 7 : Number(horizonRaw);
      if (!Number.isInteger(horizon) || horizon < 1 || horizon > 366) return unable('input.horizon must be a whole number of days, 1..366', 'horizon');
      const self = ctx.request.executionId ?? null;
      const sel = selectRows(facts, self, w.from, w.to);
      const excluded = { self: sel.selfSeen ? self : null, outsideWindow: sel.outside };
      if (!sel.rows.length) {
        const why = `no execution to meter${windowText(w.window)}: looked in ${LOOKED_AT} (${facts.executions.length} execution(s)${sel.selfSeen ? ', this one left out' : ''}${sel.outside ? `, ${sel.outside} outside the window` : ''})`;
        return { kind, summary: `billing-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const u = meter(facts, sel.rows, w.window, excluded);
      if (action === 'usage') {
        const confidence = billingConfidence(u.executions.total, u.unknown.executions);
        ctx.progress(100, confidence);
        const summary = `${u.executions.total} execution(s)${windowText(u.window)}: by agent ${top(u.byAgent)}; by tier ${top(u.byTier)}; by capability ${top(u.byCapability)}; ${u.tokens.total} model token(s)${u.unknown.executions ? `; ${u.unknown.executions} stored before metering, counted as unknown` : ''}`;
        return { kind, summary, goalRef, confidence, data: u, text: renderUsage(u), tokens: 0, findingsAfter: { count: 0, maxSeverity: 0 } };
      }
      // Quiet days count up to the window's end, never past now (the future has no data yet).
      const asOf = Date.parse(facts.asOf);
      const a = analyze(sel.rows, horizon, w.window.until ? Math.min(Date.parse(w.window.until), asOf) : asOf);
      const data: AnalyticsData = { ...a, asOf: facts.asOf, window: w.window, total: sel.rows.length, unknown: u.unknown, excluded };
      const confidence = billingConfidence(u.executions.total, u.unknown.executions, !a.forecast);
      ctx.progress(100, confidence);
      const f = a.forecast;
      const summary = `${data.total} execution(s) over ${a.daily.length} day(s), ${a.weekly.length} week(s); trend ${a.trend?.direction ?? 'n/a'} (${a.trend?.perDay ?? 0}/day); ${f
        ? `forecast ${f.points[f.points.length - 1]!.day}: ${f.points[f.points.length - 1]!.executions} a day (95% ${f.points[f.points.length - 1]!.low} .. ${f.points[f.points.length - 1]!.high}), residual standard error ${f.fit.residualStdError}${f.heldOut ? `, held-out MAE ${f.heldOut.mae}` : ''}`
        : a.forecastNote}`;
      return { kind, summary, goalRef, confidence, data, text: renderAnalytics(data), tokens: 0, findingsAfter: { count: 0, maxSeverity: 0 } };
    },
  };
}

export const usageSkill: Skill = makeBillingSkill('usage');
export const analyticsSkill: Skill = makeBillingSkill('analytics');
