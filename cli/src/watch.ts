/**
 * `--watch`: an execution's RIGOR progress from the SSE stream (typed by protocol/events.ts), in
 * words. One line per agent step with its five phases (Completed / Running / Pending), a progress bar
 * and the confidence; the failed gates with their reasons; the reason of any wait or failure with the
 * exact command that continues. On a terminal (and without NO_COLOR) the lines of running steps are
 * redrawn in place; otherwise every change is a new plain line (logs, CI, pipes).
 */
import { PHASES, type EngineEvent, type Phase, type StepCompletedEvent } from '../../protocol/events';
import type { ApiClient } from './http-client';

export type PhaseState = 'Completed' | 'Running' | 'Pending';

interface StepView {
  agent: string;
  action: string;
  phases: Record<Phase, PhaseState>;
  /** Progress of the running phase, 0-100. */
  phaseProgress: number;
  confidence: number | null;
}

export interface WatchState {
  /** The failed gates (with their reasons) of each agent's last Review, for its `✘ failed` line. */
  failedGates: Map<string, string[]>;
  /** Steps seen per outcome, for the final line. */
  outcomes?: Map<string, number>;
}

export type WatchEnd =
  | { status: 'completed' }
  | { status: 'failed' | 'cancelled'; code: string; message: string }
  | { status: 'awaiting_approval'; approvalId: string };

/** Percent of a step's five phases done: each phase is a fifth, the running one by its own progress. */
export function stepPercent(v: Pick<StepView, 'phases' | 'phaseProgress'>): number {
  const done = PHASES.filter((p) => v.phases[p] === 'Completed').length;
  const running = PHASES.some((p) => v.phases[p] === 'Running') ? v.phaseProgress / 100 : 0;
  return Math.min(100, Math.round(((done + running) / PHASES.length) * 100));
}

export function progressBar(percent: number, width = 10, unicode = true): string {
  const full = Math.round((percent / 100) * width);
  return unicode ? `${'█'.repeat(full)}${'░'.repeat(width - full)}` : `[${'#'.repeat(full)}${'-'.repeat(width - full)}]`;
}

const MARK: Record<PhaseState, string> = { Completed: '✔', Running: '▶', Pending: '·' };
const COLOR: Record<PhaseState, string> = { Completed: '\x1b[32m', Running: '\x1b[33m', Pending: '\x1b[2m' };
const RESET = '\x1b[0m';

/** A step's line: agent, action, its five phases, the bar, the percent and the confidence. */
export function stepLine(v: StepView, style: { tty: boolean; columns?: number }): string {
  // A redrawn line must not wrap (the cursor moves up by lines): a narrow terminal gets short names.
  const narrow = style.tty && (style.columns ?? 120) < 110;
  const phases = PHASES.map((p) => {
    const s = v.phases[p];
    return style.tty ? `${COLOR[s]}${MARK[s]} ${narrow ? p.slice(0, 3) : p}${RESET}` : `${p} ${s}`;
  }).join(style.tty ? (narrow ? ' ' : '  ') : ', ');
  const pct = stepPercent(v);
  const conf = v.confidence === null ? '' : ` · confidence ${v.confidence.toFixed(2)}`;
  return `  ${v.agent} ${v.action}  ${progressBar(pct, 10, style.tty)} ${String(pct).padStart(3)}%  ${phases}${conf}`;
}

/** One step's end, by outcome (protocol/events.ts STEP_OUTCOMES): the reason is always shown when there is one. */
export function describeStep(e: Pick<StepCompletedEvent, 'agent_id' | 'outcome' | 'reason' | 'passed' | 'confidence' | 'duration_ms'>, state: WatchState): string {
  const agent = e.agent_id;
  const reason = typeof e.reason === 'string' && e.reason ? e.reason : null;
  const outcome = e.outcome ?? (e.passed ? 'completed' : 'failed');
  state.outcomes ??= new Map();
  state.outcomes.set(outcome, (state.outcomes.get(outcome) ?? 0) + 1);
  switch (outcome) {
    case 'completed': return `✔ ${agent} completed (confidence ${Number(e.confidence).toFixed(2)}, ${e.duration_ms} ms)`;
    case 'not_applicable': return `– ${agent} not applicable: ${reason ?? 'nothing to do'}`;
    case 'needs_input': return `? ${agent} needs input: ${reason ?? 'the request lacks what this step needs'}`;
    case 'failed': {
      const gates = state.failedGates.get(agent) ?? [];
      return `✘ ${agent} failed: ${gates.length > 0 ? gates.join('; ') : reason ?? 'a quality gate failed'}`;
    }
    default: return `! ${agent} error: ${reason ?? 'unknown error'}`;
  }
}

