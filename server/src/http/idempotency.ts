/**
 * `Idempotency-Key` for POST endpoints that create things (Stripe's semantics):
 *
 * - same key, same request (method, path and body, compared by hash) → the first answer (status,
 *   body, Location) again, with `Idempotent-Replayed: true`, and nothing runs twice;
 * - same key, another request → 422 ERR_IDEMPOTENCY_KEY_REUSED;
 * - same key while the first request is still running → 409 ERR_IDEMPOTENCY_IN_PROGRESS.
 *
 * Keys are scoped per API key (two callers may pick the same string). Answers are kept 24 h in the
 * store's `idempotency` collection, so a client that lost a 202 and retries after a server restart
 * still gets the first answer. Before the handler runs, the request is recorded `in_flight`
 * (durably); its answer replaces that record once it exists. An `in_flight` record left by a process
 * that died is `abandoned`: the route's `recover` looks for what the handler created with the claim
 * (engine routes store it on the execution in the same write as the 202's), and answers with it;
 * only when nothing was created does the request run again. Answers of 5xx are not kept (the retry
 * may succeed); 4xx are.
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalize } from '../engine/audit/chain';
import { type Clock, type Repository, systemClock } from '../engine/ports';

export const IDEMPOTENCY_COLLECTION = 'idempotency';
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** Response headers a replay repeats (never Set-Cookie or rate-limit headers of the first call). */
const KEPT_HEADERS = ['location', 'cache-control'] as const;
const PURGE_EVERY_MS = 60_000;

export interface StoredAnswer {
  status: number;
  body: unknown;
  /** The body is an RFC 9457 problem (sent as application/problem+json). */
  problem: boolean;
  headers: Record<string, string>;
}

export interface IdempotencyRecord {
  /** SHA-256 (hex) of `<key id>\n<Idempotency-Key>`. */
  id: string;
  keyId: string;
  method: string;
  path: string;
  /** SHA-256 (hex) of method, path and the body's canonical JSON. */
  requestHash: string;
  state: 'in_flight' | 'done';
  /** The process that recorded `in_flight` (a record of another process is an abandoned attempt). */
  instance: string;
  answer?: StoredAnswer;
  createdAt: string;
  expiresAt: string;
}

export type BeginOutcome =
  /** `abandoned`: a process that died had claimed it (the route's `recover` may find what it created). */
  | { kind: 'new'; id: string; abandoned: boolean }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'mismatch'; record: IdempotencyRecord }
  | { kind: 'in_progress' };

/** A valid Idempotency-Key: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
export function idempotencyKeyProblem(key: string): string | null {
  if (key.length === 0 || key.length > 255) return 'must be 1 to 255 characters';
  if (!/^[\x21-\x7e]+$/.test(key)) return 'must be visible ASCII characters (no spaces)';
  return null;
}

/**
 * JSON with object keys sorted, so a body re-serialised in another key order hashes the same: the
 * audit chain's canonical form (one definition of it), '' for no body.
 */
export function canonicalJson(value: unknown): string {
  return value === undefined ? '' : canonicalize(value);
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body)}`).digest('hex');
}

export function keepHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const name of KEPT_HEADERS) {
    const v = headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

export class IdempotencyStore {
  /** Records being run by this process (the check that answers 409 must not wait for the store). */
  private readonly running = new Set<string>();
  private lastPurge = 0;

  constructor(
    private readonly repo: Repository<IdempotencyRecord>,
    private readonly clock: Clock = systemClock,
    readonly instance: string = randomUUID(),
    readonly ttlMs: number = IDEMPOTENCY_TTL_MS,
  ) {}

  /** Claims `key` of `keyId` for a request, or says why it must not run. Resolves once the claim is durable. */
  async begin(keyId: string, key: string, method: string, path: string, hash: string): Promise<BeginOutcome> {
    const id = createHash('sha256').update(`${keyId}\n${key}`).digest('hex');
    // Synchronous up to the claim, so two concurrent duplicates cannot both pass.
    if (this.running.has(id)) return { kind: 'in_progress' };
    const now = this.clock.now();
    const existing = this.repo.get(id);
    const live = existing && Date.parse(existing.expiresAt) > now ? existing : undefined;
    if (live && live.requestHash !== hash) return { kind: 'mismatch', record: live };
    if (live?.state === 'done' && live.answer) return { kind: 'replay', answer: live.answer };
    // No record, an expired one, or an in_flight one that no running request of this process holds
    // (its process died): this request runs.
    this.running.add(id);
    try {
      await this.purgeExpired(now);
      const record: IdempotencyRecord = {
        id, keyId, method, path, requestHash: hash, state: 'in_flight', instance: this.instance,
        createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.ttlMs).toISOString(),
      };
      await this.repo.put(record);
    } catch (err) {
      this.running.delete(id);
      throw err;
    }
    return { kind: 'new', id, abandoned: live?.state === 'in_flight' };
  }

  /** Keeps the answer of a claimed request (durably) and releases the claim. */
  async finish(id: string, answer: StoredAnswer): Promise<void> {
    try {
      const current = this.repo.get(id);
      if (current) await this.repo.put({ ...current, state: 'done', answer });
    } finally {
      this.running.delete(id);
    }
  }

  /** Forgets a claimed request whose answer is not kept (a 5xx): a retry runs it again. */
  async abandon(id: string): Promise<void> {
    try {
      await this.repo.delete(id);
    } finally {
      this.running.delete(id);
    }
  }

  /** Drops answers older than the TTL (at most once a minute, on a new claim). */
  private async purgeExpired(now: number): Promise<void> {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    const doomed = this.repo.list((r) => Date.parse(r.expiresAt) <= now && !this.running.has(r.id));
    for (const r of doomed) await this.repo.delete(r.id);
  }
}
