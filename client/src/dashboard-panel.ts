/**
 * The dashboard panel: one webview panel (viewType `cadre.dashboard`) fed by the language server's
 * `DashboardRequest` and its engine events. The webview script is dist/webview.js (it bundles
 * @vscode-elements/elements; none of it enters the client bundle). A WebviewPanelSerializer brings
 * the panel back after a window reload, at the execution it showed.
 *
 * Messages: webview → host `ready`, `refresh`, `select {executionId}`; host → webview `data`,
 * `event`, `error` (webview/src/messages.ts).
 */
import * as vscode from 'vscode';
import type { EngineEvent } from '../../protocol/events';
import type { DashboardRequest, ExecutionsRequest } from '../../protocol/lsp';
import type { DashboardViewState, ExecutionChoice, HostMessage, WebviewMessage } from '../../webview/src/messages';
import { buildDashboardHtml, makeNonce } from './dashboard-html';

export const DASHBOARD_VIEW_TYPE = 'cadre.dashboard';
const TITLE = 'Cadre Dashboard';

export interface DashboardDeps {
  /** `cadre/dashboard` on the language client. */
  request(params: DashboardRequest.Params): Promise<DashboardRequest.Result>;
  /** Every `cadre/event` notification. */
  onEvent(listener: (e: EngineEvent) => void): vscode.Disposable;
  /** Optional `cadre/executions`, for the execution picker (without it the picker lists what the panel has seen). */
  executions?(params: ExecutionsRequest.Params): Promise<ExecutionsRequest.Result>;
}

export type DashboardTab = 'run' | 'audit' | 'schedule' | 'agents';
const TAB_INDEX: Record<DashboardTab, number> = { run: 0, audit: 1, schedule: 2, agents: 3 };

export interface DashboardHandle {
  /** Creates or reveals the panel; with an id, shows that execution. */
  open(executionId?: string, tab?: DashboardTab): void;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

class DashboardPanel {
  private executionId: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Bumped per request so a slow answer never overwrites a newer one. */
  private generation = 0;
  private disposed = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    private readonly deps: DashboardDeps,
    executionId: string | undefined,
    private readonly onDispose: () => void,
  ) {
    this.executionId = executionId;
    const dist = vscode.Uri.joinPath(context.extensionUri, 'dist');
    panel.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist] };
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'cadre.svg');
    panel.webview.html = buildDashboardHtml({
      cspSource: panel.webview.cspSource,
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      nonce: makeNonce(),
      title: TITLE,
    });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: WebviewMessage) => this.onMessage(m)),
      deps.onEvent((e) => this.post({ type: 'event', event: e })),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /** A tab to select once the webview has its data (it may still be loading). */
  pendingTab: DashboardTab | undefined;

  show(executionId: string | undefined): void {
    this.panel.reveal(undefined, false);
    if (this.pendingTab !== undefined && this.loaded) this.flushTab();
    if (executionId !== undefined && executionId !== this.executionId) {
      this.executionId = executionId;
      void this.load();
    }
  }

  private onMessage(m: WebviewMessage): void {
    if (!m || typeof m !== 'object') return;
    switch (m.type) {
      case 'ready':
        // After a reload the webview remembers its selection; an explicit open(id) wins.
        if (this.executionId === undefined && typeof m.executionId === 'string') this.executionId = m.executionId;
        void this.load();
        break;
      case 'refresh':
        if (typeof m.executionId === 'string') this.executionId = m.executionId;
        void this.load();
        break;
      case 'select':
        if (typeof m.executionId === 'string' && m.executionId) {
          this.executionId = m.executionId;
          void this.load();
        }
        break;
    }
  }

  private async load(): Promise<void> {
    const generation = ++this.generation;
    try {
      const params: DashboardRequest.Params = this.executionId ? { executionId: this.executionId } : {};
      const [data, list] = await Promise.all([
        this.deps.request(params),
        this.deps.executions ? this.deps.executions({ limit: 50 }).catch(() => []) : Promise.resolve([]),
      ]);
      if (generation !== this.generation || this.disposed) return;
      const executions: ExecutionChoice[] = list.map((e) => ({ id: e.id, kind: e.kind, title: e.title, status: e.status, createdAt: e.createdAt }));
      if (data.execution && !this.executionId) this.executionId = data.execution.id;
      this.post({ type: 'data', data, executions, at: new Date().toISOString() });
      this.loaded = true;
      this.flushTab();
    } catch (err) {
      if (generation !== this.generation || this.disposed) return;
      this.post({ type: 'error', message: `Could not load the dashboard: ${messageOf(err)}` });
    }
  }

  private loaded = false;

  private flushTab(): void {
    if (this.pendingTab === undefined) return;
    this.post({ type: 'tab', tab: TAB_INDEX[this.pendingTab] });
    this.pendingTab = undefined;
  }

  private post(message: HostMessage): void {
    if (this.disposed) return;
    void this.panel.webview.postMessage(message).then(undefined, () => undefined);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
    this.onDispose();
  }
}

/**
 * Registers the panel serializer (so the dashboard survives a window reload) and returns `open`.
 * The package.json needs the activation event `onWebviewPanel:cadre.dashboard`.
 */
export function registerDashboard(context: vscode.ExtensionContext, deps: DashboardDeps): DashboardHandle {
  let current: DashboardPanel | undefined;

  const adopt = (panel: vscode.WebviewPanel, executionId: string | undefined): DashboardPanel => {
    const p = new DashboardPanel(panel, context, deps, executionId, () => {
      if (current === p) current = undefined;
    });
    current = p;
    return p;
  };

  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
      async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
        const saved = (state ?? {}) as DashboardViewState;
        if (current) {
          // One dashboard at a time: keep the restored one, drop the older.
          const old = current;
          current = undefined;
          old.dispose();
        }
        adopt(panel, typeof saved.executionId === 'string' ? saved.executionId : undefined);
      },
    }),
    { dispose: () => current?.dispose() },
  );

  return {
    open(executionId?: string, tab?: DashboardTab): void {
      if (current) {
        current.pendingTab = tab;
        current.show(executionId);
        return;
      }
      const panel = vscode.window.createWebviewPanel(
        DASHBOARD_VIEW_TYPE,
        TITLE,
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        {
          enableScripts: true,
          retainContextWhenHidden: false,
          localResourceRoots: [vscode.Uri.joinPath(context.extensionUri, 'dist')],
        },
      );
      adopt(panel, executionId).pendingTab = tab;
    },
  };
}
