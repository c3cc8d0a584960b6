/**
 * Per-agent load and admission (contract, "Workflows and orchestration" rule 4 and "Limits" rule 5:
 * "An agent above 85% load triggers backpressure, queueing or timeout adjustment").
 *
 * load = (running + queued) / capacity, capacity from the catalog (or the tuner's recommendation,
 * `setCapacity`). A step takes a slot when one is free; otherwise it waits in a bounded FIFO queue;
 * when the queue is full it is refused with a Retry-After estimate instead of piling up.
 *
 * Above 85% the agent is under pressure (docs/decisions.md, "Backpressure"): `pressure` is true
 * and `timeoutFactor` > 1 stretches the step timeouts the orchestrator sets, so that steps slowed
 * by contention are not killed and retried (which would add load).
 *
 * @example
 * const load = new AgentLoad({ agents: AGENTS, clock });
 * const a = load.tryAcquire('coder-ai', { signal });
 * if (!a.ok) throw overloadedError(a);                 // ERR_OVERLOADED, retryAfterMs
 * const slot = a.queued ? await a.slot : a.slot;       // queued: waits its turn (FIFO)
 * try { await runStep({ timeoutFactor: load.timeoutFactor('coder-ai') }); } finally { slot.release(); }
 */
import { EngineError } from '../errors';
import { systemClock, type Clock } from '../ports';

/** The contract's threshold: above it, an agent is under backpressure. */
export const BACKPRESSURE_THRESHOLD = 0.85;

export interface AgentLoadTuning {
  /** Queue bound as a multiple of capacity. Default 4. */
  queueFactor: number;
  /** Assumed mean step duration before any step finished. Default 30 s. */
  defaultStepMs: number;
  /** Weight of the newest duration in the mean step duration (EWMA). Default 0.2. */
  durationAlpha: number;
  /** Growth of the timeout factor per unit of load above 85%. Default 2. */
  timeoutSlope: number;
  /** Ceiling of the timeout factor. Default 2. */
  maxTimeoutFactor: number;
}

export const DEFAULT_LOAD_TUNING: Readonly<AgentLoadTuning> = Object.freeze({
  queueFactor: 4,
  defaultStepMs: 30_000,
  durationAlpha: 0.2,
  timeoutSlope: 2,
  maxTimeoutFactor: 2,
});

// ---------------------------------------------------------------------------------------------
// Pure formulas
// ---------------------------------------------------------------------------------------------

/** (running + queued) / capacity. */
export function loadOf(running: number, queued: number, capacity: number): number {
  return (running + queued) / capacity;
}

/** Strictly above 85%. */
export function isUnderPressure(load: number): boolean {
  return load > BACKPRESSURE_THRESHOLD;
}

/**
 * 1 up to 85% load, then 1 + (load - 0.85) * slope, capped: with the defaults 1.3 at 100% (every
 * slot busy, nothing queued) and the cap of 2 from 135% (a queue of a third of capacity).
 */
export function timeoutFactorFor(load: number, tuning: Pick<AgentLoadTuning, 'timeoutSlope' | 'maxTimeoutFactor'> = DEFAULT_LOAD_TUNING): number {
  if (!isUnderPressure(load)) return 1;
  return Math.min(tuning.maxTimeoutFactor, 1 + (load - BACKPRESSURE_THRESHOLD) * tuning.timeoutSlope);
}

/**
 * Retry-After estimate for the request at queue `position` (1-based): ceil(position / capacity)
 * "rounds" of the agent's mean step duration — each round, `capacity` slots free up — rounded up
 * to a whole second (HTTP Retry-After is in seconds), at least 1 s.
 */
export function retryAfterEstimate(position: number, capacity: number, meanStepMs: number): number {
  const ms = Math.ceil(Math.max(1, position) / capacity) * meanStepMs;
  return Math.max(1_000, Math.ceil(ms / 1_000) * 1_000);
}

// ---------------------------------------------------------------------------------------------
// AgentLoad
// ---------------------------------------------------------------------------------------------

/** A held slot. `release` frees it (idempotent) and hands it to the next waiter. */
export interface Slot {
  readonly agentId: string;
  /** Epoch ms when the slot was granted (queue wait excluded from the step duration). */
  readonly acquiredAt: number;
  release(): void;
}

