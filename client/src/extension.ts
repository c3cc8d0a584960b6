/**
 * Extension entry: starts the bundled language server (which hosts the engine and the local API),
 * and wires the editor to it: status bar, sidebar views, inline progress, code actions, commands,
 * the dashboard and the language-model relay. Everything else runs in the server.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CadreSettings, DiagnosticsMode, ServerReadyNotification } from '../../protocol/lsp';
import { ClientRequests, ServerNotifications } from '../../protocol/lsp-messages';
import { agentCommandMiddleware } from './agent-actions';
import { API_KEY_SECRET, decider, registerCommands } from './commands';
import { registerDashboard } from './dashboard-panel';
import { explicitValue } from './explicit-setting';
import { InlineProgress } from './inline-progress';
import { ProposalReviewer } from './proposals';
import { registerLlmRelay } from './llm-relay';
import { DefaultModel, effectiveProvider, explicitProvider, type EditorModelInfo } from './llm-default';
import { registerLmTools } from './lm-tools';
import { registerMcpProvider } from './mcp-provider';
import { registerGithubIntegrationCommand } from './github-integration';
import { ServerHost, type ServerLaunch } from './server-host';
import { StatusBar } from './status-bar';
import { AgentsTree } from './views/agents-tree';
import { ApprovalsTree } from './views/approvals-tree';
import { ExecutionsTree, type ExecNode } from './views/executions-tree';
import { ReadinessTree } from './views/readiness-tree';

export interface CadreApi {
  /** Resolves with the server's ready notification (tests wait on this, never on a sleep). */
  whenReady(): Promise<ServerReadyNotification.Params>;
}

/**
 * Settings whose change needs a new server process: the port and the data directory (a new HTTP
 * listener, another owner lock). Every other setting applies to the running server (sendSettings).
 */
const RESTART_SETTINGS = ['cadre.server'];
/** Settings the running server applies (workspace/didChangeConfiguration); `cadre.trace.server` is the library's. */
const LIVE_SETTINGS = ['cadre.diagnostics', 'cadre.intelligence', 'cadre.llm'];

let host: ServerHost | undefined;

/** The editor's settings as the server takes them (initializationOptions at start, then workspace/didChangeConfiguration). */
export function serverSettings(editorModelInfo: EditorModelInfo | null = null): CadreSettings {
  const settings = vscode.workspace.getConfiguration('cadre');
  // Unset: the editor's model when it offers one (llm-default.ts); `none` set explicitly stays none.
  const provider = effectiveProvider(explicitProvider(settings), editorModelInfo);
  return {
    diagnostics: settings.get<DiagnosticsMode>('diagnostics.mode', 'onSave'),
    // Only a tier the user set (user, workspace or folder): unset, each folder's .cadre.yaml (or the install's) decides.
    ...explicitTier(settings),
    // Only a non-default provider overrides the YAML configuration's llm section.
    ...(provider !== 'none'
      ? { llm: { provider, ...optional('baseUrl', settings.get<string>('llm.baseUrl')), ...optional('model', settings.get<string>('llm.model')), ...optional('apiKeyEnv', settings.get<string>('llm.apiKeyEnv')) } }
      : {}),
  };
}

export function launchOptions(context: vscode.ExtensionContext, editorModelInfo: EditorModelInfo | null = null): ServerLaunch {
  const settings = vscode.workspace.getConfiguration('cadre');
  const dataDir = settings.get<string>('server.dataDir') || context.globalStorageUri.fsPath;
  const port = settings.get<number>('server.port', 7450);
  return { serverModule: context.asAbsolutePath(path.join('dist', 'server.js')), args: ['--data-dir', dataDir, '--port', String(port)], initializationOptions: serverSettings(editorModelInfo) };
}

function explicitTier(settings: vscode.WorkspaceConfiguration): { intelligence?: 'core' | 'pro' | 'ultra' } {
  const v = explicitValue(settings.inspect<'core' | 'pro' | 'ultra'>('intelligence.tier'));
  return v ? { intelligence: v } : {};
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value ? ({ [key]: value } as Record<K, string>) : {};
}

