/**
 * Learning from execution outcomes (contract, "Workflows and orchestration" rule 5): tunes
 * parallelism and timeouts per agent, never the choice of agents — nothing here can name, add or
 * drop an agent; it only answers "how many at once" and "how long to wait" for an agent it is given.
 *
 * Per agent it keeps exponentially weighted statistics of step outcomes:
 * - mean and variance of the duration of successful steps (timed-out and failed steps are censored:
 *   their duration says when they were stopped, not how long the work takes);
 * - the failure rate (timeouts and failures count as 1, successes as 0).
 *
 * Recommendations (docs/decisions.md, "Tuner bounds"):
 * - timeout = mean + 3 x stddev, rounded up to a second, clamped to [10 s, 10 min]; the default
 *   (30 s) until `minSamples` successes;
 * - concurrency = floor(ceiling x (1 - failureRate)) when the failure rate exceeds 10%, else the
 *   ceiling; within [1, ceiling], ceiling = catalog capacity x `ceilingFactor` (default 1: the
 *   catalog capacity is a safety limit — deploy-ai must not race, tester-ai runs the suite — so
 *   learning only throttles below it).
 *
 * Everything is a pure function of the outcomes in order: the same outcomes give the same
 * recommendations. `Tuner` is a thin map of states around `observe` / `recommend`.
 *
 * @example
 * tuner.record('coder-ai', { ok: true, durationMs: 4_200 });
 * const { concurrency, timeoutMs } = tuner.recommend('coder-ai', catalogCapacity);
 * load.setCapacity('coder-ai', concurrency);
 * runWithRetry(fn, retryPolicy({ timeouts: { baseMs: timeoutMs, growth: 2 } }), ...);
 */
import { EngineError } from '../errors';

export interface TunerConfig {
  /** Weight of the newest outcome in every average (EWMA). Default 0.2 (about the last 10 steps). */
  alpha: number;
  /** Successes needed before the timeout is learned rather than the default. Default 5. */
  minSamples: number;
  /** Outcomes needed before the failure rate may throttle concurrency. Default 5. */
  minOutcomes: number;
  defaultTimeoutMs: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /** Standard deviations above the mean for the timeout. 3: beyond p99 for a normal spread, about p95 for long-tailed step durations. */
  sigmas: number;
  /** Failure rate tolerated before concurrency is reduced. Default 0.1. */
  failureTolerance: number;
  /** Concurrency ceiling as a multiple of catalog capacity. Default 1. */
  ceilingFactor: number;
}

export const DEFAULT_TUNER_CONFIG: Readonly<TunerConfig> = Object.freeze({
  alpha: 0.2,
  minSamples: 5,
  minOutcomes: 5,
  defaultTimeoutMs: 30_000,
  minTimeoutMs: 10_000,
  maxTimeoutMs: 600_000,
  sigmas: 3,
  failureTolerance: 0.1,
  ceilingFactor: 1,
});

/** An agent's learned statistics: plain JSON, so it can be persisted and restored. */
export interface AgentTuningState {
  /** Outcomes observed. */
  outcomes: number;
  /** Successful steps whose duration entered the mean. */
  samples: number;
  meanMs: number;
  /** Exponentially weighted variance of the duration, ms². */
  varianceMs2: number;
  failureRate: number;
}

/** One step attempt's outcome; a timeout is `ok: false` (its duration is not a sample). */
export interface StepOutcome {
  ok: boolean;
  durationMs: number;
}

export interface Recommendation {
  concurrency: number;
  timeoutMs: number;
  /** What the numbers come from, for status output and the audit trail. */
  basis: {
    samples: number;
    outcomes: number;
    meanMs: number;
    stddevMs: number;
    failureRate: number;
    ceiling: number;
    /** 'default' until enough samples, 'learned' after, 'clamped' when a bound applied. */
    timeout: 'default' | 'learned' | 'clamped';
  };
}

export const EMPTY_TUNING_STATE: Readonly<AgentTuningState> = Object.freeze({ outcomes: 0, samples: 0, meanMs: 0, varianceMs2: 0, failureRate: 0 });

/**
 * The state after one more outcome. The first success sets the mean (no prior to average with);
 * later ones update mean and variance incrementally (West's EWMA variance). The failure rate
 * starts at the first outcome's value for the same reason.
 */
