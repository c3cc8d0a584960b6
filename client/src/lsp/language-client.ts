/**
 * A small LSP client for Cadre's own server, over vscode-jsonrpc and Node IPC.
 *
 * Why not vscode-languageclient: it is ~380 KB minified and Cadre uses five of its forty features
 * (document sync, diagnostics, code actions, commands, work-done progress). This client implements
 * those five against the server's declared capabilities and keeps the bundle under 300 KB
 * (docs/decisions.md). One instance = one server process; `ServerHost` restarts it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import { createMessageConnection, IPCMessageReader, IPCMessageWriter, Trace, type MessageConnection } from 'vscode-jsonrpc/node';
import type * as lsp from 'vscode-languageserver-protocol';
import { forgetAllDiagnostics, fromDiagnostic, fromRange, rememberDiagnostics, toCodeAction, toDiagnostic } from './convert';

export interface LanguageClientOptions {
  serverModule: string;
  args: string[];
  initializationOptions: unknown;
  output: vscode.LogOutputChannel;
  diagnostics: vscode.DiagnosticCollection;
  /** `cadre.trace.server` at start: the JSON-RPC messages with the server go to `channel`. */
  trace?: { value: string; channel(): vscode.OutputChannel };
  /** Called once when the server process ends, with whether we asked it to. */
  onExit(info: { code: number | null; signal: NodeJS.Signals | null; expected: boolean }): void;
}

const SHUTDOWN_TIMEOUT_MS = 3_000;
const FILE_SCHEMES = new Set(['file', 'untitled']);

export class CadreLanguageClient {
  private child: ChildProcess | undefined;
  private connection: MessageConnection | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly versions = new Map<string, number>();
  private stopping = false;
  private exited = false;
  capabilities: lsp.ServerCapabilities | undefined;

  constructor(private readonly opts: LanguageClientOptions) {}

  get running(): boolean {
    return this.connection !== undefined && !this.exited;
  }

