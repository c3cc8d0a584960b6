/**
 * The ends of an execution's steps that are not durable yet. A step's end (its checkpoint, ACMF
 * counters and audit records, one batch) is handed to the store and the next step starts while that
 * batch is written: on one run the write (an fsync) overlaps the next step's work instead of adding to
 * it. What a client sees stays in order and honest:
 * - the next step's events wait (ExecutionEvents.hold) until the earlier ends are durable, so each
 *   `step_completed` (emitted only once durable) comes before anything of the step after it;
 * - a step counts as ended once the ends before it are durable but the newest (MAX_ENDS_IN_FLIGHT in
 *   flight at most, its own included), and a failed write stops the run before its next step starts once
 *   the failure is known (at the latest when that end is the oldest in flight);
 * - anything else the run does (add a step, ask a person) waits for every end first (`settle`); the
 *   run's end hands its final record to the store with the last step's end and announces it only once
 *   both are durable (settlement.ts `finish(..., after)`).
 * - the run itself starts while its acceptance is written (execution-service.ts `accept`): that write is
 *   the first step's earlier end (its events and effects wait for it; the 202 waits for it as before), and a
 *   failed one stops the run as a shutdown does (the client got an error, not a 202).
 * A crash loses at most the ends in flight (MAX_ENDS_IN_FLIGHT): those steps run again on resume. Effects through the
 * side-effect ledger are journalled after the previous end (the journal is ordered), and effects outside
 * it were already at least once (a crash before a step's checkpoint runs the step again).
 */
import type { StepRecord } from './records';

export interface EventGate {
  hold(executionId: string, steps: readonly number[], until: Promise<unknown>): Promise<void>;
}

export interface StagedStep {
  stored: StepRecord;
  durable: Promise<void>;
}

/**
 * Step ends that may be in flight when a step counts as ended, its own included. One was the rule until
 * session 15: on one run the next step then waited for the previous end whenever its write took longer than
 * a step (on the machine measured the disk holds a write up for 1-7 ms at 2-3 % of the step ends: ~0.5 ms
 * of idle main thread per 9-step run). Three: a step runs while the two ends before it are written, and the
 * journal groups the ends that wait behind a stalled write into one write (decisions.md, session 15).
 */
export const MAX_ENDS_IN_FLIGHT = 3;

/** The step number of the acceptance write among the ends in flight (no step's). */
const ACCEPTANCE = -1;

interface InFlight {
  step: number;
  done: Promise<void>;
}

export class StepEnds {
  private readonly inFlight = new Set<InFlight>();
  /** The first end that failed, once known: no step starts after it. */
  private failure: { error: unknown } | null = null;

  /**
   * `accepted`: the execution's acceptance write when the run starts while it is in flight: the first
   * step treats it as an earlier end (its events and effects wait for it, a failure stops the run).
   */
  constructor(private readonly gate: EventGate, private readonly executionId: string, accepted?: Promise<void>) {
    if (accepted) this.track(ACCEPTANCE, accepted);
  }

  private track(step: number, done: Promise<void>): void {
    const entry: InFlight = { step, done };
    this.inFlight.add(entry);
    // A failed end stays: every later `run` and `settle` rejects with it (the run stops there).
    done.then(() => this.inFlight.delete(entry), (error: unknown) => {
      this.failure ??= { error };
    });
  }

  /**
   * Runs a step through `start`, which gets the wait for the ends before it (the pipeline waits for it
   * before an effect); resolves with its stored record once at most {@link MAX_ENDS_IN_FLIGHT} ends
   * (its own included) are not durable yet.
   */
  async run(index: number, start: (earlierEnds: () => Promise<void>) => Promise<StagedStep>): Promise<StepRecord> {
    const before = [...this.inFlight];
    // One turn of the event loop before a step that follows an end in flight: a store that groups a tick's
    // changes (the journal) starts their write from a later turn, and a step's phases await only settled
    // promises, so without it the whole step ran before the previous end's write began, and its own end
    // then waited for that write (~0.45 ms idle per step on one run; the test "the journal write holding
    // step N's end ..."). Not after the last step: the execution's final record joins that step's write.
    if (before.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    // An earlier end already failed: the run stops here rather than when that end is the oldest in flight.
    if (this.failure) throw this.failure.error;
    const earlier = allSettled(before.map((e) => e.done));
    earlier.catch(() => undefined); // awaited through the oldest ends below, and by the pipeline before an effect
    // Its events wait for every earlier end (execution-events.ts keeps each step's between the ends').
    if (before.length > 0) void this.gate.hold(this.executionId, before.map((e) => e.step), earlier);
    const staged = await start(() => earlier);
    this.track(index, staged.durable);
    // The oldest ends must be durable before the next step starts; the newest may still be written while it
    // runs (a write the disk holds up for a few ms then delays no step: the next one works meanwhile).
    await allSettled(before.slice(0, Math.max(0, before.length - (MAX_ENDS_IN_FLIGHT - 1))).map((e) => e.done));
    return staged.stored;
  }

  /** Resolves once every step end is durable; rejects with a failed one, once all have settled (their events are out). */
  async settle(): Promise<void> {
    await allSettled([...this.inFlight].map((e) => e.done));
  }
}

/** Waits for every promise to settle, then rejects with the first failure, if any (Promise.all rejects at once: events of the others would come after the run's end). */
export async function allSettled(all: Array<Promise<unknown> | undefined>): Promise<void> {
  const failed = (await Promise.allSettled(all)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}
