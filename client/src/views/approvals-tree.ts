/** The Approvals view: pending ACMF approvals, with Approve / Deny inline actions. */
import * as vscode from 'vscode';
import type { ApprovalRow } from '../../../protocol/lsp';
import { ClientRequests } from '../../../protocol/lsp-messages';
import type { ServerHost } from '../server-host';
import { errorText, messageItem, RefreshingTree } from './refreshing-tree';

export type ApprovalNode = { kind: 'approval'; row: ApprovalRow } | { kind: 'message'; text: string; icon: string };

export class ApprovalsTree extends RefreshingTree<ApprovalNode> {
  pending: ApprovalRow[] = [];

  constructor(private readonly host: ServerHost, private readonly onCount: (n: number) => void) {
    super();
  }

  getTreeItem(n: ApprovalNode): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n.text, n.icon);
    const r = n.row;
    const item = new vscode.TreeItem(`${r.agentId}: ${r.action}`, vscode.TreeItemCollapsibleState.None);
    item.id = r.id;
    item.description = `${r.risk} risk${r.expiresAt ? ` · expires ${new Date(r.expiresAt).toLocaleTimeString()}` : ''}`;
    item.tooltip = new vscode.MarkdownString(`**${r.agentId}** asks to **${r.action}** (${r.risk} risk)\n\n${r.reason}\n\nrequested ${new Date(r.requestedAt).toLocaleString()}${r.executionId ? `\n\nexecution \`${r.executionId}\`` : ''}`);
    item.iconPath = new vscode.ThemeIcon('shield');
    item.contextValue = 'approval';
    return item;
  }

  async getChildren(n?: ApprovalNode): Promise<ApprovalNode[]> {
    if (n) return [];
    try {
      this.pending = await this.host.request(ClientRequests.approvals, {});
    } catch (err) {
      return [{ kind: 'message', text: errorText(err), icon: 'warning' }];
    }
    this.onCount(this.pending.length);
    if (this.pending.length === 0) return [{ kind: 'message', text: 'No pending approvals', icon: 'check' }];
    return this.pending.map((row) => ({ kind: 'approval', row }));
  }
}
