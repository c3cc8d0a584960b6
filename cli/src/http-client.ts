/**
 * The CLI's one HTTP client: every command that talks to a server goes through `ApiClient` (JSON calls
 * with problem+json errors turned into one line and an exit code, and the typed SSE event stream with
 * resumption). The key is sent only once `ready` resolves (the data directory's owner proved its lock).
 */
import type { EngineEvent } from '../../protocol/events';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';

export type Json = Record<string, unknown>;

/** The problem+json codes that mean "who you are" rather than "what you asked" (exit 4). */
const AUTH_CODES = new Set(['ERR_AUTH_REQUIRED', 'ERR_AUTH_INVALID', 'ERR_FORBIDDEN']);

export interface ApiClientOptions {
  /** Where the key came from, named in an auth error (CADRE_API_KEY, the login of cadre auth login). */
  keySource?: string;
  /** Rejects when the key must not be sent (the lock owner did not prove its token). */
  ready?: Promise<void>;
  timeoutMs?: number;
}

/** Whether a Cadre server answers at `url` (its unauthenticated health route, within 1.5 s). */
export async function serverAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(1500) });
    return res.status < 500 || res.status === 503;
  } catch {
    return false;
  }
}

export class ApiClient {
  private readonly ready: Promise<void>;
  readonly keySource: string;

  constructor(readonly base: string, private readonly key: string | null, private readonly opts: ApiClientOptions = {}) {
    this.ready = opts.ready ?? Promise.resolve();
    this.ready.catch(() => {});
    this.keySource = opts.keySource ?? 'CADRE_API_KEY';
  }

  /**
   * The request's headers with the key. Without a key, a server that does not answer is the first thing to say:
   * "no API key" sent a user with no server running to `cadre auth login`, which cannot help.
   */
  private async headers(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    if (!this.key) {
      if (!(await serverAnswers(this.base))) throw this.unreachable();
      throw new CliError(`no API key for ${this.base}: run cadre auth login --url ${this.base}, or set CADRE_API_KEY`, EXIT.AUTH);
    }
    return { authorization: `Bearer ${this.key}`, ...extra };
  }

  unreachable(): CliError {
    return new CliError(`no Cadre server answers at ${this.base} (start one with: cadre serve)`, EXIT.UNREACHABLE);
  }

  /** A JSON call; a non-2xx answer becomes a CliError with the problem's detail and the fields it names. */
  async call<T = Json>(method: string, p: string, body?: unknown, opts: { auth?: boolean; notFound?: string; okStatuses?: number[] } = {}): Promise<T> {
    await this.ready;
    let res: Response;
    const headers = opts.auth === false ? {} : await this.headers(body !== undefined ? { 'content-type': 'application/json' } : {});
    if (opts.auth === false && body !== undefined) headers['content-type'] = 'application/json';
    try {
      res = await fetch(this.base + p, {
        method, headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
      });
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') throw new CliError(`${method} ${p}: the server at ${this.base} did not answer within ${Math.round((this.opts.timeoutMs ?? 60_000) / 1000)} s`, EXIT.UNREACHABLE);
      throw this.unreachable();
    }
    const text = await res.text();
    let json: Json = {};
    try {
      json = (text ? JSON.parse(text) : {}) as Json;
    } catch {
      if (res.ok) throw new CliError(`${method} ${p}: the server answered something that is not JSON`);
    }
    if (!res.ok && !opts.okStatuses?.includes(res.status)) throw this.problem(res.status, json, method, p, opts.notFound);
    return json as T;
  }

