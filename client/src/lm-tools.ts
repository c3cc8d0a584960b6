/**
 * Language-model tools (`contributes.languageModelTools` + `vscode.lm.registerTool`): what an
 * in-editor agent needs most from Cadre, as tools it can call: scan a file, review a selection, run
 * the readiness checks, explain an error. Each runs through the server's MCP tools (mcp-provider.ts
 * `callCadreTool`), so the answer is the same text an MCP client gets: each step's outcome and the
 * findings with `file:line:column`.
 *
 * Before a tool runs, VS Code shows its confirmation: which agent and action will run on what, and
 * under which ACMF mode (what that mode lets the agent do alone), read from the server at that moment.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AcmfModeName } from '../../protocol/lsp';
import { ClientRequests } from '../../protocol/lsp-messages';
import { ACMF_MODE_CHOICES } from './commands';
import { callCadreTool } from './mcp-provider';
import type { ServerHost } from './server-host';

/** Tool names: package.json `contributes.languageModelTools[].name` must list the same. */
export const LM_TOOLS = {
  scanFile: 'cadre_scanFile',
  reviewSelection: 'cadre_reviewSelection',
  readiness: 'cadre_runReadiness',
  explainError: 'cadre_explainError',
} as const;

export interface ScanFileInput { filePath?: string }
export interface ReviewSelectionInput { filePath?: string; startLine?: number; endLine?: number }
export interface ReadinessInput { folder?: string }
export interface ExplainErrorInput { error: string; filePath?: string }

/** What a tool will run: the agent, its action, the folder, the action's input and how to name it. */
export interface Plan {
  agentId: string;
  action: string;
  folder: string;
  /** What it works on, as the confirmation names it (a workspace-relative file, a range, a folder). */
  target: string;
  input: Record<string, unknown>;
}

/** An absolute file path from a tool's `filePath` (absolute, or relative to a workspace folder), else the active editor's. */
export function resolveFile(given: string | undefined): vscode.Uri {
  if (given) {
    if (path.isAbsolute(given)) return vscode.Uri.file(given);
    for (const f of vscode.workspace.workspaceFolders ?? []) {
      const candidate = vscode.Uri.joinPath(f.uri, given);
      if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === candidate.toString())) return candidate;
    }
    const first = vscode.workspace.workspaceFolders?.[0];
    if (!first) throw new Error(`"${given}" is relative and no workspace folder is open: give an absolute path`);
    return vscode.Uri.joinPath(first.uri, given);
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  if (!active || active.scheme !== 'file') throw new Error('no file given and no file is open in the editor: pass filePath');
  return active;
}

/** The workspace folder of a file (its own project), else the file's folder. */
export function folderOf(file: vscode.Uri): string {
  return vscode.workspace.getWorkspaceFolder(file)?.uri.fsPath ?? path.dirname(file.fsPath);
}

const rel = (folder: string, file: string) => path.relative(folder, file).split(path.sep).join('/');

export function scanPlan(i: ScanFileInput): Plan {
  const file = resolveFile(i.filePath);
  // As the editor's "Scan with security-ai": the secrets scan of the file's folder, naming the file.
  const folder = path.dirname(file.fsPath);
  return { agentId: 'security-ai', action: 'secrets', folder, target: rel(folderOf(file), file.fsPath), input: { files: [path.basename(file.fsPath)] } };
}

export function reviewPlan(i: ReviewSelectionInput): Plan {
  const file = resolveFile(i.filePath);
  const folder = folderOf(file);
  const name = rel(folder, file.fsPath);
  let start = i.startLine;
  let end = i.endLine;
  const editor = vscode.window.activeTextEditor;
  if (start === undefined && !i.filePath && editor && !editor.selection.isEmpty) {
    start = editor.selection.start.line + 1;
    end = editor.selection.end.line + 1;
  }
  if (start !== undefined && end !== undefined && end < start) throw new Error(`endLine ${end} is before startLine ${start}`);
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.toString());
  const selection = start !== undefined && doc ? doc.getText(new vscode.Range(start - 1, 0, (end ?? start) - 1, Number.MAX_SAFE_INTEGER)) : undefined;
  return {
    agentId: 'review-ai', action: 'review', folder, target: start !== undefined ? `${name}:${start}-${end ?? start}` : name,
    input: { files: [name], ...(start !== undefined ? { range: { start: { line: start - 1, character: 0 }, end: { line: (end ?? start) - 1, character: 0 } } } : {}), ...(selection ? { selection } : {}) },
  };
}

