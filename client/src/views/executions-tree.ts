/**
 * The Executions view: running and recent tasks and workflows; under each, its agent steps; under
 * a step, the five RIGOR phases (Completed / Running / Pending) and the gate results of its Review.
 */
import * as vscode from 'vscode';
import type { GateResultData } from '../../../protocol/events';
import type { ExecutionRow, RunStatus, StepRow } from '../../../protocol/lsp';
import { ClientRequests } from '../../../protocol/lsp-messages';
import type { ServerHost } from '../server-host';
import { formatMs, stepPresentation } from '../labels';
import { errorText, messageItem, RefreshingTree } from './refreshing-tree';

export type ExecNode =
  | { kind: 'execution'; row: ExecutionRow }
  | { kind: 'step'; execution: string; step: StepRow }
  | { kind: 'phase'; execution: string; step: number; phase: StepRow['phases'][number] }
  | { kind: 'gates'; execution: string; step: number; gates: GateResultData[] }
  | { kind: 'gate'; execution: string; step: number; gate: GateResultData }
  | { kind: 'message'; text: string; icon: string };

const STATUS_ICON: Record<string, vscode.ThemeIcon> = {
  queued: new vscode.ThemeIcon('clock'),
  pending: new vscode.ThemeIcon('circle-outline'),
  running: new vscode.ThemeIcon('sync~spin'),
  waiting_approval: new vscode.ThemeIcon('person', new vscode.ThemeColor('charts.yellow')),
  completed: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  failed: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  cancelled: new vscode.ThemeIcon('circle-slash'),
  skipped: new vscode.ThemeIcon('debug-step-over'),
  needs_input: new vscode.ThemeIcon('question', new vscode.ThemeColor('charts.yellow')),
  error: new vscode.ThemeIcon('warning', new vscode.ThemeColor('testing.iconErrored')),
};

const PHASE_LABEL = { completed: 'Completed', running: 'Running', pending: 'Pending' } as const;

export function isActive(status: RunStatus): boolean {
  return status === 'queued' || status === 'running' || status === 'waiting_approval';
}

export class ExecutionsTree extends RefreshingTree<ExecNode> {
  rows: ExecutionRow[] = [];

  constructor(private readonly host: ServerHost) {
    super(250);
  }

