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

export class ExecutionEvents {
  private readonly seqs = new Map<string, number>();
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(
    private readonly bus: MessageBus,
    private readonly clock: Clock,
    private readonly log?: EventLog,
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {}

  emit(input: EngineEventInput): EngineEvent {
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
