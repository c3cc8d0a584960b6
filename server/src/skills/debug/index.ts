/** debug-ai's embedded skills: `explain` and `root-cause`, with no network and no model. */
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { analyzeTrace, linesOf, renderDebugReport, type DebugReport } from './analyze';
import { parseTrace } from './trace-parser';
import { proposeReads } from '../read-proposal';

export { analyzeTrace, correlateLogs, mapFrame, mapFrames, nullExpression, renderDebugReport, suggestFix } from './analyze';
export type { DebugReport, FixSuggestion, LogCorrelation, MappedFrame } from './analyze';
export { CAUSES, classify } from './causes';
export { parseTrace } from './trace-parser';
export type { ErrorHeader, Frame, ParsedTrace, TraceLanguage } from './trace-parser';

function str(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim()) return v;
  if (Array.isArray(v) && v.length) return v.map(String).join('\n');
  return undefined;
}

/** The trace: input.trace, else input.log, else the goal prompt (root-cause: else the logs themselves). */
export function traceInput(ctx: SkillContext, rootCause: boolean): { text: string; source: string } | undefined {
  const { input, goal } = ctx.request;
  const t = str(input['trace']) ?? str(input['log']);
  if (t) return { text: t, source: str(input['trace']) ? 'input.trace' : 'input.log' };
  const logs = rootCause ? str(input['logs']) : undefined;
  if (goal.prompt.trim()) {
    const p = parseTrace(goal.prompt);
    // A prompt that is only an instruction ("find the root cause") defers to the logs.
    if (!logs || p.error || p.frames.length) return { text: goal.prompt, source: 'goal prompt' };
  }
  return logs ? { text: logs, source: 'input.logs' } : undefined;
}

function makeDebugSkill(action: 'explain' | 'root-cause'): Skill {
  const rootCause = action === 'root-cause';
  const reports = new WeakMap<Evidence, DebugReport>();
  return {
    agentId: 'debug-ai',
    action,
    async research(ctx) {
      const src = traceInput(ctx, rootCause);
      const logs = rootCause ? linesOf(ctx.request.input['logs']) : undefined;
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      if (!src) {
        evidence.constraints.push('no trace given (input.trace, input.log or the goal prompt)');
        return evidence;
      }
      const report = analyzeTrace(src.text, ctx.request.workspace, logs && logs.length ? logs : undefined);
      reports.set(evidence, report);
      ctx.progress(60, report.confidence);
      evidence.items.push({ source: src.source, detail: report.error ? `${report.error.type}: ${report.error.message}` : 'no error line', weight: report.error ? 0.6 : 0.1 });
      for (const f of report.workspaceFrames) evidence.items.push({ source: `${f.path}:${f.line}`, detail: f.code?.trim() ?? f.fn ?? 'frame', weight: f === report.origin ? 0.9 : 0.4 });
      if (report.classification) evidence.items.push({ source: 'cause table', detail: report.classification.id, weight: 0.7 });
      for (const c of report.correlations ?? []) evidence.items.push({ source: `log line ${c.line}`, detail: c.text, weight: Math.min(1, c.score / 8) });
      evidence.pathsRead.push(...new Set(report.workspaceFrames.map((f) => f.path)));
      if (!ctx.request.workspace) evidence.constraints.push('no workspace: frames cannot be mapped to files');
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeReads(evidence, 'read the workspace files named by the trace');
    },
    async generate(ctx, evidence) {
      const goalRef = ctx.request.goal.id;
      const report = reports.get(evidence) ?? (() => {
        const src = traceInput(ctx, rootCause);
        const logs = rootCause ? linesOf(ctx.request.input['logs']) : [];
        return src ? analyzeTrace(src.text, ctx.request.workspace, logs.length ? logs : undefined) : undefined;
      })();
      if (!report || (!report.error && report.frameCount === 0)) {
        const why = !report ? 'no trace or error log was given (input.trace, input.log or the goal prompt)' : 'no stack frame or error line of Node, Python, Java or Go could be parsed from the input';
        return { kind: 'debug-report', summary: `debug-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: { report: report ?? null }, unable: why };
      }
      const where = report.origin ? ` at ${report.origin.path}:${report.origin.line}` : '';
      const what = report.classification?.title ?? (report.error ? `${report.error.type}` : 'unclassified error');
      const summary = rootCause
        ? `${what}${where}${report.firstSignal ? `; first related log line ${report.firstSignal.line}` : ''}`
        : `${what}${where}${report.fix?.expression ? `: guard \`${report.fix.expression}\`` : ''}`;
      const artifact: Artifact = {
        kind: rootCause ? 'root-cause' : 'debug-report',
        summary,
        goalRef,
        confidence: report.confidence,
        data: report,
        text: renderDebugReport(report, rootCause),
        tokens: 0,
      };
      return artifact;
    },
  };
}

export const explainSkill: Skill = makeDebugSkill('explain');
export const rootCauseSkill: Skill = makeDebugSkill('root-cause');
export const debugSkills: Skill[] = [explainSkill, rootCauseSkill];