  private problem(status: number, json: Json, method: string, p: string, notFound?: string): CliError {
    const code = typeof json['code'] === 'string' ? json['code'] : '';
    // A route this server does not have (an older server): say what is missing, not "Not Found".
    if (status === 404 && code === 'ERR_ROUTE_NOT_FOUND' && notFound) return new CliError(notFound);
    const errors = Array.isArray(json['errors']) ? (json['errors'] as Array<{ field: string; message: string }>) : [];
    const fields = errors.length > 0 ? ` (${errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
    const detail = typeof json['detail'] === 'string' ? json['detail'] : `${method} ${p}: HTTP ${status}`;
    if (status === 401) return new CliError(`the server at ${this.base} refused the API key from ${this.keySource}: ${detail}`, EXIT.AUTH);
    if (AUTH_CODES.has(code)) return new CliError(`${detail}${fields}`, EXIT.AUTH);
    return new CliError(`${detail}${fields}`);
  }

  /**
   * The execution's events, typed (protocol/events.ts), from `afterSeq` on. A connection that drops
   * before the terminal event is reopened with `Last-Event-ID` of the last event received, so no
   * event is lost or repeated; `onReconnect` is told. Ends after the terminal event, or when the
   * server ends the stream of an execution that is not running (`follow: false` stops once the
   * history is replayed and nothing new came for `idleMs`).
   */
  async *events(executionId: string, opts: { afterSeq?: number; follow?: boolean; idleMs?: number; onReconnect?: (lastSeq: number, attempt: number) => void; signal?: AbortSignal } = {}): AsyncGenerator<EngineEvent> {
    await this.ready;
    let last = opts.afterSeq ?? 0;
    const follow = opts.follow !== false;
    let failures = 0;
    for (;;) {
      // Outside the try: a missing key is not a dropped connection to retry.
      const headers = await this.headers({ accept: 'text/event-stream', 'last-event-id': String(last) });
      const ctrl = new AbortController();
      const onAbort = () => ctrl.abort();
      opts.signal?.addEventListener('abort', onAbort);
      let res: Response;
      try {
        res = await fetch(`${this.base}/api/admin/events/stream?execution_id=${encodeURIComponent(executionId)}`, {
          headers,
          signal: ctrl.signal,
        });
      } catch {
        opts.signal?.removeEventListener('abort', onAbort);
        if (opts.signal?.aborted) return;
        if (++failures > 20) throw new CliError(`lost the progress stream of ${executionId}: no Cadre server answers at ${this.base}`, EXIT.UNREACHABLE);
        opts.onReconnect?.(last, failures);
        await sleep(Math.min(250 * failures, 2000));
        continue;
      }
      if (!res.ok || !res.body) {
        opts.signal?.removeEventListener('abort', onAbort);
        const json = (await res.json().catch(() => ({}))) as Json;
        throw this.problem(res.status, json, 'GET', '/api/admin/events/stream');
      }
      let idle: NodeJS.Timeout | null = null;
      const armIdle = () => {
        if (follow) return;
        if (idle) clearTimeout(idle);
        idle = setTimeout(() => ctrl.abort(), opts.idleMs ?? 400);
      };
      armIdle();
      let ended = false;
      let buf = '';
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const id = /^id: (\d+)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            // Heartbeats and transport notices (stream_dropped) carry no id: the next connection resumes.
            if (!id || !data) continue;
            const seq = Number(id);
            if (seq <= last) continue;
            last = seq;
            failures = 0;
            armIdle();
            const e = JSON.parse(data) as EngineEvent;
            yield e;
            if (e.type === 'execution_completed' || e.type === 'execution_failed') ended = true;
          }
          if (ended) break;
        }
      } catch {
        // A reset connection or our own idle abort: decided below.
      } finally {
        if (idle) clearTimeout(idle);
        opts.signal?.removeEventListener('abort', onAbort);
        ctrl.abort();
      }
      if (ended || opts.signal?.aborted || (!follow && ctrl.signal.aborted)) return;
      if (!follow) return;
      // The stream ended before the terminal event (a dropped connection, a restarted server): resume.
      if (++failures > 20) throw new CliError(`lost the progress stream of ${executionId} after event ${last}`, EXIT.UNREACHABLE);
      opts.onReconnect?.(last, failures);
      await sleep(Math.min(100 * failures, 2000));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
