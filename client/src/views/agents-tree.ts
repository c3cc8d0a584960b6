/** The Agents view: the 25 agents by domain, each with its role there, warm state, ACMF mode, tier and load. */
import * as vscode from 'vscode';
import { AgentsRequest, type AgentRow, type DomainName } from '../../../protocol/lsp';
import { ClientRequests } from '../../../protocol/lsp-messages';
import type { ServerHost } from '../server-host';
import { agentDescription } from '../labels';
import { errorText, messageItem, RefreshingTree } from './refreshing-tree';

type Node = { kind: 'domain'; domain: DomainName; agents: AgentRow[] } | { kind: 'agent'; domain: DomainName; agent: AgentRow } | { kind: 'message'; text: string; icon: string };

const WARM_ICON: Record<AgentRow['warm'], vscode.ThemeIcon> = {
  warm: new vscode.ThemeIcon('circle-filled', new vscode.ThemeColor('testing.iconPassed')),
  warming: new vscode.ThemeIcon('loading~spin'),
  cold: new vscode.ThemeIcon('circle-outline'),
};

export class AgentsTree extends RefreshingTree<Node> {
  constructor(private readonly host: ServerHost) {
    super();
  }

  /** The last answer, for commands that pick an agent. */
  last: AgentsRequest.Result | null = null;

  getTreeItem(n: Node): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n.text, n.icon);
    if (n.kind === 'domain') {
      const item = new vscode.TreeItem(n.domain, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `domain:${n.domain}`;
      item.description = `${n.agents.length} agents`;
      item.iconPath = new vscode.ThemeIcon('organization');
      item.contextValue = 'domain';
      return item;
    }
    const a = n.agent;
    const item = new vscode.TreeItem(a.id, vscode.TreeItemCollapsibleState.None);
    item.id = `agent:${n.domain}:${a.id}`;
    // Actions the engine cannot run here are counted in the row and named with their reason in the tooltip.
    item.description = `${agentDescription(a)}${a.unavailable?.length ? ` · ${a.unavailable.length} unavailable` : ''}`;
    item.iconPath = WARM_ICON[a.warm];
    item.contextValue = a.actions.length > 0 ? 'agent.invokable' : 'agent';
    item.tooltip = new vscode.MarkdownString(
      `**${a.name}** (${a.id}) in ${n.domain}\n\n${a.role}\n\n- state: ${a.warm}\n- ACMF mode: ${a.acmfMode}\n- tier: ${a.tier ?? 'every plan'}\n` +
        `- load: ${a.load.running} running, ${a.load.queued} queued, capacity ${a.load.capacity}\n- actions: ${a.actions.join(', ') || 'none available'}` +
        (a.unavailable?.length ? `\n- unavailable: ${a.unavailable.map((u) => `${u.action} (${u.reason})`).join('; ')}` : ''),
    );
    return item;
  }

  async getChildren(n?: Node): Promise<Node[]> {
    if (n?.kind === 'domain') return n.agents.map((agent) => ({ kind: 'agent', domain: n.domain, agent }));
    if (n) return [];
    try {
      this.last = await this.host.request(ClientRequests.agents, {});
      return this.last.domains.map((d) => ({ kind: 'domain', domain: d.domain, agents: d.agents }));
    } catch (err) {
      return [{ kind: 'message', text: errorText(err), icon: 'warning' }];
    }
  }
}

export type AgentNode = Node;
