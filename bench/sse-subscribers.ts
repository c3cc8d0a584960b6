/**
 * A load-generator process for the SSE fan-out bench (bench/http-engine.ts): holds a share of the
 * subscribers of one execution's stream, each on its own connection (node:http, no agent pooling), with
 * a minimal SSE parser (blocks split on a blank line; `id:` gives the seq and the event's `ts` is read
 * with an indexOf on `"seq":<id>,"ts":"`, the order in which the engine stamps them, so no JSON.parse per
 * delivery). Receipt time is Date.now() when the chunk completing the event arrived; the server stamps
 * `ts` from the same host clock (same machine, CLOCK_REALTIME), so no clock offset is needed: the delay
 * is receipt − ts, both in whole milliseconds (±1 ms).
 *
 * Protocol (IPC, forked by the bench): the parent sends `{ type: 'connect', url, path, keys, first,
 * count }`; the process answers `{ type: 'connected' }` once every stream answered 200 and, once every
 * stream ended, `{ type: 'done', ts, recv, lagP99, errors }` (arrays of every delivery's emit time and
 * receipt time; the parent keeps those emitted after all processes were connected). Its own event-loop
 * delay p99 (`lagP99`, ms) tells whether the load generator itself was the bottleneck.
 */
import { get } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ConnectMessage { type: 'connect'; url: string; path: string; keys: string[]; first: number; count: number }
export interface ConnectedMessage { type: 'connected' }
export interface DoneMessage { type: 'done'; ts: number[]; recv: number[]; lagP99: number; errors: string[] }

function subscribe(url: string, key: string, onDelivery: (ts: number, recv: number) => void, onHeaders: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = get(url, { agent: false, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`HTTP ${res.statusCode}`));
      }
      onHeaders();
      let buf = '';
      res.on('data', (chunk: Buffer) => {
        const now = Date.now();
        buf += chunk.toString('latin1');
        let k: number;
        let from = 0;
        while ((k = buf.indexOf('\n\n', from)) >= 0) {
          // `id: <seq>\nevent: <type>\ndata: {…}`; comments and `retry:` have no id.
          if (buf.startsWith('id: ', from)) {
            const nl = buf.indexOf('\n', from);
            const marker = `"seq":${buf.slice(from + 4, nl)},"ts":"`;
            const at = buf.indexOf(marker, nl);
            let ts: number;
            if (at >= 0 && at < k) ts = Date.parse(buf.slice(at + marker.length, buf.indexOf('"', at + marker.length)));
            else ts = Date.parse((JSON.parse(buf.slice(buf.indexOf('\ndata: ', from) + 7, k)) as { ts: string }).ts);
            onDelivery(ts, now);
          }
          from = k + 2;
        }
        if (from > 0) buf = buf.slice(from);
      });
      res.on('end', () => resolve());
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

if (require.main === module) {
  const lag = monitorEventLoopDelay({ resolution: 1 });
  process.on('message', (msg: ConnectMessage) => {
    if (msg.type !== 'connect') return;
    lag.enable();
    const ts: number[] = [];
    const recv: number[] = [];
    const errors: string[] = [];
    let connected = 0;
    const record = (t: number, r: number) => {
      ts.push(t);
      recv.push(r);
    };
    const streams = Array.from({ length: msg.count }, (_, i) => {
      const n = msg.first + i;
      return subscribe(`${msg.url}${msg.path}`, msg.keys[n % msg.keys.length]!, record, () => {
        if (++connected === msg.count) process.send!({ type: 'connected' } satisfies ConnectedMessage);
      }).catch((err: unknown) => {
        errors.push(`subscriber ${n}: ${(err as Error).message}`);
        if (++connected === msg.count) process.send!({ type: 'connected' } satisfies ConnectedMessage);
      });
    });
    void Promise.all(streams).then(() => {
      lag.disable();
      const done: DoneMessage = { type: 'done', ts, recv, lagP99: lag.percentile(99) / 1e6, errors };
      process.send!(done, () => process.exit(0));
    });
  });
  process.send!({ type: 'ready' });
}
