/** A real local HTTP receiver for webhook tests: records every request (headers, exact body bytes) and answers per path. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received { path: string; headers: IncomingHttpHeaders; body: Buffer; at: number }

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Answer of a path: status (and headers); default 200. Receives the count of earlier requests to that path. */
  answer: (path: string, n: number) => { status: number; headers?: Record<string, string>; body?: string };
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const r: Partial<Receiver> = { received, answer: () => ({ status: 200 }) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = req.url ?? '/';
      received.push({ path: p, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() });
      const n = counts.get(p) ?? 0;
      counts.set(p, n + 1);
      const a = r.answer!(p, n);
      res.writeHead(a.status, { 'content-type': 'text/plain', ...(a.headers ?? {}) });
      res.end(a.body ?? `status ${a.status}`);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return Object.assign(r, {
    url: `http://127.0.0.1:${actual}`, port: actual,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  }) as Receiver;
}
