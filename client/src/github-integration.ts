/**
 * "Cadre: Register GitHub Integration": asks for the repository, the installation, the agents that may
 * open PRs and the app's credential (App ID, the private key's .pem file, the webhook secret), stores the
 * credential through `PUT /api/v1/secrets/{name}` and registers the integration with
 * `POST /api/v1/integrations/github`. The server's checks (PascalCase fields, the PEM, the app's
 * permissions) come back as the error message shown. The PEM is read from the file and sent once; the
 * extension keeps no copy.
 */
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { ensureApiKey } from './mcp-provider';
import type { ServerHost } from './server-host';

export const REGISTER_GITHUB_COMMAND = 'cadre.registerGithubIntegration';
const PR_AGENTS = ['coder-ai', 'architect-ai', 'debug-ai', 'security-ai', 'review-ai', 'tester-ai', 'maintain-ai', 'optimize-ai'];
const SECRET_NAME = 'cadre/integrations/local/github';

async function call(base: string, key: string, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new Error(String(json['detail'] ?? `${method} ${path} answered ${res.status}`));
  return json;
}

export function registerGithubIntegrationCommand(context: vscode.ExtensionContext, host: ServerHost): vscode.Disposable {
  return vscode.commands.registerCommand(REGISTER_GITHUB_COMMAND, async () => {
    try {
      const repo = await vscode.window.showInputBox({ title: 'GitHub repository', prompt: 'owner/repository', validateInput: (v) => (/^[\w.-]+\/[\w.-]+$/.test(v) ? null : 'owner/repository') });
      if (!repo) return;
      const appId = await vscode.window.showInputBox({ title: 'GitHub App ID', validateInput: (v) => (/^\d+$/.test(v) ? null : 'a number') });
      if (!appId) return;
      const installation = await vscode.window.showInputBox({ title: 'Installation id of the app on the repository', validateInput: (v) => (/^\d+$/.test(v) ? null : 'a number') });
      if (!installation) return;
      const pem = await vscode.window.showOpenDialog({ title: 'The GitHub App private key (.pem)', canSelectMany: false, filters: { 'PEM private key': ['pem'] } });
      if (!pem?.[0]) return;
      const webhookSecret = await vscode.window.showInputBox({ title: 'Webhook secret (64 hex characters, as set in the app settings)', password: true, validateInput: (v) => (/^[0-9a-fA-F]{64}$/.test(v) ? null : '64 hexadecimal characters (openssl rand -hex 32)') });
      if (!webhookSecret) return;
      const agents = await vscode.window.showQuickPick(PR_AGENTS.map((a) => ({ label: a, picked: a === 'coder-ai' })), { title: 'Agents that may open pull requests', canPickMany: true });
      if (!agents?.length) return;
      if (host.state.kind !== 'ready') throw new Error('the Cadre server is not ready yet');
      const base = host.state.info.url.replace(/\/+$/, '');
      const key = await ensureApiKey(context, host);
      const created = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Cadre: registering ${repo}` }, async () => {
        await call(base, key, 'PUT', `/api/v1/secrets/${encodeURIComponent(SECRET_NAME)}`, {
          AppID: Number(appId), InstallationID: Number(installation), PrivateKeyPEM: await readFile(pem[0]!.fsPath, 'utf8'), WebhookSecret: webhookSecret,
        });
        return call(base, key, 'POST', '/api/v1/integrations/github', {
          integration_name: repo, github_repo: repo, github_installation_id: Number(installation), secrets_manager_arn: SECRET_NAME,
          config: { agents: agents.map((a) => a.label), require_review: true },
        });
      });
      void vscode.window.showInformationMessage(`Cadre: ${repo} registered (${String(created['integration_id'])}); point the app's webhook at <this server>/api/webhooks/github`);
    } catch (err) {
      void vscode.window.showErrorMessage(`Cadre: GitHub integration not registered: ${(err as Error).message}`);
    }
  });
}
