/**
 * incident-ai's embedded skills, read-only and deterministic (no model, no network, nothing paged: the
 * escalation path is a plan for people and the incident-management integration, not an effect):
 *
 *  - `triage` (the default action): severity, routing level, escalation path and timeline (triage.ts)
 *    from the signals (signals.ts). No signal anywhere: needs input naming `signals`. Signals that meet
 *    no criterion: a completed "no incident" that says what was examined.
 *  - `postmortem`: the markdown document (postmortem.ts) of the triage of a previous incident-ai step,
 *    of `input.triage`, or of a triage made here from the same inputs as `triage`.
 *
 * An incident is a finding of the data, never a failed gate of the step.
 */
import type { Artifact, Evidence, Skill, SkillContext, StepSummary } from '../../engine/rigor/skill';
import type { ProposedAction } from '../../engine/acmf/records';
import { postmortemInputOf, writePostmortem, type Postmortem } from './postmortem';
import { postmortemDataSchema, triageDataSchema, triageSchema } from './schemas';
import { gatherSignals, jsonish, type Gathered, type LogFacts, type Signals } from './signals';
import { SEVS, triage, type Triage } from './triage';
import { incidentInputSchema } from '../operate-inputs';

export interface TriageData extends Triage {
  examined: string[];
  sources: string[];
  files: string[];
  logs: LogFacts | null;
}

export interface PostmortemData extends Postmortem { triage: Triage }

const SEV_RANK = (s: string | null) => (s ? 4 - SEVS.indexOf(s as (typeof SEVS)[number]) : 0);

/**
 * Measured signals (logs, observe-ai's anomalies) are confident (0.9); numbers only stated in the
 * request (error rate, users) are taken on trust (0.8); skipped log lines lower it in proportion.
 */
export function triageConfidence(s: Signals): number {
  const measured = s.logs !== null || s.anomalies.length > 0 || s.sources.some((x) => x.includes('observe-ai'));
  let c = measured ? 0.9 : 0.8;
  if (s.logs) {
    const lines = s.logs.files.reduce((a, f) => a + f.lines, 0);
    const skipped = s.logs.files.reduce((a, f) => a + f.skipped, 0);
    if (lines) c *= 0.5 + 0.5 * ((lines - skipped) / lines);
  }
  return Math.round(c * 100) / 100;
}

export function triageData(s: Signals, t: Triage): TriageData {
  return { ...t, examined: s.examined, sources: s.sources, files: s.files, logs: s.logs };
}

