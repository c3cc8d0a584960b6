/**
 * An execution as an MCP client reads it: its status, each step's outcome, the findings of every
 * step with their locations, a Markdown report and one SARIF log. Findings are whatever a step's
 * artifact lists under `findings` in the shared Finding shape (security-ai, review-ai and the other
 * analyzers all use skills/findings/finding.ts); a step's own SARIF run is kept as it produced it.
 */
import type { Engine } from '../engine/index';
import { isAttachmentRef } from '../engine/executions/bounded-output';
import type { ExecutionRecord, StepRecord } from '../engine/executions/records';
import type { AttachmentStore } from '../engine/ports';
import { progressOf } from '../engine/executions/views';
import type { Finding } from '../skills/findings/finding';
import { SARIF_SCHEMA, toSarif } from '../skills/findings/sarif';

export interface LocatedFinding {
  agentId: string;
  step: number;
  ruleId: string;
  severity: string;
  message: string;
  /** Workspace-relative, forward slashes. */
  file: string;
  /** 1-based; endColumn exclusive (SARIF convention). */
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
  /** The source folder of the execution (absolute), so a client can open `workspace/file`. */
  workspace: string | null;
  fix?: string;
}

export interface StepSummary {
  step: number;
  agentId: string;
  action: string;
  status: StepRecord['status'];
  outcome: string | null;
  reason: string | null;
  summary: string | null;
  passed: boolean | null;
  failedGates: string[];
}

export interface ExecutionSummary {
  executionId: string;
  kind: ExecutionRecord['kind'];
  status: ExecutionRecord['status'];
  progress: number;
  source: string | null;
  summary: string | null;
  error: { code: string; message: string } | null;
  steps: StepSummary[];
  findings: LocatedFinding[];
  /** Findings beyond the ones listed (the text and structured results are bounded). */
  moreFindings: number;
  resources: { report: string; sarif: string };
}

/** Findings listed in a tool result; the SARIF resource has them all. */
export const MAX_LISTED_FINDINGS = 200;

export const reportUri = (id: string) => `cadre://executions/${encodeURIComponent(id)}/report`;
export const sarifUri = (id: string) => `cadre://executions/${encodeURIComponent(id)}/sarif`;

function isFinding(v: unknown): v is Finding {
  const f = v as Finding;
  return typeof f === 'object' && f !== null && typeof f.ruleId === 'string' && typeof f.file === 'string' && typeof f.message === 'string' &&
    typeof f.range === 'object' && f.range !== null && typeof f.range.startLine === 'number';
}

/** Step outputs with attachments read back (a huge output is stored beside the record). */
export async function stepOutputs(rec: ExecutionRecord, attachments: AttachmentStore | undefined): Promise<Map<number, unknown>> {
  const out = new Map<number, unknown>();
  for (const s of rec.steps) {
    let o = s.output;
    if (isAttachmentRef(o)) {
      const slash = o.attachment.indexOf('/');
      const text = attachments && slash > 0 ? await attachments.get(o.attachment.slice(0, slash), o.attachment.slice(slash + 1)) : null;
      o = text === null ? null : (JSON.parse(text) as unknown);
    }
    out.set(s.step, o);
  }
  return out;
}

export function findingsOf(rec: ExecutionRecord, outputs: Map<number, unknown>): Array<{ step: StepRecord; finding: Finding }> {
  const all: Array<{ step: StepRecord; finding: Finding }> = [];
  for (const s of rec.steps) {
    if (s.superseded) continue;
    const list = (outputs.get(s.step) as { findings?: unknown } | null | undefined)?.findings;
    if (!Array.isArray(list)) continue;
    for (const f of list) if (isFinding(f)) all.push({ step: s, finding: f });
  }
  return all;
}

function located(rec: ExecutionRecord, step: StepRecord, f: Finding): LocatedFinding {
  return {
    agentId: step.agentId, step: step.step, ruleId: f.ruleId, severity: f.severity, message: f.message, file: f.file,
    startLine: f.range.startLine, startColumn: f.range.startColumn, endLine: f.range.endLine, endColumn: f.range.endColumn,
    workspace: rec.request.source, ...(f.fix ? { fix: f.fix.description } : {}),
  };
}

export async function summarize(engine: Engine, rec: ExecutionRecord, attachments?: AttachmentStore): Promise<ExecutionSummary> {
  const outputs = await stepOutputs(rec, attachments);
  const findings = findingsOf(rec, outputs);
  return {
    executionId: rec.id, kind: rec.kind, status: rec.status, progress: progressOf(rec, engine.executions.live(rec.id)),
    source: rec.request.source, summary: rec.output?.summary ?? null, error: rec.error ? { code: rec.error.code, message: rec.error.message } : null,
    steps: rec.steps.filter((s) => !s.superseded).map((s) => ({
      step: s.step, agentId: s.agentId, action: s.action, status: s.status, outcome: s.outcome ?? null, reason: s.reason ?? null,
      summary: s.summary, passed: s.passed, failedGates: s.gates.failures.map((g) => g.gate),
    })),
    findings: findings.slice(0, MAX_LISTED_FINDINGS).map(({ step, finding }) => located(rec, step, finding)),
    moreFindings: Math.max(0, findings.length - MAX_LISTED_FINDINGS),
    resources: { report: reportUri(rec.id), sarif: sarifUri(rec.id) },
  };
}