/** Result of `tryAcquire`. */
export type Admission =
  | { ok: true; queued: false; slot: Slot }
  /** Waiting in the FIFO queue; `slot` resolves when a slot frees, rejects ERR_CANCELLED on abort. */
  | { ok: true; queued: true; position: number; retryAfterMs: number; slot: Promise<Slot> }
  /** The queue is full; `overloadedError` turns it into ERR_OVERLOADED (HTTP 503 + Retry-After). */
  | Overloaded;

/** A refusal: the agent's queue is at its bound. */
export interface Overloaded {
  ok: false;
  reason: 'overloaded';
  agentId: string;
  retryAfterMs: number;
}

/**
 * ERR_OVERLOADED for a refusal, retryable, with `details = { agentId, retryAfterMs }`
 * (`runWithRetry` waits at least `retryAfterMs` before the next attempt).
 */
export function overloadedError(refusal: Overloaded): EngineError {
  return new EngineError('ERR_OVERLOADED', `${refusal.agentId} is overloaded; retry in ${Math.ceil(refusal.retryAfterMs / 1000)} s`, {
    details: { agentId: refusal.agentId, retryAfterMs: refusal.retryAfterMs },
    retryable: true,
  });
}

/** One agent's load, for status endpoints. */
export interface LoadStats {
  agentId: string;
  running: number;
  queued: number;
  /** Effective capacity (the catalog's, or the tuner's via `setCapacity`). */
  capacity: number;
  catalogCapacity: number;
  queueBound: number;
  /** (running + queued) / capacity, rounded to 3 decimals. */
  load: number;
  pressure: boolean;
  timeoutFactor: number;
  meanStepMs: number;
  /** Retry-After a new request would be told if refused now. */
  retryAfterMs: number;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(err: unknown): void;
  detach(): void;
}

interface AgentEntry {
  agentId: string;
  catalogCapacity: number;
  capacity: number;
  running: number;
  queue: Waiter[];
  meanStepMs: number;
  samples: number;
}

export class AgentLoad {
  private readonly entries = new Map<string, AgentEntry>();
  private readonly clock: Clock;
  private readonly tuning: AgentLoadTuning;

  constructor(opts: { agents: readonly { id: string; capacity: number }[]; clock?: Clock; tuning?: Partial<AgentLoadTuning> }) {
    this.clock = opts.clock ?? systemClock;
    this.tuning = validateTuning({ ...DEFAULT_LOAD_TUNING, ...opts.tuning });
    for (const a of opts.agents) {
      assertCapacity(a.id, a.capacity);
      this.entries.set(a.id, { agentId: a.id, catalogCapacity: a.capacity, capacity: a.capacity, running: 0, queue: [], meanStepMs: this.tuning.defaultStepMs, samples: 0 });
    }
  }

  /**
   * A slot now if one is free and nobody is queued; else a place in the FIFO queue; else, with the
   * queue at its bound (queueFactor x capacity), `overloaded`. Throws ERR_CANCELLED if `signal` is
   * already aborted and ERR_NOT_FOUND for an unknown agent.
   */
  tryAcquire(agentId: string, opts: { signal?: AbortSignal } = {}): Admission {
    const e = this.entry(agentId);
    if (opts.signal?.aborted) throw cancelled(agentId);
    if (e.running < e.capacity && e.queue.length === 0) {
      e.running++;
      return { ok: true, queued: false, slot: this.slot(e) };
    }
    if (e.queue.length >= this.queueBound(e)) {
      return { ok: false, reason: 'overloaded', agentId, retryAfterMs: retryAfterEstimate(e.queue.length + 1, e.capacity, e.meanStepMs) };
    }
    const position = e.queue.length + 1;
    const slot = this.enqueue(e, opts.signal);
    return { ok: true, queued: true, position, retryAfterMs: retryAfterEstimate(position, e.capacity, e.meanStepMs), slot };
  }

  /**
   * Sets the effective capacity (e.g. the tuner's recommended concurrency). Raising it admits
   * waiters at once; lowering it lets running steps finish (nothing is pre-empted).
   */
  setCapacity(agentId: string, capacity: number): void {
    assertCapacity(agentId, capacity);
    const e = this.entry(agentId);
    e.capacity = capacity;
    this.admitWaiters(e);
  }