export async function activate(context: vscode.ExtensionContext): Promise<CadreApi> {
  const output = vscode.window.createOutputChannel('Cadre', { log: true });
  const defaultModel = new DefaultModel();
  await defaultModel.refresh(false).catch((err: unknown) => output.warn(`editor language models: ${(err as Error).message}`));
  const h = new ServerHost(() => launchOptions(context, defaultModel.model), output);
  host = h;
  const progress = new InlineProgress(h, vscode.Uri.file(context.asAbsolutePath(path.join('media', 'progress.svg'))));
  const status = new StatusBar(h, progress);
  const proposals = new ProposalReviewer(h, output, decider);

  const agents = new AgentsTree(h);
  const executions = new ExecutionsTree(h);
  const approvals = new ApprovalsTree(h, (n) => {
    approvalsView.badge = n > 0 ? { value: n, tooltip: `${n} pending approval${n === 1 ? '' : 's'}` } : undefined;
  });
  const readiness = new ReadinessTree();
  const agentsView = vscode.window.createTreeView('cadre.agents', { treeDataProvider: agents, showCollapseAll: true });
  const executionsView = vscode.window.createTreeView('cadre.executions', { treeDataProvider: executions, showCollapseAll: true });
  const approvalsView = vscode.window.createTreeView('cadre.approvals', { treeDataProvider: approvals });
  const readinessView = vscode.window.createTreeView('cadre.readiness', { treeDataProvider: readiness });
  const refreshViews = () => {
    agents.refresh();
    executions.refresh();
    approvals.refresh();
  };

  const dashboard = registerDashboard(context, {
    request: (p) => h.request(ClientRequests.dashboard, p),
    onEvent: (listener) => h.onNotification(ServerNotifications.event, listener),
    executions: (p) => h.request(ClientRequests.executions, p),
  });
  h.useMiddleware(agentCommandMiddleware(progress, proposals));
  /** The settings to the running server: the tier and the language model change without a restart, running executions go on. */
  const applySettings = (why: string) => {
    output.info(`Cadre settings changed (${why}): applied to the running server`);
    h.sendSettings(serverSettings(defaultModel.model)).catch((err: unknown) => output.warn(`settings not sent: ${(err as Error).message}`));
  };

  context.subscriptions.push(
    output, h, progress, status, proposals, agents, executions, approvals, readiness, agentsView, executionsView, approvalsView, readinessView,
    // The views follow the server's events: which ones change what.
    h.onNotification(ServerNotifications.event, (e) => {
      executions.refresh();
      if (e.type === 'approval_requested' || e.type === 'approval_decided') approvals.refresh();
      if (e.type === 'execution_started' || e.type === 'step_started' || e.type === 'step_completed' || e.type === 'execution_completed' || e.type === 'execution_failed') agents.refresh();
    }),
    // Approvals filed or decided anywhere, also outside a run (the PR flow's): no Refresh needed.
    h.onNotification(ServerNotifications.approvalChanged, () => approvals.refresh()),
    // A notification handler's promise is dropped by the connection: a failed store is logged here, and
    // the views refresh either way (they read through the server, not with the key).
    h.onNotification(ServerNotifications.ready, (p) => {
      const stored = p.newApiKey ? context.secrets.store(API_KEY_SECRET, p.newApiKey) : Promise.resolve();
      stored.then(() => refreshViews(), (err: unknown) => {
        output.error(`storing the new API key failed: ${(err as Error).message}`);
        refreshViews();
      });
    }),
    ...registerCommands({ context, host: h, progress, status, readiness, dashboard, output, refreshViews }),
    vscode.commands.registerCommand('cadre.showChanges', async (node?: ExecNode | string) => {
      const id = typeof node === 'string' ? node : node?.kind === 'execution' ? node.row.id : undefined;
      if (id) await proposals.show(id).catch((err: unknown) => void vscode.window.showErrorMessage(`Cadre: ${(err as Error).message}`));
    }),
    registerLlmRelay(h),
    defaultModel,
    // A model appearing or going away changes what an unset provider means: applied live, as any llm setting.
    defaultModel.onDefaultChanged(() => applySettings(`language model: ${defaultModel.model ? `the editor's ${defaultModel.model.label}` : 'none'}, cadre.llm.provider unset`)),
    // Agent mode sees the server's MCP endpoint and Cadre's language-model tools (docs/mcp.md, docs/extension.md).
    optionalFeature(output, 'MCP server definition provider', () => registerMcpProvider(context, h, output)),
    optionalFeature(output, 'language-model tools', () => registerLmTools(context, h, output)),
    registerGithubIntegrationCommand(context, h),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
        output.info('Cadre server settings changed (port or data directory): restarting the server');
        void h.restart().catch(() => {});
        return;
      }
      const changed = LIVE_SETTINGS.filter((s) => e.affectsConfiguration(s));
      if (changed.length > 0) applySettings(changed.join(', '));
    }),
  );

  try {
    await h.start();
  } catch (err) {
    // VS Code shows no notification when activation fails, so we do it ourselves.
    void vscode.window.showErrorMessage(`Cadre could not start its server: ${(err as Error).message}`, 'Show Output', 'Restart').then((choice) => {
      if (choice === 'Show Output') output.show();
      if (choice === 'Restart') void h.restart().catch(() => {});
    });
  }
  return { whenReady: () => h.whenReady() };
}

/** A feature the editor may lack or refuse: its failure is logged, and the server still starts. */
function optionalFeature(output: vscode.LogOutputChannel, what: string, register: () => vscode.Disposable): vscode.Disposable {
  try {
    return register();
  } catch (err) {
    output.error(`${what} not registered: ${(err as Error)?.stack ?? String(err)}`);
    return new vscode.Disposable(() => {});
  }
}

export async function deactivate(): Promise<void> {
  await host?.stop();
  host = undefined;
}