/** What to do about a failed execution, by its error code: the command or setting that gets past it. */
export function nextStep(id: string, code: string): string {
  switch (code) {
    case 'ERR_SKILL_UNAVAILABLE': return `configure a language model (llm.provider in .cadre.yaml, see docs/configuration.md) or pick another verb; details: cadre status ${id}`;
    case 'ERR_NEEDS_INPUT': return `give the step what it names (--source DIR, --input JSON) and run again; details: cadre status ${id}`;
    case 'ERR_GATE_FAILED': return `every gate with its value and threshold: cadre status ${id}`;
    case 'ERR_SKILL_FAILED': return `what the step said and needs: cadre status ${id}`;
    case 'ERR_ACMF_DENIED': return `the action was denied; the decision is in: cadre logs ${id}`;
    case 'ERR_CANCELLED': return `cancelled; run it again to start over`;
    default: return `every event: cadre logs ${id}`;
  }
}

export interface Renderer {
  event(e: EngineEvent): void;
  /** A dropped connection being resumed. */
  reconnect(lastSeq: number): void;
  finish(): void;
}

/** The text renderer: redraws running steps in place on a terminal, plain lines elsewhere. */
export function textRenderer(write: (s: string) => void, opts: { tty: boolean; executionId: string; columns?: number }): Renderer {
  const state: WatchState = { failedGates: new Map() };
  const steps = new Map<string, StepView>();
  /** The last action of each agent: a retried step starts its phases again without a step_started. */
  const actions = new Map<string, string>();
  /** Lines of the live region currently on screen (terminal only). */
  let drawn = 0;
  const clear = () => {
    if (!opts.tty || drawn === 0) return;
    write(`\x1b[${drawn}A\x1b[0J`);
    drawn = 0;
  };
  const draw = () => {
    if (!opts.tty) return;
    const lines = [...steps.values()].map((v) => stepLine(v, { tty: true, columns: opts.columns ?? process.stdout.columns ?? 80 }));
    for (const l of lines) write(`${l}\n`);
    drawn = lines.length;
  };
  const line = (s: string) => {
    clear();
    write(`${s}\n`);
    draw();
  };
  const redraw = () => {
    clear();
    draw();
  };
  const view = (agent: string): StepView => {
    let v = steps.get(agent);
    if (!v) {
      v = { agent, action: actions.get(agent) ?? '', phases: Object.fromEntries(PHASES.map((p) => [p, 'Pending'])) as Record<Phase, PhaseState>, phaseProgress: 0, confidence: null };
      steps.set(agent, v);
    }
    return v;
  };
  return {
    reconnect: (last) => line(`  (connection dropped; resuming after event ${last})`),
    finish: () => clear(),
    event: (e) => {
      switch (e.type) {
        case 'execution_started': return line(`started ${e.execution_id}: ${e.agents.join(' → ')}`);
        case 'step_started': {
          const v = view(e.agent_id);
          v.action = e.action;
          actions.set(e.agent_id, e.action);
          for (const p of PHASES) v.phases[p] = 'Pending';
          v.phaseProgress = 0;
          v.confidence = null;
          return opts.tty ? redraw() : line(`▶ ${e.agent_id} ${e.action}`);
        }
        case 'phase_started': {
          const v = view(e.agent_id);
          v.phases[e.phase] = 'Running';
          v.phaseProgress = 0;
          return opts.tty ? redraw() : line(`  ${e.agent_id} · ${e.phase}`);
        }
        case 'work_progress': {
          const v = view(e.agent_id);
          v.phaseProgress = e.progress;
          v.confidence = e.confidence;
          return opts.tty ? redraw() : undefined;
        }
        case 'phase_completed': {
          const v = view(e.agent_id);
          v.phases[e.phase] = 'Completed';
          v.phaseProgress = 0;
          return opts.tty ? redraw() : line(stepLine(v, { tty: false }));
        }
        case 'gate_results': {
          const fails = e.gates.filter((g) => g.status === 'fail');
          state.failedGates.set(e.agent_id, fails.map((g) => (g.reason ? `${g.gate} (${g.reason})` : g.gate)));
          if (fails.length === 0) return line(`  ${e.agent_id} · Review: all ${e.gates.length} gates pass`);
          return line(`  ${e.agent_id} · Review: failed ${fails.map((g) => `${g.gate}${g.reason ? ` (${g.reason})` : ''}`).join('; ')}`);
        }
        case 'approval_requested':
          return line(`⏸ ${e.agent_id} waits for approval ${e.approval_id} to ${e.action} (risk ${e.risk}): cadre approve ${e.approval_id} (or cadre deny ${e.approval_id})`);
        case 'approval_decided': return line(`  ${e.approved ? '✔ approved' : '✘ denied'} by ${e.by}`);
        case 'step_completed': {
          steps.delete(e.agent_id);
          return line(describeStep(e, state));
        }
        case 'execution_completed': {
          steps.clear();
          const counts = [...(state.outcomes ?? new Map<string, number>())].map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
          return line(counts.length > 0 ? `completed: ${counts.join(', ')}` : 'completed');
        }
        case 'execution_failed': {
          steps.clear();
          return line(`${e.status}: ${e.error.message}\n  next: ${nextStep(e.execution_id, e.error.code)}`);
        }
      }
    },
  };
}

