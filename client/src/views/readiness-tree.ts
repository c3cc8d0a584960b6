/** The Readiness view: deploy-ai's checks with pass / fail, their evidence and a fix action. */
import * as vscode from 'vscode';
import type { ReadinessCheck, ReadinessRequest } from '../../../protocol/lsp';
import { readinessSummary } from '../labels';
import { messageItem, RefreshingTree } from './refreshing-tree';

export type ReadinessNode = { kind: 'check'; check: ReadinessCheck } | { kind: 'message'; text: string; icon: string };

const ICON: Record<ReadinessCheck['status'], vscode.ThemeIcon> = {
  pass: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  fail: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  unknown: new vscode.ThemeIcon('question'),
};

export class ReadinessTree extends RefreshingTree<ReadinessNode> {
  result: ReadinessRequest.Result | null = null;
  running = false;
  error: string | null = null;

  constructor() {
    super(50);
  }

  set(result: ReadinessRequest.Result | null, error: string | null = null): void {
    this.result = result;
    this.error = error;
    this.running = false;
    this.refresh();
  }

  getTreeItem(n: ReadinessNode): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n.text, n.icon);
    const c = n.check;
    const item = new vscode.TreeItem(c.title, vscode.TreeItemCollapsibleState.None);
    item.id = `readiness:${c.id}`;
    item.description = `${c.status} · ${c.evidence}`;
    item.tooltip = new vscode.MarkdownString(`**${c.title}**: ${c.status}\n\n${c.evidence}${c.fix ? `\n\nFix: ${c.fix.title}` : ''}`);
    item.iconPath = ICON[c.status];
    item.contextValue = c.fix && c.status !== 'pass' ? 'readiness.fixable' : 'readiness';
    return item;
  }

  getChildren(n?: ReadinessNode): ReadinessNode[] {
    if (n) return [];
    if (this.running) return [{ kind: 'message', text: 'deploy-ai is checking the workspace…', icon: 'loading~spin' }];
    if (this.error) return [{ kind: 'message', text: this.error, icon: 'warning' }];
    // Empty until the first run: the view's welcome content offers the button.
    if (!this.result) return [];
    // Multi-root: the folder the checks ran on.
    const where = this.result.folder && (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `${this.result.folder.name}: ` : '';
    return [{ kind: 'message', text: `${where}${readinessSummary(this.result)} (checked ${new Date(this.result.checkedAt).toLocaleTimeString()})`, icon: this.result.ready ? 'rocket' : 'warning' }, ...this.result.checks.map((check): ReadinessNode => ({ kind: 'check', check }))];
  }
}
