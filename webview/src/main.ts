/**
 * Dashboard webview entry. It renders what the extension host sends it (`data`, `event`, `error`;
 * webview/src/messages.ts) with @vscode-elements/elements, keeps the selected tab, execution and
 * step across reloads (getState/setState), and never talks to the network itself.
 *
 * CSP: everything is built with the DOM API and textContent (never HTML strings, no `style="…"`
 * attributes, no <style> elements); dynamic sizes go through the CSSOM, which `style-src` allows.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-table/index.js';
import '@vscode-elements/elements/dist/vscode-table-body/index.js';
import '@vscode-elements/elements/dist/vscode-table-cell/index.js';
import '@vscode-elements/elements/dist/vscode-table-header/index.js';
import '@vscode-elements/elements/dist/vscode-table-header-cell/index.js';
import '@vscode-elements/elements/dist/vscode-table-row/index.js';
import type { EngineEvent } from '../../protocol/events';
import type { DashboardRequest, ExecutionRow } from '../../protocol/lsp';
import type { DashboardViewState, ExecutionChoice, HostMessage, WebviewMessage } from './messages';
import {
  agentQuality,
  applyEvent,
  choiceLabel,
  choiceOf,
  formatDuration,
  gateTable,
  mergeChoices,
  needsRefresh,
  pickStep,
  runGrid,
  shortHash,
  statusState,
  weekGrid,
  type CellState,
} from './model';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): DashboardViewState | undefined;
  setState(state: DashboardViewState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscodeApi = acquireVsCodeApi();
let view: DashboardViewState = vscodeApi.getState() ?? {};
let data: DashboardRequest.Result | undefined;
let choices: ExecutionChoice[] = [];
let updatedAt: string | undefined;
let errorText = '';

function saveState(patch: Partial<DashboardViewState>): void {
  view = { ...view, ...patch };
  vscodeApi.setState(view);
}

function post(m: WebviewMessage): void {
  vscodeApi.postMessage(m);
}

// ---------------------------------------------------------------------------------------------
// DOM helpers (text only through textContent)

type Child = Node | string | null | undefined | false;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, string | boolean>, ...children: Child[]): HTMLElementTagNameMap[K];
function el(tag: string, attrs?: Record<string, string | boolean>, ...children: Child[]): HTMLElement;
function el(tag: string, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false) continue;
    e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** A vscode-table with a header row and text (or node) cells. */
function table(headers: string[], rows: Child[][], opts: { columns?: string[]; rowClass?: (i: number) => string | undefined } = {}): HTMLElement {
  const t = el('vscode-table', { zebra: true, 'bordered-rows': true, resizable: true });
  if (opts.columns) (t as HTMLElement & { columns: string[] }).columns = opts.columns;
  t.append(el('vscode-table-header', { slot: 'header' }, ...headers.map((h) => el('vscode-table-header-cell', {}, h))));
  const body = el('vscode-table-body', { slot: 'body' });
  rows.forEach((cells, i) => {
    const cls = opts.rowClass?.(i);
    body.append(el('vscode-table-row', cls ? { class: cls } : {}, ...cells.map((c) => el('vscode-table-cell', {}, c))));
  });
  t.append(body);
  return t;
}

function badge(text: string, variant?: 'counter'): HTMLElement {
  return el('vscode-badge', variant ? { variant } : {}, text);
}

const stateLabel: Record<CellState, string> = { completed: 'completed', running: 'running', pending: 'pending', failed: 'failed', skipped: 'skipped' };

// ---------------------------------------------------------------------------------------------
// Header: title, picker, refresh

