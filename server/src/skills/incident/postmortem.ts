/**
 * The postmortem document (markdown) of a triaged incident: summary, impact, timeline, root cause as far
 * as the evidence goes, what went well and badly, action items. Blameless and honest: a cause no
 * evidence shows is written "unknown"; a change shortly before the first signal is named as a
 * candidate, never as the cause; what the request states (`rootCause`, `wentWell`, `wentBadly`,
 * `actionItems`) is quoted as stated by it.
 */
import type { StepSummary } from '../../engine/rigor/skill';
import type { Triage } from './triage';

/** A change this close before the first signal is worth naming as a candidate cause. */
export const CHANGE_WINDOW_MIN = 60;
const CHANGE = /\b(deploy|deployed|release|released|rollout|rolled out|migrat|config|upgrade|feature flag|flag)\w*/i;

export interface ActionItem { priority: 'high' | 'medium' | 'low'; item: string; owner: string; why: string }

export interface Postmortem {
  title: string;
  severity: string | null;
  rootCause: { status: 'stated' | 'suggested' | 'unknown'; text: string; candidates: string[] };
  wentWell: string[];
  wentBadly: string[];
  actionItems: ActionItem[];
  markdown: string;
  /** Where the triage came from. */
  from: string;
}

export interface PostmortemInput {
  title?: string;
  rootCause?: string;
  wentWell?: string[];
  wentBadly?: string[];
  actionItems?: string[];
  owner?: string;
}

const pct = (x: number) => `${Math.round(x * 10000) / 100}%`;
const strs = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v as string[] : undefined);

export function postmortemInputOf(input: Record<string, unknown>): PostmortemInput | { field: string; message: string } {
  const o: PostmortemInput = {};
  for (const k of ['title', 'rootCause', 'owner'] as const) {
    const v = input[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !v.trim()) return { field: k, message: `input.${k} must be a non-empty string` };
    o[k] = v.trim();
  }
  for (const k of ['wentWell', 'wentBadly', 'actionItems'] as const) {
    if (input[k] === undefined) continue;
    const v = strs(input[k]);
    if (!v) return { field: k, message: `input.${k} must be a list of strings` };
    o[k] = v;
  }
  return o;
}

function debugSuggestion(previous: readonly StepSummary[]): string | undefined {
  const d = [...previous].reverse().find((p) => p.agentId === 'debug-ai' && p.passed && p.summary);
  return d ? `suggested by debug-ai (step ${d.step}, confidence ${d.confidence}): ${d.summary.slice(0, 400)}` : undefined;
}