  /** Spawns the server, runs initialize/initialized, then opens the editor's documents on it. */
  async start(handlers: { notification(method: string, params: unknown): void; request(method: string, params: unknown): unknown }): Promise<lsp.InitializeResult> {
    const { output } = this.opts;
    const child = fork(this.opts.serverModule, [...this.opts.args, '--node-ipc', `--clientProcessId=${process.pid}`], {
      execArgv: [],
      silent: true,
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    this.child = child;
    child.stdout?.on('data', (b: Buffer) => output.info(b.toString().trimEnd()));
    child.stderr?.on('data', (b: Buffer) => output.error(b.toString().trimEnd()));
    child.once('exit', (code, signal) => {
      this.exited = true;
      this.connection?.dispose();
      this.connection = undefined;
      this.opts.diagnostics.clear();
      forgetAllDiagnostics();
      for (const d of this.disposables.splice(0)) d.dispose();
      this.opts.onExit({ code, signal, expected: this.stopping });
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    await spawned;

    const conn = createMessageConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
    this.connection = conn;
    conn.onNotification('window/logMessage', (p: lsp.LogMessageParams) => {
      const log = [output.error, output.warn, output.info, output.debug][p.type - 1] ?? output.info;
      log.call(output, p.message);
    });
    conn.onNotification('window/showMessage', (p: lsp.ShowMessageParams) => {
      const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(`Cadre: ${p.message}`);
    });
    conn.onNotification('textDocument/publishDiagnostics', (p: lsp.PublishDiagnosticsParams) => {
      const pairs = p.diagnostics.map((original) => ({ shown: toDiagnostic(original), original }));
      rememberDiagnostics(p.uri, pairs);
      this.opts.diagnostics.set(vscode.Uri.parse(p.uri), pairs.map((x) => x.shown));
    });
    this.installProgress(conn);
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('client/unregisterCapability', () => null);
    // Everything else (Cadre's own messages) goes to the host, which dispatches by method.
    conn.onNotification((method: string, params: unknown) => handlers.notification(method, params));
    conn.onRequest((method: string, params: unknown) => handlers.request(method, params));
    conn.listen();
    // Traced from initialize on ($/setTrace may only follow it: the value goes in its params instead).
    const trace = this.opts.trace && this.opts.trace.value !== 'off' ? this.opts.trace : undefined;
    if (trace) await this.setTrace(trace.value, trace.channel(), false);

    const folder = vscode.workspace.workspaceFolders?.[0];
    const result = await conn.sendRequest<lsp.InitializeResult>('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Cadre VS Code client', version: vscode.version },
      rootUri: folder?.uri.toString() ?? null,
      workspaceFolders: vscode.workspace.workspaceFolders?.map((f) => ({ uri: f.uri.toString(), name: f.name })) ?? null,
      initializationOptions: this.opts.initializationOptions,
      ...(trace ? { trace: Trace.toString(Trace.fromString(trace.value)) } : {}),
      capabilities: {
        window: { workDoneProgress: true },
        textDocument: {
          synchronization: { didSave: true, dynamicRegistration: false },
          publishDiagnostics: { relatedInformation: false, codeDescriptionSupport: true, dataSupport: true },
          codeAction: {
            dataSupport: true,
            isPreferredSupport: true,
            codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source'] } },
          },
        },
        workspace: { workspaceFolders: true, executeCommand: { dynamicRegistration: false } },
      },
    } satisfies lsp.InitializeParams);
    this.capabilities = result.capabilities;
    await conn.sendNotification('initialized', {});
    this.installDocumentSync(conn);
    return result;
  }

  /** A notification to the server (settings applied without a restart: workspace/didChangeConfiguration). */
  async sendNotification(method: string, params: unknown): Promise<void> {
    if (!this.connection) throw new Error('the Cadre server is not running');
    await this.connection.sendNotification(method, params);
  }

  /** `cadre.trace.server` (off, messages, compact, verbose): traces the connection into `channel`, and tells the server. */
  async setTrace(value: string, channel: vscode.OutputChannel, notify = true): Promise<void> {
    const conn = this.connection;
    if (!conn) return;
    const log = (m: unknown, data?: string) => channel.appendLine(typeof m === 'string' ? (data ? `${m}\n${data}` : m) : JSON.stringify(m));
    await conn.trace(Trace.fromString(value), { log }, { sendNotification: notify });
  }

  sendRequest<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const conn = this.connection;
    if (!conn) return Promise.reject(new Error('the Cadre server is not running'));
    // A vscode CancellationToken has the shape vscode-jsonrpc checks for; cancelling sends $/cancelRequest.
    return token ? conn.sendRequest<R>(method, params, token) : conn.sendRequest<R>(method, params);
  }

  /** textDocument/codeAction, with the diagnostics the server published for that range. */
  async codeActions(doc: vscode.TextDocument, range: vscode.Range, context: vscode.CodeActionContext, token: vscode.CancellationToken): Promise<vscode.CodeAction[]> {
    if (!this.running || !this.capabilities?.codeActionProvider || !FILE_SCHEMES.has(doc.uri.scheme)) return [];
    const diagnostics = context.diagnostics.map((d) => fromDiagnostic(doc.uri.toString(), d)).filter((d): d is lsp.Diagnostic => d !== undefined);
    const only = context.only ? [context.only.value] : undefined;
    const result = await this.sendRequest<Array<lsp.CodeAction | lsp.Command> | null>('textDocument/codeAction', {
      textDocument: { uri: doc.uri.toString() },
      range: fromRange(range),
      context: { diagnostics, ...(only ? { only } : {}), triggerKind: context.triggerKind },
    } satisfies lsp.CodeActionParams, token);
    return (result ?? []).map(toCodeAction);
  }

  executeCommand(command: string, args: unknown[]): Promise<unknown> {
    return this.sendRequest('workspace/executeCommand', { command, arguments: args } satisfies lsp.ExecuteCommandParams);
  }

  /** shutdown → exit, then SIGTERM if the process is still there. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || this.exited) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      if (this.connection) {
        await withTimeout(this.connection.sendRequest('shutdown'), SHUTDOWN_TIMEOUT_MS);
        await this.connection.sendNotification('exit');
      }
    } catch {
      // A server that does not answer shutdown is ended below.
    }
    if (!(await withTimeout(gone.then(() => true), SHUTDOWN_TIMEOUT_MS).catch(() => false))) child.kill('SIGTERM');
    await gone;
  }

  private installDocumentSync(conn: MessageConnection): void {
    const sync = this.capabilities?.textDocumentSync;
    if (!sync) return;
    // TextDocumentSyncKind: 1 Full, 2 Incremental (a bare number or the `change` of the options).
    const changeKind = typeof sync === 'number' ? sync : sync.change;
    const incremental = changeKind === 2;
    const open = (doc: vscode.TextDocument) => {
      if (!FILE_SCHEMES.has(doc.uri.scheme)) return;
      const uri = doc.uri.toString();
      this.versions.set(uri, doc.version);
      void conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: doc.languageId, version: doc.version, text: doc.getText() } });
    };
    for (const doc of vscode.workspace.textDocuments) open(doc);
    this.disposables.push(
      vscode.workspace.onDidOpenTextDocument(open),
      vscode.workspace.onDidChangeTextDocument((e) => {
        const uri = e.document.uri.toString();
        if (!this.versions.has(uri) || e.contentChanges.length === 0 || !changeKind) return;
        this.versions.set(uri, e.document.version);
        // Incremental changes in the order VS Code applied them, or the whole text, as the server declared.
        const contentChanges = incremental
          ? e.contentChanges.map((c) => ({ range: fromRange(c.range), rangeLength: c.rangeLength, text: c.text }))
          : [{ text: e.document.getText() }];
        void conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: e.document.version }, contentChanges });
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        const uri = doc.uri.toString();
        if (this.versions.has(uri)) void conn.sendNotification('textDocument/didSave', { textDocument: { uri } });
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        const uri = doc.uri.toString();
        if (!this.versions.delete(uri)) return;
        void conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
      }),
    );
  }

  /** Server-created work-done progress shown in the window's status area, cancellable when the server says so. */
  private installProgress(conn: MessageConnection): void {
    const parts = new Map<string | number, { report(p: lsp.WorkDoneProgressReport | lsp.WorkDoneProgressEnd): void }>();
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onNotification('$/progress', (p: { token: lsp.ProgressToken; value: lsp.WorkDoneProgressBegin | lsp.WorkDoneProgressReport | lsp.WorkDoneProgressEnd }) => {
      const v = p.value;
      if (v.kind === 'begin') {
        let last = 0;
        let settle!: () => void;
        const done = new Promise<void>((r) => (settle = r));
        void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: v.title, cancellable: v.cancellable ?? false }, (progress, token) => {
          token.onCancellationRequested(() => void conn.sendNotification('window/workDoneProgress/cancel', { token: p.token }));
          parts.set(p.token, {
            report: (r) => {
              if (r.kind === 'end') {
                parts.delete(p.token);
                settle();
                return;
              }
              const pct = r.percentage ?? last;
              progress.report({ ...(r.message ? { message: r.message } : {}), increment: Math.max(0, pct - last) });
              last = pct;
            },
          });
          return done;
        });
      } else {
        parts.get(p.token)?.report(v);
      }
    });
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(t), resolve(v)), (e: unknown) => (clearTimeout(t), reject(e)));
  });
}
