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
 * with Last-Event-ID) rather than buffered without bound; its last event is `stream_dropped` (no `id:`,
 * so its Last-Event-ID stays the last event it got) saying why and how to resume, and the socket is
 * destroyed if that cannot be delivered within `DROP_GRACE_MS`. The history is replayed a page at a
 * time from the event log when the source offers pages (one page per client in memory).
 *
 * Fan-out: each event is encoded once to a Buffer shared by every subscriber, and the live events of one
 * event-loop turn are written by one shared flush (setImmediate) in one write per subscriber.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineEvent } from '../../../protocol/events';
import { HttpProblem, problemFor } from './problem';

/** What the stream needs of an event: its `seq` (the SSE id) and `type` (the SSE event name). */
export interface StreamEvent { seq: number; type: string }

/** Where a stream's events come from (an execution's log and its live feed, or a tenant's service events). */
export interface EventStreamSource<E extends StreamEvent = EngineEvent> {
  /** Stored events with `seq > afterSeq`, in order. */
  replay(afterSeq: number): Promise<readonly E[]> | readonly E[];
  /** The same events a page at a time, read as the stream asks (preferred: a client holds one page, not the history). */
  pages?(afterSeq: number): AsyncIterable<readonly E[]>;
  /** Live events from now on; returns the unsubscribe function. */
  subscribe(listener: (e: E) => void): () => void;
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
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set<EngineEvent['type']>(['execution_completed', 'execution_failed']);

const ID_RE = /^\d{1,15}$/;
/** Time a dropped client gets to receive its `stream_dropped` event before the socket is destroyed. */
export const DROP_GRACE_MS = 5_000;

/** The last event of a client that was too slow: not an engine event (no id), a transport notice. */
function droppedEvent(maxQueued: number, lastSent: number): Buffer {
  const data = { reason: `client too slow: more than ${maxQueued} bytes were waiting to be sent`, lastEventId: lastSent, resume: 'reconnect with the Last-Event-ID header (or ?last_event_id=) of the last event received' };
  return Buffer.from(`event: stream_dropped\ndata: ${JSON.stringify(data)}\n\n`, 'utf8');
}

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

/** One event goes to every subscriber of its execution: format and encode it once, not once per subscriber. */
const formatted = new WeakMap<StreamEvent, Buffer>();

export function formatEvent(e: StreamEvent): string {
  return encodedEvent(e).toString('utf8');
}

/** The event's wire bytes, shared by every write of it (no per-socket string encoding). */
export function encodedEvent(e: StreamEvent): Buffer {
  let chunk = formatted.get(e);
  if (chunk === undefined) {
    chunk = Buffer.from(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`, 'utf8');
    formatted.set(e, chunk);
  }
  return chunk;
}

const HEARTBEAT = Buffer.from(': heartbeat\n\n');
/** A stream's outbox is written at once past this size instead of waiting for the shared flush. */
const OUTBOX_FLUSH_BYTES = 64 * 1024;

/**
 * Live fan-out is flushed once per event-loop turn for every stream together (one setImmediate, not a
 * nextTick closure per stream per tick): the events emitted meanwhile — a burst of one tick, or the
 * events of several ticks that queued up while the previous fan-out was being written — go out in one
 * write per stream. Streams that hold the same run of events (the common case: every live subscriber of
 * one execution) share one concatenated Buffer.
 */
const dirty = new Set<() => void>();
let flushScheduled = false;
let lastBatch: { parts: Buffer[]; joined: Buffer } | null = null;

function scheduleFlush(flush: () => void): void {
  dirty.add(flush);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flushAll);
}

function flushAll(): void {
  flushScheduled = false;
  // A flush may schedule another stream's (it should not, but a Set iterates additions safely anyway).
  for (const flush of dirty) {
    dirty.delete(flush);
    flush();
  }
  lastBatch = null;
}

/** One Buffer for a run of events; the previous stream's when it was the same run. */
function joinBatch(parts: Buffer[]): Buffer {
  if (parts.length === 1) return parts[0]!;
  const prev = lastBatch;
  if (prev && prev.parts.length === parts.length && prev.parts.every((b, i) => b === parts[i])) return prev.joined;
  const joined = Buffer.concat(parts);
  lastBatch = { parts: parts.slice(), joined };
  return joined;
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
export async function serveEventStream<E extends StreamEvent = EngineEvent>(req: IncomingMessage, res: ServerResponse, source: EventStreamSource<E>, opts: EventStreamOptions = {}): Promise<StreamOutcome> {
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxQueued = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const after = lastEventIdOf(req);

  let lastSent = after;
  /** The last seq handed to the socket (what a dropped client can still receive), not merely queued. */
  let socketSeq = after;
  let live = false;
  let done = false;
  /** Live events that arrived before the catch-up finished, already encoded. */
  const early: Array<{ e: E; chunk: Buffer }> = [];
  let earlyBytes = 0;
  let onLive: (e: E) => void = () => {};
  let onOverflow: () => void = () => {};
  const unsubscribe = source.subscribe((e) => {
    if (done) return;
    if (live) return onLive(e);
    const chunk = encodedEvent(e);
    early.push({ e, chunk });
    earlyBytes += chunk.length;
    if (earlyBytes > maxQueued) onOverflow();
  });

  // The history: paged when the source can (the first page is read here, so a failure can still be a
  // problem answer), else whole.
  let pages: AsyncIterator<readonly E[]> | null = null;
  let first: readonly E[];
  try {
    if (source.pages) {
      pages = source.pages(after)[Symbol.asyncIterator]();
      const r = await pages.next();
      first = r.done ? [] : r.value;
      if (r.done) pages = null;
    } else {
      first = await source.replay(after);
    }
  } catch (err) {
    unsubscribe();
    await pages?.return?.().catch(() => undefined);
    throw err;
  }

  return new Promise<StreamOutcome>((resolve) => {
    let waitingDrain = false;
    /** Live output the socket refused until its next 'drain'. */
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    let pendingSeq = 0;
    /** Live events of this turn of the event loop, written together by the shared flush. */
    let outbox: Buffer[] = [];
    let outboxBytes = 0;
    let heartbeat: NodeJS.Timeout | null = null;

    const finish = (outcome: StreamOutcome) => {
      if (done) return;
      done = true;
      unsubscribe();
      dirty.delete(flushOutbox);
      if (heartbeat) clearInterval(heartbeat);
      res.off('close', onClose);
      res.off('drain', onDrain);
      early.length = 0;
      pending.length = 0;
      void pages?.return?.().catch(() => undefined);
      if (outcome === 'slow-client') {
        opts.log?.(`event stream: client too slow (over ${maxQueued} bytes unsent); disconnected`);
        // What we queued is dropped; the socket's own buffer (bounded by the allowance) may still drain.
        res.end(droppedEvent(maxQueued, socketSeq));
        const grace = setTimeout(() => res.destroy(), DROP_GRACE_MS);
        grace.unref();
        res.once('close', () => clearTimeout(grace));
      } else if (outcome === 'completed' || outcome === 'already-finished') {
        const rest = [...pending.splice(0), ...outbox];
        if (rest.length > 0) res.write(rest.length === 1 ? rest[0]! : Buffer.concat(rest));
        res.end();
      }
      outbox = [];
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
    const push = (e: E, chunk?: Buffer): boolean => {
      if (done || e.seq <= lastSent) return false;
      lastSent = e.seq;
      socketSeq = e.seq;
      const full = !res.write(chunk ?? encodedEvent(e));
      if (TERMINAL_EVENT_TYPES.has(e.type)) finish('completed');
      return full && !done;
    };

    // Live: never wait; queue while the socket is full, and cut the client past the allowance.
    const onDrain = () => {
      waitingDrain = false;
      if (pending.length === 0) return;
      const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
      pending.length = 0;
      pendingBytes = 0;
      if (pendingSeq > socketSeq) socketSeq = pendingSeq;
      if (!res.write(chunk)) {
        waitingDrain = true;
        res.once('drain', onDrain);
      }
    };
    const write = (chunk: Buffer, seq = 0) => {
      if (done) return;
      if (waitingDrain) {
        if (pendingBytes + chunk.length + res.writableLength > maxQueued) return finish('slow-client');
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (seq > pendingSeq) pendingSeq = seq;
        return;
      }
      if (seq > socketSeq) socketSeq = seq;
      // One write, corked around it: http's chunk framing and the data go out in a single writev
      // now, without the nextTick that an uncorked res.write schedules per socket.
      res.cork();
      const ok = res.write(chunk);
      res.uncork();
      if (!ok) {
        waitingDrain = true;
        res.once('drain', onDrain);
        if (res.writableLength > maxQueued) finish('slow-client');
      }
    };
    function flushOutbox(): void {
      if (done || outbox.length === 0) return;
      const parts = outbox;
      outbox = [];
      outboxBytes = 0;
      write(joinBatch(parts), lastSent);
    }
    onLive = (e) => {
      if (done || e.seq <= lastSent) return;
      lastSent = e.seq;
      const chunk = encodedEvent(e);
      outbox.push(chunk);
      outboxBytes += chunk.length;
      if (TERMINAL_EVENT_TYPES.has(e.type)) return finish('completed');
      if (outboxBytes >= OUTBOX_FLUSH_BYTES) {
        dirty.delete(flushOutbox);
        const parts = outbox;
        outbox = [];
        outboxBytes = 0;
        return write(Buffer.concat(parts), lastSent);
      }
      scheduleFlush(flushOutbox);
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
      for (let page: readonly E[] | null = first; page; ) {
        for (const e of page) {
          if (push(e) && !(await drained())) return;
          if (done) return;
        }
        const r: IteratorResult<readonly E[]> | null = pages ? await pages.next() : null;
        page = r && !r.done ? r.value : null;
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
        if (!waitingDrain && outbox.length === 0) write(HEARTBEAT);
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
