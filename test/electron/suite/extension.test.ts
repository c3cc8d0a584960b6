/**
 * Runs inside a real VS Code extension host (see ../run.ts): the extension activates from this
 * repository, its server comes up, its commands and views are registered, and a file with a planted
 * secret gets a Cadre diagnostic.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CadreApi } from '../../../client/src/extension';
import { ClientCommands } from '../../../protocol/lsp';

/** Rejects after `ms` with `what`, so a hang fails with a reason instead of mocha's bare timeout. */
function within<T>(p: Thenable<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
    p.then((v) => (clearTimeout(timer), resolve(v)), (e: unknown) => (clearTimeout(timer), reject(e)));
  });
}

function cadreDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Cadre');
}

describe('Cadre in the VS Code extension host', function () {
  this.timeout(90_000);
  let api: CadreApi;

  before(async () => {
    const ext = vscode.extensions.getExtension<CadreApi>('cadre.cadre');
    assert.ok(ext, 'extension cadre.cadre is loaded from the development path');
    api = await within(ext.activate(), 60_000, 'activation');
    assert.equal(typeof api?.whenReady, 'function', 'activate() returns the CadreApi');
  });

  it('starts its language server, which reports the local API', async () => {
    const ready = await within(api.whenReady(), 60_000, 'cadre/serverReady');
    assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${ready.url}/v1/health`);
    assert.equal(health.status, 200);
  });

  it('registers the status bar, view and palette commands', async () => {
    const commands = new Set(await vscode.commands.getCommands(true));
    // The status bar item's commands (starting/error: output; crashed: restart).
    for (const c of [ClientCommands.showOutput, ClientCommands.restartServer]) assert.ok(commands.has(c), `${c} registered`);
    // The Agents view exists (VS Code adds <view>.focus for each contributed view) and its title and item actions are registered.
    for (const c of ['cadre.agents.focus', 'cadre.executions.focus', 'cadre.approvals.focus', 'cadre.readiness.focus', 'cadre.refreshViews', ClientCommands.showFleetSchedule, ClientCommands.invokeAgent]) {
      assert.ok(commands.has(c), `${c} registered`);
    }
    // Every command the manifest contributes is backed by a registration.
    const contributed = (vscode.extensions.getExtension('cadre.cadre')!.packageJSON as { contributes: { commands: Array<{ command: string }> } }).contributes.commands;
    const missing = contributed.map((c) => c.command).filter((c) => !commands.has(c));
    assert.deepEqual(missing, [], 'contributed commands without a registration');
  });

  it('publishes a Cadre diagnostic for a planted secret when the file is opened', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the fixture workspace is open');
    const uri = vscode.Uri.file(path.join(folder.uri.fsPath, 'config.js'));
    const published = new Promise<vscode.Diagnostic[]>((resolve) => {
      const sub = vscode.languages.onDidChangeDiagnostics((e) => {
        if (!e.uris.some((u) => u.toString() === uri.toString())) return;
        const found = cadreDiagnostics(uri);
        if (found.length > 0) {
          sub.dispose();
          resolve(found);
        }
      });
    });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const already = cadreDiagnostics(uri);
    const diags = already.length > 0 ? already : await within(published, 30_000, `Cadre diagnostics for ${uri.fsPath}`);
    const secret = diags.find((d) => d.range.start.line === 0);
    assert.ok(secret, `a Cadre diagnostic on the planted key's line; got ${JSON.stringify(diags.map((d) => ({ line: d.range.start.line, code: d.code, message: d.message })))}`);
    assert.ok(secret.code !== undefined, 'the diagnostic carries the rule id as its code');
  });
});
