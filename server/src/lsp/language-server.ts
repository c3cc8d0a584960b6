/**
 * The LSP door: the extension's language client talks to this over IPC or stdio. It starts the
 * runtime once the client has said which workspace is open, then tells the client where the API is.
 * It also keeps the open documents, publishes the secret scanner's findings as diagnostics, offers
 * quick fixes and agent source actions, runs the `cadre.*` commands on the engine it owns, answers
 * the editor's view requests (requests.ts), forwards every engine event as `cadre/event`
 * (event-forwarder.ts) and relays the engine's language-model completions to the editor (llm-relay.ts).
 * Every workspace folder is served (workspace-folders.ts), and the editor's settings apply without a
 * restart (workspace/didChangeConfiguration, settings.ts).
 */
import {
  CodeActionKind, createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind, type Connection, type WorkDoneProgressReporter,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CadreInitializationOptions, DiagnosticsMode, ServerReadyNotification } from '../../../protocol/lsp';
import { ServerNotifications } from '../../../protocol/lsp-messages';
import type { ConfigOverrides, Runtime } from '../host/runtime';
import { startRuntime, VERSION } from '../host/runtime';
import type { ServerOptions } from '../host/options';
import { codeActions } from './code-actions';
import { COMMAND_IDS, executeCommand } from './commands';
import { DocumentScanner, documentFile } from './document-scanner';
import { EventForwarder } from './event-forwarder';
import { editorRelay } from './llm-relay';
import { registerViewRequests } from './requests';
import { parseSettings } from './settings';
import { approvalRow } from './views';
import { WorkspaceFolders } from './workspace-folders';