export function observe(state: AgentTuningState, outcome: StepOutcome, config: TunerConfig = DEFAULT_TUNER_CONFIG): AgentTuningState {
  const a = config.alpha;
  const failed = outcome.ok ? 0 : 1;
  const failureRate = state.outcomes === 0 ? failed : state.failureRate + a * (failed - state.failureRate);
  let { samples, meanMs, varianceMs2 } = state;
  if (outcome.ok && Number.isFinite(outcome.durationMs) && outcome.durationMs >= 0) {
    if (samples === 0) {
      meanMs = outcome.durationMs;
      varianceMs2 = 0;
    } else {
      const diff = outcome.durationMs - meanMs;
      const incr = a * diff;
      meanMs += incr;
      varianceMs2 = (1 - a) * (varianceMs2 + diff * incr);
    }
    samples++;
  }
  return { outcomes: state.outcomes + 1, samples, meanMs, varianceMs2, failureRate };
}

/** Concurrency and timeout for an agent with catalog capacity `capacity`. */
export function recommend(state: AgentTuningState, capacity: number, config: TunerConfig = DEFAULT_TUNER_CONFIG): Recommendation {
  const ceiling = Math.max(1, Math.floor(capacity * config.ceilingFactor));
  const stddevMs = Math.sqrt(Math.max(0, state.varianceMs2));
  const { timeoutMs, kind } = recommendTimeout(state, stddevMs, config);
  return {
    concurrency: recommendConcurrency(state, ceiling, config),
    timeoutMs,
    basis: {
      samples: state.samples,
      outcomes: state.outcomes,
      meanMs: Math.round(state.meanMs),
      stddevMs: Math.round(stddevMs),
      failureRate: Math.round(state.failureRate * 1000) / 1000,
      ceiling,
      timeout: kind,
    },
  };
}

function recommendTimeout(state: AgentTuningState, stddevMs: number, config: TunerConfig): { timeoutMs: number; kind: Recommendation['basis']['timeout'] } {
  if (state.samples < config.minSamples) return { timeoutMs: config.defaultTimeoutMs, kind: 'default' };
  const raw = Math.ceil((state.meanMs + config.sigmas * stddevMs) / 1_000) * 1_000;
  const clamped = Math.min(config.maxTimeoutMs, Math.max(config.minTimeoutMs, raw));
  return { timeoutMs: clamped, kind: clamped === raw ? 'learned' : 'clamped' };
}

function recommendConcurrency(state: AgentTuningState, ceiling: number, config: TunerConfig): number {
  // Failures under load are often contention (shared disk, test ports, rate limits): fewer at once.
  if (state.outcomes < config.minOutcomes || state.failureRate <= config.failureTolerance) return ceiling;
  return Math.min(ceiling, Math.max(1, Math.floor(ceiling * (1 - state.failureRate))));
}

/**
 * Per-agent tuning states. Deterministic: no clock, no randomness.
 *
 * @example
 * const tuner = new Tuner();
 * tuner.record('tester-ai', { ok: false, durationMs: 30_000 }); // a timeout
 * tuner.recommend('tester-ai', 2); // { concurrency, timeoutMs, basis }
 */
export class Tuner {
  private readonly states = new Map<string, AgentTuningState>();
  readonly config: TunerConfig;

  constructor(config: Partial<TunerConfig> = {}, initial: Record<string, AgentTuningState> = {}) {
    this.config = validateConfig({ ...DEFAULT_TUNER_CONFIG, ...config });
    for (const [agentId, state] of Object.entries(initial)) this.states.set(agentId, { ...state });
  }

  record(agentId: string, outcome: StepOutcome): AgentTuningState {
    const next = observe(this.state(agentId), outcome, this.config);
    this.states.set(agentId, next);
    return next;
  }

  state(agentId: string): AgentTuningState {
    return this.states.get(agentId) ?? { ...EMPTY_TUNING_STATE };
  }

  recommend(agentId: string, capacity: number): Recommendation {
    return recommend(this.state(agentId), capacity, this.config);
  }

  /** All states, e.g. to persist in the store and pass back as `initial`. */
  snapshot(): Record<string, AgentTuningState> {
    return Object.fromEntries([...this.states.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]));
  }
}

function validateConfig(c: TunerConfig): TunerConfig {
  const ok =
    c.alpha > 0 && c.alpha <= 1 && c.minSamples >= 1 && c.minOutcomes >= 1 &&
    c.minTimeoutMs > 0 && c.maxTimeoutMs >= c.minTimeoutMs && c.defaultTimeoutMs > 0 &&
    c.sigmas >= 0 && c.failureTolerance >= 0 && c.failureTolerance < 1 && c.ceilingFactor > 0;
  if (!ok) throw new EngineError('ERR_VALIDATION', 'tuner configuration out of range', { details: { ...c } });
  return Object.freeze({ ...c });
}
