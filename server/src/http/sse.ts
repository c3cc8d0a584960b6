/**
 * Server-sent events: one execution's events on one response, whatever produces them.
 *
 * Wire format, per event: `id: <seq>`, `event: <type>`, `data: <the event as one line of JSON>`,
 * then a blank line; `: heartbeat` comment lines every `heartbeatMs` keep proxies and idle timers
 * from closing the connection. A client that reconnects with `Last-Event-ID: <seq>` (or the query
 * parameter `last_event_id`) receives exactly the events after that seq, then the live ones: the
 * live subscription is taken first and buffered while the history is replayed, then the buffer is
 * drained skipping every seq already sent, so there is no gap and no duplicate. The response ends
 * after the terminal event (`execution_completed` / `execution_failed`), or right after the replay
 * when the execution had already finished. A client that does not read fast enough, so that the
 * output not yet handed to the socket exceeds `maxQueuedBytes`, is disconnected (it can reconnect
 * with Last-Event-ID) rather than buffered without bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineEvent, EngineEventType } from '../../../protocol/events';
import { HttpProblem, problemFor } from './problem';

/** Where a stream's events come from (an execution's log and its live feed). */
export interface EventStreamSource {
  /** Stored events with `seq > afterSeq`, in order. */
  replay(afterSeq: number): Promise<readonly EngineEvent[]> | readonly EngineEvent[];
  /** Live events from now on; returns the unsubscribe function. */
  subscribe(listener: (e: EngineEvent) => void): () => void;
  /** True once the execution emitted its terminal event (nothing more will come). */
  isFinished(): boolean;
}

export interface EventStreamOptions {
  /** Interval of `: heartbeat` comments (default 15,000 ms). */
  heartbeatMs?: number;
  /** Unsent output beyond which a slow client is disconnected (default 1 MiB). */
  maxQueuedBytes?: number;
  /** Reconnection delay suggested to clients (`retry:` field; default 2,000 ms). */
  retryMs?: number;
  log?: (line: string) => void;
}

/** How a stream ended. */
export type StreamOutcome = 'completed' | 'already-finished' | 'client-closed' | 'slow-client';

export const DEFAULT_HEARTBEAT_MS = 15_000;
export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;
export const TERMINAL_EVENT_TYPES: ReadonlySet<EngineEventType> = new Set<EngineEventType>(['execution_completed', 'execution_failed']);

const ID_RE = /^\d{1,15}$/;

/** The seq the client already has: `Last-Event-ID`, else `?last_event_id=`, else 0. 400 when not an integer. */
export function lastEventIdOf(req: IncomingMessage): number {
  const header = req.headers['last-event-id'];
  let raw: string | null | undefined = typeof header === 'string' ? header.trim() : undefined;
  let field = 'headers.last-event-id';
  if (raw === undefined) {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    raw = q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get('last_event_id');
    field = 'query.last_event_id';
  }
  if (raw === null || raw === '') return 0;
  if (!ID_RE.test(raw)) {
    throw new HttpProblem(problemFor('ERR_VALIDATION', 'the last event id is not an event id', { errors: [{ field, message: 'must be a non-negative integer (the seq of an event)' }] }));
  }
  return Number(raw);
}

/** One event goes to every subscriber of its execution: format it once, not once per subscriber. */
const formatted = new WeakMap<EngineEvent, string>();

export function formatEvent(e: EngineEvent): string {
  let chunk = formatted.get(e);
  if (chunk === undefined) {
    chunk = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    formatted.set(e, chunk);
  }
  return chunk;
}

/**
 * Serves `source` on `res` until the execution ends or the client goes. Resolves with how it ended.
 * Throws (before anything is written) when the last event id is invalid or the replay fails, so the
 * caller can still answer with a problem.
 *
 * Catch-up (history, then the live events buffered meanwhile) is written at the client's pace: it
 * waits for 'drain' whenever the socket is full. Live events that pile up meanwhile, or while a live
 * client is not reading, count against `maxQueuedBytes`.
 */
