/**
 * debug-ai's embedded skills: `explain` and `root-cause`, with no network and no model. With a
 * language model, `explain` asks it for a fix proposal from the analyzed trace (the Research
 * evidence); the proposal is validated (shape, locations among the trace's workspace frames, code
 * that parses) or the embedded fix stands alone, and the artifact says which.
 */
import { z } from 'zod';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { askModel, evidenceText, fallbackLine, rejected, type ModelNote } from '../../llm/skill-model';
import { checkCode } from '../coding/syntax';
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

const proposalSchema = z.object({
  cause: z.string().trim().min(1).max(1000),
  fix: z.object({
    description: z.string().trim().min(1).max(2000),
    file: z.string().trim().min(1).optional(),
    line: z.number().int().min(1).optional(),
    /** The code to write at that place (a statement or a few lines). */
    code: z.string().max(4000).optional(),
  }),
});
export type ModelFixProposal = z.infer<typeof proposalSchema> & { model: string };

const EXPLAIN_SYSTEM = [
  'You are debug-ai. Explain the error and propose one fix, from the analyzed stack trace and the evidence only.',
  'Name a file and line only if it is one of the workspace frames given; never invent a location.',
  'Answer with JSON only: {"cause":"...","fix":{"description":"...","file":"<workspace path>","line":<n>,"code":"<the code to write>"}}',
].join('\n');

async function modelProposal(ctx: SkillContext, evidence: Evidence | undefined, report: DebugReport): Promise<{ proposal?: ModelFixProposal; note?: ModelNote }> {
  const facts = {
    error: report.error ?? null, language: report.language, classification: report.classification ?? null,
    origin: report.origin ? { path: report.origin.path, line: report.origin.line, code: report.origin.code ?? null } : null,
    workspaceFrames: report.workspaceFrames.slice(0, 10).map((f) => ({ path: f.path, line: f.line, fn: f.fn ?? null, code: f.code ?? null })),
    embeddedFix: report.fix ?? null,
  };
  const answer = await askModel(ctx, {
    system: EXPLAIN_SYSTEM,
    user: `Analyzed trace:\n${JSON.stringify(facts, null, 2)}\n\n${evidenceText(evidence)}`,
    schema: proposalSchema,
  });
  if (!answer) return {};
  if (!answer.ok) return { note: answer.note };
  const { fix } = answer.value;
  if (fix.file && !report.workspaceFrames.some((f) => f.path === fix.file)) return { note: rejected(answer, `the model named ${fix.file}, which is not a workspace frame of the trace`) };
  if (fix.code && fix.file) {
    const syntax = checkCode(fix.file, fix.code);
    if (syntax && !syntax.ok) return { note: rejected(answer, `the model's code does not parse: ${syntax.reason}`) };
  }
  return { proposal: { ...answer.value, model: answer.model }, note: answer.note };
}

function renderProposal(p: ModelFixProposal, provider: string): string {
  const out = ['', `## Proposed fix (language model ${provider}, ${p.model})`, `Cause: ${p.cause}`, `Fix: ${p.fix.description}`];
  if (p.fix.file) out.push(`Where: ${p.fix.file}${p.fix.line ? `:${p.fix.line}` : ''}`);
  if (p.fix.code) out.push('```', p.fix.code, '```');
  return out.join('\n');
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
      const given = ['trace', 'log', 'logs'].some((k) => typeof ctx.request.input[k] === 'string' && String(ctx.request.input[k]).trim());
      if ((!report || (!report.error && report.frameCount === 0)) && !given && (ctx.request.step > 0 || ctx.request.previous.length > 0)) {
        // Inside a workflow (observe-ai before it found no error to diagnose) there is nothing to do:
        // not applicable with its reason, the workflow goes on. Asked directly, the trace is needed input.
        const earlier = [...new Set(ctx.request.previous.map((p) => p.agentId))];
        const why = `nothing to diagnose: no error or stack trace in the request or from the earlier steps${earlier.length ? ` (${earlier.join(', ')})` : ''}`;
        return { kind: 'debug-report', summary: `debug-ai ${action}: not applicable: ${why}`, goalRef, confidence: 1, data: { report: report ?? null }, notApplicable: why };
      }
      if (!report || (!report.error && report.frameCount === 0)) {
        const why = !report ? 'no trace or error log was given (input.trace, input.log or the goal prompt)' : 'no stack frame or error line of Node, Python, Java or Go could be parsed from the input';
        // The request lacks what the step needs (a parseable trace): needs input, named, not a failure of debug-ai.
        return { kind: 'debug-report', summary: `debug-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: { report: report ?? null }, unable: why, needsInput: { field: 'trace' } };
      }
      const where = report.origin ? ` at ${report.origin.path}:${report.origin.line}` : '';
      const what = report.classification?.title ?? (report.error ? `${report.error.type}` : 'unclassified error');
      const summary = rootCause
        ? `${what}${where}${report.firstSignal ? `; first related log line ${report.firstSignal.line}` : ''}`
        : `${what}${where}${report.fix?.expression ? `: guard \`${report.fix.expression}\`` : ''}`;
      const { proposal, note } = rootCause ? {} : await modelProposal(ctx, evidence, report);
      if (note) {
        return {
          kind: 'debug-report',
          summary: proposal ? `${what}${where}: ${proposal.fix.description.slice(0, 160)} (language model ${proposal.model})` : `${summary} (embedded: the language model answer was not usable)`,
          goalRef,
          confidence: report.confidence,
          data: { ...report, ...(proposal ? { modelFix: proposal } : {}), llm: note },
          text: `${renderDebugReport(report, rootCause)}${proposal ? renderProposal(proposal, note.provider) : `\n\n${fallbackLine(note)}`}`,
        };
      }
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
