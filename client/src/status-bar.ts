/**
 * Two status bar items: the server (starting / ready with the API URL / error with a restart
 * action, and the running agent's progress) and deployment readiness once checks have run.
 */
import * as vscode from 'vscode';
import { ClientCommands, type ReadinessRequest } from '../../protocol/lsp';
import type { InlineProgress } from './inline-progress';
import type { HostState, ServerHost } from './server-host';
import { progressLabel, readinessSummary } from './labels';

export class StatusBar implements vscode.Disposable {
  private readonly server = vscode.window.createStatusBarItem('cadre.server', vscode.StatusBarAlignment.Left, 100);
  private readonly readiness = vscode.window.createStatusBarItem('cadre.readiness', vscode.StatusBarAlignment.Left, 99);
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly host: ServerHost, private readonly progress: InlineProgress) {
    this.server.name = 'Cadre';
    this.readiness.name = 'Cadre Readiness';
    this.readiness.command = 'cadre.readiness.focus';
    this.subscriptions = [host.onDidChangeState(() => this.render()), progress.onDidChange(() => this.render())];
    this.render();
    this.server.show();
  }

  showReadiness(r: ReadinessRequest.Result): void {
    const text = readinessSummary(r);
    this.readiness.text = r.ready ? `$(rocket) ${text}` : `$(warning) ${text}`;
    this.readiness.tooltip = r.checks.map((c) => `${c.status === 'pass' ? '✓' : '✗'} ${c.title}: ${c.evidence}`).join('\n');
    this.readiness.backgroundColor = r.ready ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
    this.readiness.show();
  }

  private render(): void {
    const s: HostState = this.host.state;
    const running = this.progress.latest;
    const item = this.server;
    item.backgroundColor = undefined;
    switch (s.kind) {
      case 'starting':
        item.text = '$(sync~spin) Cadre: starting';
        item.tooltip = 'Starting the Cadre server';
        item.command = ClientCommands.showOutput;
        break;
      case 'stopped':
        item.text = '$(circle-slash) Cadre: stopped';
        item.tooltip = 'The Cadre server is stopped; click to start it';
        item.command = ClientCommands.restartServer;
        break;
      case 'error':
        item.text = `$(error) Cadre: ${s.message}`;
        item.tooltip = s.retryInMs !== null ? `Restarting in ${Math.round(s.retryInMs / 1000)} s` : 'Click to restart the Cadre server';
        item.command = ClientCommands.restartServer;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
      case 'ready':
        if (running) {
          item.text = `$(sync~spin) Cadre: ${progressLabel(running)}`;
          item.tooltip = `${running.title} (${running.id}) — ${running.percent}%`;
          item.command = 'cadre.executions.focus';
        } else {
          item.text = `$(check) Cadre: ${s.info.url}`;
          item.tooltip = `Cadre ${s.info.version} ${s.info.attached ? `attached to pid ${s.info.ownerPid}` : 'owns'} ${s.info.dataDir}`;
          item.command = ClientCommands.showOutput;
        }
        break;
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.server.dispose();
    this.readiness.dispose();
  }
}
