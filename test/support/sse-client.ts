/**
 * A test's SSE reader over a real HTTP connection: it parses `id:` / `event:` / `data:` blocks as they
 * arrive and lets the test wait for the n-th event, for streams that stay open (the tenant service
 * stream) as well as ones that end.
 */
import { request } from 'undici';

export interface SseEvent { id: number | null; event: string; data: Record<string, unknown> }

export interface SseConnection {
  /** Events received so far (comments and the `retry:` preamble left out). */
  readonly events: SseEvent[];
  /** Resolves with the events once at least `n` arrived; rejects after `timeoutMs` saying what came. */
  waitFor(n: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when the server ended the response. */
  readonly ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, key: string, opts: { lastEventId?: number } = {}): Promise<SseConnection & { status: number; contentType: string }> {
  const res = await request(url, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(opts.lastEventId !== undefined ? { 'last-event-id': String(opts.lastEventId) } : {}) },
  });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  let closed = false;
  const ended = (async () => {
    try {
      for await (const chunk of res.body) {
        buf += chunk.toString();
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (!line || line.startsWith(':')) continue;
            const c = line.indexOf(':');
            fields.set(line.slice(0, c), line.slice(c + 1).trimStart());
          }
          if (!fields.has('event') || !fields.has('data')) continue;
          events.push({ id: fields.has('id') ? Number(fields.get('id')) : null, event: fields.get('event')!, data: JSON.parse(fields.get('data')!) as Record<string, unknown> });
          for (const w of [...waiters]) w();
        }
      }
    } catch (err) {
      if (!closed) throw err;
    } finally {
      for (const w of [...waiters]) w();
    }
  })();
  ended.catch(() => undefined);
  return {
    status: res.statusCode,
    contentType: String(res.headers['content-type'] ?? ''),
    events,
    ended,
    waitFor(n, timeoutMs = 60_000) {
      return new Promise<SseEvent[]>((resolve, reject) => {
        const check = () => {
          if (events.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(events.slice());
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${events.length} of ${n} events after ${timeoutMs} ms: ${JSON.stringify(events.map((e) => [e.id, e.event, e.data['topic'] ?? e.data['type']]))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      closed = true;
      res.body.destroy();
    },
  };
}
