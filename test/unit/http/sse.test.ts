import { strict as assert } from 'node:assert';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { EngineEvent } from '../../../protocol/events';
import { defineRoute, RESPONSE_SENT } from '../../../server/src/http/route';
import { type EventStreamOptions, type EventStreamSource, serveEventStream, type StreamOutcome } from '../../../server/src/http/sse';
import { bearer, startTestApi } from './harness';

/** An execution's event log and live feed, in memory. */
class FakeSource implements EventStreamSource {
  readonly events: EngineEvent[] = [];
  readonly listeners = new Set<(e: EngineEvent) => void>();
  /** Called during replay (after the subscription, before the history is returned). */
  duringReplay: (() => void) | null = null;
  replayDelayMs = 0;

  emit(type: 'phase_started' | 'work_progress' | 'execution_completed' | 'execution_failed', extra: Record<string, unknown> = {}): EngineEvent {
    const base = { execution_id: 'task_1', seq: this.events.length + 1, ts: new Date().toISOString() };
    const e = (type === 'phase_started' ? { ...base, type, phase: 'Research', agent_id: 'coder-ai' }
      : type === 'work_progress' ? { ...base, type, phase: 'Generate', progress: 50, confidence: 0.8, agent_id: 'coder-ai' }
        : type === 'execution_completed' ? { ...base, type, status: 'completed' }
          : { ...base, type, status: 'failed', error: { code: 'ERR_GATE_FAILED', message: 'x' } }) as EngineEvent;
    Object.assign(e, extra);
    this.events.push(e);
    for (const l of [...this.listeners]) l(e);
    return e;
  }

  async replay(after: number): Promise<EngineEvent[]> {
    const snapshot = () => this.events.filter((e) => e.seq > after);
    if (this.duringReplay) {
      const first = snapshot();
      this.duringReplay();
      return first; // a snapshot taken before the live events emitted meanwhile
    }
    if (this.replayDelayMs) await new Promise((r) => setTimeout(r, this.replayDelayMs));
    return snapshot();
  }

