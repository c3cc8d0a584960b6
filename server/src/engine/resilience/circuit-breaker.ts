/**
 * Circuit breakers, one per key (an agent id): stop sending work to an agent that keeps failing,
 * then let one probe find out whether it recovered (contract, "Workflows and orchestration" rule 4).
 *
 * Rule (docs/decisions.md, "Circuit breaker"): consecutive failures, not a failure rate over a
 * window. A local agent sees a few steps a minute; a rate needs a minimum volume before it means
 * anything, and "5 failures in a row" is a rule a person reads in the status output and believes.
 *
 *   closed --N consecutive failures--> open --cooldown elapsed--> half_open (admits ONE probe)
 *   half_open --probe succeeds--> closed (cooldown back to base)
 *   half_open --probe fails or exceeds probeTimeoutMs--> open (cooldown doubled, capped)
 *
 * The open → half_open move needs no timer: it happens when the breaker is next looked at
 * (`canPass`, `acquire`, `snapshot`) at or after `nextProbeAt`, with the transition event stamped
 * with that observation time.
 *
 * What counts as a failure is the caller's choice: release(false) for transient trouble (timeouts,
 * crashed workers, infrastructure errors), release(true) for a step that ran, even if its gates
 * failed — a failed gate says the code is bad, not that the agent is down.
 *
 * @example
 * const permit = breakers.get('coder-ai').acquire();
 * if (!permit.ok) throw circuitOpenError('coder-ai', permit); // ERR_CIRCUIT_OPEN, retryable, retryAfterMs
 * try { await run(); permit.release(true); } catch (e) { permit.release(!isTransient(e)); throw e; }
 */
import { EngineError } from '../errors';
import { systemClock, type Clock } from '../ports';

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Consecutive failures that open a closed breaker. Default 5. */
  failureThreshold: number;
  /** Cooldown after the first opening. Default 30 s. */
  baseCooldownMs: number;
  /** Each re-opening from half-open doubles the cooldown, up to this. Default 5 min. */
  maxCooldownMs: number;
  /** Growth of the cooldown per re-opening. Default 2. */
  cooldownFactor: number;
  /** A probe not released within this is counted as failed, so a lost permit cannot wedge the breaker. Default 2 min. */
  probeTimeoutMs: number;
  /** Retry-After told to callers refused while the probe is in flight. Default 1 s. */
  probeBusyRetryMs: number;
}

export const DEFAULT_BREAKER_OPTIONS: Readonly<BreakerOptions> = Object.freeze({
  failureThreshold: 5,
  baseCooldownMs: 30_000,
  maxCooldownMs: 300_000,
  cooldownFactor: 2,
  probeTimeoutMs: 120_000,
  probeBusyRetryMs: 1_000,
});

/** A state change, for the bus / audit trail / logs. */
export interface BreakerTransition {
  key: string;
  from: BreakerState;
  to: BreakerState;
  /** Epoch ms of the change. */
  at: number;
  reason: 'failure_threshold' | 'cooldown_elapsed' | 'probe_succeeded' | 'probe_failed' | 'probe_timeout' | 'reset';
  /** Consecutive failures at the change. */
  failures: number;
  /** The cooldown now running (open) or that will apply on the next re-opening. */
  cooldownMs: number;
}

/** A granted pass. Call `release` exactly once (later calls are ignored). */
export interface Permit {
  ok: true;
  /** True when this pass is the half-open probe. */
  probe: boolean;
  release(success: boolean): void;
}

/** A refused pass: come back in `retryAfterMs`. */
export interface Refusal {
  ok: false;
  state: BreakerState;
  retryAfterMs: number;
}

/** A breaker's state for status endpoints; instants are ISO 8601 UTC strings. */
export interface BreakerSnapshot {
  key: string;
  state: BreakerState;
  /** Consecutive failures (reset by a success). */
  failures: number;
  totalSuccesses: number;
  totalFailures: number;
  /** Times the breaker opened. */
  opens: number;
  openedAt: string | null;
  nextProbeAt: string | null;
  probeInFlight: boolean;
  cooldownMs: number;
}

