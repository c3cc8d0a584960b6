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

/** Events of an execution held back while the end of earlier steps is not yet durable (see `hold`). */
interface Gate {
  /** Steps whose `step_completed` passes the gate: it is the event the gate waits for. */
  pass: Set<number>;
  queue: EngineEventInput[];
  holders: number;
}

export class ExecutionEvents {
  private readonly seqs = new Map<string, number>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly gates = new Map<string, Gate>();

  constructor(
    private readonly bus: MessageBus,
    private readonly clock: Clock,
    private readonly log?: EventLog,
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Stamps and delivers an event, or queues it while the execution's gate is held. Queued events are
   * numbered when they are delivered, so a stream's order is the order clients see.
   */
  emit(input: EngineEventInput): void {
    const gate = this.gates.get(input.execution_id);
    if (gate && !(input.type === 'step_completed' && gate.pass.has(input.step))) gate.queue.push(input);
    else this.deliver(input);
  }

  /**
   * Holds back an execution's events until `until` settles, except the `step_completed` of `steps`:
   * a step that starts while the previous one's checkpoint is still being written (execution-service.ts)
   * streams nothing before that step's `step_completed`, which is emitted only once its end is durable.
   * The queue is delivered in order when the last hold of the execution settles (fulfilled or not: the
   * events describe work that happened); the returned promise resolves after that delivery.
   */
  hold(executionId: string, steps: readonly number[], until: Promise<unknown>): Promise<void> {
    let gate = this.gates.get(executionId);
    if (!gate) this.gates.set(executionId, (gate = { pass: new Set(), queue: [], holders: 0 }));
    const g = gate;
    g.holders++;
    for (const s of steps) g.pass.add(s);
    const release = (): void => {
      if (--g.holders > 0) return;
      // The gate stays while it drains: an event a listener emits meanwhile queues behind the others.
      while (g.queue.length > 0 && g.holders === 0) this.deliver(g.queue.shift()!);
      if (g.holders === 0) this.gates.delete(executionId);
    };
    return until.then(release, release);
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
