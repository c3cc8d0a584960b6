/**
 * The dashboard's view models: pure functions from the language server's `DashboardRequest.Result`
 * (and live engine events) to what the webview draws. No DOM, no VS Code: unit-tested in Node
 * (test/unit/webview/model.test.ts).
 */
import { PHASES, type EngineEvent, type GateResultData, type GateStatus, type Phase } from '../../protocol/events';
import type { AcmfModeName, DashboardRequest, DomainName, ExecutionRow, RunStatus, StepRow } from '../../protocol/lsp';
import type { ExecutionChoice } from './messages';

/** What a cell (or a step) of the run picture is coloured by. */
export type CellState = 'completed' | 'running' | 'pending' | 'failed' | 'skipped';

// ---------------------------------------------------------------------------------------------
// Formatting

/** `—` for unknown; `850 ms`, `4.2 s`, `3m 04s`, `1h 02m`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)}m ${String(totalSeconds % 60).padStart(2, '0')}s`;
  const totalMinutes = Math.round(ms / 60_000);
  return `${Math.floor(totalMinutes / 60)}h ${String(totalMinutes % 60).padStart(2, '0')}m`;
}

/** A 0–1 confidence with two decimals, `—` for unknown. */
export function formatConfidence(c: number | null | undefined): string {
  if (c === null || c === undefined || !Number.isFinite(c)) return '—';
  return Math.min(1, Math.max(0, c)).toFixed(2);
}

/** A gate's value as text. */
export function formatGateValue(v: GateResultData['value']): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return v;
}

/** The first 12 characters of a hash. */
export function shortHash(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}

/** Overall state of a run or a step. */
export function statusState(status: RunStatus | 'pending' | 'skipped'): CellState {
  switch (status) {
    case 'completed':
      return 'completed';
    case 'running':
    case 'waiting_approval':
      return 'running';
    case 'failed':
    case 'cancelled':
      return 'failed';
    case 'skipped':
      return 'skipped';
    case 'queued':
    case 'pending':
    default:
      return 'pending';
  }
}

// ---------------------------------------------------------------------------------------------
// The run as a picture: steps (agents) × the five RIGOR phases

export interface PhaseCell {
  phase: Phase;
  state: CellState;
  duration: string;
}

export interface GridRow {
  step: number;
  agentId: string;
  action: string;
  status: StepRow['status'];
  state: CellState;
  confidence: string;
  /** 0–1 for a confidence bar, null when unknown. */
  confidenceValue: number | null;
  duration: string;
  cells: PhaseCell[];
  gates: GateCounts;
}

export interface RunGrid {
  phases: readonly Phase[];
  rows: GridRow[];
  /** Steps per overall state. */
  counts: Record<CellState, number>;
}

/**
 * One row per step (agent), one cell per RIGOR phase. A failed or cancelled step colours the phase
 * it stopped in as failed (its Review when every phase completed: the gates failed it); a skipped
 * step greys the phases it never ran.
 */
export function runGrid(execution: ExecutionRow | null | undefined): RunGrid {
  const counts: Record<CellState, number> = { completed: 0, running: 0, pending: 0, failed: 0, skipped: 0 };
  if (!execution) return { phases: PHASES, rows: [], counts };
  const rows = [...execution.steps]
    .sort((a, b) => a.step - b.step)
    .map((s): GridRow => {
      const state = statusState(s.status);
      counts[state] += 1;
      const byPhase = new Map(s.phases.map((p) => [p.phase, p]));
      const cells: PhaseCell[] = PHASES.map((phase) => {
        const p = byPhase.get(phase);
        return { phase, state: p?.state ?? 'pending', duration: formatDuration(p?.durationMs ?? null) };
      });
      if (state === 'failed') {
        const stopped = cells.find((c) => c.state !== 'completed') ?? cells[cells.length - 1]!;
        stopped.state = 'failed';
      } else if (state === 'skipped') {
        for (const c of cells) if (c.state !== 'completed') c.state = 'skipped';
      }
      const confidenceValue = s.confidence === null || !Number.isFinite(s.confidence) ? null : Math.min(1, Math.max(0, s.confidence));
      return {
        step: s.step,
        agentId: s.agentId,
        action: s.action,
        status: s.status,
        state,
        confidence: formatConfidence(s.confidence),
        confidenceValue,
        duration: formatDuration(s.durationMs),
        cells,
        gates: gateCounts(s.gates),
      };
    });
  return { phases: PHASES, rows, counts };
}

