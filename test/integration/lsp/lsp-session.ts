/**
 * The built language server (dist/server.js --stdio) driven over the typed declarations of
 * protocol/lsp-messages.ts, for the tests of this folder: it records what the server sends
 * (engine events, approval changes, log lines, diagnostics) and can call the REST API it serves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-languageserver-protocol/node';
import type { EngineEvent } from '../../../protocol/events';
import type { ApprovalChangedNotification, ServerReadyNotification } from '../../../protocol/lsp';
import { ServerNotifications } from '../../../protocol/lsp-messages';
import { ROOT, SERVER_JS, tempDir } from '../../support/server-process';

export interface Published { uri: string; diagnostics: Array<{ source?: string; code?: string | number; message: string; data?: { fix?: { edits: Array<{ file: string }> } } }> }
export type Json = Record<string, unknown>;

export interface LspSession {
  child: ChildProcess;
  conn: MessageConnection;
  ready: ServerReadyNotification.Params;
  /** Every notification in arrival order, by kind: the order between events and approval changes matters. */
  received: Array<{ kind: 'event'; event: EngineEvent } | { kind: 'approval'; change: ApprovalChangedNotification.Params }>;
  events(): EngineEvent[];
  approvalChanges(): ApprovalChangedNotification.Params[];
  logs: string[];
  published: Published[];
  /** The REST API of this server, with `key` (the server must have adopted it: CADRE_API_KEY). */
  rest(method: string, route: string, body?: unknown): Promise<{ status: number; json: Json; text: string }>;
  stop(): Promise<void>;
}

export interface LspStart {
  folders: string[];
  initializationOptions?: object;
  env?: NodeJS.ProcessEnv;
  key?: string;
  dataDir?: string;
}

export const folderRef = (dir: string) => ({ uri: pathToFileURL(dir).href, name: path.basename(dir) });

export async function startLsp(opts: LspStart): Promise<LspSession> {
  const env = { ...process.env, CADRE_API_KEY: opts.key ?? '', ...opts.env };
  const child = spawn(process.execPath, [SERVER_JS, '--stdio', '--data-dir', opts.dataDir ?? tempDir(), '--port', '0'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const received: LspSession['received'] = [];
  const logs: string[] = [];
  const published: Published[] = [];
  const ready = new Promise<ServerReadyNotification.Params>((resolve) => conn.onNotification(ServerNotifications.ready, resolve));
  conn.onNotification(ServerNotifications.event, (event) => void received.push({ kind: 'event', event }));
  conn.onNotification(ServerNotifications.approvalChanged, (change) => void received.push({ kind: 'approval', change }));
  conn.onNotification(ServerNotifications.status, () => {});
  conn.onNotification('window/logMessage', (m: { message: string }) => void logs.push(m.message));
  conn.onNotification('window/showMessage', () => {});
  conn.onNotification('textDocument/publishDiagnostics', (p: Published) => void published.push(p));
  conn.onNotification('$/progress', () => {});
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid, rootUri: folderRef(opts.folders[0]!).uri, workspaceFolders: opts.folders.map(folderRef),
    capabilities: { workspace: { workspaceFolders: true }, window: { workDoneProgress: true } }, initializationOptions: opts.initializationOptions ?? {},
  });
  await conn.sendNotification('initialized', {});
  const r = await ready;
  return {
    child, conn, ready: r, received, logs, published,
    events: () => received.flatMap((x) => (x.kind === 'event' ? [x.event] : [])),
    approvalChanges: () => received.flatMap((x) => (x.kind === 'approval' ? [x.change] : [])),
    rest: async (method, route, body) => {
      const res = await fetch(r.url + route, { method, headers: { authorization: `Bearer ${opts.key ?? ''}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      return { status: res.status, json: (text ? JSON.parse(text) : {}) as Json, text };
    },
    stop: async () => {
      try {
        await conn.sendRequest('shutdown');
        await conn.sendNotification('exit');
        await exited;
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  };
}

/** Polls `fn` until it returns something truthy (every 50 ms), else fails naming `what`. */
export async function until<T>(what: string, fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