/**
 * The error for a refused pass: ERR_CIRCUIT_OPEN, retryable, with `details = { agentId, state,
 * retryAfterMs }` (`runWithRetry` waits at least `retryAfterMs` before the next attempt; HTTP maps
 * it to 503 with Retry-After).
 */
export function circuitOpenError(key: string, refusal: Refusal): EngineError {
  return new EngineError('ERR_CIRCUIT_OPEN', `${key} is failing; its circuit is ${refusal.state === 'open' ? 'open' : 'probing'}, retry in ${Math.ceil(refusal.retryAfterMs / 1000)} s`, {
    details: { agentId: key, state: refusal.state, retryAfterMs: refusal.retryAfterMs },
    retryable: true,
  });
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private totalSuccesses = 0;
  private totalFailures = 0;
  private opens = 0;
  private openedAt: number | null = null;
  private nextProbeAt: number | null = null;
  private probeStartedAt: number | null = null;
  /** The cooldown of the next opening; doubles on each failed probe, back to base on close. */
  private cooldownMs: number;
  // Every transition starts a new generation; a permit from an older one only updates the counters,
  // so a slow call granted before the breaker opened cannot close or re-open it later.
  private generation = 0;

  constructor(
    readonly key: string,
    private readonly options: BreakerOptions = DEFAULT_BREAKER_OPTIONS,
    private readonly clock: Clock = systemClock,
    private readonly onTransition: (t: BreakerTransition) => void = () => undefined,
  ) {
    this.cooldownMs = options.baseCooldownMs;
  }

  /** The state at the clock's current time. */
  get state(): BreakerState {
    this.observe();
    return this.current;
  }

  /** Whether `acquire` would grant a pass now (without taking it). */
  canPass(): boolean {
    this.observe();
    return this.current === 'closed' || (this.current === 'half_open' && this.probeStartedAt === null);
  }

  /** Takes a pass: always when closed, the single probe when half-open, none when open. */
  acquire(): Permit | Refusal {
    const now = this.observe();
    if (this.current === 'closed') return this.permit(false);
    if (this.current === 'open') return { ok: false, state: 'open', retryAfterMs: Math.max(0, (this.nextProbeAt ?? now) - now) };
    if (this.probeStartedAt !== null) return { ok: false, state: 'half_open', retryAfterMs: this.options.probeBusyRetryMs };
    this.probeStartedAt = now;
    return this.permit(true);
  }

  /** Back to closed with counters of consecutive failures and cooldown reset (an operator action). */
  reset(): void {
    this.transition('closed', 'reset', this.clock.now());
    this.failures = 0;
    this.cooldownMs = this.options.baseCooldownMs;
  }

  snapshot(): BreakerSnapshot {
    this.observe();
    return {
      key: this.key,
      state: this.current,
      failures: this.failures,
      totalSuccesses: this.totalSuccesses,
      totalFailures: this.totalFailures,
      opens: this.opens,
      openedAt: iso(this.openedAt),
      nextProbeAt: iso(this.nextProbeAt),
      probeInFlight: this.probeStartedAt !== null,
      cooldownMs: this.cooldownMs,
    };
  }

  private permit(probe: boolean): Permit {
    const generation = this.generation;
    let released = false;
    return {
      ok: true,
      probe,
      release: (success: boolean) => {
        if (released) return;
        released = true;
        this.record(success, generation, probe);
      },
    };
  }

  private record(success: boolean, generation: number, probe: boolean): void {
    const now = this.observe();
    if (success) this.totalSuccesses++;
    else this.totalFailures++;
    if (generation !== this.generation) return;
    if (probe) {
      if (success) this.close(now, 'probe_succeeded');
      else this.reopen(now, 'probe_failed');
      return;
    }
    // A permit of the current generation that is not the probe was granted while closed.
    if (success) {
      this.failures = 0;
      return;
    }
    this.failures++;
    if (this.failures >= this.options.failureThreshold) this.open(now, 'failure_threshold');
  }

  /** Applies the time-driven moves (cooldown over, probe lost) and returns the current time. */
  private observe(): number {
    const now = this.clock.now();
    if (this.current === 'open' && this.nextProbeAt !== null && now >= this.nextProbeAt) {
      this.transition('half_open', 'cooldown_elapsed', now);
    }
    if (this.current === 'half_open' && this.probeStartedAt !== null && now - this.probeStartedAt >= this.options.probeTimeoutMs) {
      this.totalFailures++;
      this.reopen(now, 'probe_timeout');
    }
    return now;
  }

  private open(now: number, reason: BreakerTransition['reason']): void {
    this.openedAt = now;
    this.nextProbeAt = now + this.cooldownMs;
    this.opens++;
    this.transition('open', reason, now);
  }

  /** A failed probe: open again, for longer. */
  private reopen(now: number, reason: BreakerTransition['reason']): void {
    this.failures++;
    this.cooldownMs = Math.min(this.options.maxCooldownMs, Math.round(this.cooldownMs * this.options.cooldownFactor));
    this.open(now, reason);
  }

  private close(now: number, reason: BreakerTransition['reason']): void {
    this.failures = 0;
    this.cooldownMs = this.options.baseCooldownMs;
    this.transition('closed', reason, now);
  }

  private transition(to: BreakerState, reason: BreakerTransition['reason'], at: number): void {
    const from = this.current;
    this.current = to;
    this.generation++;
    this.probeStartedAt = null;
    if (to === 'closed') {
      this.openedAt = null;
      this.nextProbeAt = null;
    }
    if (from !== to) this.onTransition({ key: this.key, from, to, at, reason, failures: this.failures, cooldownMs: this.cooldownMs });
  }
}

