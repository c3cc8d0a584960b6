/**
 * Binds the HTTP server to 127.0.0.1. A port taken by another program is reported and the next one
 * tried; port 0 asks the OS for a free one.
 */
import type { Server } from 'node:http';
import { request } from 'node:http';

export const LOOPBACK = '127.0.0.1';
const ATTEMPTS = 20;

/** What answers on a port: a Cadre server (with its health body), something else, or nothing. */
export async function probePort(port: number, timeoutMs = 1000): Promise<{ kind: 'cadre'; pid: number } | { kind: 'other' } | { kind: 'none' }> {
  return new Promise((resolve) => {
    const req = request({ host: LOOPBACK, port, path: '/v1/health', method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c.length < 65536 ? c : ''));
      res.on('end', () => {
        try {
          const json = JSON.parse(body) as { service?: string; pid?: number };
          resolve(json.service === 'cadre' ? { kind: 'cadre', pid: json.pid ?? 0 } : { kind: 'other' });
        } catch {
          resolve({ kind: 'other' });
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? { kind: 'none' } : { kind: 'other' }));
    req.end();
  });
}

function tryListen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, LOOPBACK);
  });
}

/** Listens on `port` or the next free one; `warn` receives one readable line per port skipped. */
export async function listenWithFallback(server: Server, port: number, warn: (line: string) => void): Promise<number> {
  let candidate = port;
  for (let i = 0; i < ATTEMPTS; i++) {
    try {
      return await tryListen(server, candidate);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || candidate === 0) throw err;
      const who = await probePort(candidate);
      const next = candidate + 1 <= 65535 ? candidate + 1 : 0;
      warn(who.kind === 'cadre'
        ? `port ${candidate} is used by another Cadre server (pid ${who.pid}, another data directory); trying ${next || 'a free port'}`
        : `port ${candidate} is in use by another program (not Cadre); trying ${next || 'a free port'}`);
      candidate = next;
    }
  }
  return tryListen(server, 0);
}