// ---------------------------------------------------------------------------------------------
// The gate table of a step

export interface GateCounts {
  pass: number;
  fail: number;
  not_applicable: number;
  total: number;
}

export function gateCounts(gates: readonly GateResultData[]): GateCounts {
  const c: GateCounts = { pass: 0, fail: 0, not_applicable: 0, total: gates.length };
  for (const g of gates) if (g.status in c) c[g.status] += 1;
  return c;
}

export interface GateRowView {
  number: number;
  gate: string;
  category: GateResultData['category'];
  status: GateStatus;
  value: string;
  threshold: string;
  reason: string;
}

/** The gates of a step in gate order, formatted. */
export function gateTable(step: StepRow | null | undefined): { rows: GateRowView[]; counts: GateCounts } {
  if (!step) return { rows: [], counts: gateCounts([]) };
  const rows = [...step.gates]
    .sort((a, b) => a.number - b.number)
    .map((g) => ({
      number: g.number,
      gate: g.gate,
      category: g.category,
      status: g.status,
      value: formatGateValue(g.value),
      threshold: g.threshold === null ? '—' : formatGateValue(g.threshold),
      reason: g.reason,
    }));
  return { rows, counts: gateCounts(step.gates) };
}

/**
 * The step whose gates to show: the requested one if it exists, otherwise the latest step with gate
 * results, otherwise the last step. Undefined without steps.
 */
export function pickStep(execution: ExecutionRow | null | undefined, requested?: number): StepRow | undefined {
  if (!execution || execution.steps.length === 0) return undefined;
  const found = requested === undefined ? undefined : execution.steps.find((s) => s.step === requested);
  if (found) return found;
  const sorted = [...execution.steps].sort((a, b) => a.step - b.step);
  return [...sorted].reverse().find((s) => s.gates.length > 0) ?? sorted[sorted.length - 1];
}

// ---------------------------------------------------------------------------------------------
// Live events

/** Events after which the webview asks the host for fresh data (audit, gates, schedule, quality). */
export function needsRefresh(event: EngineEvent): boolean {
  switch (event.type) {
    case 'execution_started':
    case 'step_completed':
    case 'gate_results':
    case 'approval_decided':
    case 'execution_completed':
    case 'execution_failed':
      return true;
    default:
      return false;
  }
}

function newStep(step: number, agentId: string, action: string): StepRow {
  return {
    step,
    agentId,
    action,
    status: 'running',
    confidence: null,
    durationMs: null,
    phases: PHASES.map((phase) => ({ phase, state: 'pending' as const, durationMs: null })),
    gates: [],
  };
}

/** The step an agent's phase event belongs to: its running step, else its last one. */
function stepIndexOf(steps: readonly StepRow[], agentId: string): number {
  let last = -1;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    if (s.agentId !== agentId) continue;
    if (s.status === 'running' || s.status === 'waiting_approval') return i;
    last = i;
  }
  return last;
}

function withPhase(step: StepRow, phase: Phase, patch: { state: StepRow['phases'][number]['state']; durationMs?: number | null }): StepRow {
  const phases = PHASES.map((p) => step.phases.find((x) => x.phase === p) ?? { phase: p, state: 'pending' as const, durationMs: null });
  return {
    ...step,
    phases: phases.map((p) => (p.phase === phase ? { ...p, state: patch.state, durationMs: patch.durationMs === undefined ? p.durationMs : patch.durationMs } : p)),
  };
}

/**
 * The execution with one engine event applied, so the picture moves between two fetches. Events of
 * other executions return it unchanged (the same object).
 */