function renderHeader(): HTMLElement {
  const select = el('vscode-single-select', { 'aria-label': 'Execution', title: 'Execution' }) as HTMLElement & { value: string };
  const current = data?.execution;
  const list = current ? mergeChoices(choices, [choiceOf(current)]) : choices;
  if (list.length === 0) select.append(el('vscode-option', { value: '' }, 'No executions yet'));
  for (const c of list) select.append(el('vscode-option', { value: c.id, selected: c.id === current?.id }, choiceLabel(c)));
  select.value = current?.id ?? '';
  select.addEventListener('change', () => {
    const id = select.value;
    if (id && id !== data?.execution?.id) {
      saveState({ executionId: id, step: undefined });
      post({ type: 'select', executionId: id });
    }
  });
  const refresh = el('vscode-button', { secondary: true, title: 'Fetch the dashboard again' }, 'Refresh');
  refresh.addEventListener('click', () => post({ type: 'refresh', ...(view.executionId ? { executionId: view.executionId } : {}) }));
  return el(
    'header',
    { class: 'bar' },
    el('h1', {}, 'Cadre Dashboard'),
    select,
    refresh,
    el('span', { class: 'spacer' }),
    el('span', { class: 'muted', id: 'updated' }, updatedAt ? `Updated ${new Date(updatedAt).toLocaleTimeString()}` : ''),
  );
}

// ---------------------------------------------------------------------------------------------
// Run: the picture and the gate table of the selected step

function legend(): HTMLElement {
  const states: CellState[] = ['completed', 'running', 'pending', 'failed', 'skipped'];
  return el('div', { class: 'legend', 'aria-hidden': 'true' }, ...states.map((s) => el('span', { class: `state-${s}` }, el('span', { class: 'swatch' }), stateLabel[s])));
}

function confidenceBar(value: number | null): HTMLElement {
  const track = el('div', { class: 'conf-track' });
  if (value !== null) {
    const bar = el('div', { class: 'conf' });
    bar.style.width = `${Math.round(value * 100)}%`;
    track.append(bar);
  }
  return track;
}

function renderRun(exec: ExecutionRow | null): HTMLElement {
  const box = el('div', { id: 'run' });
  if (!exec) {
    box.append(el('p', { class: 'muted' }, 'No execution to show yet. Run a task or a workflow, then Refresh.'));
    return box;
  }
  const grid = runGrid(exec);
  const started = Date.parse(exec.createdAt);
  const ended = exec.finishedAt ? Date.parse(exec.finishedAt) : Date.now();
  box.append(
    el(
      'div',
      { class: 'summary' },
      el('strong', {}, exec.title),
      badge(exec.kind),
      el('span', { class: `state-${statusState(exec.status)}` }, el('span', { class: 'swatch' }), ` ${exec.status.replace('_', ' ')}`),
      el('span', { class: 'muted' }, `${Math.round(exec.progress)}%`),
      el('span', { class: 'muted' }, Number.isFinite(started) ? formatDuration(Math.max(0, ended - started)) : ''),
      el('code', { class: 'muted' }, exec.id),
    ),
  );
  if (exec.error) box.append(el('div', { class: 'error' }, `${exec.error.code}: ${exec.error.message}`));
  box.append(legend());

  const picture = el('div', { class: 'run', role: 'grid', 'aria-label': 'Agents by RIGOR phase' });
  picture.style.gridTemplateColumns = `minmax(150px, 1.4fr) repeat(${grid.phases.length}, minmax(84px, 1fr)) minmax(110px, 1fr)`;
  picture.append(el('div', { class: 'head agent' }, 'Agent · action'), ...grid.phases.map((p) => el('div', { class: 'head' }, p)), el('div', { class: 'head' }, 'Confidence · time'));
  const selected = pickStep(exec, view.step);
  for (const row of grid.rows) {
    const agent = el(
      'div',
      { class: `agent state-${row.state}${row.step === selected?.step ? ' selected' : ''}`, tabindex: '0', role: 'rowheader', title: `Step ${row.step}: ${row.status} — show its gates` },
      el('span', { class: 'id' }, `${row.step}. ${row.agentId}`),
      el('span', { class: 'muted' }, row.action || '—'),
    );
    const select = (): void => {
      saveState({ step: row.step });
      renderPanels();
    };
    agent.addEventListener('click', select);
    agent.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        select();
      }
    });
    picture.append(agent);
    for (const c of row.cells) {
      picture.append(el('div', { class: `cell state-${c.state}`, role: 'gridcell', title: `${row.agentId} · ${c.phase}: ${stateLabel[c.state]}` }, el('span', {}, stateLabel[c.state]), el('span', { class: 'muted' }, c.duration === '—' ? '' : c.duration)));
    }
    const gates = row.gates.total ? `${row.gates.pass}/${row.gates.total - row.gates.not_applicable} gates` : '';
    picture.append(el('div', { class: 'meta', role: 'gridcell' }, el('span', {}, `${row.confidence} · ${row.duration}`), confidenceBar(row.confidenceValue), el('span', { class: 'muted' }, gates)));
  }
  if (grid.rows.length === 0) box.append(el('p', { class: 'muted' }, 'No agent step has started yet.'));
  else box.append(picture);

  // The gate table of the selected step.
  const gt = gateTable(selected);
  box.append(el('div', { class: 'section-title' }, selected ? `Gates of step ${selected.step} (${selected.agentId}${selected.action ? ` ${selected.action}` : ''})` : 'Gates'));
  if (!selected || gt.rows.length === 0) {
    box.append(el('p', { class: 'muted' }, selected ? 'This step has no gate results yet (they come with its Review).' : 'Select a step to see its gates.'));
  } else {
    box.append(
      el('div', { class: 'summary' }, el('span', { class: 'gate-pass' }, `${gt.counts.pass} pass`), el('span', { class: 'gate-fail' }, `${gt.counts.fail} fail`), el('span', { class: 'gate-not_applicable' }, `${gt.counts.not_applicable} not applicable`)),
      table(
        ['#', 'Gate', 'Category', 'Status', 'Value', 'Threshold', 'Reason'],
        gt.rows.map((g) => [String(g.number), g.gate, g.category, el('span', { class: `gate-${g.status}` }, g.status.replace('_', ' ')), g.value, g.threshold, g.reason]),
        { columns: ['40px', '18%', '12%', '10%', '10%', '10%', 'auto'] },
      ),
    );
  }
  return box;
}

