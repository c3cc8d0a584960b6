/**
 * The messages between the extension host (client/src/dashboard-panel.ts) and the dashboard
 * webview. Types only: the client imports them with `import type`, the webview bundles nothing here.
 */
import type { EngineEvent } from '../../protocol/events';
import type { DashboardRequest, RunStatus } from '../../protocol/lsp';

/** An entry of the execution picker. */
export interface ExecutionChoice {
  id: string;
  kind: 'task' | 'workflow' | 'rigor';
  title: string;
  status: RunStatus;
  createdAt: string;
}

/** Webview → host. */
export type WebviewMessage =
  /** The script has loaded; `executionId` is the one it had selected before a reload, if any. */
  | { type: 'ready'; executionId?: string }
  /** The Refresh button (or the webview itself after an event that changes more than the picture). */
  | { type: 'refresh'; executionId?: string }
  /** The execution picker. */
  | { type: 'select'; executionId: string };

/** Host → webview. */
export type HostMessage =
  | { type: 'data'; data: DashboardRequest.Result; executions: ExecutionChoice[]; at: string }
  | { type: 'event'; event: EngineEvent }
  | { type: 'error'; message: string }
  /** Select a tab (0 run, 1 audit, 2 schedule, 3 agents), e.g. for "Cadre: Show Fleet Schedule". */
  | { type: 'tab'; tab: number };

/** What the webview keeps with setState (and the panel serializer gets back after a window reload). */
export interface DashboardViewState {
  /** Index of the selected tab (0 run, 1 audit, 2 schedule, 3 agents). */
  tab?: number;
  executionId?: string;
  /** The selected step of the run (its gate table). */
  step?: number;
}