export function applyEvent(execution: ExecutionRow, event: EngineEvent): ExecutionRow {
  if (event.execution_id !== execution.id) return execution;
  const steps = [...execution.steps];
  const patchAgentStep = (agentId: string, f: (s: StepRow) => StepRow): ExecutionRow => {
    const i = stepIndexOf(steps, agentId);
    if (i < 0) {
      const n = steps.reduce((m, s) => Math.max(m, s.step), 0) + 1;
      steps.push(f(newStep(n, agentId, '')));
    } else {
      steps[i] = f(steps[i]!);
    }
    return { ...execution, steps };
  };
  switch (event.type) {
    case 'execution_started':
      return { ...execution, status: 'running' };
    case 'step_started': {
      const i = steps.findIndex((s) => s.step === event.step);
      if (i < 0) steps.push(newStep(event.step, event.agent_id, event.action));
      else steps[i] = { ...steps[i]!, status: 'running', agentId: event.agent_id, action: event.action };
      return { ...execution, status: execution.status === 'queued' ? 'running' : execution.status, steps };
    }
    case 'phase_started':
      return patchAgentStep(event.agent_id, (s) => withPhase({ ...s, status: s.status === 'pending' || s.status === 'queued' ? 'running' : s.status }, event.phase, { state: 'running' }));
    case 'work_progress':
      return patchAgentStep(event.agent_id, (s) => ({ ...withPhase(s, event.phase, { state: 'running' }), confidence: event.confidence }));
    case 'phase_completed':
      return patchAgentStep(event.agent_id, (s) => withPhase(s, event.phase, { state: 'completed', durationMs: event.duration_ms }));
    case 'gate_results':
      return patchAgentStep(event.agent_id, (s) => ({ ...s, gates: event.gates }));
    case 'approval_requested':
      return { ...patchAgentStep(event.agent_id, (s) => ({ ...s, status: 'waiting_approval' })), status: 'waiting_approval' };
    case 'approval_decided':
      return { ...patchAgentStep(event.agent_id, (s) => ({ ...s, status: event.approved ? 'running' : 'failed' })), status: event.approved ? 'running' : execution.status };
    case 'step_completed': {
      const i = steps.findIndex((s) => s.step === event.step);
      const base = i >= 0 ? steps[i]! : newStep(event.step, event.agent_id, '');
      const done: StepRow = { ...base, status: event.passed ? 'completed' : 'failed', confidence: event.confidence, durationMs: event.duration_ms };
      if (i >= 0) steps[i] = done;
      else steps.push(done);
      return { ...execution, steps };
    }
    case 'execution_completed':
      return { ...execution, status: 'completed', progress: 100, finishedAt: event.ts };
    case 'execution_failed':
      return {
        ...execution,
        status: event.status,
        finishedAt: event.ts,
        error: event.error,
        steps: steps.map((s) => (s.status === 'running' || s.status === 'waiting_approval' ? { ...s, status: event.status } : s)),
      };
    default:
      return execution;
  }
}

// ---------------------------------------------------------------------------------------------
// The execution picker

export function choiceOf(e: ExecutionRow): ExecutionChoice {
  return { id: e.id, kind: e.kind, title: e.title, status: e.status, createdAt: e.createdAt };
}

/** The picker's entries: `known` with `extra` merged in (by id, `extra` wins), newest first, at most `limit`. */
export function mergeChoices(known: readonly ExecutionChoice[], extra: readonly ExecutionChoice[], limit = 50): ExecutionChoice[] {
  const byId = new Map<string, ExecutionChoice>();
  for (const c of known) byId.set(c.id, c);
  for (const c of extra) byId.set(c.id, { ...byId.get(c.id), ...c });
  return [...byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).slice(0, limit);
}

/** A picker entry's label: `[workflow] full-sdlc · running`. */
export function choiceLabel(c: ExecutionChoice): string {
  return `[${c.kind}] ${c.title} · ${c.status.replace('_', ' ')}`;
}

// ---------------------------------------------------------------------------------------------
// The fleet schedule as a week grid

const DAY_MS = 86_400_000;

/**
 * Labels of the grid's 7 days (`Mon 3/9`), from today in `timezone` (the server's grid starts at
 * the local midnight of today there). An unknown time zone falls back to UTC.
 */
export function dayLabels(nowMs: number, timezone: string): string[] {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, year: 'numeric', month: 'numeric', day: 'numeric' }).formatToParts(nowMs);
  } catch {
    parts = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'numeric', day: 'numeric' }).formatToParts(nowMs);
  }
  const num = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? NaN);
  const noon = Date.UTC(num('year'), num('month') - 1, num('day'), 12);
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', weekday: 'short', month: 'numeric', day: 'numeric' });
  return Array.from({ length: 7 }, (_, k) => {
    const d = new Date(noon + k * DAY_MS);
    const weekday = fmt.formatToParts(d).find((p) => p.type === 'weekday')?.value ?? '';
    return `${weekday} ${d.getUTCMonth() + 1}/${d.getUTCDate()}`;
  });
}

export interface WeekAgentRow {
  id: string;
  mode: string;
  /** 7 × 24, missing entries read as cold. */
  cells: boolean[][];
  warmHours: number;
  perDay: number[];
}