// ---------------------------------------------------------------------------------------------
// Audit trail

function renderAudit(audit: DashboardRequest.Result['audit'] | undefined): HTMLElement {
  const box = el('div', { id: 'audit' });
  if (!audit) {
    box.append(el('p', { class: 'muted' }, 'No audit records.'));
    return box;
  }
  box.append(
    el(
      'div',
      { class: 'summary' },
      el('span', { class: audit.verified.ok ? 'verified-ok' : 'verified-broken' }, audit.verified.ok ? '✓ Chain verified' : '✗ Chain verification failed'),
      el('span', { class: 'muted' }, audit.verified.detail),
      badge(String(audit.records.length), 'counter'),
    ),
  );
  if (audit.records.length === 0) {
    box.append(el('p', { class: 'muted' }, 'This run has no audit records yet.'));
    return box;
  }
  box.append(
    table(
      ['Seq', 'Time', 'Type', 'Agent', 'Summary', 'Hash'],
      audit.records.map((r) => [String(r.seq), new Date(r.ts).toLocaleString(), r.type, r.agentId ?? '—', r.summary, el('code', { title: r.hash }, shortHash(r.hash))]),
      { columns: ['56px', '16%', '14%', '12%', 'auto', '14%'] },
    ),
  );
  return box;
}

// ---------------------------------------------------------------------------------------------
// Fleet schedule: 7 days × 24 hours per agent

