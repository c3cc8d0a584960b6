/**
 * Forwards engine events to the editor as `cadre/event`. `work_progress` is coalesced to at most one
 * per interval (100 ms: 10 per second) per execution: within the interval only the latest is kept and
 * sent when the interval ends. Every other event is sent at once, never dropped; a progress event
 * still held for that execution is sent just before it, so the client sees events in order (a
 * phase's last progress before its phase_completed).
 */
import type { EngineEvent, WorkProgressEvent } from '../../../protocol/events';

export interface ForwarderTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: ForwarderTimers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export const PROGRESS_INTERVAL_MS = 100;

interface PerExecution {
  lastSent: number;
  held?: WorkProgressEvent;
  timer?: unknown;
}

export class EventForwarder {
  private readonly executions = new Map<string, PerExecution>();
  private closed = false;

  constructor(
    private readonly send: (e: EngineEvent) => void,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
    private readonly timers: ForwarderTimers = realTimers,
  ) {}

  handle(e: EngineEvent): void {
    if (this.closed) return;
    const id = e.execution_id;
    let st = this.executions.get(id);
    if (e.type !== 'work_progress') {
      if (st) this.flush(id, st);
      this.send(e);
      if (e.type === 'execution_completed' || e.type === 'execution_failed') this.executions.delete(id);
      return;
    }
    if (!st) this.executions.set(id, (st = { lastSent: -Infinity }));
    const now = this.timers.now();
    if (st.held === undefined && now - st.lastSent >= this.intervalMs) {
      st.lastSent = now;
      this.send(e);
      return;
    }
    st.held = e;
    st.timer ??= this.timers.setTimeout(() => {
      const cur = this.executions.get(id);
      if (cur) {
        cur.timer = undefined;
        this.flush(id, cur);
      }
    }, Math.max(0, st.lastSent + this.intervalMs - now));
  }

  private flush(_id: string, st: PerExecution): void {
    if (st.timer !== undefined) {
      this.timers.clearTimeout(st.timer);
      st.timer = undefined;
    }
    const held = st.held;
    if (!held) return;
    st.held = undefined;
    st.lastSent = this.timers.now();
    this.send(held);
  }

  /** Stops forwarding; held progress is dropped (the client is going away). */
  close(): void {
    this.closed = true;
    for (const st of this.executions.values()) if (st.timer !== undefined) this.timers.clearTimeout(st.timer);
    this.executions.clear();
  }
}