/** `connection`: the transport (default: the one the process was started with; tests pass their own). */
export function runLanguageServer(opts: ServerOptions, env: NodeJS.ProcessEnv, connection: Connection = createConnection(ProposedFeatures.all)): Connection {
  const log = (line: string) => connection.console.log(line);
  let runtime: Runtime | null = null;
  const folders = new WorkspaceFolders(opts.workspaceDir);
  /** The folder of a document (its findings are named relative to it), else the first folder. */
  const dirOf = (uri: string) => (folders.folderOf(uri) ?? folders.first())?.path;
  let diagnosticsMode: DiagnosticsMode = 'onSave';
  let init: CadreInitializationOptions = {};
  let stopForwarding: () => void = () => {};

  const documents = new TextDocuments(TextDocument);
  const scanner = new DocumentScanner({
    get: (uri) => documents.get(uri),
    publish: (uri, diagnostics, version) => void connection.sendDiagnostics({ uri, diagnostics, ...(version !== undefined ? { version } : {}) }),
    workspaceDir: dirOf,
    log,
  });
  // TextDocuments fires onDidChangeContent right after onDidOpen; that one is not an edit.
  const justOpened = new Set<string>();
  documents.onDidOpen((e) => {
    justOpened.add(e.document.uri);
    scanner.now(e.document.uri);
  });
  documents.onDidSave((e) => scanner.now(e.document.uri));
  documents.onDidChangeContent((e) => {
    if (justOpened.delete(e.document.uri)) return;
    if (diagnosticsMode === 'onChange') scanner.debounced(e.document.uri);
  });
  documents.onDidClose((e) => {
    justOpened.delete(e.document.uri);
    scanner.close(e.document.uri);
  });

  let watchFolders = false;
  connection.onInitialize((params) => {
    folders.initialize(params.workspaceFolders, params.rootUri);
    init = parseSettings(params.initializationOptions, log) ?? {};
    if (init.diagnostics) diagnosticsMode = init.diagnostics;
    watchFolders = params.capabilities.workspace?.workspaceFolders === true;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, `${CodeActionKind.Source}.cadre`] },
        executeCommandProvider: { commands: [...COMMAND_IDS] },
        // Folders added and removed at runtime come as workspace/didChangeWorkspaceFolders.
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'cadre', version: VERSION },
    };
  });

  /** Rescans the open documents: their folder (and so their findings' paths) may have changed. */
  const rescanAll = () => {
    for (const doc of documents.all()) scanner.now(doc.uri);
  };

  // The editor's settings, applied to the running server: the diagnostics mode here, the tier and the
  // language model on the engine (running executions go on). Only cadre.server.* needs a new process.
  connection.onDidChangeConfiguration((params) => {
    const next = parseSettings((params.settings as { cadre?: unknown } | null)?.cadre, log);
    if (!next) return;
    init = next;
    const mode = next.diagnostics ?? 'onSave';
    if (mode !== diagnosticsMode) log(`diagnostics mode: ${mode}`);
    diagnosticsMode = mode;
    if (runtime && !runtime.attached) runtime.reconfigure(overridesOf(next));
  });

  connection.onCodeAction((params) => {
    const dir = dirOf(params.textDocument.uri);
    return codeActions(params, documentFile(params.textDocument.uri, dir), dir);
  });

  connection.onExecuteCommand((params) =>
    executeCommand(params, {
      runtime: () => runtime,
      workspaceDir: dirOf,
      document: (uri) => documents.get(uri),
      progress: async (token): Promise<WorkDoneProgressReporter> =>
        token !== undefined ? connection.window.attachWorkDoneProgress(token) : connection.window.createWorkDoneProgress(),
      log,
    }),
  );

  registerViewRequests(connection, { runtime: () => runtime, folders, log });

  connection.onInitialized(async () => {
    if (watchFolders) {
      connection.workspace.onDidChangeWorkspaceFolders((e) => {
        const removed = folders.change(e);
        log(`workspace folders: ${folders.list().map((f) => f.name).join(', ') || 'none'}${removed.length ? ` (removed ${removed.map((f) => f.name).join(', ')})` : ''}`);
        rescanAll();
      });
    }
    void connection.sendNotification(ServerNotifications.status, { health: 'starting', message: 'starting' });
    try {
      runtime = await startRuntime({
        // The engine's base configuration and default workspace: the first folder (workspace-folders.ts);
        // another folder's own .cadre.yaml applies to the executions on it (host/folder-settings.ts).
        dataDir: opts.dataDir, port: opts.port, workspaceDir: folders.first()?.path, skillModules: opts.skillModules, env, log,
        configOverrides: overridesOf(init),
        // The editor's language model, for llm.provider `editor`: a cadre/llm.complete request to the client.
        editorRelay: editorRelay((type, params, token) => connection.sendRequest(type, params, token)),
      });
      if (!runtime.attached) {
        const forwarder = new EventForwarder((e) => void connection.sendNotification(ServerNotifications.event, e));
        const unsubscribe = runtime.engine.bus.subscribe('engine.event', (e) => forwarder.handle(e));
        // Every approval change, also one filed after its execution ended (the PR flow): the Approvals view follows it.
        const unsubscribeApprovals = runtime.engine.bus.subscribe('acmf.approval', ({ change, approval }) =>
          void connection.sendNotification(ServerNotifications.approvalChanged, { change, approval: approvalRow(approval), status: approval.status, decidedBy: approval.decidedBy ?? null }));
        // A webhook subscription Cadre disabled after days of failed deliveries: a warning in the editor.
        const unsubscribeWebhooks = runtime.engine.bus.subscribe('service.event', (e) => {
          if (e.event === 'webhook.disabled') void connection.window.showWarningMessage(`Cadre disabled webhook ${String(e.data['webhook_id'])} (${String(e.data['url'])}): ${String(e.data['reason'])}`);
        });
        stopForwarding = () => {
          unsubscribe();
          unsubscribeApprovals();
          unsubscribeWebhooks();
          forwarder.close();
        };
      }
      const ready: ServerReadyNotification.Params = {
        url: runtime.url, port: runtime.port, attached: runtime.attached, ownerPid: runtime.ownerPid, dataDir: runtime.dataDir, version: VERSION,
        ...(!runtime.attached && runtime.newApiKey ? { newApiKey: runtime.newApiKey } : {}),
      };
      void connection.sendNotification(ServerNotifications.ready, ready);
    } catch (err) {
      log(`Cadre could not start: ${(err as Error).message}`);
      void connection.sendNotification(ServerNotifications.status, { health: 'error', message: (err as Error).message });
    }
  });

  connection.onShutdown(async () => {
    scanner.dispose();
    stopForwarding();
    stopForwarding = () => {};
    await runtime?.close();
    runtime = null;
  });

  documents.listen(connection);
  connection.listen();
  return connection;
}

/** The engine's part of the editor's settings. */
function overridesOf(s: CadreInitializationOptions): ConfigOverrides {
  return { ...(s.intelligence ? { intelligence: s.intelligence } : {}), ...(s.llm ? { llm: s.llm } : {}) };
}