function renderSchedule(schedule: DashboardRequest.Result['schedule'] | undefined): HTMLElement {
  const box = el('div', { id: 'schedule' });
  const wg = weekGrid(schedule, Date.now());
  if (wg.agents.length === 0) {
    box.append(el('p', { class: 'muted' }, 'No schedule.'));
    return box;
  }
  box.append(
    el(
      'div',
      { class: 'summary' },
      el('span', {}, `Time zone ${wg.timezone}`),
      el('span', { class: 'muted' }, `${wg.agents.length} agents · ${wg.alwaysWarm} always warm · ${wg.onDemand} on demand`),
      el('span', { class: 'muted' }, 'Each column is one hour; 7 days from today.'),
    ),
  );
  const t = el('table', { class: 'week', role: 'grid', 'aria-label': 'Fleet schedule, 7 days by 24 hours' });
  const head = el('tr', {}, el('th', {}, 'Agent'), el('th', {}, 'Mode'));
  wg.days.forEach((d) => {
    const th = el('th', { colspan: '24', title: d }, d);
    head.append(th);
  });
  head.append(el('th', {}, 'Warm h'));
  t.append(el('thead', {}, head));
  const body = el('tbody');
  const hourCells = (cells: boolean[][], label: (d: number, h: number, warm: boolean) => string): HTMLElement[] =>
    cells.flatMap((day, d) => day.map((warm, h) => el('td', { class: `h ${warm ? 'warm' : 'cold'}${h === 0 ? ' day-start' : ''}`, title: label(d, h, warm) })));
  for (const a of wg.agents) {
    body.append(
      el(
        'tr',
        {},
        el('th', {}, a.id),
        el('th', {}, a.mode),
        ...hourCells(a.cells, (d, h, warm) => `${a.id} · ${wg.days[d]} ${String(h).padStart(2, '0')}:00 · ${warm ? 'warm' : 'cold'}`),
        el('td', { class: 'sum' }, String(a.warmHours)),
      ),
    );
  }
  // The fleet's coverage: how many agents are warm at each hour (opacity by count, through the CSSOM).
  const cov = el('tr', {}, el('th', {}, 'Fleet'), el('th', {}, 'warm agents'));
  wg.coverage.forEach((day, d) =>
    day.forEach((n, h) => {
      const td = el('td', { class: `h cov${h === 0 ? ' day-start' : ''}`, title: `${wg.days[d]} ${String(h).padStart(2, '0')}:00 · ${n} warm` });
      td.style.opacity = wg.maxCoverage ? String(Math.max(0.08, n / wg.maxCoverage)) : '0.08';
      cov.append(td);
    }),
  );
  cov.append(el('td', { class: 'sum' }, `max ${wg.maxCoverage}`));
  body.append(cov);
  t.append(body);
  box.append(el('div', { class: 'run' }, t));
  return box;
}

// ---------------------------------------------------------------------------------------------
// Agents: ACMF mode and quality trend