  /** (running + queued) / capacity. */
  load(agentId: string): number {
    const e = this.entry(agentId);
    return loadOf(e.running, e.queue.length, e.capacity);
  }

  /** True above 85% load. */
  pressure(agentId: string): boolean {
    return isUnderPressure(this.load(agentId));
  }

  /** The factor to apply to a step timeout set now (1 without pressure). */
  timeoutFactor(agentId: string): number {
    return timeoutFactorFor(this.load(agentId), this.tuning);
  }

  stats(agentId: string): LoadStats {
    const e = this.entry(agentId);
    const load = loadOf(e.running, e.queue.length, e.capacity);
    return {
      agentId,
      running: e.running,
      queued: e.queue.length,
      capacity: e.capacity,
      catalogCapacity: e.catalogCapacity,
      queueBound: this.queueBound(e),
      load: Math.round(load * 1000) / 1000,
      pressure: isUnderPressure(load),
      timeoutFactor: Math.round(timeoutFactorFor(load, this.tuning) * 1000) / 1000,
      meanStepMs: Math.round(e.meanStepMs),
      retryAfterMs: retryAfterEstimate(e.queue.length + 1, e.capacity, e.meanStepMs),
    };
  }

  /** Stats of every agent, in the order given to the constructor. */
  statsAll(): LoadStats[] {
    return [...this.entries.keys()].map((id) => this.stats(id));
  }

  /** queueFactor x capacity; a factor of 0 means no queue (refuse when every slot is busy). */
  private queueBound(e: AgentEntry): number {
    return Math.round(this.tuning.queueFactor * e.capacity);
  }

  private slot(e: AgentEntry): Slot {
    const acquiredAt = this.clock.now();
    let released = false;
    return {
      agentId: e.agentId,
      acquiredAt,
      release: () => {
        if (released) return;
        released = true;
        e.running--;
        this.recordDuration(e, this.clock.now() - acquiredAt);
        this.admitWaiters(e);
      },
    };
  }

  private enqueue(e: AgentEntry, signal: AbortSignal | undefined): Promise<Slot> {
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = (): void => {
        const i = e.queue.indexOf(waiter);
        if (i !== -1) e.queue.splice(i, 1);
        reject(cancelled(e.agentId));
      };
      const waiter: Waiter = { resolve, reject, detach: () => signal?.removeEventListener('abort', onAbort) };
      e.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Hands free slots to waiters, first come first served. */
  private admitWaiters(e: AgentEntry): void {
    while (e.running < e.capacity) {
      const next = e.queue.shift();
      if (next === undefined) return;
      next.detach();
      e.running++;
      next.resolve(this.slot(e));
    }
  }

  private recordDuration(e: AgentEntry, ms: number): void {
    // The first real sample replaces the assumed default rather than being averaged with it.
    e.meanStepMs = e.samples === 0 ? ms : e.meanStepMs + this.tuning.durationAlpha * (ms - e.meanStepMs);
    e.samples++;
  }

  private entry(agentId: string): AgentEntry {
    const e = this.entries.get(agentId);
    if (e === undefined) throw new EngineError('ERR_NOT_FOUND', `unknown agent '${agentId}'`, { details: { agentId } });
    return e;
  }
}

function cancelled(agentId: string): EngineError {
  return new EngineError('ERR_CANCELLED', `waiting for a slot of ${agentId} was cancelled`, { details: { agentId } });
}

function assertCapacity(agentId: string, capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 1) throw new EngineError('ERR_VALIDATION', `capacity of ${agentId} must be an integer >= 1`, { details: { agentId, capacity } });
}

function validateTuning(t: AgentLoadTuning): AgentLoadTuning {
  const ok = t.queueFactor >= 0 && t.defaultStepMs > 0 && t.durationAlpha > 0 && t.durationAlpha <= 1 && t.timeoutSlope >= 0 && t.maxTimeoutFactor >= 1;
  if (!ok) throw new EngineError('ERR_VALIDATION', 'agent load tuning out of range', { details: { ...t } });
  return Object.freeze({ ...t });
}
