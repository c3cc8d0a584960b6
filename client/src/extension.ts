/**
 * Extension entry: starts the bundled language server (which hosts the engine and the local API)
 * and shows its health in the status bar. Everything else talks to that server.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { ServerReadyNotification, ServerStatusNotification, type CadreInitializationOptions, type DiagnosticsMode } from '../../protocol/lsp';

export interface CadreApi {
  /** Resolves with the server's ready notification (tests wait on this, never on a sleep). */
  whenReady(): Promise<ServerReadyNotification.Params>;
}

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<CadreApi> {
  const output = vscode.window.createOutputChannel('Cadre', { log: true });
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.name = 'Cadre';
  status.text = '$(sync~spin) Cadre: starting';
  status.command = 'cadre.showOutput';
  status.show();
  context.subscriptions.push(output, status);

  const settings = vscode.workspace.getConfiguration('cadre');
  const dataDir = settings.get<string>('server.dataDir') || context.globalStorageUri.fsPath;
  const port = settings.get<number>('server.port', 7450);
  const module = context.asAbsolutePath(path.join('dist', 'server.js'));
  const args = ['--data-dir', dataDir, '--port', String(port)];
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc, args },
    debug: { module, transport: TransportKind.ipc, args, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const initializationOptions: CadreInitializationOptions = { diagnostics: settings.get<DiagnosticsMode>('diagnostics.mode', 'onSave') };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: output,
    initializationOptions,
  };

  let resolveReady!: (p: ServerReadyNotification.Params) => void;
  const ready = new Promise<ServerReadyNotification.Params>((r) => (resolveReady = r));

  client = new LanguageClient('cadre', 'Cadre', serverOptions, clientOptions);
  context.subscriptions.push(
    client.onNotification(ServerReadyNotification.method, async (p: ServerReadyNotification.Params) => {
      if (p.newApiKey) await context.secrets.store('cadre.apiKey', p.newApiKey);
      status.text = `$(check) Cadre: ${p.url}`;
      status.tooltip = `Cadre ${p.version} ${p.attached ? `attached to pid ${p.ownerPid}` : 'owns'} ${p.dataDir}`;
      resolveReady(p);
    }),
    client.onNotification(ServerStatusNotification.method, (p: ServerStatusNotification.Params) => {
      status.text = p.health === 'error' ? `$(error) Cadre: ${p.message}` : `$(pulse) Cadre: ${p.message}`;
    }),
    vscode.commands.registerCommand('cadre.showOutput', () => output.show()),
    vscode.commands.registerCommand('cadre.restartServer', async () => {
      status.text = '$(sync~spin) Cadre: restarting';
      await client?.restart();
    }),
  );
  try {
    await client.start();
  } catch (err) {
    // VS Code shows no notification when activation fails, so we do it ourselves.
    status.text = '$(error) Cadre: server failed';
    void vscode.window.showErrorMessage(`Cadre could not start its server: ${(err as Error).message}`);
    throw err;
  }
  return { whenReady: () => ready };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
