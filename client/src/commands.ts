/**
 * The command palette's "Cadre: …" commands and the views' item actions. Each asks the server
 * through a typed request and reports problems as one readable message.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ClientCommands, type AcmfModeName, type ApprovalRow, type CancelExecutionRequest, type DecideApprovalRequest, type InvokeAgentRequest, type ReadinessCheck,
  type RunTaskRequest, type RunWorkflowRequest, type SetAgentModeRequest,
} from '../../protocol/lsp';
import { ClientRequests } from '../../protocol/lsp-messages';
import { commandFolder, workspaceFile } from './folders';
import type { DashboardHandle } from './dashboard-panel';
import type { InlineProgress } from './inline-progress';
import type { ServerHost } from './server-host';
import type { StatusBar } from './status-bar';
import type { ApprovalNode } from './views/approvals-tree';
import type { ExecNode } from './views/executions-tree';
import { isActive } from './views/executions-tree';
import type { AgentNode } from './views/agents-tree';
import type { ReadinessTree, ReadinessNode } from './views/readiness-tree';

export const API_KEY_SECRET = 'cadre.apiKey';

/** The ACMF modes, least to most autonomous, as the mode picker explains them. */
export const ACMF_MODE_CHOICES: ReadonlyArray<{ mode: AcmfModeName; detail: string }> = [
  { mode: 'OBSERVE', detail: 'Observe only: reads, and proposes every change without executing it' },
  { mode: 'LEARNING', detail: 'Executes with full review: every change waits for a person' },
  { mode: 'ASSISTED', detail: 'Executes; only critical actions wait for a person' },
  { mode: 'AUTONOMOUS', detail: 'Full autonomy within its gates, with the audit trail' },
];

export interface CommandDeps {
  context: vscode.ExtensionContext;
  host: ServerHost;
  progress: InlineProgress;
  status: StatusBar;
  readiness: ReadinessTree;
  dashboard: DashboardHandle;
  output: vscode.LogOutputChannel;
  refreshViews(): void;
}

/** Who decided an approval, as recorded in the audit trail. */
export function decider(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // some containers have no passwd entry
  }
  return `${user}@${os.hostname()} (VS Code)`;
}

function fail(what: string, err: unknown): void {
  void vscode.window.showErrorMessage(`Cadre: ${what}: ${(err as Error)?.message ?? String(err)}`);
}

/** Wraps a command so any error becomes one readable message instead of an unhandled rejection. */
function guarded<A extends unknown[]>(what: string, fn: (...args: A) => Promise<unknown>) {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      fail(what, err);
      return undefined;
    }
  };
}