function proposeOf(g: Gathered | undefined, action: string): ProposedAction[] {
  const out: ProposedAction[] = [];
  if (g?.ok && g.signals.files.length) {
    const metrics = g.signals.files.filter((f) => /\.(?:prom|om|openmetrics|csv|json)$|^metrics\//i.test(f));
    const logs = g.signals.files.filter((f) => !metrics.includes(f));
    if (metrics.length) out.push({ kind: 'read_metrics', description: 'read the metric series', paths: metrics });
    if (logs.length) out.push({ kind: 'read', description: 'read the log files', paths: logs });
  }
  out.push({ kind: 'analyze', description: action === 'triage' ? 'classify the severity, set the escalation path and the timeline' : 'write the postmortem document (in the result; nothing is written to the workspace)' });
  return out;
}

/** The newest incident-ai triage among the previous steps that found an incident or not. */
export function previousTriage(previous: readonly StepSummary[]): { step: number; data: TriageData } | undefined {
  const s = [...previous].reverse().find((p) => p.agentId === 'incident-ai' && p.action === 'triage' && triageSchema.safeParse(p.data).success);
  return s ? { step: s.step, data: s.data as TriageData } : undefined;
}

function makeSkill(action: 'triage' | 'postmortem'): Skill {
  const prepared = new WeakMap<Evidence, Gathered>();
  const kind = `incident-${action}`;
  return {
    agentId: 'incident-ai',
    action,
    inputSchema: incidentInputSchema,
    outputSchema: action === 'triage' ? triageDataSchema : postmortemDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      if (action === 'postmortem') {
        const prev = previousTriage(ctx.request.previous);
        if (prev) { evidence.items.push({ source: `step ${prev.step} incident-ai triage`, detail: prev.data.headline, weight: 0.8 }); return evidence; }
        if (ctx.request.input['triage'] !== undefined) { evidence.items.push({ source: 'input.triage', detail: 'a triage given in the request', weight: 0.7 }); return evidence; }
      }
      const g = gatherSignals(ctx.request.workspace, ctx.request.input, ctx.request.previous);
      prepared.set(evidence, g);
      if (g.ok) {
        for (const x of g.signals.examined) evidence.items.push({ source: x.split(':')[0]!, detail: x, weight: 0.8 });
        for (const x of g.signals.sources.filter((y) => y.startsWith('input.') && y !== 'input.logs')) evidence.items.push({ source: x, detail: 'stated in the request', weight: 0.6 });
        evidence.pathsRead.push(...g.signals.files);
      } else evidence.constraints.push('field' in g ? g.message : 'nothing' in g ? g.nothing : g.notApplicable);
      ctx.progress(40, g.ok ? 0.6 : 0.2);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeOf(prepared.get(evidence), action);
    },
    async generate(ctx: SkillContext, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const input = ctx.request.input;
      const unable = (why: string, field: string): Artifact => ({ kind, summary: `incident-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, needsInput: { field }, tokens: 0 });
      const owner = typeof input['owner'] === 'string' && input['owner'].trim() ? input['owner'].trim() : undefined;
      let t: Triage; let from: string; let confidence: number; let signals: Signals | undefined;
      const g = prepared.get(evidence);
      if (g) {
        if (!g.ok) {
          if ('notApplicable' in g) return { kind, summary: `incident-ai ${action}: not applicable: ${g.notApplicable}`, goalRef, confidence: 1, data: null, notApplicable: g.notApplicable, tokens: 0 };
          return 'field' in g ? unable(g.message, g.field) : unable(g.nothing, action === 'triage' ? 'signals' : 'triage');
        }
        const r = triage(g.signals, { routing: jsonish(input['routing']), ...(owner ? { owner } : {}) });
        if ('error' in r) return unable(r.error, 'routing');
        t = r; signals = g.signals; from = 'this step'; confidence = triageConfidence(g.signals);
      } else {
        const prev = previousTriage(ctx.request.previous);
        if (prev) { t = prev.data; from = `step ${prev.step} (incident-ai triage)`; confidence = 0.85; } else {
          const given = jsonish(input['triage']);
          const p = triageSchema.safeParse(given);
          if (!p.success) return unable(`input.triage is not a triage (the data of incident-ai triage): ${p.error.message.slice(0, 300)}`, 'triage');
          t = given as Triage; from = 'input.triage'; confidence = 0.8;
        }
      }
      if (action === 'triage') {
        const data = triageData(signals!, t);
        ctx.progress(100, confidence);
        const summary = t.severity
          ? `${t.headline}; ${t.escalation.length} escalation step(s), ${t.timeline.length} timeline event(s)${t.impact.start ? `, ${t.impact.start} .. ${t.impact.end}` : ''}`
          : `no incident: nothing meets a severity criterion; examined ${signals!.examined.join('; ') || signals!.sources.join(', ')}`;
        return {
          kind, summary, goalRef, confidence, data, text: renderTriage(data), tokens: 0,
          findingsAfter: { count: t.severity ? 1 : 0, maxSeverity: SEV_RANK(t.severity) },
        };
      }
      if (!t.severity) {
        const why = `no incident to write a postmortem of: the triage (${from}) met no severity criterion`;
        return { kind, summary: `incident-ai postmortem: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const o = postmortemInputOf(input);
      if ('field' in o) return unable(o.message, o.field);
      const pm = writePostmortem(t, from, { ...o, ...(owner ? { owner } : {}) }, ctx.request.previous);
      const data: PostmortemData = { ...pm, triage: { severity: t.severity, level: t.level, routing: t.routing, headline: t.headline, reasons: t.reasons, impact: t.impact, escalation: t.escalation, timeline: t.timeline } };
      // The document is complete either way; an unknown root cause is said, and costs a little confidence.
      const conf = Math.round(confidence * (pm.rootCause.status === 'unknown' ? 0.9 : 1) * 100) / 100;
      ctx.progress(100, conf);
      const rank = { high: 3, medium: 2, low: 1 } as const;
      return {
        kind, summary: `postmortem "${pm.title}": root cause ${pm.rootCause.status}, ${pm.actionItems.length} action item(s), ${t.timeline.length} timeline event(s)`,
        goalRef, confidence: conf, data, text: pm.markdown, tokens: 0,
        findingsAfter: { count: pm.actionItems.length, maxSeverity: pm.actionItems.reduce((m, i) => Math.max(m, rank[i.priority]), 0) },
      };
    },
  };
}

export function renderTriage(d: TriageData): string {
  const out = ['# incident-ai triage', '', `**${d.severity ? d.headline : 'No incident'}**`, '', `Examined: ${d.examined.join('; ') || d.sources.join(', ')}.`, ''];
  if (d.reasons.length) out.push('## Severity reasons', '', '| level | signal | measured | threshold | source |', '|---|---|---|---|---|', ...d.reasons.map((r) => `| ${r.level} | ${r.signal} | ${r.measured} | ${r.threshold} | ${r.source} |`), '');
  if (d.escalation.length) out.push('## Escalation path', '', ...d.escalation.map((e) => `- +${e.afterMinutes} min: **${e.who}**: ${e.action}`), '');
  out.push('## Timeline', '', '| time (UTC) | event | source |', '|---|---|---|', ...d.timeline.map((e) => `| ${e.time ?? 'unknown'} | ${e.event.replace(/\|/g, '\\|')} | ${e.source} |`), '');
  return out.join('\n');
}

export const triageSkill: Skill = makeSkill('triage');
export const postmortemSkill: Skill = makeSkill('postmortem');