export function readinessPlan(i: ReadinessInput): Plan {
  const first = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const folder = i.folder ? (path.isAbsolute(i.folder) ? i.folder : first ? path.join(first, i.folder) : i.folder) : first;
  if (!folder) throw new Error('no folder given and no workspace folder is open');
  return { agentId: 'deploy-ai', action: 'readiness', folder, target: folder, input: {} };
}

export function explainPlan(i: ExplainErrorInput): Plan {
  if (typeof i.error !== 'string' || !i.error.trim()) throw new Error('error: give the error message or stack trace to explain');
  const file = i.filePath ? resolveFile(i.filePath) : vscode.window.activeTextEditor?.document.uri;
  const folder = file && file.scheme === 'file' ? folderOf(file) : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) throw new Error('no workspace folder is open to explain the error in');
  const first = i.error.trim().split('\n')[0]!.slice(0, 80);
  return { agentId: 'debug-ai', action: 'explain', folder, target: `"${first}"`, input: { trace: i.error } };
}

/** The agent's ACMF mode as the server has it now (null when the server cannot say). */
async function modeOf(host: ServerHost, agentId: string): Promise<AcmfModeName | null> {
  try {
    const r = await host.request(ClientRequests.agents, {});
    for (const d of r.domains) for (const a of d.agents) if (a.id === agentId) return a.acmfMode;
  } catch {
    // The confirmation still names the agent and the action.
  }
  return null;
}

/** The confirmation VS Code shows before the tool runs: what runs, on what, under which ACMF mode. */
export async function confirmation(host: ServerHost, plan: Plan, verb: string): Promise<vscode.PreparedToolInvocation> {
  const mode = await modeOf(host, plan.agentId);
  const detail = mode ? ACMF_MODE_CHOICES.find((c) => c.mode === mode)?.detail : undefined;
  const message = new vscode.MarkdownString(
    `Cadre will run **${plan.agentId} ${plan.action}** through the five RIGOR phases on \`${plan.target}\`` +
    (plan.folder !== plan.target ? ` (folder \`${plan.folder}\`)` : '') + '.\n\n' +
    (mode ? `ACMF mode of ${plan.agentId}: **${mode}**${detail ? ` (${detail})` : ''}. Actions this mode does not allow wait for your approval in the Approvals view.` : `ACMF mode of ${plan.agentId}: unknown (the server did not answer).`),
  );
  return { invocationMessage: `Cadre: ${plan.agentId} ${verb} ${plan.target}`, confirmationMessages: { title: `Run ${plan.agentId} ${plan.action}?`, message } };
}

/** Runs a plan through the server's MCP tools and answers the model with the result's text. */
async function run(context: vscode.ExtensionContext, host: ServerHost, plan: Plan, token: vscode.CancellationToken): Promise<vscode.LanguageModelToolResult> {
  const r = plan.agentId === 'deploy-ai' && plan.action === 'readiness'
    ? await callCadreTool(context, host, 'cadre_readiness', { path: plan.folder }, token)
    : await callCadreTool(context, host, 'cadre_invoke_agent', { agentId: plan.agentId, action: plan.action, prompt: `${plan.agentId} ${plan.action} ${plan.target}`, input: plan.input, path: plan.folder }, token);
  // An error result is thrown: VS Code hands the message to the model as the tool's failure.
  if (r.isError) throw new Error(r.text);
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(r.text)]);
}

function tool<T>(context: vscode.ExtensionContext, host: ServerHost, planOf: (input: T) => Plan, verb: string): vscode.LanguageModelTool<T> {
  return {
    prepareInvocation: (options) => confirmation(host, planOf(options.input), verb),
    invoke: (options, token) => run(context, host, planOf(options.input), token),
  };
}

/** Registers the four tools when the editor has the API (VS Code 1.95+); returns what to dispose. */
export function registerLmTools(context: vscode.ExtensionContext, host: ServerHost, output: vscode.LogOutputChannel): vscode.Disposable {
  if (typeof vscode.lm?.registerTool !== 'function') {
    output.info('This VS Code has no language-model tools API: Cadre\'s tools are not offered to agent mode');
    return new vscode.Disposable(() => {});
  }
  return vscode.Disposable.from(
    vscode.lm.registerTool<ScanFileInput>(LM_TOOLS.scanFile, tool(context, host, scanPlan, 'scanning')),
    vscode.lm.registerTool<ReviewSelectionInput>(LM_TOOLS.reviewSelection, tool(context, host, reviewPlan, 'reviewing')),
    vscode.lm.registerTool<ReadinessInput>(LM_TOOLS.readiness, tool(context, host, readinessPlan, 'checking')),
    vscode.lm.registerTool<ExplainErrorInput>(LM_TOOLS.explainError, tool(context, host, explainPlan, 'explaining')),
  );
}
