/**
 * The fleet as the orchestrator sees it: every step is admitted through its agent's warm pool (a
 * cold agent warms up first), load (a bounded queue, backpressure above 85%) and circuit breaker, and
 * its outcome teaches the tuner the agent's timeout and parallelism (never the choice of agents).
 */
import { AGENTS } from '../catalog/index';
import { weeklySchedule, type WeeklySchedule } from '../availability/business-hours';
import { WarmPool, type WarmStatus } from '../availability/warm-pool';
import { AgentLoad, overloadedError, type LoadStats } from '../load/agent-load';
import { Tuner } from '../load/tuner';
import { CircuitBreakers, circuitOpenError, type BreakerSnapshot } from '../resilience/circuit-breaker';
import { retryPolicy, type RetryPolicy } from '../resilience/retry';
import type { Clock } from '../ports';

export interface FleetOptions {
  clock: Clock;
  /** Brings an agent's worker up (the real warm-up cost); default: nothing to start in process. */
  warmUp?(agentId: string): Promise<void>;
  coolDown?(agentId: string): Promise<void> | void;
  /** Overrides of the retry policy (tests shorten the delays). */
  retry?: Partial<RetryPolicy>;
  idleTimeoutMs?: number;
  log(line: string): void;
}

export interface Admission {
  /** Reports how the step went: `ok` false only for crashes and timeouts (a failed gate is a verdict, not ill health). */
  release(ok: boolean, durationMs: number): void;
}

/** Default per-attempt timeouts before the tuner has learned the agent: generous, since real skills run test suites. */
const DEFAULT_TIMEOUTS = Object.freeze([300_000, 600_000, 1_200_000]);

export class AgentFleet {
  readonly load: AgentLoad;
  readonly breakers: CircuitBreakers;
  readonly warm: WarmPool;
  readonly tuner = new Tuner();
  private readonly running = new Map<string, number>();

  constructor(private readonly opts: FleetOptions) {
    this.load = new AgentLoad({ agents: AGENTS.map((a) => ({ id: a.id, capacity: a.capacity })), clock: opts.clock });
    this.breakers = new CircuitBreakers({
      clock: opts.clock,
      onTransition: (t) => opts.log(`circuit breaker of ${t.key}: ${t.from} -> ${t.to} (${t.reason})`),
    });
    this.warm = new WarmPool({
      agents: AGENTS,
      warmUp: opts.warmUp ?? (async () => {}),
      coolDown: opts.coolDown ?? (() => {}),
      isBusy: (id) => (this.running.get(id) ?? 0) > 0,
      clock: opts.clock,
      ...(opts.idleTimeoutMs ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
      onError: (id, err) => opts.log(`${id} warm-up/cool-down failed: ${(err as Error)?.message ?? String(err)}`),
    });
  }

  /** Warm, queue for a slot, pass the breaker. Rejects with ERR_OVERLOADED / ERR_CIRCUIT_OPEN (retryable, with retryAfterMs). */
  async admit(agentId: string, signal: AbortSignal): Promise<Admission> {
    await this.warm.ensureWarm(agentId, signal);
    const adm = this.load.tryAcquire(agentId, { signal });
    if (!adm.ok) throw overloadedError(adm);
    const slot = adm.queued ? await adm.slot : adm.slot;
    const permit = this.breakers.get(agentId).acquire();
    if (!permit.ok) {
      slot.release();
      throw circuitOpenError(agentId, permit);
    }
    this.running.set(agentId, (this.running.get(agentId) ?? 0) + 1);
    let released = false;
    return {
      release: (ok, durationMs) => {
        if (released) return;
        released = true;
        this.running.set(agentId, (this.running.get(agentId) ?? 1) - 1);
        permit.release(ok);
        slot.release();
        this.warm.touch(agentId);
        this.tuner.record(agentId, { ok, durationMs });
        const rec = this.tuner.recommend(agentId, AGENTS.find((a) => a.id === agentId)?.capacity ?? 1);
        this.load.setCapacity(agentId, rec.concurrency);
      },
    };
  }

  /** Retry policy of a step: learned timeouts once the tuner has enough samples. */
  policy(agentId: string): RetryPolicy {
    const rec = this.tuner.recommend(agentId, AGENTS.find((a) => a.id === agentId)?.capacity ?? 1);
    const timeouts = rec.basis.timeout === 'learned' ? { baseMs: rec.timeoutMs, growth: 2 } : DEFAULT_TIMEOUTS;
    return retryPolicy({ timeouts, ...this.opts.retry });
  }

  timeoutFactor(agentId: string): number {
    return this.load.timeoutFactor(agentId);
  }

  /** Refuses new work when an agent's queue is full: the caller gets a Retry-After. */
  checkCapacity(agentIds: readonly string[]): void {
    for (const id of new Set(agentIds)) {
      const s = this.load.stats(id);
      if (s.queued >= s.queueBound) throw overloadedError({ ok: false, reason: 'overloaded', agentId: id, retryAfterMs: s.retryAfterMs });
    }
  }

  status(agentId: string): { warm: WarmStatus; load: LoadStats; breaker: BreakerSnapshot } {
    return { warm: this.warm.status(agentId), load: this.load.stats(agentId), breaker: this.breakers.get(agentId).snapshot() };
  }

  schedule(fromMs: number, tier: 'core' | 'pro' | 'ultra'): WeeklySchedule {
    return weeklySchedule(fromMs, AGENTS, { tier });
  }
}