export async function serveEventStream(req: IncomingMessage, res: ServerResponse, source: EventStreamSource, opts: EventStreamOptions = {}): Promise<StreamOutcome> {
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxQueued = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const after = lastEventIdOf(req);

  let lastSent = after;
  let live = false;
  let done = false;
  /** Live events that arrived before the catch-up finished, already formatted. */
  const early: Array<{ e: EngineEvent; chunk: string }> = [];
  let earlyBytes = 0;
  let onLive: (e: EngineEvent) => void = () => {};
  let onOverflow: () => void = () => {};
  const unsubscribe = source.subscribe((e) => {
    if (done) return;
    if (live) return onLive(e);
    const chunk = formatEvent(e);
    early.push({ e, chunk });
    earlyBytes += chunk.length;
    if (earlyBytes > maxQueued) onOverflow();
  });

  let history: readonly EngineEvent[];
  try {
    history = await source.replay(after);
  } catch (err) {
    unsubscribe();
    throw err;
  }

  return new Promise<StreamOutcome>((resolve) => {
    let waitingDrain = false;
    const pending: string[] = [];
    let pendingBytes = 0;
    let heartbeat: NodeJS.Timeout | null = null;

    const finish = (outcome: StreamOutcome) => {
      if (done) return;
      done = true;
      unsubscribe();
      if (heartbeat) clearInterval(heartbeat);
      res.off('close', onClose);
      res.off('drain', onDrain);
      early.length = 0;
      if (outcome === 'slow-client') {
        opts.log?.(`event stream: client too slow (over ${maxQueued} bytes unsent); disconnected`);
        res.destroy();
      } else if (outcome === 'completed' || outcome === 'already-finished') {
        for (const chunk of pending.splice(0)) res.write(chunk);
        res.end();
      }
      resolve(outcome);
    };
    onOverflow = () => finish('slow-client');

    /** Resolves true once the socket drained, false if the stream ended meanwhile. */
    const drained = () => new Promise<boolean>((r) => {
      if (done) return r(false);
      const ok = () => {
        res.off('close', ko);
        r(!done);
      };
      const ko = () => {
        res.off('drain', ok);
        r(false);
      };
      res.once('drain', ok);
      res.once('close', ko);
    });

    /** Catch-up write: true when the caller must wait for 'drain'. */
    const push = (e: EngineEvent, chunk?: string): boolean => {
      if (done || e.seq <= lastSent) return false;
      lastSent = e.seq;
      const full = !res.write(chunk ?? formatEvent(e));
      if (TERMINAL_EVENT_TYPES.has(e.type)) finish('completed');
      return full && !done;
    };

    // Live: never wait; queue while the socket is full, and cut the client past the allowance.
    const onDrain = () => {
      waitingDrain = false;
      while (pending.length > 0) {
        const chunk = pending.shift()!;
        pendingBytes -= chunk.length;
        if (!res.write(chunk)) {
          waitingDrain = true;
          res.once('drain', onDrain);
          return;
        }
      }
    };
    const write = (chunk: string) => {
      if (done) return;
      if (waitingDrain) {
        if (pendingBytes + chunk.length + res.writableLength > maxQueued) return finish('slow-client');
        pending.push(chunk);
        pendingBytes += chunk.length;
        return;
      }
      if (!res.write(chunk)) {
        waitingDrain = true;
        res.once('drain', onDrain);
        if (res.writableLength > maxQueued) finish('slow-client');
      }
    };
    let corked = false;
    onLive = (e) => {
      if (done || e.seq <= lastSent) return;
      lastSent = e.seq;
      // Events come in bursts (phase_completed, work_progress, phase_started): one write per tick.
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(() => {
          corked = false;
          res.uncork();
        });
      }
      write(formatEvent(e));
      if (TERMINAL_EVENT_TYPES.has(e.type)) finish('completed');
    };

    const onClose = () => finish('client-closed');
    res.on('close', onClose);
    if (res.destroyed || req.destroyed) return finish('client-closed');

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    req.socket.setNoDelay(true);
    res.write(`retry: ${opts.retryMs ?? 2000}\n\n`);

    const catchUp = async () => {
      for (const e of history) {
        if (push(e) && !(await drained())) return;
        if (done) return;
      }
      while (early.length > 0) {
        const next = early.shift()!;
        earlyBytes -= next.chunk.length;
        if (push(next.e, next.chunk) && !(await drained())) return;
        if (done) return;
      }
      live = true;
      if (source.isFinished()) return finish('already-finished');
      heartbeat = setInterval(() => {
        if (!waitingDrain) write(': heartbeat\n\n');
      }, heartbeatMs);
      heartbeat.unref();
    };
    catchUp().catch((err: unknown) => {
      opts.log?.(`event stream failed: ${(err as Error)?.message ?? String(err)}`);
      finish('client-closed');
      res.destroy();
    });
  });
}
