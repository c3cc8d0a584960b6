/**
 * Owns the language server for the extension's lifetime, through vscode-languageclient's
 * LanguageClient: starts it, restarts it with backoff when it crashes, stops it cleanly, and
 * multiplexes Cadre's custom messages (protocol/lsp-messages.ts) to the views across restarts.
 *
 * The library does the LSP work: document sync, diagnostics, code actions, the server's commands,
 * work-done progress, workspace folders and `cadre.trace.server` (its `<id>.trace.server`, applied
 * to the running connection). This class keeps what the library's own restart does not: the
 * server process is forked here (over Node IPC, as before), so a crash is reported with its exit
 * code or signal, and restarts follow RESTART_BACKOFF_MS.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, ErrorCodes, IPCMessageReader, IPCMessageWriter, LanguageClient, ResponseError, RevealOutputChannelOn,
  State, type CancellationToken, type RequestParam, type LanguageClientOptions, type MessageTransports, type Middleware, type NotificationType, type RequestType,
} from 'vscode-languageclient/node';
import type { CadreInitializationOptions, CadreSettings, ServerReadyNotification } from '../../protocol/lsp';
import { ServerNotifications, ServerRequests } from '../../protocol/lsp-messages';
import { TraceChannel } from './trace-channel';

export type HostState =
  | { kind: 'starting' }
  | { kind: 'ready'; info: ServerReadyNotification.Params }
  | { kind: 'error'; message: string; retryInMs: number | null }
  | { kind: 'stopped' };

export interface ServerLaunch {
  serverModule: string;
  args: string[];
  initializationOptions: CadreInitializationOptions;
}

/** Delays before restarting a crashed server; after the last one the user restarts it. */
export const RESTART_BACKOFF_MS = [500, 2_000, 5_000, 15_000, 30_000] as const;
/** A server that ran this long before crashing starts the backoff again from the first delay. */
const HEALTHY_RUN_MS = 60_000;
const SHUTDOWN_TIMEOUT_MS = 3_000;

type Listener = (params: unknown) => void;
type RequestHandler = (params: unknown, token: CancellationToken) => unknown;
type ServerRequestType = (typeof ServerRequests)[keyof typeof ServerRequests];

function codeValue(code: vscode.Diagnostic['code']): string | number | undefined {
  return typeof code === 'object' ? code.value : code;
}

/**
 * The code-action context with the diagnostics the library published in place of VS Code's copies.
 * VS Code hands a code-action provider diagnostics rebuilt from its markers, so the library cannot
 * find their `data` (a finding's fingerprint and fix) and the server would offer no quick fix: they
 * are matched back to the published ones by range, message and code.
 */
function withPublished(client: LanguageClient, uri: vscode.Uri, context: vscode.CodeActionContext): vscode.CodeActionContext {
  const published = client.diagnostics?.get(uri) ?? [];
  if (published.length === 0) return context;
  const diagnostics = context.diagnostics.map((d) => published.find((p) => p.range.isEqual(d.range) && p.message === d.message && codeValue(p.code) === codeValue(d.code)) ?? d);
  return { triggerKind: context.triggerKind, only: context.only, diagnostics };
}

/** One server process and the LanguageClient talking to it. */
interface Session {
  client: LanguageClient;
  child: ChildProcess | undefined;
  /** We asked it to stop: its exit is no crash. */
  stopping: boolean;
  startedAt: number;
}

export class ServerHost implements vscode.Disposable {
  private session: Session | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly stateEmitter = new vscode.EventEmitter<HostState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private current: HostState = { kind: 'stopped' };
  private crashes = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private middleware: Middleware = {};
  /** The "Cadre Trace" channel the library writes `cadre.trace.server` traces to (trace-channel.ts). */
  private traceOutput: TraceChannel | undefined;

  constructor(
    private readonly launch: () => ServerLaunch,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.onNotification(ServerNotifications.ready, (p) => {
      this.crashes = 0;
      this.setState({ kind: 'ready', info: p });
    });
    this.onNotification(ServerNotifications.status, (p) => {
      if (p.health === 'error') this.setState({ kind: 'error', message: p.message, retryInMs: null });
    });
  }

