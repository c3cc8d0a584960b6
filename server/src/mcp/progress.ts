/**
 * RIGOR events → MCP progress notifications. A caller that sent `_meta.progressToken` with its
 * tools/call gets `notifications/progress` for phase_started, work_progress and phase_completed of
 * the execution it waits on (and a last one when it ends), on the same response stream.
 *
 * `progress` is the execution's overall percentage (views.ts `progressOf`) over `total` 100. The
 * MCP spec wants it to increase with every notification, while two events can map to the same
 * percentage: then it moves up by a hundredth so the message still reaches the client.
 */
import type { EngineEvent } from '../../../protocol/events';
import type { Engine } from '../engine/index';
import { progressOf } from '../engine/executions/views';

export interface ProgressParams {
  progressToken: string | number;
  progress: number;
  total: number;
  message: string;
}

/** Sends one progress notification (the tool's `extra.sendNotification`, bound to its request). */
export type ProgressSink = (p: ProgressParams) => Promise<void>;

/** The message of a RIGOR event, or null for the events that are not progress. */
export function progressMessage(e: EngineEvent): string | null {
  switch (e.type) {
    case 'phase_started':
      return `${e.agent_id}: ${e.phase} started`;
    case 'work_progress':
      return `${e.agent_id}: ${e.phase} ${Math.round(e.progress)}% (confidence ${e.confidence.toFixed(2)})`;
    case 'phase_completed':
      return `${e.agent_id}: ${e.phase} completed in ${e.duration_ms} ms`;
    case 'execution_completed':
      return 'execution completed';
    case 'execution_failed':
      return `execution ${e.status}: ${e.error.message}`;
    default:
      return null;
  }
}

/**
 * Forwards the execution's RIGOR events to `sink` from its first event on (a replay covers what was
 * emitted before the subscription). Returns the function that stops forwarding once the queued
 * notifications are sent.
 */
export function forwardProgress(engine: Engine, executionId: string, token: string | number, sink: ProgressSink, log: (line: string) => void): () => Promise<void> {
  const ex = engine.executions;
  const source = ex.eventSource(executionId);
  let lastSeq = 0;
  let last = -1;
  let stopped = false;
  // Notifications go out one at a time, in event order.
  let chain: Promise<void> = Promise.resolve();
  let endSent = false;
  const send = (message: string, reached: number) => {
    const pct = reached > last ? reached : Math.round((last + 0.01) * 100) / 100;
    last = pct;
    const params = { progressToken: token, progress: pct, total: Math.max(100, pct), message };
    chain = chain.then(() => sink(params)).catch((err: unknown) => {
      // A client that went away: nothing to tell; the execution goes on.
      log(`mcp: progress notification for ${executionId} not sent: ${(err as Error).message}`);
      stopped = true;
    });
  };
  const onEvent = (e: EngineEvent) => {
    if (stopped || e.seq <= lastSeq) return;
    lastSeq = e.seq;
    const message = progressMessage(e);
    if (message === null) return;
    if (e.type === 'execution_completed' || e.type === 'execution_failed') endSent = true;
    send(message, e.type === 'execution_completed' ? 100 : progressOf(ex.get(executionId), ex.live(executionId)));
  };
  // Live events wait until the replay of the earlier ones has been forwarded: order is kept.
  let held: EngineEvent[] | null = [];
  const unsubscribe = source.subscribe((e) => (held ? held.push(e) : onEvent(e)));
  const release = (earlier: EngineEvent[]) => {
    const live = held ?? [];
    held = null;
    for (const e of earlier) onEvent(e);
    for (const e of live) onEvent(e);
  };
  void source.replay(0).then(release, () => release([]));
  // Stopping waits for the notifications already queued: the last one (the end) goes out before the
  // tool's result, after which the response stream is closed.
  return async () => {
    unsubscribe();
    // The record can be final before its last event reached this subscriber: the end is said from the record.
    const rec = ex.find(executionId);
    if (!stopped && !endSent && rec && (rec.status === 'completed' || rec.status === 'failed' || rec.status === 'cancelled')) {
      send(rec.status === 'completed' ? 'execution completed' : `execution ${rec.status}${rec.error ? `: ${rec.error.message}` : ''}`, rec.status === 'completed' ? 100 : progressOf(rec));
    }
    stopped = true;
    await chain;
  };
}
