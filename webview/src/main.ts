/**
 * Dashboard webview entry. It renders what the extension host sends it and keeps that state across
 * reloads (getState/setState); it never talks to the network itself.
 */

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState<T>(): T | undefined;
  setState<T>(state: T): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

interface DashboardState {
  server?: { url: string; version: string };
}

const vscodeApi = acquireVsCodeApi();
let state: DashboardState = vscodeApi.getState<DashboardState>() ?? {};

function render(): void {
  const root = document.getElementById('root');
  if (!root) return;
  root.textContent = state.server ? `Cadre ${state.server.version} at ${state.server.url}` : 'Waiting for the Cadre server…';
}

window.addEventListener('message', (event: MessageEvent<{ type: string; server?: DashboardState['server'] }>) => {
  if (event.data.type === 'server/ready' && event.data.server) {
    state = { ...state, server: event.data.server };
    vscodeApi.setState(state);
    render();
  }
});

render();
vscodeApi.postMessage({ type: 'dashboard/ready' });