const OUTCOME_MARK: Record<string, string> = { completed: '✔', not_applicable: '–', needs_input: '?', failed: '✘', error: '!' };

/** The summary as plain text for a tool result (what a model reads first). */
export function summaryText(s: ExecutionSummary): string {
  const lines = [`Execution ${s.executionId} (${s.kind}): ${s.status}${s.status === 'completed' || s.status === 'failed' || s.status === 'cancelled' ? '' : ` (${s.progress}%)`}`];
  if (s.source) lines.push(`Workspace: ${s.source}`);
  if (s.summary) lines.push(s.summary);
  if (s.error) lines.push(`Error ${s.error.code}: ${s.error.message}`);
  for (const st of s.steps) {
    const mark = st.outcome ? OUTCOME_MARK[st.outcome] ?? '·' : st.status === 'running' ? '…' : '·';
    lines.push(`${mark} ${st.agentId} ${st.action}: ${st.outcome ?? st.status}${st.reason ? ` (${st.reason})` : st.summary ? ` (${st.summary})` : ''}${st.failedGates.length ? ` [failed gates: ${st.failedGates.join(', ')}]` : ''}`);
  }
  if (s.findings.length) {
    lines.push('', `Findings (${s.findings.length + s.moreFindings}):`);
    for (const f of s.findings) lines.push(`- ${f.file}:${f.startLine}:${f.startColumn} ${f.severity} ${f.ruleId}: ${f.message}${f.fix ? ` (fix: ${f.fix})` : ''}`);
    if (s.moreFindings) lines.push(`... and ${s.moreFindings} more (read ${s.resources.sarif})`);
  } else if (s.status === 'completed') {
    lines.push('', 'No findings.');
  }
  lines.push('', `Report: ${s.resources.report}`, `SARIF: ${s.resources.sarif}`);
  return lines.join('\n');
}

/** The execution as a Markdown report (resource `cadre://executions/{id}/report`). */
export async function markdownReport(engine: Engine, rec: ExecutionRecord, attachments?: AttachmentStore): Promise<string> {
  const s = await summarize(engine, rec, attachments);
  const outputs = await stepOutputs(rec, attachments);
  const all = findingsOf(rec, outputs);
  const lines = [
    `# Cadre execution ${rec.id}`, '',
    `- Kind: ${rec.kind}${rec.request.verb ? ` (verb ${rec.request.verb})` : ''}${rec.request.workflow ? ` (workflow ${rec.request.workflow})` : ''}`,
    `- Status: ${rec.status}`,
    `- Request: ${rec.request.prompt.replace(/\s+/g, ' ').slice(0, 500)}`,
    ...(rec.request.source ? [`- Workspace: ${rec.request.source}`] : []),
    `- Created: ${rec.createdAt}${rec.completedAt ? `, completed: ${rec.completedAt}` : ''}`,
    ...(s.error ? [`- Error: ${s.error.code}: ${s.error.message}`] : []),
    '', '## Steps', '', '| # | agent | action | outcome | reason / summary | failed gates |', '|---|---|---|---|---|---|',
    ...s.steps.map((st) => `| ${st.step} | ${st.agentId} | ${st.action} | ${st.outcome ?? st.status} | ${cell(st.reason ?? st.summary ?? '')} | ${st.failedGates.join(', ')} |`),
    '', `## Findings (${all.length})`, '',
  ];
  if (all.length === 0) lines.push('None.');
  else {
    lines.push('| severity | rule | location | message | agent |', '|---|---|---|---|---|');
    for (const { step, finding: f } of all) lines.push(`| ${f.severity} | ${f.ruleId} | ${f.file}:${f.range.startLine}:${f.range.startColumn} | ${cell(f.message)} | ${step.agentId} |`);
  }
  return `${lines.join('\n')}\n`;
}

function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 300);
}

/**
 * One SARIF 2.1.0 log for the execution: each step's own run as its analyzer produced it, and a
 * run built from the findings of steps that listed findings without a SARIF run of their own.
 */
export async function sarifLog(rec: ExecutionRecord, attachments?: AttachmentStore): Promise<Record<string, unknown>> {
  const outputs = await stepOutputs(rec, attachments);
  const runs: unknown[] = [];
  const loose: Finding[] = [];
  for (const s of rec.steps) {
    if (s.superseded) continue;
    const o = outputs.get(s.step) as { sarif?: { runs?: unknown[] }; findings?: unknown } | null | undefined;
    if (o && Array.isArray(o.sarif?.runs)) runs.push(...o.sarif.runs);
    else if (o && Array.isArray(o.findings)) loose.push(...o.findings.filter(isFinding));
  }
  if (loose.length) runs.push(...((toSarif(loose, [], { toolName: 'cadre' }) as { runs: unknown[] }).runs));
  if (runs.length === 0) runs.push(...((toSarif([], [], { toolName: 'cadre' }) as { runs: unknown[] }).runs));
  return { $schema: SARIF_SCHEMA, version: '2.1.0', runs };
}
