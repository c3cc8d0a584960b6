/**
 * The LSP door: the extension's language client talks to this over IPC or stdio. It starts the
 * runtime once the client has said which workspace is open, then tells the client where the API is.
 * It also keeps the open documents, publishes the secret scanner's findings as diagnostics, offers
 * quick fixes and agent source actions, runs the `cadre.*` commands on the engine it owns, answers
 * the editor's view requests (requests.ts), forwards every engine event as `cadre/event`
 * (event-forwarder.ts) and relays the engine's language-model completions to the editor (llm-relay.ts).
 */
import { fileURLToPath } from 'node:url';
import {
  CodeActionKind, createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind, type Connection, type WorkDoneProgressReporter,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { EngineEventNotification, ServerReadyNotification, ServerStatusNotification, type CadreInitializationOptions, type DiagnosticsMode } from '../../../protocol/lsp';
import type { Runtime } from '../host/runtime';
import { startRuntime, VERSION } from '../host/runtime';
import type { ServerOptions } from '../host/options';
import { codeActions } from './code-actions';
import { COMMAND_IDS, executeCommand } from './commands';
import { DocumentScanner, documentFile } from './document-scanner';
import { EventForwarder } from './event-forwarder';
import { editorRelay } from './llm-relay';
import { registerViewRequests } from './requests';

export function runLanguageServer(opts: ServerOptions, env: NodeJS.ProcessEnv): Connection {
  const connection = createConnection(ProposedFeatures.all);
  const log = (line: string) => connection.console.log(line);
  let runtime: Runtime | null = null;
  let workspaceDir = opts.workspaceDir;
  let diagnosticsMode: DiagnosticsMode = 'onSave';
  let init: CadreInitializationOptions = {};
  let stopForwarding: () => void = () => {};

  const documents = new TextDocuments(TextDocument);
  const scanner = new DocumentScanner({
    get: (uri) => documents.get(uri),
    publish: (uri, diagnostics, version) => void connection.sendDiagnostics({ uri, diagnostics, ...(version !== undefined ? { version } : {}) }),
    workspaceDir: () => workspaceDir,
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

  connection.onInitialize((params) => {
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
    if (!workspaceDir && folder?.startsWith('file:')) workspaceDir = fileURLToPath(folder);
    init = (params.initializationOptions ?? {}) as CadreInitializationOptions;
    if (init.diagnostics === 'onChange' || init.diagnostics === 'onSave') diagnosticsMode = init.diagnostics;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, `${CodeActionKind.Source}.cadre`] },
        executeCommandProvider: { commands: [...COMMAND_IDS] },
      },
      serverInfo: { name: 'cadre', version: VERSION },
    };
  });

  // Settings that apply without a restart arrive here (the client sends {cadre: {diagnostics: {mode}}}).
  connection.onDidChangeConfiguration((params) => {
    const mode = (params.settings as { cadre?: { diagnostics?: { mode?: unknown } } } | null)?.cadre?.diagnostics?.mode;
    if (mode === 'onChange' || mode === 'onSave') {
      if (mode !== diagnosticsMode) log(`diagnostics mode: ${mode}`);
      diagnosticsMode = mode;
    }
  });

  connection.onCodeAction((params) => codeActions(params, documentFile(params.textDocument.uri, workspaceDir), workspaceDir));

  connection.onExecuteCommand((params) =>
    executeCommand(params, {
      runtime: () => runtime,
      workspaceDir: () => workspaceDir,
      document: (uri) => documents.get(uri),
      progress: async (token): Promise<WorkDoneProgressReporter> =>
        token !== undefined ? connection.window.attachWorkDoneProgress(token) : connection.window.createWorkDoneProgress(),
      log,
    }),
  );

  registerViewRequests(connection, { runtime: () => runtime, workspaceDir: () => workspaceDir, log });

  connection.onInitialized(async () => {
    void connection.sendNotification(ServerStatusNotification.method, { health: 'starting', message: 'starting' } satisfies ServerStatusNotification.Params);
    try {
      const configOverrides = {
        ...(init.intelligence ? { intelligence: init.intelligence } : {}),
        ...(init.llm ? { llm: init.llm } : {}),
      };
      runtime = await startRuntime({
        dataDir: opts.dataDir, port: opts.port, workspaceDir, skillModules: opts.skillModules, env, log,
        configOverrides,
        // The editor's language model, for llm.provider `editor`: a cadre/llm.complete request to the client.
        editorRelay: editorRelay((method, params, token) => connection.sendRequest(method, params, token)),
      });
      if (!runtime.attached) {
        const forwarder = new EventForwarder((e) => void connection.sendNotification(EngineEventNotification.method, e));
        const unsubscribe = runtime.engine.bus.subscribe('engine.event', (e) => forwarder.handle(e));
        // A webhook subscription Cadre disabled after days of failed deliveries: a warning in the editor.
        const unsubscribeWebhooks = runtime.engine.bus.subscribe('service.event', (e) => {
          if (e.event === 'webhook.disabled') void connection.window.showWarningMessage(`Cadre disabled webhook ${String(e.data['webhook_id'])} (${String(e.data['url'])}): ${String(e.data['reason'])}`);
        });
        stopForwarding = () => {
          unsubscribe();
          unsubscribeWebhooks();
          forwarder.close();
        };
      }
      const ready: ServerReadyNotification.Params = {
        url: runtime.url, port: runtime.port, attached: runtime.attached, ownerPid: runtime.ownerPid, dataDir: runtime.dataDir, version: VERSION,
        ...(!runtime.attached && runtime.newApiKey ? { newApiKey: runtime.newApiKey } : {}),
      };
      void connection.sendNotification(ServerReadyNotification.method, ready);
    } catch (err) {
      log(`Cadre could not start: ${(err as Error).message}`);
      void connection.sendNotification(ServerStatusNotification.method, { health: 'error', message: (err as Error).message } satisfies ServerStatusNotification.Params);
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