/**
 * The breakers of all agents, created on first use with shared options.
 *
 * @example
 * const breakers = new CircuitBreakers({ clock, onTransition: (t) => bus.publish('agent.circuit', t) });
 * breakers.get('coder-ai').acquire();
 * breakers.snapshot(); // for GET /api/agents status
 */
export class CircuitBreakers {
  private readonly options: BreakerOptions;
  private readonly clock: Clock;
  private readonly onTransition: (t: BreakerTransition) => void;
  private readonly byKey = new Map<string, CircuitBreaker>();

  constructor(opts: { options?: Partial<BreakerOptions>; clock?: Clock; onTransition?: (t: BreakerTransition) => void } = {}) {
    this.options = validateOptions({ ...DEFAULT_BREAKER_OPTIONS, ...opts.options });
    this.clock = opts.clock ?? systemClock;
    this.onTransition = opts.onTransition ?? (() => undefined);
  }

  get(key: string): CircuitBreaker {
    let breaker = this.byKey.get(key);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(key, this.options, this.clock, this.onTransition);
      this.byKey.set(key, breaker);
    }
    return breaker;
  }

  /** Snapshots of the breakers used so far, sorted by key. An unused key is simply closed. */
  snapshot(): BreakerSnapshot[] {
    return [...this.byKey.keys()].sort().map((k) => this.byKey.get(k)!.snapshot());
  }
}

function validateOptions(o: BreakerOptions): BreakerOptions {
  const ok =
    Number.isInteger(o.failureThreshold) && o.failureThreshold >= 1 &&
    o.baseCooldownMs > 0 && o.maxCooldownMs >= o.baseCooldownMs && o.cooldownFactor >= 1 &&
    o.probeTimeoutMs > 0 && o.probeBusyRetryMs >= 0;
  if (!ok) throw new EngineError('ERR_VALIDATION', 'circuit breaker options out of range', { details: { ...o } });
  return Object.freeze({ ...o });
}
