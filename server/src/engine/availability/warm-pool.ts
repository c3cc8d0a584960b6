/**
 * The per-agent warm state machine (contract, "Availability" and "Workflows and orchestration"
 * rule 4: "Idle agents scale to zero and wake on demand"; DESIGN.md, "Execution model": "warm"
 * means the agent's worker is alive).
 *
 *   cold --ensureWarm / tick--> warming --warmUp resolves--> warm --tick: idle / closed--> draining --coolDown resolves--> cold
 *                               warming --warmUp rejects--> cold (awaiters get the error)
 *
 * The pool decides *when*; the host supplies *how*: `warmUp(agentId)` (e.g. start a worker thread)
 * and `coolDown(agentId)` (terminate it). The pool never fakes a delay: `warming` lasts exactly as
 * long as the injected warm-up takes. Concurrent `ensureWarm` calls share one warm-up.
 *
 * Rules applied by `tick` (docs/decisions.md, "Idle timeout"), for agents not busy:
 * - always_on: kept warm; a cold one (start-up, crashed worker) is warmed.
 * - business_hours, inside the window: pre-warmed once when the window opens (first tick in it);
 *   cooled after `idleTimeoutMs` without use; a request wakes it again.
 * - business_hours, outside the window: an agent not used since the window closed is cooled at
 *   once (scale to zero at 19:00); one woken by an after-hours request stays warm until idle for
 *   `idleTimeoutMs`, so an after-hours workflow pays the warm-up once, not at every step.
 * - commercial: on demand at any hour; cooled after `idleTimeoutMs` without use.
 * A busy agent (running steps, per the injected `isBusy`) is never cooled.
 *
 * @example
 * const pool = new WarmPool({ agents: AGENTS, clock, warmUp: (id) => workers.start(id), coolDown: (id) => workers.stop(id), isBusy: (id) => load.stats(id).running > 0 });
 * setInterval(() => void pool.tick(), 30_000); // host timer
 * await pool.ensureWarm('coder-ai');            // shares a warm-up in progress
 */
import type { AvailabilityMode } from '../catalog/enums';
import { EngineError } from '../errors';
import { systemClock, type Clock } from '../ports';
import { CONTRACT_BUSINESS_HOURS, isWithinBusinessHours, nextTransition, type BusinessHours } from './business-hours';

export type WarmState = 'cold' | 'warming' | 'warm' | 'draining';

/** 15 minutes: long enough to span the gaps between the steps of one workflow run. */
export const DEFAULT_IDLE_TIMEOUT_MS = 15 * 60_000;

export interface WarmPoolOptions {
  /** The agents the pool manages (an `AgentDef` list fits). */
  agents: readonly { id: string; availability: AvailabilityMode }[];
  /** Brings the agent's worker up; the pool reports `warming` until it settles. */
  warmUp(agentId: string): Promise<void>;
  /** Takes the agent's worker down; the pool reports `draining` until it settles. */
  coolDown(agentId: string): Promise<void> | void;
  /** True while the agent runs steps; a busy agent is never cooled. Default: never busy. */
  isBusy?(agentId: string): boolean;
  clock?: Clock;
  idleTimeoutMs?: number;
  /** Pre-warm business-hours agents when their window opens. Default true (contract: warm 07:00-19:00). */
  prewarm?: boolean;
  hours?: BusinessHours;
  /** Every state change, for the bus and logs. */
  onChange?(change: WarmChange): void;
  /** A warm-up or cool-down started by `tick` failed (nobody else awaits it). */
  onError?(agentId: string, err: unknown): void;
}

export interface WarmChange {
  agentId: string;
  from: WarmState;
  to: WarmState;
  at: number;
  reason: WarmReason;
}

export type WarmReason = 'request' | 'always_on' | 'window_opened' | 'idle' | 'window_closed' | 'warmed' | 'cooled' | 'warm_up_failed' | 'cool_down_failed';

/** One agent's warm status, for status endpoints; instants are ISO 8601 UTC. */
export interface WarmStatus {
  agentId: string;
  availability: AvailabilityMode;
  state: WarmState;
  /** When the agent entered `state`. */
  since: string;
  lastUsed: string | null;
  /** The next change the rules foresee if nothing else happens, or null (always_on, busy, in flight). */
  nextChange: { at: string; to: WarmState; reason: WarmReason } | null;
  /** Last warm-up or cool-down failure. */
  lastError: string | null;
}