export function writePostmortem(t: Triage, from: string, o: PostmortemInput, previous: readonly StepSummary[]): Postmortem {
  const owner = o.owner ?? 'to assign';
  const start = t.impact.start ?? t.timeline.find((e) => e.time)?.time ?? null;
  const changes = t.timeline.filter((e) => e.kind === 'input' && CHANGE.test(e.event) && e.time && start && Date.parse(e.time) <= Date.parse(start) && Date.parse(start) - Date.parse(e.time) <= CHANGE_WINDOW_MIN * 60_000);
  const candidates = changes.map((e) => `${e.event} at ${e.time} (${Math.round((Date.parse(start!) - Date.parse(e.time!)) / 60_000)} min before the first signal; ${e.source})`);
  const suggested = debugSuggestion(previous);
  const rootCause: Postmortem['rootCause'] = o.rootCause
    ? { status: 'stated', text: `${o.rootCause} (as stated in the request)`, candidates }
    : suggested ? { status: 'suggested', text: suggested, candidates }
      : { status: 'unknown', text: `Unknown. The evidence shows what happened and when (${t.reasons.length} signal(s), ${t.timeline.length} timeline event(s)), not why${candidates.length ? '; a change preceded the first signal and is the first candidate to examine' : ''}.`, candidates };

  const detection = t.timeline.find((e) => e.kind === 'alert' || e.kind === 'signal-start');
  const alerted = t.timeline.find((e) => e.kind === 'alert');
  const wentWell: string[] = [];
  const wentBadly: string[] = [];
  if (detection) wentWell.push(`The incident was detected from the data: ${detection.event} (${detection.source}).`);
  if (alerted && start && alerted.time) wentWell.push(`An alert fired ${Math.max(0, Math.round((Date.parse(alerted.time) - Date.parse(start)) / 60_000))} min after the first signal.`);
  if (t.impact.end && t.impact.durationMinutes !== null) wentWell.push(`The signals ended at ${t.impact.end}, ${t.impact.durationMinutes} min after they began.`);
  if (t.impact.failedRequests) wentBadly.push(`${t.impact.failedRequests} of ${t.impact.requests} requests failed${t.impact.peakErrorRate !== null ? ` (${pct(t.impact.peakErrorRate)} in the worst 5 minutes)` : ''}.`);
  if (t.impact.sloBurn !== null && t.impact.sloBurn >= 1) wentBadly.push(`The error budget burned at ${t.impact.sloBurn}x its sustainable rate.`);
  if (!alerted) wentBadly.push('No alert rule is recorded as firing: the incident was found by analysis, not paged by an alert.');
  if (rootCause.status === 'unknown') wentBadly.push('The root cause is not established by the evidence gathered.');
  wentWell.push(...(o.wentWell ?? []).map((x) => `${x} (as stated in the request)`));
  wentBadly.push(...(o.wentBadly ?? []).map((x) => `${x} (as stated in the request)`));

  const items: ActionItem[] = [];
  if (rootCause.status !== 'stated') items.push({ priority: 'high', item: `Establish the root cause${t.impact.start ? ` of the incident of ${t.impact.start}` : ''}${candidates.length ? `, starting with the change "${changes[0]!.event}"` : ''}`, owner, why: `root cause ${rootCause.status}` });
  for (const c of changes) items.push({ priority: 'high', item: `Review the change "${c.event}" and its rollout (canary, automatic rollback on error-rate burn)`, owner, why: 'a change preceded the first signal' });
  const kinds = new Set(t.reasons.map((r) => r.signal.split(' ')[0]));
  if (!alerted) {
    if (t.reasons.some((r) => /SLO burn|slo-burn/i.test(r.signal))) items.push({ priority: 'high', item: 'Alert on the SLO burn rate (multiwindow: 14.4x over 1 h and 5 min pages, 6x over 6 h and 30 min tickets)', owner, why: 'the burn was found by analysis, no alert fired' });
    if (kinds.has('spike') || kinds.has('dip') || kinds.has('level-shift')) items.push({ priority: 'medium', item: `Alert rule on ${t.reasons.filter((r) => /^(spike|dip|level-shift) of /.test(r.signal)).map((r) => r.signal.replace(/^\S+ of /, '')).slice(0, 3).join(', ')}`, owner, why: 'the anomaly was found by analysis, no alert fired' });
  }
  if (t.severity === 'SEV1' || t.severity === 'SEV2') items.push({ priority: 'medium', item: 'Check the escalation against the path: time to acknowledge, time to the incident commander', owner, why: `${t.severity} escalation path` });
  for (const a of o.actionItems ?? []) items.push({ priority: 'medium', item: a, owner, why: 'as stated in the request' });

  const title = o.title ?? `${t.severity ?? 'No incident'}${t.impact.start ? ` on ${t.impact.start.slice(0, 10)}` : ''}: ${t.reasons[0] ? `${t.reasons[0].signal}` : 'no signal met a severity criterion'}`;
  const md: string[] = [`# Postmortem: ${title}`, '', `Severity: **${t.severity ?? 'none'}**${t.routing ? ` (routing level ${t.routing.level}, ${t.routing.severity}${t.routing.class ? `, ${t.routing.class}` : ''})` : ''}. Triage from ${from}. Blameless: this document is about systems and signals, not people.`, ''];
  md.push('## Summary', '', `${t.headline}.${t.impact.start ? ` From ${t.impact.start} to ${t.impact.end ?? 'unknown'}${t.impact.durationMinutes !== null ? ` (${t.impact.durationMinutes} min)` : ''}.` : ''}`, '');
  md.push('## Impact', '', '| measure | value |', '|---|---|',
    `| error rate | ${t.impact.errorRate !== null ? pct(t.impact.errorRate) : 'not measured'} |`,
    `| worst 5 minutes | ${t.impact.peakErrorRate !== null ? pct(t.impact.peakErrorRate) : 'not measured'} |`,
    `| failed requests | ${t.impact.failedRequests !== null ? `${t.impact.failedRequests} of ${t.impact.requests}` : 'not measured'} |`,
    `| users affected | ${t.impact.usersAffected !== null ? `${t.impact.usersAffected}${t.impact.usersShare !== null ? ` (${pct(t.impact.usersShare)})` : ''}` : 'not measured'} |`,
    `| SLO burn | ${t.impact.sloBurn !== null ? `${t.impact.sloBurn}x` : 'not measured'} |`, '');
  md.push('## Severity reasons', '', ...t.reasons.map((r) => `- ${r.level}: ${r.signal}: ${r.measured} (${r.threshold}; ${r.source})`), '');
  md.push('## Timeline', '', '| time (UTC) | event | source |', '|---|---|---|', ...t.timeline.map((e) => `| ${e.time ?? 'unknown'} | ${e.event.replace(/\|/g, '\\|')} | ${e.source} |`), '');
  md.push('## Root cause', '', rootCause.text, ...(rootCause.candidates.length ? ['', 'Candidates (not established):', '', ...rootCause.candidates.map((c) => `- ${c}`)] : []), '');
  md.push('## What went well', '', ...(wentWell.length ? wentWell.map((x) => `- ${x}`) : ['- Nothing recorded.']), '');
  md.push('## What went badly', '', ...(wentBadly.length ? wentBadly.map((x) => `- ${x}`) : ['- Nothing recorded.']), '');
  md.push('## Action items', '', '| priority | action | owner | why |', '|---|---|---|---|', ...items.map((i) => `| ${i.priority} | ${i.item} | ${i.owner} | ${i.why} |`), '');
  if (t.escalation.length) md.push('## Escalation path followed', '', ...t.escalation.map((e) => `- +${e.afterMinutes} min: ${e.who}: ${e.action}`), '');
  return { title, severity: t.severity, rootCause, wentWell, wentBadly, actionItems: items, markdown: md.join('\n'), from };
}
