/**
 * Stamps execution events with a per-execution sequence number and time, stores them in the
 * execution's event log, hands them to that execution's listeners (SSE clients) and publishes them on
 * the bus topic `engine.event`. The sequence is what SSE clients resume from (`Last-Event-ID`).
 */
import type { EngineEvent, EngineEventInput } from '../../../protocol/events';
import type { MessageBus } from './bus';
import type { EventLog } from './executions/event-log';
import type { Clock } from './ports';
import { isoTime } from './iso-time';

type Listener = (event: EngineEvent) => void;

/**
 * One hold on an execution's events (see `hold`): the events emitted while it was the newest hold, and
 * the `step_completed` of the steps it waits for, which go before them.
 */
interface Segment {
  /** Steps whose end this hold waits for: their `step_completed` goes at the front of this segment. */
  pass: Set<number>;
  front: EngineEventInput[];
  queue: EngineEventInput[];
  settled: boolean;
}

export class ExecutionEvents {
  private readonly seqs = new Map<string, number>();
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Per execution, its holds oldest first: they are delivered in that order. */
  private readonly gates = new Map<string, Segment[]>();
  private readonly draining = new Set<string>();

  constructor(
    private readonly bus: MessageBus,
    private readonly clock: Clock,
    private readonly log?: EventLog,
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Stamps and delivers an event, or queues it while the execution's events are held. Queued events
   * are numbered when they are delivered, so a stream's order is the order clients see.
   */
  emit(input: EngineEventInput): void {
    const segments = this.gates.get(input.execution_id);
    if (!segments) {
      this.deliver(input);
      return;
    }
    if (input.type === 'step_completed') {
      const waiting = segments.find((s) => s.pass.has(input.step));
      if (waiting) {
        waiting.front.push(input);
        this.drain(input.execution_id, segments);
        return;
      }
    }
    segments[segments.length - 1]!.queue.push(input);
  }

  /**
   * Holds back an execution's events until `until` settles: a step that starts while the ends of earlier
   * steps (`steps`) are still being written (step-ends.ts) streams nothing before their `step_completed`,
   * which is emitted only once an end is durable. Holds are delivered in the order they were taken: a
   * hold's segment is the events emitted while it was the newest, preceded by the `step_completed` of the
   * steps it waits for (those go out as soon as every older hold is delivered). Its queue goes out once
   * `until` settles (fulfilled or not: the events describe work that happened) and every older hold is
   * delivered. Several ends may be in flight at once (each step's hold waits for all of them), so the
   * segments keep each step's events between its predecessor's `step_completed` and its own.
   * The returned promise resolves once `until` settled and what could be delivered was.
   */
  hold(executionId: string, steps: readonly number[], until: Promise<unknown>): Promise<void> {
    let segments = this.gates.get(executionId);
    if (!segments) this.gates.set(executionId, (segments = []));
    const all = segments;
    const segment: Segment = { pass: new Set(steps), front: [], queue: [], settled: false };
    all.push(segment);
    const release = (): void => {
      segment.settled = true;
      this.drain(executionId, all);
    };
    return until.then(release, release);
  }

  /** Delivers the holds of an execution from the oldest, as far as they are released. */
  private drain(executionId: string, segments: Segment[]): void {
    // A listener's event that releases a hold is delivered by the drain already under way, in order.
    if (this.draining.has(executionId)) return;
    this.draining.add(executionId);
    try {
      this.drainNow(executionId, segments);
    } finally {
      this.draining.delete(executionId);
    }
  }

  private drainNow(executionId: string, segments: Segment[]): void {
    while (segments.length > 0) {
      const first = segments[0]!;
      while (first.front.length > 0) this.deliver(first.front.shift()!);
      if (!first.settled) return;
      // A listener that emits meanwhile queues behind (in this segment when it is the newest).
      while (first.queue.length > 0) this.deliver(first.queue.shift()!);
      if (first.front.length > 0) continue;
      segments.shift();
    }
    if (this.gates.get(executionId) === segments) this.gates.delete(executionId);
  }

  private deliver(input: EngineEventInput): EngineEvent {
    const seq = (this.seqs.get(input.execution_id) ?? 0) + 1;
    this.seqs.set(input.execution_id, seq);
    const event = { ...input, seq, ts: isoTime(this.clock.now()) } as EngineEvent;
    this.log?.append(event);
    const set = this.listeners.get(event.execution_id);
    if (set) {
      for (const l of set) {
        try {
          l(event);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
    this.bus.publish('engine.event', event);
    return event;
  }

  /** Live events of one execution (an index by execution, so 1,000 SSE clients cost one lookup). */
  subscribe(executionId: string, listener: Listener): () => void {
    let set = this.listeners.get(executionId);
    if (!set) this.listeners.set(executionId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(executionId) === set) this.listeners.delete(executionId);
    };
  }

  /** The last sequence number given to (or resumed for) an execution's events; 0 when none. */
  seqOf(executionId: string): number {
    return this.seqs.get(executionId) ?? 0;
  }

  /** Continue numbering after a restart from the last stored sequence. */
  resume(executionId: string, lastSeq: number): void {
    this.seqs.set(executionId, Math.max(lastSeq, this.seqs.get(executionId) ?? 0));
  }

  /** Drop the counter of a finished execution (its log keeps the events). */
  forget(executionId: string): void {
    this.seqs.delete(executionId);
  }
}