  subscribe(l: (e: EngineEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  isFinished(): boolean {
    return this.events.some((e) => e.type === 'execution_completed' || e.type === 'execution_failed');
  }
}

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A minimal SSE reader over node:http (frames as they arrive). */
function openStream(url: string, headers: Record<string, string> = {}) {
  const frames: Frame[] = [];
  const waiters: Array<() => void> = [];
  let res!: IncomingMessage;
  let buf = '';
  let closed = false;
  const ready = new Promise<IncomingMessage>((resolve, reject) => {
    const req = get(url, { headers, agent: false }, (r) => {
      res = r;
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const f: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) f.comment = line.slice(1).trim();
            else {
              const c = line.indexOf(': ');
              const k = line.slice(0, c) as keyof Frame;
              if (k === 'id' || k === 'event' || k === 'data') f[k] = line.slice(c + 2);
            }
          }
          frames.push(f);
        }
        for (const w of waiters.splice(0)) w();
      });
      r.on('error', () => {}); // a cut stream ends with 'aborted'; 'close' below reports it
      r.on('close', () => {
        closed = true;
        for (const w of waiters.splice(0)) w();
      });
      resolve(r);
    });
    req.on('error', reject);
  });
  const until = (pred: () => boolean, ms = 5000) => new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out; frames: ${JSON.stringify(frames)}`)), ms);
    const check = () => (pred() ? (clearTimeout(t), resolve()) : waiters.push(check));
    check();
  });
  return {
    frames,
    ready,
    events: () => frames.filter((f) => f.id !== undefined),
    seqs: () => frames.filter((f) => f.id !== undefined).map((f) => Number(f.id)),
    until,
    closed: () => until(() => closed),
    get response() {
      return res;
    },
    destroy: () => res.destroy(),
  };
}

describe('SSE transport', () => {
  let server: Server;
  let base: string;
  let source: FakeSource;
  let opts: EventStreamOptions;
  let outcomes: StreamOutcome[];
  /** Every res.write of the streams, in order (to check how the output is batched). */
  let writes: Array<{ res: ServerResponse; chunk: unknown }>;

  beforeEach(async () => {
    source = new FakeSource();
    opts = { heartbeatMs: 60_000 };
    outcomes = [];
    writes = [];
    server = createServer((req, res) => {
      const write = res.write.bind(res) as (chunk: unknown) => boolean;
      res.write = ((chunk: unknown) => (writes.push({ res, chunk }), write(chunk))) as typeof res.write;
      serveEventStream(req, res, source, opts).then((o) => outcomes.push(o), (err: Error) => {
        res.writeHead(400);
        res.end(err.message);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('writes id, event and data per event, and ends after the terminal event', async () => {
    const s = openStream(`${base}/stream`);
    const res = await s.ready;
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache, no-transform');
    await s.until(() => source.listeners.size === 1 && s.frames.length >= 1); // the retry: frame
    source.emit('phase_started');
    source.emit('work_progress');
    source.emit('execution_completed');
    await s.closed();
    const evs = s.events();
    assert.deepEqual(evs.map((f) => [f.id, f.event]), [['1', 'phase_started'], ['2', 'work_progress'], ['3', 'execution_completed']]);
    assert.deepEqual(JSON.parse(evs[1]!.data!), source.events[1]);
    assert.equal(source.listeners.size, 0, 'unsubscribed');
    assert.deepEqual(outcomes, ['completed']);
  });

  it('resumes after Last-Event-ID with no gap and no duplicate, even with events arriving during the replay', async () => {
    const first = openStream(`${base}/stream`);
    await first.ready;
    await first.until(() => source.listeners.size === 1);
    for (let i = 0; i < 3; i++) source.emit('work_progress');
    await first.until(() => first.seqs().length === 3);
    first.destroy();
    await first.closed();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(source.listeners.size, 0, 'the disconnected client was unsubscribed');

    for (let i = 0; i < 3; i++) source.emit('work_progress'); // 4..6 while away
    // During the replay, three more arrive live (7..9): the replay's snapshot holds only 4..6.
    source.duringReplay = () => {
      source.duringReplay = null;
      for (let i = 0; i < 3; i++) source.emit('work_progress');
    };
    const second = openStream(`${base}/stream`, { 'last-event-id': '3' });
    await second.ready;
    await second.until(() => second.seqs().length >= 6);
    source.emit('work_progress'); // 10, live
    source.emit('execution_completed'); // 11
    await second.closed();
    assert.deepEqual(second.seqs(), [4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('drops replayed events the live buffer also holds (overlap between history and subscription)', async () => {
    for (let i = 0; i < 2; i++) source.emit('work_progress');
    source.replayDelayMs = 50; // history read late: it already contains the events emitted meanwhile
    const s = openStream(`${base}/stream?last_event_id=1`);
    await s.ready.catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    source.emit('work_progress'); // 3: in the live buffer and in the history
    source.emit('execution_completed'); // 4: same
    await s.closed();
    assert.deepEqual(s.seqs(), [2, 3, 4], 'the query parameter last_event_id works and nothing is doubled');
  });

  it('replays and ends at once when the execution has already finished', async () => {
    source.emit('phase_started');
    source.emit('execution_failed');
    const s = openStream(`${base}/stream`);
    await s.closed();
    assert.deepEqual(s.events().map((f) => f.event), ['phase_started', 'execution_failed']);
    const late = openStream(`${base}/stream`, { 'last-event-id': '2' });
    await late.closed();
    assert.deepEqual(late.seqs(), [], 'a client that has everything gets an empty, ended stream');
    assert.deepEqual(outcomes.sort(), ['already-finished', 'completed']);
  });

  it('sends heartbeat comments every heartbeatMs', async () => {
    opts = { heartbeatMs: 25 };
    const s = openStream(`${base}/stream`);
    await s.ready;
    await s.until(() => s.frames.filter((f) => f.comment === 'heartbeat').length >= 3, 2000);
    source.emit('execution_completed');
    await s.closed();
  });

  it('disconnects a client that stops reading once unsent output passes maxQueuedBytes', async () => {
    opts = { heartbeatMs: 60_000, maxQueuedBytes: 64 * 1024 };
    const s = openStream(`${base}/stream`);
    const res = await s.ready;
    res.pause(); // a client that does not read
    await s.until(() => source.listeners.size === 1);
    const blob = 'x'.repeat(32 * 1024);
    // Enough to fill the socket buffers on both sides, then the 64 KiB allowance.
    for (let i = 0; i < 2000 && source.listeners.size > 0; i++) {
      source.emit('work_progress', { note: blob });
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.equal(source.listeners.size, 0, 'the slow client was cut off and unsubscribed');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(outcomes, ['slow-client']);
    res.resume();
    await s.closed();
    const got = s.seqs();
    assert.ok(got.length < 2000, 'it did not receive everything');
    // Its last event says why and where to resume; it carries no id (Last-Event-ID stays the last event).
    const last = s.frames[s.frames.length - 1]!;
    assert.equal(last.event, 'stream_dropped', JSON.stringify(s.frames.slice(-2)));
    assert.equal(last.id, undefined);
    const why = JSON.parse(last.data!) as { reason: string; lastEventId: number };
    assert.match(why.reason, /client too slow/);
    assert.equal(why.lastEventId, got[got.length - 1], 'the last event it received');
    // It can come back for the rest.
    const again = openStream(`${base}/stream`, { 'last-event-id': String(got.length ? got[got.length - 1] : 0) });
    await again.ready.catch((e) => { console.log('AGAIN FAILED', e, got.length, outcomes); throw e; });
    await again.until(() => again.seqs().length > 0);
    source.emit('execution_completed');
    await again.closed();
    const all = [...got, ...again.seqs()];
    assert.deepEqual(all, Array.from({ length: all.length }, (_, i) => i + 1), 'no gap after reconnecting');
  });
  it('replays a paged history at the client\'s pace: a client that does not read makes the server stop reading pages', async () => {
    opts = { heartbeatMs: 60_000, maxQueuedBytes: 64 * 1024 };
    // 32 MB of history: far more than the kernel's socket buffers hold (a few MB on loopback).
    for (let i = 0; i < 2000; i++) source.emit('work_progress', { note: 'y'.repeat(16 * 1024) });
    source.emit('execution_completed');
    let pulled = 0;
    const paged = Object.assign(source, {
      async *pages(after: number) {
        const all = source.events.filter((e) => e.seq > after);
        for (let i = 0; i < all.length; i += 10) {
          pulled++;
          yield all.slice(i, i + 10);
        }
      },
    });
    assert.ok(paged.pages);
    const s = openStream(`${base}/stream`);
    const res = await s.ready;
    res.pause();
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(pulled < 100, `a client that does not read stops the replay (${pulled} of 201 pages pulled)`);
    res.resume();
    await s.closed();
    assert.deepEqual(s.seqs(), Array.from({ length: 2001 }, (_, i) => i + 1), 'then everything, in order');
    assert.equal(pulled, 201);
  });

  it('writes the live events of one event-loop turn in one write per subscriber, sharing one Buffer between subscribers', async () => {
    const a = openStream(`${base}/stream`);
    const b = openStream(`${base}/stream`);
    await Promise.all([a.ready, b.ready]);
    await a.until(() => source.listeners.size === 2 && a.frames.length >= 1 && b.frames.length >= 1);
    writes.length = 0;
    // A burst spread over a tick, a nextTick and a microtask of the same turn (as the engine's awaits do).
    source.emit('phase_started');
    source.emit('work_progress');
    process.nextTick(() => source.emit('work_progress'));
    void Promise.resolve().then(() => source.emit('work_progress'));
    await a.until(() => a.seqs().length === 4 && b.seqs().length === 4);
    assert.equal(writes.length, 2, 'one write per subscriber');
    assert.notEqual(writes[0]!.res, writes[1]!.res);
    assert.ok(Buffer.isBuffer(writes[0]!.chunk), 'the wire bytes, encoded once');
    assert.equal(writes[0]!.chunk, writes[1]!.chunk, 'the same Buffer for both subscribers');
    assert.deepEqual(a.seqs(), [1, 2, 3, 4]);
    assert.deepEqual(b.events().map((f) => JSON.parse(f.data!)), source.events);
    // Events of a later turn go in a later write, and the terminal one ends the stream.
    await new Promise((r) => setImmediate(r));
    source.emit('work_progress');
    source.emit('execution_completed');
    await Promise.all([a.closed(), b.closed()]);
    assert.deepEqual(a.seqs(), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(b.seqs(), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(outcomes, ['completed', 'completed']);
  });

  it('writes a subscriber\'s pending live output at once past 64 KiB, without waiting for the turn to end', async () => {
    const s = openStream(`${base}/stream`);
    await s.ready;
    await s.until(() => source.listeners.size === 1 && s.frames.length >= 1);
    writes.length = 0;
    const blob = 'x'.repeat(20 * 1024);
    for (let i = 0; i < 4; i++) source.emit('work_progress', { note: blob });
    assert.equal(writes.length, 1, 'written synchronously once the outbox passed 64 KiB');
    source.emit('execution_completed');
    await s.closed();
    assert.deepEqual(s.seqs(), [1, 2, 3, 4, 5]);
  });
});

describe('SSE through a route', () => {
  it('answers 400 problem+json for an invalid Last-Event-ID, and streams with the route\'s headers otherwise', async () => {
    const source = new FakeSource();
    const api = await startTestApi({
      routes: [defineRoute({
        method: 'GET', path: '/v1/test/stream', auth: 'key', tenancy: 'tenant', summary: 'test stream', tags: ['test'],
        responses: { 200: { description: 'text/event-stream' } },
        handler: async (ctx) => {
          await serveEventStream(ctx.req, ctx.res, source, { heartbeatMs: 60_000 });
          return RESPONSE_SENT;
        },
      })],
    });
    try {
      const bad = await request(`${api.url}/v1/test/stream`, { headers: { ...bearer(api.key), 'last-event-id': 'abc' } });
      assert.equal(bad.statusCode, 400);
      assert.match(String(bad.headers['content-type']), /problem\+json/);
      assert.deepEqual((await bad.body.json() as { errors: unknown }).errors, [{ field: 'headers.last-event-id', message: 'must be a non-negative integer (the seq of an event)' }]);

      source.emit('phase_started');
      source.emit('execution_completed');
      const ok = await request(`${api.url}/v1/test/stream`, { headers: bearer(api.key) });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['x-ratelimit-limit'], '167');
      const text = await ok.body.text();
      assert.match(text, /^retry: 2000\n\nid: 1\nevent: phase_started\ndata: \{.*\}\n\nid: 2\nevent: execution_completed\ndata: \{.*\}\n\n$/);
    } finally {
      await api.close();
    }
  });
});