function sparkSvg(row: ReturnType<typeof agentQuality>[number]['agents'][number]): SVGElement {
  const w = 100;
  const h = 24;
  const s = svg('svg', { class: `spark ${row.spark.trend}`, width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img' });
  const title = svg('title', {});
  title.textContent = row.samples ? `${row.id}: ${row.samples} outcomes, latest ${row.latest}, range ${row.spark.min?.toFixed(2)}–${row.spark.max?.toFixed(2)}` : `${row.id}: no outcomes yet`;
  s.append(title, svg('path', { class: 'base', d: `M2 ${h / 2} L${w - 2} ${h / 2}` }));
  if (row.spark.d) s.append(svg('path', { class: 'line', d: row.spark.d }));
  if (row.spark.last) s.append(svg('circle', { cx: row.spark.last.x, cy: row.spark.last.y, r: 2 }));
  return s;
}

function renderAgents(agents: DashboardRequest.Result['agents'] | undefined): HTMLElement {
  const box = el('div', { id: 'agents' });
  const groups = agentQuality(agents);
  if (groups.length === 0) {
    box.append(el('p', { class: 'muted' }, 'No agents.'));
    return box;
  }
  for (const g of groups) {
    box.append(el('div', { class: 'section-title' }, g.domain));
    const grid = el('div', { class: 'agents' });
    for (const a of g.agents) {
      const arrow = a.spark.trend === 'up' ? '▲' : a.spark.trend === 'down' ? '▼' : '▬';
      grid.append(
        el(
          'div',
          { class: 'agent-q' },
          el('span', { class: 'name', title: a.id }, a.id),
          badge(a.mode),
          sparkSvg(a),
          el('span', { class: `mono trend-${a.spark.trend}`, title: `change ${a.spark.delta >= 0 ? '+' : ''}${a.spark.delta.toFixed(2)}` }, `${a.latest} ${a.samples ? arrow : ''}`),
        ),
      );
    }
    box.append(grid);
  }
  return box;
}

// ---------------------------------------------------------------------------------------------
// The page

const TAB_NAMES = ['Run', 'Audit trail', 'Schedule', 'Agents'] as const;
const panels: HTMLElement[] = [];

function renderPanels(): void {
  const builders = [() => renderRun(data?.execution ?? null), () => renderAudit(data?.audit), () => renderSchedule(data?.schedule), () => renderAgents(data?.agents)];
  const tab = view.tab ?? 0;
  // Only the visible panel is built; the others are built when their tab is selected.
  panels.forEach((p, i) => p.replaceChildren(i === tab ? builders[i]!() : ''));
}

function render(): void {
  const root = document.getElementById('root');
  if (!root) return;
  const tabs = el('vscode-tabs', { 'selected-index': String(view.tab ?? 0) });
  panels.length = 0;
  TAB_NAMES.forEach((name, i) => {
    const header = el('vscode-tab-header', { slot: 'header' }, name);
    if (i === 1 && data && !data.audit.verified.ok) header.append(' ', badge('!', 'counter'));
    const panel = el('vscode-tab-panel');
    panels.push(panel);
    tabs.append(header, panel);
  });
  tabs.addEventListener('vsc-tabs-select', (e: Event) => {
    const index = (e as CustomEvent<{ selectedIndex: number }>).detail?.selectedIndex;
    if (typeof index === 'number' && index !== view.tab) {
      saveState({ tab: index });
      renderPanels();
    }
  });
  root.replaceChildren(renderHeader(), el('div', { class: 'error', role: 'alert' }, errorText), tabs);
  renderPanels();
}

/** Coalesces renders (work_progress arrives up to 10/s per execution). */
let frame = 0;
function scheduleRunRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    if ((view.tab ?? 0) === 0) renderPanels();
  });
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleRefresh(): void {
  if (refreshTimer) clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    post({ type: 'refresh', ...(view.executionId ? { executionId: view.executionId } : {}) });
  }, 400);
}

function onEngineEvent(event: EngineEvent): void {
  const current = data?.execution;
  if (event.type === 'execution_started') {
    choices = mergeChoices(choices, [{ id: event.execution_id, kind: event.kind, title: event.execution_id, status: 'running', createdAt: event.ts }]);
  } else if (event.type === 'execution_completed' || event.type === 'execution_failed') {
    const known = choices.find((c) => c.id === event.execution_id);
    if (known) choices = mergeChoices(choices, [{ ...known, status: event.status }]);
  }
  if (current && event.execution_id === current.id) {
    data = { ...data!, execution: applyEvent(current, event) };
    scheduleRunRender();
    if (needsRefresh(event)) scheduleRefresh();
  } else if (!current && event.type === 'execution_started') {
    // Nothing shown yet: show the new run.
    scheduleRefresh();
  }
}

window.addEventListener('message', (e: MessageEvent<HostMessage>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'data': {
      data = m.data;
      updatedAt = m.at;
      errorText = '';
      choices = mergeChoices(m.executions, data.execution ? [choiceOf(data.execution)] : []);
      const id = data.execution?.id;
      if (id !== view.executionId) saveState({ executionId: id, step: undefined });
      render();
      break;
    }
    case 'event':
      onEngineEvent(m.event);
      break;
    case 'error':
      errorText = m.message;
      render();
      break;
    case 'tab':
      saveState({ tab: m.tab });
      render();
      break;
  }
});

render();
post({ type: 'ready', ...(view.executionId ? { executionId: view.executionId } : {}) });