/** JSON lines: each event as received, for scripts (`--watch --json`). */
export function jsonRenderer(write: (s: string) => void): Renderer {
  return { event: (e) => write(`${JSON.stringify(e)}\n`), reconnect: () => {}, finish: () => {} };
}

/**
 * Follows the execution until it ends, or (unless `throughApprovals`) until it waits for an approval.
 * `afterSeq` starts after events already shown.
 */
export async function follow(api: ApiClient, id: string, r: Renderer, opts: { throughApprovals?: boolean; signal?: AbortSignal } = {}): Promise<WatchEnd> {
  let waiting: string | null = null;
  const ctrl = new AbortController();
  opts.signal?.addEventListener('abort', () => ctrl.abort());
  const it = api.events(id, { onReconnect: (last) => r.reconnect(last), signal: ctrl.signal })[Symbol.asyncIterator]();
  try {
    for (;;) {
      // While an approval is pending, a pause in the stream means the execution is waiting for it (a
      // replay of an old, already decided approval goes on at once with its decision).
      const next = it.next();
      const got: IteratorResult<EngineEvent> | null = waiting && !opts.throughApprovals ? await Promise.race([next, sleep(APPROVAL_SETTLE_MS).then(() => null)]) : await next;
      if (got === null) {
        void next.catch(() => {});
        return { status: 'awaiting_approval', approvalId: waiting! };
      }
      if (got.done) break;
      const e: EngineEvent = got.value;
      r.event(e);
      if (e.type === 'execution_completed') return { status: 'completed' };
      if (e.type === 'execution_failed') return { status: e.status, code: e.error.code, message: e.error.message };
      if (e.type === 'approval_requested') waiting = e.approval_id;
      if (e.type === 'approval_decided' && e.approval_id === waiting) waiting = null;
    }
  } finally {
    ctrl.abort();
    r.finish();
  }
  throw new Error(`the progress stream of ${id} ended before the execution did`);
}

/** How long a pending approval must stay undecided in the stream before `--watch` stops on it. */
const APPROVAL_SETTLE_MS = 500;

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms).unref());
}
