/**
 * Stamps execution events with a per-execution sequence number and time, then publishes them on the
 * bus topic `engine.event`. The sequence is what SSE clients resume from (`Last-Event-ID`).
 */
import type { EngineEvent, EngineEventInput } from '../../../protocol/events';
import type { MessageBus } from './bus';
import type { Clock } from './ports';

export class ExecutionEvents {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly bus: MessageBus, private readonly clock: Clock) {}

  emit(input: EngineEventInput): EngineEvent {
    const seq = (this.seqs.get(input.execution_id) ?? 0) + 1;
    this.seqs.set(input.execution_id, seq);
    const event = { ...input, seq, ts: new Date(this.clock.now()).toISOString() } as EngineEvent;
    this.bus.publish('engine.event', event);
    return event;
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
