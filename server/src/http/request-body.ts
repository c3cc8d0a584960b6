/**
 * Request bodies: JSON only, at most `limit` bytes. A declared Content-Length over the limit is
 * refused before reading; a chunked body is counted as it arrives and reading stops at the limit
 * (nothing past it is buffered). The caller answers 413 with `Connection: close` so the rest of the
 * upload is never read.
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
  return new HttpProblem(problemFor('ERR_PAYLOAD_TOO_LARGE', `the body exceeds the limit of ${limit} bytes`, { limit }), { connection: 'close' });
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
    // Stop the socket from feeding us the rest; the response closes the connection.
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