  get state(): HostState {
    return this.current;
  }

  /** The running client, for features that talk LSP directly. */
  get lsp(): LanguageClient | undefined {
    const c = this.session?.client;
    return c?.state === State.Running ? c : undefined;
  }

  /** Middleware for the next start (the agent commands wrap the server's workspace/executeCommand). */
  useMiddleware(m: Middleware): void {
    this.middleware = { ...this.middleware, ...m };
  }

  /** Resolves when the server is ready (now, if it is); rejects if it goes into error first. */
  whenReady(): Promise<ServerReadyNotification.Params> {
    if (this.current.kind === 'ready') return Promise.resolve(this.current.info);
    return new Promise((resolve, reject) => {
      const sub = this.onDidChangeState((s) => {
        if (s.kind === 'ready') (sub.dispose(), resolve(s.info));
        else if (s.kind === 'error' && s.retryInMs === null) (sub.dispose(), reject(new Error(s.message)));
      });
    });
  }

  async start(): Promise<void> {
    if (this.disposed) return;
    clearTimeout(this.retryTimer);
    this.setState({ kind: 'starting' });
    const launch = this.launch();
    const session: Session = { client: undefined as unknown as LanguageClient, child: undefined, stopping: false, startedAt: Date.now() };
    const serverOptions = async (): Promise<MessageTransports> => {
      const child = fork(launch.serverModule, [...launch.args, '--node-ipc', `--clientProcessId=${process.pid}`], {
        execArgv: [], silent: true, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      });
      session.child = child;
      child.stdout?.on('data', (b: Buffer) => this.output.info(b.toString().trimEnd()));
      child.stderr?.on('data', (b: Buffer) => this.output.error(b.toString().trimEnd()));
      child.once('exit', (code, signal) => this.exited(session, code, signal));
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      return { reader: new IPCMessageReader(child), writer: new IPCMessageWriter(child) };
    };
    const clientOptions: LanguageClientOptions = {
      // Cadre scans any file the editor opens (secrets and review checks are not language-specific).
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      diagnosticCollectionName: 'cadre',
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      traceOutputChannel: (this.traceOutput ??= new TraceChannel()),
      initializationOptions: launch.initializationOptions,
      middleware: { provideCodeActions: (doc, range, context, token, next) => next(doc, range, withPublished(session.client, doc.uri, context), token), ...this.middleware },
      // Restarts are ours (exited below), with the exit code and the backoff; the library's would be immediate.
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
      },
    };
    const client = new LanguageClient('cadre', 'Cadre', serverOptions, clientOptions);
    session.client = client;
    // Cadre's messages go to the host's listeners, which outlive this client.
    for (const type of Object.values(ServerNotifications) as Array<NotificationType<unknown>>) {
      client.onNotification(type, (p: unknown) => this.dispatch(type.method, p));
    }
    for (const type of Object.values(ServerRequests) as Array<RequestType<unknown, unknown, unknown>>) {
      client.onRequest(type, (p: unknown, token: CancellationToken) => {
        const h = this.requestHandlers.get(type.method);
        if (!h) throw new ResponseError(ErrorCodes.MethodNotFound, `the Cadre extension does not handle ${type.method}`);
        return h(p, token);
      });
    }
    this.session = session;
    try {
      await client.start();
    } catch (err) {
      this.output.error(`Cadre server failed to start: ${(err as Error).message}`);
      if (this.session === session) this.setState({ kind: 'error', message: (err as Error).message, retryInMs: null });
      await this.end(session);
      throw err;
    }
  }

  /** User-requested restart: stops the current server and starts afresh, backoff reset. */
  async restart(): Promise<void> {
    this.crashes = 0;
    const old = this.session;
    this.session = undefined;
    if (old) await this.end(old);
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    const old = this.session;
    this.session = undefined;
    if (old) await this.end(old);
    this.setState({ kind: 'stopped' });
  }

  /** A declared Cadre request (protocol/lsp-messages.ts ClientRequests), with its params and result types. */
  async request<P, R, E>(type: RequestType<P, R, E>, params: P, token?: vscode.CancellationToken): Promise<R> {
    // A view restored with the window asks while the server starts: it gets the answer once the server is ready.
    if (this.current.kind === 'starting') await this.whenReady();
    const c = this.lsp;
    if (!c || this.current.kind !== 'ready') throw new Error(this.current.kind === 'error' ? `Cadre server: ${this.current.message}` : 'the Cadre server is not ready yet');
    // RequestParam<P> is P itself for the object params Cadre declares (only a `null` P widens).
    const p = params as RequestParam<P>;
    return token ? c.sendRequest(type, p, token) : c.sendRequest(type, p);
  }

  /** The editor's settings to the running server (workspace/didChangeConfiguration): applied without a restart. */
  async sendSettings(settings: CadreSettings): Promise<void> {
    const c = this.lsp;
    if (!c) return;
    await c.sendNotification(DidChangeConfigurationNotification.type, { settings: { cadre: settings } });
  }

  /** Listens to a declared server notification; survives restarts. */
  onNotification<P>(type: NotificationType<P>, listener: (params: P) => void): vscode.Disposable {
    let set = this.listeners.get(type.method);
    if (!set) this.listeners.set(type.method, (set = new Set()));
    const l = listener as Listener;
    set.add(l);
    return new vscode.Disposable(() => set.delete(l));
  }

  /** Answers a declared server → client request; one handler per method; survives restarts. */
  onRequest<P, R>(type: ServerRequestType & RequestType<P, R, unknown>, handler: (params: P, token: CancellationToken) => Promise<R>): vscode.Disposable {
    this.requestHandlers.set(type.method, handler as RequestHandler);
    return new vscode.Disposable(() => this.requestHandlers.delete(type.method));
  }

  dispose(): void {
    this.disposed = true;
    void this.stop().finally(() => this.traceOutput?.dispose());
    this.stateEmitter.dispose();
  }

  private dispatch(method: string, params: unknown): void {
    for (const l of this.listeners.get(method) ?? []) {
      try {
        l(params);
      } catch (err) {
        this.output.error(`${method} listener failed: ${(err as Error).message}`);
      }
    }
  }

  /** shutdown → exit through the library, then SIGTERM if the process is still there; the client is disposed. */
  private async end(session: Session): Promise<void> {
    session.stopping = true;
    const child = session.child;
    const gone = child && child.exitCode === null && child.signalCode === null ? new Promise<void>((r) => child.once('exit', () => r())) : Promise.resolve();
    try {
      if (session.client.state !== State.Stopped) await session.client.stop(SHUTDOWN_TIMEOUT_MS);
    } catch {
      // A server that does not answer shutdown is ended below.
    }
    await session.client.dispose().catch(() => {});
    const timer = setTimeout(() => child?.kill('SIGTERM'), SHUTDOWN_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
  }

  private exited(session: Session, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.session !== session || session.stopping || this.disposed) return;
    this.session = undefined;
    // The library saw the connection close (DoNotRestart); its diagnostics and commands go with it.
    void session.client.dispose().catch(() => {});
    if (Date.now() - session.startedAt > HEALTHY_RUN_MS) this.crashes = 0;
    const why = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const delay = RESTART_BACKOFF_MS[this.crashes];
    this.crashes += 1;
    if (delay === undefined) {
      this.output.error(`Cadre server ${why}; not restarting after ${RESTART_BACKOFF_MS.length} attempts`);
      this.setState({ kind: 'error', message: `server ${why}`, retryInMs: null });
      return;
    }
    this.output.warn(`Cadre server ${why}; restarting in ${delay} ms`);
    this.setState({ kind: 'error', message: `server ${why}, restarting`, retryInMs: delay });
    this.retryTimer = setTimeout(() => void this.start().catch(() => {}), delay);
  }

  private setState(s: HostState): void {
    this.current = s;
    this.stateEmitter.fire(s);
  }
}
