/** The per-execution event log: what SSE clients replay from, also after the execution ended. */
import type { EngineEvent } from '../../../../protocol/events';

export interface EventLog {
  /** Appends in order; durable soon after (group commit), never reordered. */
  append(event: EngineEvent): void;
  /** Events of the execution with `seq > afterSeq`, in order (buffered ones included). */
  read(executionId: string, afterSeq: number): Promise<EngineEvent[]>;
  /**
   * The same events as `read`, a page at a time, read from disk as the consumer asks for the next
   * page: a reader holds one page, never the whole history (SSE replays to slow clients). Optional.
   */
  pages?(executionId: string, afterSeq: number): AsyncIterable<EngineEvent[]>;
  /** The highest seq stored for the execution (0 when none), for resuming numbering after a restart. */
  lastSeq(executionId: string): Promise<number>;
  flush(): Promise<void>;
}