  getTreeItem(n: ExecNode): vscode.TreeItem {
    const None = vscode.TreeItemCollapsibleState.None;
    switch (n.kind) {
      case 'message':
        return messageItem(n.text, n.icon);
      case 'execution': {
        const r = n.row;
        const item = new vscode.TreeItem(r.title, isActive(r.status) ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
        item.id = r.id;
        // A RIGOR run completes even when its step's Review failed it: say so rather than show a green tick.
        const failedSteps = r.kind === 'rigor' && r.status === 'completed' ? r.steps.filter((st) => st.status === 'failed' && st.outcome !== 'not_applicable').length : 0;
        item.description = `${r.status.replace('_', ' ')}${failedSteps ? `, ${failedSteps} step${failedSteps === 1 ? '' : 's'} failed` : ''}${isActive(r.status) ? ` ${Math.round(r.progress)}%` : ''} · ${r.kind}${r.folder ? ` · ${r.folder.name}` : ''}`;
        item.iconPath = failedSteps ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('charts.yellow')) : STATUS_ICON[r.status];
        item.contextValue = isActive(r.status) ? 'execution.active' : 'execution';
        item.tooltip = `${r.id}${r.folder ? `\non ${r.folder.path}` : ''}\nstarted ${new Date(r.createdAt).toLocaleString()}${r.finishedAt ? `\nfinished ${new Date(r.finishedAt).toLocaleString()}` : ''}${r.error ? `\n${r.error.code}: ${r.error.message}` : ''}`;
        return item;
      }
      case 'step': {
        const s = n.step;
        const item = new vscode.TreeItem(`${s.step + 1}. ${s.agentId} ${s.action}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${n.execution}:step:${s.step}`;
        const shown = stepPresentation(s);
        const bits: string[] = [shown.label];
        if (s.confidence !== null && shown.icon !== 'skipped') bits.push(`confidence ${s.confidence.toFixed(2)}`);
        if (s.durationMs !== null) bits.push(formatMs(s.durationMs));
        if (shown.reason) bits.push(shown.reason);
        item.description = bits.join(' · ');
        if (shown.reason) item.tooltip = `${s.agentId} ${s.action}: ${shown.label}\n${shown.reason}`;
        item.iconPath = STATUS_ICON[shown.icon] ?? STATUS_ICON['pending'];
        item.contextValue = 'step';
        return item;
      }
      case 'phase': {
        const p = n.phase;
        const item = new vscode.TreeItem(p.phase, None);
        item.id = `${n.execution}:step:${n.step}:${p.phase}`;
        item.description = `${PHASE_LABEL[p.state]}${p.durationMs !== null ? ` · ${formatMs(p.durationMs)}` : ''}`;
        item.iconPath = STATUS_ICON[p.state === 'completed' ? 'completed' : p.state === 'running' ? 'running' : 'pending'];
        return item;
      }
      case 'gates': {
        const failed = n.gates.filter((g) => g.status === 'fail').length;
        const item = new vscode.TreeItem('Gates', vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `${n.execution}:step:${n.step}:gates`;
        item.description = failed ? `${failed} of 21 failed` : 'all 21 passed or not applicable';
        item.iconPath = failed ? STATUS_ICON['failed'] : STATUS_ICON['completed'];
        return item;
      }
      case 'gate': {
        const g = n.gate;
        const item = new vscode.TreeItem(`${g.number}. ${g.gate}`, None);
        item.id = `${n.execution}:step:${n.step}:gate:${g.number}`;
        item.description = `${g.status.replace('_', ' ')}${g.value !== null ? ` · ${String(g.value)}${g.threshold !== null ? ` / ${g.threshold}` : ''}` : ''}`;
        item.tooltip = `${g.category}: ${g.reason}`;
        item.iconPath = g.status === 'pass' ? STATUS_ICON['completed'] : g.status === 'fail' ? STATUS_ICON['failed'] : STATUS_ICON['skipped'];
        return item;
      }
    }
  }

  async getChildren(n?: ExecNode): Promise<ExecNode[]> {
    if (!n) {
      try {
        this.rows = await this.host.request(ClientRequests.executions, { limit: 30 });
      } catch (err) {
        return [{ kind: 'message', text: errorText(err), icon: 'warning' }];
      }
      if (this.rows.length === 0) return [{ kind: 'message', text: 'No executions yet: run a task, a workflow or an agent action', icon: 'info' }];
      return this.rows.map((row) => ({ kind: 'execution', row }));
    }
    switch (n.kind) {
      case 'execution':
        return n.row.steps.map((step) => ({ kind: 'step', execution: n.row.id, step }));
      case 'step': {
        // A step whose Review ran has gate results; the list carries only the failed ones, the node fetches all 21.
        const reviewed = n.step.gates.length > 0 || n.step.phases.some((p) => p.phase === 'Review' && p.state === 'completed');
        return [
          ...n.step.phases.map((phase): ExecNode => ({ kind: 'phase', execution: n.execution, step: n.step.step, phase })),
          ...(reviewed ? [{ kind: 'gates', execution: n.execution, step: n.step.step, gates: n.step.gates } as ExecNode] : []),
        ];
      }
      case 'gates': {
        let gates = n.gates;
        try {
          const [full] = await this.host.request(ClientRequests.executions, { id: n.execution });
          gates = full?.steps.find((s) => s.step === n.step)?.gates ?? gates;
        } catch {
          // keep the failed gates the list carried
        }
        return gates.map((gate) => ({ kind: 'gate', execution: n.execution, step: n.step, gate }));
      }
      default:
        return [];
    }
  }
}
