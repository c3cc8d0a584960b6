/**
 * The ends of an execution's steps that are not durable yet. A step's end (its checkpoint, ACMF
 * counters and audit records, one batch) is handed to the store and the next step starts while that
 * batch is written: on one run the write (an fsync) overlaps the next step's work instead of adding to
 * it. What a client sees stays in order and honest:
 * - the next step's events wait (ExecutionEvents.hold) until the previous end is durable, so its
 *   `step_completed` (emitted only once durable) comes before anything of the next step;
 * - a step counts as ended only once the step before it is durable: at most one end is in flight
 *   behind a running step, and a failed write fails the run at the next step's end (as it failed the
 *   step itself before);
 * - anything else the run does (add a step, ask a person) waits for every end first (`settle`); the
 *   run's end hands its final record to the store with the last step's end and announces it only once
 *   both are durable (settlement.ts `finish(..., after)`).
 * - the run itself starts while its acceptance is written (execution-service.ts `accept`): that write is
 *   the first step's earlier end (its events and effects wait for it; the 202 waits for it as before), and a
 *   failed one stops the run as a shutdown does (the client got an error, not a 202).
 * A crash loses at most the ends in flight, as before: they run again on resume. Effects through the
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

/** The step number of the acceptance write among the ends in flight (no step's). */
const ACCEPTANCE = -1;

interface InFlight {
  step: number;
  done: Promise<void>;
}

export class StepEnds {
  private readonly inFlight = new Set<InFlight>();

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
    done.then(() => this.inFlight.delete(entry), () => undefined);
  }

  /**
   * Runs a step through `start`, which gets the wait for the ends before it (the pipeline waits for it
   * before an effect); resolves with its stored record once the ends before it are durable.
   */
  async run(index: number, start: (earlierEnds: () => Promise<void>) => Promise<StagedStep>): Promise<StepRecord> {
    const before = [...this.inFlight];
    // One turn of the event loop before a step that follows an end in flight: a store that groups a tick's
    // changes (the journal) starts their write from a later turn, and a step's phases await only settled
    // promises, so without it the whole step ran before the previous end's write began, and its own end
    // then waited for that write (~0.45 ms idle per step on one run; the test "the journal write holding
    // step N's end ..."). Not after the last step: the execution's final record joins that step's write.
    if (before.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const earlier = allSettled(before.map((e) => e.done));
    earlier.catch(() => undefined); // awaited below, after the step ran
    const released = before.length > 0 ? this.gate.hold(this.executionId, before.map((e) => e.step), earlier) : undefined;
    let staged: StagedStep;
    try {
      staged = await start(() => earlier);
    } finally {
      // Its events are out (in order) before the step counts as ended, whatever happened to it.
      await released;
    }
    this.track(index, staged.durable);
    await earlier;
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
