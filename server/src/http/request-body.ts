/**
 * Request bodies: JSON only, at most `limit` bytes. A declared Content-Length over the limit is
 * refused before reading; a chunked body is counted as it arrives and buffering stops at the limit.
 * What the client still sends after a refusal is discarded, within bounds (`discardRest`), so that
 * it can read the answer instead of meeting a reset connection.
 */
import type { IncomingMessage } from 'node:http';
import { HttpProblem, problemFor } from './problem';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** True when the request carries a body (a positive Content-Length, or any Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && cl !== '0';
}

/** `application/json` or `application/<anything>+json`, in UTF-8 (the only charset JSON has). */
export function checkJsonContentType(req: IncomingMessage): void {
  const raw = req.headers['content-type'];
  const unsupported = (why: string) =>
    new HttpProblem(problemFor('ERR_UNSUPPORTED_MEDIA_TYPE', `${why}; send the body as Content-Type: application/json`), { accept: 'application/json' });
  if (!raw) throw unsupported('the request has a body but no Content-Type');
  const [type, ...params] = raw.split(';');
  const media = type!.trim().toLowerCase();
  if (media !== 'application/json' && !(media.startsWith('application/') && media.endsWith('+json'))) {
    throw unsupported(`Content-Type ${media || '(empty)'} is not supported`);
  }
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const name = p.slice(0, eq).trim().toLowerCase();
    const value = p.slice(eq + 1).trim().replace(/^"|"$/g, '').toLowerCase();
    if (name === 'charset' && value !== 'utf-8' && value !== 'utf8') throw unsupported(`charset ${value} is not supported (JSON is UTF-8)`);
  }
  const encoding = req.headers['content-encoding'];
  if (encoding && encoding.trim().toLowerCase() !== 'identity') throw unsupported(`Content-Encoding ${encoding} is not supported`);
}

function tooLarge(limit: number): HttpProblem {
  return new HttpProblem(problemFor('ERR_PAYLOAD_TOO_LARGE', `the body exceeds the limit of ${limit} bytes`, { limit }));
}

/** Thrown when the client goes away mid-body; nothing is answered. */
export class ClientAborted extends Error {
  constructor() {
    super('client aborted the request');
    this.name = 'ClientAborted';
  }
}

/** Reads the whole body, refusing more than `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.pause();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        chunks.length = 0;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = () => {
      cleanup();
      reject(new ClientAborted());
    };
    const onAborted = onError;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** Parses a UTF-8 JSON body; an empty one is `undefined`. */
export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    // V8's message names the position ("Unexpected token } in JSON at position 12"), never code.
    throw new HttpProblem(problemFor('ERR_MALFORMED_JSON', `the body is not valid JSON: ${(err as Error).message}`));
  }
}

/** At most this much of a refused body is read (and dropped) after the answer... */
export const DISCARD_MAX_BYTES = 4 * 1024 * 1024;
/** ...for at most this long; then the connection is cut. */
export const DISCARD_MAX_MS = 5_000;

/**
 * Lingering close for a body the server will not use (a refusal sent before or while reading it):
 * the rest is read and dropped, never buffered, up to DISCARD_MAX_BYTES or DISCARD_MAX_MS, after
 * which the socket is destroyed. Closing at once instead would make the kernel reset the connection
 * over the unread bytes, and the client would see ECONNRESET/EPIPE rather than the 413 or 401.
 */
export function discardRest(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  let dropped = 0;
  const cut = () => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DISCARD_MAX_MS);
  timer.unref();
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_MAX_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.on('error', () => clearTimeout(timer));
  req.resume();
}
