/**
 * Owns the language-server process for the extension's lifetime: starts it, restarts it with
 * backoff when it crashes, stops it cleanly, and multiplexes its custom messages to the views.
 */
import * as vscode from 'vscode';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
import { ServerReadyNotification, ServerStatusNotification, type CadreInitializationOptions } from '../../protocol/lsp';
import { CadreLanguageClient } from './lsp/language-client';

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

type Listener = (params: any) => void;
type RequestHandler = (params: any) => unknown;

/** Delays before restarting a crashed server; after the last one the user restarts it. */
export const RESTART_BACKOFF_MS = [500, 2_000, 5_000, 15_000, 30_000] as const;
/** A server that ran this long before crashing starts the backoff again from the first delay. */
const HEALTHY_RUN_MS = 60_000;

export class ServerHost implements vscode.Disposable {
  private client: CadreLanguageClient | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly stateEmitter = new vscode.EventEmitter<HostState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private current: HostState = { kind: 'stopped' };
  private crashes = 0;
  private startedAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  readonly diagnostics = vscode.languages.createDiagnosticCollection('cadre');

  constructor(
    private readonly launch: () => ServerLaunch,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.onNotification(ServerReadyNotification.method, (p: ServerReadyNotification.Params) => {
      this.crashes = 0;
      this.setState({ kind: 'ready', info: p });
    });
    this.onNotification(ServerStatusNotification.method, (p: ServerStatusNotification.Params) => {
      if (p.health === 'error') this.setState({ kind: 'error', message: p.message, retryInMs: null });
    });
  }

  /** `cadre.trace.server` changes apply to the running connection, without a restart. */
  private readonly traceSub = vscode.workspace.onDidChangeConfiguration((e) => {
    if (!e.affectsConfiguration('cadre.trace.server')) return;
    this.client?.setTrace(traceSetting(), this.traceChannel()).catch((err: unknown) => this.output.warn(`cadre.trace.server: ${(err as Error).message}`));
  });
  private traceOutput: vscode.OutputChannel | undefined;

  /** The "Cadre Trace" output channel, created on first use. */
  private traceChannel(): vscode.OutputChannel {
    return (this.traceOutput ??= vscode.window.createOutputChannel('Cadre Trace'));
  }

  get state(): HostState {
    return this.current;
  }

  /** The running client, for features (code actions, commands) that talk LSP directly. */
  get lsp(): CadreLanguageClient | undefined {
    return this.client?.running ? this.client : undefined;
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
    const client = new CadreLanguageClient({
      ...launch,
      output: this.output,
      trace: { value: traceSetting(), channel: () => this.traceChannel() },
      diagnostics: this.diagnostics,
      onExit: (info) => this.exited(client, info),
    });
    this.client = client;
    this.startedAt = Date.now();
    try {
      await client.start({
        notification: (method, params) => this.dispatch(method, params),
        request: (method, params) => {
          const h = this.requestHandlers.get(method);
          if (!h) throw new ResponseError(ErrorCodes.MethodNotFound, `the Cadre extension does not handle ${method}`);
          return h(params);
        },
      });
    } catch (err) {
      this.output.error(`Cadre server failed to start: ${(err as Error).message}`);
      if (this.client === client) this.setState({ kind: 'error', message: (err as Error).message, retryInMs: null });
      await client.stop().catch(() => {});
      throw err;
    }
  }

  /** User-requested restart: stops the current server and starts afresh, backoff reset. */
  async restart(): Promise<void> {
    this.crashes = 0;
    const old = this.client;
    this.client = undefined;
    await old?.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    const old = this.client;
    this.client = undefined;
    await old?.stop();
    this.setState({ kind: 'stopped' });
  }

  request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const c = this.lsp;
    if (!c || this.current.kind !== 'ready') return Promise.reject(new Error(this.current.kind === 'error' ? `Cadre server: ${this.current.message}` : 'the Cadre server is not ready yet'));
    return c.sendRequest<R>(method, params, token);
  }

  /** Listens to a server notification; survives restarts. */
  onNotification(method: string, listener: Listener): vscode.Disposable {
    let set = this.listeners.get(method);
    if (!set) this.listeners.set(method, (set = new Set()));
    set.add(listener);
    return new vscode.Disposable(() => set.delete(listener));
  }

  /** Answers a server → client request; one handler per method; survives restarts. */
  onRequest(method: string, handler: RequestHandler): vscode.Disposable {
    this.requestHandlers.set(method, handler);
    return new vscode.Disposable(() => this.requestHandlers.delete(method));
  }

  dispose(): void {
    this.disposed = true;
    this.traceSub.dispose();
    this.traceOutput?.dispose();
    void this.stop();
    this.diagnostics.dispose();
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

  private exited(client: CadreLanguageClient, info: { code: number | null; signal: NodeJS.Signals | null; expected: boolean }): void {
    if (this.client !== client || info.expected || this.disposed) return;
    this.client = undefined;
    if (Date.now() - this.startedAt > HEALTHY_RUN_MS) this.crashes = 0;
    const why = info.signal ? `killed by ${info.signal}` : `exited with code ${info.code}`;
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

/** `cadre.trace.server`: off, messages, compact or verbose. */
function traceSetting(): string {
  return vscode.workspace.getConfiguration('cadre').get<string>('trace.server', 'off');
}