interface Entry {
  agentId: string;
  availability: AvailabilityMode;
  state: WarmState;
  since: number;
  lastUsed: number | null;
  lastError: string | null;
  /** The warm-up in progress, shared by its callers. */
  warming: Promise<void> | null;
  /** The cool-down in progress (never rejects). */
  draining: Promise<void> | null;
  /** A warm-up requested during a cool-down, started when it ends. */
  afterDrain: Promise<void> | null;
  /** The business-hours window (by its closing instant) this agent was last pre-warmed for. */
  prewarmedFor: number | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class WarmPool {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly idleTimeoutMs: number;
  private readonly prewarm: boolean;
  private readonly hours: BusinessHours;

  constructor(private readonly opts: WarmPoolOptions) {
    this.clock = opts.clock ?? systemClock;
    this.idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (!(this.idleTimeoutMs > 0)) throw new EngineError('ERR_VALIDATION', 'idleTimeoutMs must be positive', { details: { idleTimeoutMs: this.idleTimeoutMs } });
    this.prewarm = opts.prewarm ?? true;
    this.hours = opts.hours ?? CONTRACT_BUSINESS_HOURS;
    const now = this.clock.now();
    for (const a of opts.agents) {
      this.entries.set(a.id, { agentId: a.id, availability: a.availability, state: 'cold', since: now, lastUsed: null, lastError: null, warming: null, draining: null, afterDrain: null, prewarmedFor: null });
    }
  }

  /**
   * Resolves when the agent is warm, starting a warm-up if it is cold (or once a cool-down in
   * progress ends). Callers share one warm-up; each records a use. Rejects with the warm-up's
   * error if it fails, with ERR_CANCELLED if `signal` aborts (the shared warm-up goes on), and
   * ERR_NOT_FOUND for an unknown agent.
   */
  ensureWarm(agentId: string, signal?: AbortSignal): Promise<void> {
    const entry = this.entry(agentId);
    entry.lastUsed = this.clock.now();
    if (entry.state === 'warm') return Promise.resolve();
    return withSignal(this.startWarmUp(entry, 'request'), signal, agentId);
  }

  /** Records a use (call at each step start and end), which postpones the idle cool-down. */
  touch(agentId: string): void {
    this.entry(agentId).lastUsed = this.clock.now();
  }

  /**
   * Applies the schedule and idle rules at `now` (call from a host timer, e.g. every 30 s):
   * starts warm-ups for always_on agents and for business-hours agents at window opening, and
   * cools idle agents. Returns what it started; failures go to `onError`.
   */
  tick(now: number = this.clock.now()): { warming: string[]; cooling: string[] } {
    const warming: string[] = [];
    const cooling: string[] = [];
    const inWindow = isWithinBusinessHours(now, this.hours);
    for (const entry of this.entries.values()) {
      if (entry.state === 'cold' && this.shouldWarm(entry, now, inWindow)) {
        warming.push(entry.agentId);
        this.startWarmUp(entry, entry.availability === 'always_on' ? 'always_on' : 'window_opened').catch((err: unknown) => this.opts.onError?.(entry.agentId, err));
      } else if (entry.state === 'warm' && !this.isBusy(entry.agentId)) {
        const reason = this.coolReason(entry, now, inWindow);
        if (reason !== null) {
          cooling.push(entry.agentId);
          this.startCoolDown(entry, reason);
        }
      }
    }
    return { warming, cooling };
  }

  status(agentId: string): WarmStatus {
    const e = this.entry(agentId);
    return {
      agentId: e.agentId,
      availability: e.availability,
      state: e.state,
      since: iso(e.since),
      lastUsed: e.lastUsed === null ? null : iso(e.lastUsed),
      nextChange: this.nextChange(e, this.clock.now()),
      lastError: e.lastError,
    };
  }

  /** Status of every agent, in the order given to the constructor. */
  statusAll(): WarmStatus[] {
    return [...this.entries.keys()].map((id) => this.status(id));
  }

  // -------------------------------------------------------------------------------------------
  // Rules
  // -------------------------------------------------------------------------------------------

  private shouldWarm(entry: Entry, now: number, inWindow: boolean): boolean {
    if (entry.availability === 'always_on') return true;
    if (entry.availability !== 'business_hours' || !this.prewarm || !inWindow) return false;
    // Once per window: an agent cooled for idleness inside the window then waits for a request.
    const window = this.windowKey(now);
    if (entry.prewarmedFor === window) return false;
    entry.prewarmedFor = window;
    return true;
  }

  private coolReason(entry: Entry, now: number, inWindow: boolean): WarmReason | null {
    if (entry.availability === 'always_on') return null;
    const lastActive = Math.max(entry.lastUsed ?? entry.since, entry.since);
    if (entry.availability === 'business_hours' && !inWindow && isWithinBusinessHours(lastActive, this.hours)) return 'window_closed';
    return now - lastActive >= this.idleTimeoutMs ? 'idle' : null;
  }

  private nextChange(entry: Entry, now: number): WarmStatus['nextChange'] {
    if (entry.availability === 'always_on' || entry.state === 'warming' || entry.state === 'draining') return null;
    if (entry.state === 'cold') {
      if (entry.availability !== 'business_hours' || !this.prewarm) return null;
      const t = this.nextOpening(now);
      return t === null ? null : { at: iso(t), to: 'warming', reason: 'window_opened' };
    }
    if (this.isBusy(entry.agentId)) return null;
    const lastActive = Math.max(entry.lastUsed ?? entry.since, entry.since);
    let at = lastActive + this.idleTimeoutMs;
    let reason: WarmReason = 'idle';
    if (entry.availability === 'business_hours' && isWithinBusinessHours(lastActive, this.hours)) {
      const close = nextTransition(lastActive, this.hours);
      if (close !== null && close.to === 'closed' && close.at < at) {
        at = close.at;
        reason = 'window_closed';
      }
    }
    return { at: iso(Math.max(at, now)), to: 'draining', reason };
  }

  /** Identifies the window containing `now` (its closing instant), to pre-warm once per window. */
  private windowKey(now: number): number {
    return nextTransition(now, this.hours)?.at ?? now;
  }

  private nextOpening(now: number): number | null {
    let t = nextTransition(now, this.hours);
    if (t !== null && t.to === 'closed') t = nextTransition(t.at, this.hours);
    return t?.at ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // Transitions
  // -------------------------------------------------------------------------------------------

  /** The shared warm-up of a cold, warming or draining agent. */
  private startWarmUp(entry: Entry, reason: WarmReason): Promise<void> {
    switch (entry.state) {
      case 'warm':
        return Promise.resolve();
      case 'warming':
        return entry.warming!;
      case 'draining':
        // Let the cool-down finish (it never rejects), then warm up; callers meanwhile share this.
        entry.afterDrain ??= entry.draining!.then(() => {
          entry.afterDrain = null;
          return this.startWarmUp(entry, reason);
        });
        return entry.afterDrain;
      case 'cold': {
        // Marked synchronously so that status and later callers see `warming` at once.
        this.move(entry, 'warming', reason);
        entry.warming = this.warmFromCold(entry);
        return entry.warming;
      }
    }
  }

  private async warmFromCold(entry: Entry): Promise<void> {
    try {
      await this.opts.warmUp(entry.agentId);
    } catch (err) {
      entry.warming = null;
      entry.lastError = `warm-up failed: ${messageOf(err)}`;
      this.move(entry, 'cold', 'warm_up_failed');
      throw err;
    }
    entry.warming = null;
    entry.lastError = null;
    this.move(entry, 'warm', 'warmed');
  }

  private startCoolDown(entry: Entry, reason: WarmReason): void {
    this.move(entry, 'draining', reason);
    entry.draining = (async () => {
      let failure: unknown = null;
      try {
        await this.opts.coolDown(entry.agentId);
      } catch (err) {
        failure = err;
      }
      entry.draining = null;
      // A worker that would not stop is treated as gone; the next request starts a fresh one.
      entry.lastError = failure === null ? null : `cool-down failed: ${messageOf(failure)}`;
      this.move(entry, 'cold', failure === null ? 'cooled' : 'cool_down_failed');
      if (failure !== null) this.opts.onError?.(entry.agentId, failure);
    })();
  }

  private move(entry: Entry, to: WarmState, reason: WarmReason): void {
    const from = entry.state;
    if (from === to) return;
    entry.state = to;
    entry.since = this.clock.now();
    this.opts.onChange?.({ agentId: entry.agentId, from, to, at: entry.since, reason });
  }

  private isBusy(agentId: string): boolean {
    return this.opts.isBusy?.(agentId) ?? false;
  }

  private entry(agentId: string): Entry {
    const e = this.entries.get(agentId);
    if (e === undefined) throw new EngineError('ERR_NOT_FOUND', `unknown agent '${agentId}'`, { details: { agentId } });
    return e;
  }
}

/** `promise`, or ERR_CANCELLED as soon as `signal` aborts (the promise itself goes on). */
function withSignal(promise: Promise<void>, signal: AbortSignal | undefined, agentId: string): Promise<void> {
  if (signal === undefined) return promise;
  const cancelled = (): EngineError => new EngineError('ERR_CANCELLED', `waiting for ${agentId} to warm up was cancelled`, { details: { agentId } });
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