export function registerCommands(d: CommandDeps): vscode.Disposable[] {
  const { host } = d;
  // Multi-root: readiness checks one folder (the active file's, the only one, or the one picked).
  const runReadiness = guarded('readiness checks failed', async (folderUri?: string) => {
    const folder = typeof folderUri === 'string' ? folderUri : await commandFolder('Cadre: Run Readiness Checks');
    if (folder === null) return undefined;
    d.readiness.running = true;
    d.readiness.refresh();
    try {
      const r = await vscode.window.withProgress(
        { location: { viewId: 'cadre.readiness' }, title: 'deploy-ai readiness' },
        () => host.request(ClientRequests.readiness, folder ? { folder } : {}),
      );
      d.readiness.set(r);
      d.status.showReadiness(r);
      return r;
    } catch (err) {
      d.readiness.set(null, (err as Error).message);
      throw err;
    }
  });

  const decide = (approved: boolean) =>
    guarded(approved ? 'approve failed' : 'deny failed', async (node?: ApprovalNode | ApprovalRow) => {
      const row = node && 'kind' in node ? (node.kind === 'approval' ? node.row : undefined) : node;
      if (!row) return;
      let reason: string | undefined;
      if (!approved) {
        reason = await vscode.window.showInputBox({ title: `Deny ${row.agentId}: ${row.action}`, prompt: 'Why? (recorded in the audit trail; optional)' });
        if (reason === undefined) return; // Escape cancels the denial
      }
      const r = await host.request(ClientRequests.decideApproval, {
        id: row.id, approved, by: decider(), ...(reason ? { reason } : {}),
      } satisfies DecideApprovalRequest.Params);
      void vscode.window.showInformationMessage(`Cadre: ${approved ? 'approved' : 'denied'} ${row.agentId} ${row.action} (by ${r.by})`);
      d.refreshViews();
    });

  return [
    vscode.commands.registerCommand(ClientCommands.showOutput, () => d.output.show()),
    vscode.commands.registerCommand(ClientCommands.restartServer, guarded('restart failed', () => host.restart())),

    vscode.commands.registerCommand(ClientCommands.runTask, guarded('run task failed', async (prompt?: string) => {
      const text = prompt ?? (await vscode.window.showInputBox({ title: 'Cadre: Run Task', prompt: 'What should the agents do? (routed by the domain orchestrators)', placeHolder: 'e.g. add rate limiting to the login endpoint', validateInput: (v) => (v.trim() ? null : 'Describe the task') }));
      if (!text) return;
      const folder = await commandFolder('Cadre: Run Task');
      if (folder === null) return;
      const r = await host.request(ClientRequests.runTask, { prompt: text.trim(), ...(folder ? { folder } : {}) } satisfies RunTaskRequest.Params);
      d.progress.follow(r.executionId, `task: ${text.trim().slice(0, 40)}`);
      d.refreshViews();
      return r;
    })),

    vscode.commands.registerCommand(ClientCommands.runWorkflow, guarded('run workflow failed', async (workflowId?: string) => {
      let id = workflowId;
      if (!id) {
        const { workflows } = await host.request(ClientRequests.catalog, {});
        const pick = await vscode.window.showQuickPick(
          [
            { label: 'Templates', kind: vscode.QuickPickItemKind.Separator },
            ...workflows.filter((w) => w.kind === 'template').map((w) => ({ label: w.name, description: w.id, detail: `${w.agents.join(' → ')} — ${w.description}`, id: w.id })),
            { label: 'Domain workflows', kind: vscode.QuickPickItemKind.Separator },
            ...workflows.filter((w) => w.kind === 'domain').map((w) => ({ label: w.name, description: w.id, detail: `${w.agents.join(' → ')} — ${w.description}`, id: w.id })),
          ],
          { title: 'Cadre: Run Workflow', matchOnDescription: true, matchOnDetail: true, placeHolder: 'Pick a template or a domain workflow' },
        );
        id = (pick as { id?: string } | undefined)?.id;
      }
      if (!id) return;
      // The goal every agent of the run receives (req-ai turns it into stories); empty = the workflow's own.
      const goal = await vscode.window.showInputBox({ title: `Cadre: Run Workflow ${id}`, prompt: 'The goal of this run (every agent receives it). Press Enter to run without one.', placeHolder: 'e.g. As a user I want to reset my password so that I can log in again' });
      if (goal === undefined) return;
      const folder = await commandFolder(`Cadre: Run Workflow ${id}`);
      if (folder === null) return;
      const file = workspaceFile();
      const input: Record<string, unknown> = { ...(goal.trim() ? { prompt: goal.trim() } : {}), ...(file ? { files: [file] } : {}) };
      const r = await host.request(ClientRequests.runWorkflow, { workflowId: id, input, ...(folder ? { folder } : {}) } satisfies RunWorkflowRequest.Params);
      d.progress.follow(r.executionId, `workflow ${id}`);
      d.refreshViews();
      return r;
    })),

    vscode.commands.registerCommand(ClientCommands.invokeAgent, guarded('invoke failed', async (agent?: string | AgentNode, action?: string) => {
      let agentId = typeof agent === 'string' ? agent : agent?.kind === 'agent' ? agent.agent.id : undefined;
      const { domains } = await host.request(ClientRequests.agents, {});
      const all = new Map(domains.flatMap((dm) => dm.agents).map((a) => [a.id, a]));
      if (!agentId) {
        const pick = await vscode.window.showQuickPick(
          [...all.values()].filter((a) => a.actions.length > 0).map((a) => ({ label: a.id, description: a.name, detail: a.actions.join(', ') })),
          { title: 'Cadre: Invoke Agent Action', placeHolder: 'Pick an agent' },
        );
        agentId = pick?.label;
      }
      if (!agentId) return;
      const row = all.get(agentId);
      if (!row) throw new Error(`unknown agent ${agentId}`);
      let act = action;
      if (!act) act = await vscode.window.showQuickPick(row.actions, { title: `Cadre: ${agentId}`, placeHolder: 'Pick an action' });
      if (!act) return;
      const folder = await commandFolder(`Cadre: ${agentId} ${act}`);
      if (folder === null) return;
      const file = workspaceFile();
      const r = await host.request(ClientRequests.invokeAgent, { agentId, action: act, ...(file ? { input: { files: [file] } } : {}), ...(folder ? { folder } : {}) } satisfies InvokeAgentRequest.Params);
      d.progress.follow(r.executionId, `${agentId} ${act}`);
      d.refreshViews();
      return r;
    })),

    vscode.commands.registerCommand(ClientCommands.setAgentMode, guarded('set mode failed', async (agent?: string | AgentNode, mode?: AcmfModeName, reason?: string) => {
      let agentId = typeof agent === 'string' ? agent : agent?.kind === 'agent' ? agent.agent.id : undefined;
      const { domains } = await host.request(ClientRequests.agents, {});
      const all = new Map(domains.flatMap((dm) => dm.agents).map((a) => [a.id, a]));
      if (!agentId) {
        const pick = await vscode.window.showQuickPick(
          [...all.values()].map((a) => ({ label: a.id, description: `${a.acmfMode} · ${a.name}` })),
          { title: 'Cadre: Set Agent Mode', placeHolder: 'Pick an agent', matchOnDescription: true },
        );
        agentId = pick?.label;
      }
      if (!agentId) return;
      const row = all.get(agentId);
      if (!row) throw new Error(`unknown agent ${agentId}`);
      let to = mode;
      if (!to) {
        const pick = await vscode.window.showQuickPick(
          ACMF_MODE_CHOICES.map((m) => ({ label: m.mode, description: m.mode === row.acmfMode ? 'current' : '', detail: m.detail })),
          { title: `Cadre: ${agentId} is ${row.acmfMode}`, placeHolder: 'Pick the mode' },
        );
        to = pick?.label as AcmfModeName | undefined;
      }
      if (!to) return;
      const why = reason ?? (await vscode.window.showInputBox({ title: `Cadre: ${agentId} ${row.acmfMode} → ${to}`, prompt: 'Why? (recorded in the audit trail)', validateInput: (v) => (v.trim() ? null : 'Say why the mode changes') }));
      if (!why?.trim()) return;
      const r = await host.request(ClientRequests.setAgentMode, { agentId, mode: to, reason: why.trim(), by: decider() } satisfies SetAgentModeRequest.Params);
      void vscode.window.showInformationMessage(`Cadre: ${r.agentId} is ${r.mode}${r.from !== r.mode ? ` (was ${r.from})` : ''}, by ${r.by}`);
      d.refreshViews();
      return r;
    })),

    vscode.commands.registerCommand(ClientCommands.cancelExecution, guarded('cancel failed', async (node?: ExecNode | string) => {
      let id = typeof node === 'string' ? node : node?.kind === 'execution' ? node.row.id : undefined;
      if (!id) {
        const rows = (await host.request(ClientRequests.executions, { limit: 50 })).filter((r) => isActive(r.status));
        if (rows.length === 0) return void vscode.window.showInformationMessage('Cadre: nothing is running');
        id = (await vscode.window.showQuickPick(rows.map((r) => ({ label: r.title, description: `${r.status} ${Math.round(r.progress)}%`, detail: r.id, id: r.id })), { title: 'Cadre: Cancel Execution' }))?.id;
      }
      if (!id) return;
      const r = await host.request(ClientRequests.cancel, { executionId: id } satisfies CancelExecutionRequest.Params);
      void vscode.window.showInformationMessage(`Cadre: ${id} is ${r.status}`);
      d.refreshViews();
    })),

    vscode.commands.registerCommand(ClientCommands.openDashboard, (node?: ExecNode | string) => {
      d.dashboard.open(typeof node === 'string' ? node : node?.kind === 'execution' ? node.row.id : undefined);
    }),
    vscode.commands.registerCommand(ClientCommands.showFleetSchedule, () => d.dashboard.open(undefined, 'schedule')),
    vscode.commands.registerCommand(ClientCommands.runReadiness, runReadiness),
    vscode.commands.registerCommand('cadre.readiness.fix', guarded('fix failed', async (node?: ReadinessNode | ReadinessCheck) => {
      const check = node && 'kind' in node ? (node.kind === 'check' ? node.check : undefined) : node;
      if (!check?.fix) return;
      await vscode.commands.executeCommand(check.fix.command, ...(check.fix.arguments ?? []));
    })),
    vscode.commands.registerCommand(ClientCommands.approve, decide(true)),
    vscode.commands.registerCommand(ClientCommands.deny, decide(false)),
    vscode.commands.registerCommand('cadre.refreshViews', () => d.refreshViews()),

    vscode.commands.registerCommand(ClientCommands.selectLlmProvider, guarded('could not set the provider', async () => {
      const cfg = vscode.workspace.getConfiguration('cadre');
      const current = cfg.get<string>('llm.provider', 'none');
      const pick = await vscode.window.showQuickPick(
        [
          { label: 'none', description: current === 'none' ? 'current' : '', detail: 'Embedded skills only: deterministic, no model' },
          { label: 'editor', description: current === 'editor' ? 'current' : '', detail: "The editor's language-model API (e.g. Copilot), relayed from the server" },
          { label: 'openai-compatible', description: current === 'openai-compatible' ? 'current' : '', detail: 'A chat-completions endpoint: base URL, model, key from an environment variable' },
        ],
        { title: 'Cadre: Select Language Model Provider' },
      );
      if (!pick) return;
      const target = vscode.ConfigurationTarget.Global;
      if (pick.label === 'openai-compatible') {
        const baseUrl = await vscode.window.showInputBox({ title: 'Base URL of the OpenAI-compatible API', value: cfg.get<string>('llm.baseUrl') || 'http://127.0.0.1:11434/v1', validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? null : 'An http(s) URL') });
        if (!baseUrl) return;
        const model = await vscode.window.showInputBox({ title: 'Model name', value: cfg.get<string>('llm.model') ?? '', validateInput: (v) => (v.trim() ? null : 'A model name') });
        if (!model) return;
        const apiKeyEnv = await vscode.window.showInputBox({ title: 'Environment variable that holds the API key (empty: none)', value: cfg.get<string>('llm.apiKeyEnv') ?? '', validateInput: (v) => (v === '' || /^[A-Za-z_][A-Za-z0-9_]*$/.test(v) ? null : 'A variable name, e.g. OPENAI_API_KEY') });
        if (apiKeyEnv === undefined) return;
        await cfg.update('llm.baseUrl', baseUrl, target);
        await cfg.update('llm.model', model.trim(), target);
        await cfg.update('llm.apiKeyEnv', apiKeyEnv, target);
      }
      // The running server takes the new provider without a restart (configuration listener in extension.ts).
      await cfg.update('llm.provider', pick.label, target);
    })),

    vscode.commands.registerCommand(ClientCommands.copyApiKey, guarded('could not copy the API key', async () => {
      let key = await d.context.secrets.get(API_KEY_SECRET);
      if (!key) {
        const created = await host.request(ClientRequests.createApiKey, {});
        key = created.key;
        await d.context.secrets.store(API_KEY_SECRET, key);
      }
      await vscode.env.clipboard.writeText(key);
      void vscode.window.showInformationMessage('Cadre: API key copied to the clipboard (use it as "Authorization: Bearer <key>")');
    })),

    vscode.commands.registerCommand(ClientCommands.openApi, guarded('could not open the API', async () => {
      const info = await host.whenReady();
      await vscode.env.openExternal(vscode.Uri.parse(`${info.url}/v1/info`));
    })),
  ];
}