export interface WeekGrid {
  timezone: string;
  days: string[];
  agents: WeekAgentRow[];
  /** 7 × 24: how many agents are warm at each hour. */
  coverage: number[][];
  maxCoverage: number;
  /** Agents warm every hour of the week / never pre-warmed. */
  alwaysWarm: number;
  onDemand: number;
}

/** The schedule normalised to 7 × 24 per agent, with per-day totals and the fleet's coverage. */
export function weekGrid(schedule: DashboardRequest.Result['schedule'] | null | undefined, nowMs: number): WeekGrid {
  const timezone = schedule?.timezone || 'UTC';
  const coverage = Array.from({ length: 7 }, () => new Array<number>(24).fill(0));
  const agents = (schedule?.agents ?? []).map((a): WeekAgentRow => {
    const cells = Array.from({ length: 7 }, (_, d) => Array.from({ length: 24 }, (_, h) => a.week?.[d]?.[h] === true));
    const perDay = cells.map((day) => day.filter(Boolean).length);
    cells.forEach((day, d) => day.forEach((warm, h) => warm && (coverage[d]![h]! += 1)));
    return { id: a.id, mode: a.mode, cells, warmHours: perDay.reduce((s, n) => s + n, 0), perDay };
  });
  return {
    timezone,
    days: dayLabels(nowMs, timezone),
    agents,
    coverage,
    maxCoverage: Math.max(0, ...coverage.flat()),
    alwaysWarm: agents.filter((a) => a.warmHours === 7 * 24).length,
    onDemand: agents.filter((a) => a.warmHours === 0).length,
  };
}

// ---------------------------------------------------------------------------------------------
// Quality trend sparklines

export interface Sparkline {
  /** SVG path `d` of the line; empty without values. */
  d: string;
  /** The last point (for a dot), null without values. */
  last: { x: number; y: number } | null;
  latest: number | null;
  min: number | null;
  max: number | null;
  /** Last minus first. */
  delta: number;
  trend: 'up' | 'down' | 'flat';
}

/**
 * A sparkline of 0–1 scores (clamped) in a `width` × `height` box with `pad` inside it. The y scale
 * is fixed to 0–1 so that agents' lines compare; one value draws a flat line.
 */
export function sparkline(values: readonly number[], width = 100, height = 24, pad = 2): Sparkline {
  const vs = values.filter((v) => Number.isFinite(v)).map((v) => Math.min(1, Math.max(0, v)));
  if (vs.length === 0) return { d: '', last: null, latest: null, min: null, max: null, delta: 0, trend: 'flat' };
  const round = (n: number): number => Math.round(n * 100) / 100;
  const innerW = Math.max(0, width - 2 * pad);
  const innerH = Math.max(0, height - 2 * pad);
  const y = (v: number): number => round(pad + (1 - v) * innerH);
  const points =
    vs.length === 1
      ? [
          { x: pad, y: y(vs[0]!) },
          { x: round(pad + innerW), y: y(vs[0]!) },
        ]
      : vs.map((v, i) => ({ x: round(pad + (i / (vs.length - 1)) * innerW), y: y(v) }));
  const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x} ${p.y}`).join(' ');
  const delta = round(vs[vs.length - 1]! - vs[0]!);
  return {
    d,
    last: points[points.length - 1]!,
    latest: vs[vs.length - 1]!,
    min: Math.min(...vs),
    max: Math.max(...vs),
    delta,
    trend: Math.abs(delta) < 0.01 ? 'flat' : delta > 0 ? 'up' : 'down',
  };
}

export interface AgentQualityRow {
  id: string;
  domain: DomainName;
  mode: AcmfModeName;
  spark: Sparkline;
  latest: string;
  samples: number;
}

/** The agents grouped by domain (in the six domains' order), each with its sparkline. */
export function agentQuality(agents: DashboardRequest.Result['agents'] | null | undefined): Array<{ domain: DomainName; agents: AgentQualityRow[] }> {
  const order: DomainName[] = ['BUILD', 'OPERATE', 'SECURE', 'GOVERN', 'OPTIMIZE', 'EVOLVE'];
  const groups = new Map<DomainName, AgentQualityRow[]>();
  for (const a of agents ?? []) {
    const spark = sparkline(a.quality);
    const row: AgentQualityRow = { id: a.id, domain: a.domain, mode: a.mode, spark, latest: formatConfidence(spark.latest), samples: a.quality.length };
    groups.set(a.domain, [...(groups.get(a.domain) ?? []), row]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([domain, rows]) => ({ domain, agents: rows }));
}
