/**
 * The LSP door: the extension's language client talks to this over IPC or stdio. It starts the
 * runtime once the client has said which workspace is open, then tells the client where the API is.
 */
import { fileURLToPath } from 'node:url';
import { createConnection, ProposedFeatures, TextDocumentSyncKind, type Connection } from 'vscode-languageserver/node';
import { ServerReadyNotification, ServerStatusNotification } from '../../../protocol/lsp';
import type { Runtime } from '../host/runtime';
import { startRuntime, VERSION } from '../host/runtime';
import type { ServerOptions } from '../host/options';

export function runLanguageServer(opts: ServerOptions, env: NodeJS.ProcessEnv): Connection {
  const connection = createConnection(ProposedFeatures.all);
  const log = (line: string) => connection.console.log(line);
  let runtime: Runtime | null = null;
  let workspaceDir = opts.workspaceDir;

  connection.onInitialize((params) => {
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
    if (!workspaceDir && folder?.startsWith('file:')) workspaceDir = fileURLToPath(folder);
    return {
      capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental },
      serverInfo: { name: 'cadre', version: VERSION },
    };
  });

  connection.onInitialized(async () => {
    void connection.sendNotification(ServerStatusNotification.method, { health: 'starting', message: 'starting' } satisfies ServerStatusNotification.Params);
    try {
      runtime = await startRuntime({ dataDir: opts.dataDir, port: opts.port, workspaceDir, skillModules: opts.skillModules, env, log });
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
    await runtime?.close();
    runtime = null;
  });

  connection.listen();
  return connection;
}
