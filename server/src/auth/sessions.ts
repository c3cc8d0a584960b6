/**
 * Sessions for the contract's session-protected endpoint (`POST|GET /api/agents/{id}/{action}`).
 *
 * `POST /api/session` with a valid bearer key opens one: a token of 32 random bytes (base64url) goes
 * to the client once, in the `cadre_session` cookie; the store keeps only its SHA-256, as the record
 * id, in the `sessions` collection (so sessions survive a restart). A session is bound to the key
 * that opened it and dies with it: revoking the key ends its sessions, and a session whose key is
 * revoked or gone is refused even before the cleanup ran. Lifetime is fixed (8 h from creation, no
 * sliding); expired records are purged when a new session is opened.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, type Repository, systemClock } from '../engine/ports';
import { type ApiKeyRecord, type ApiKeys, hashKey } from './api-keys';

export const SESSIONS_COLLECTION = 'sessions';
export const SESSION_COOKIE = 'cadre_session';
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export interface SessionRecord {
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  id: string;
  keyId: string;
  createdAt: string;
  expiresAt: string;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 (hex) of a token, as for keys. */
const hashToken = hashKey;

export class Sessions {
  constructor(
    private readonly repo: Repository<SessionRecord>,
    private readonly keys: Pick<ApiKeys, 'get'>,
    private readonly clock: Clock = systemClock,
    readonly ttlMs: number = SESSION_TTL_MS,
  ) {}

  /** Opens a session for `key`; resolves once it is durable. The token is returned once. */
  async create(key: ApiKeyRecord): Promise<{ token: string; record: SessionRecord }> {
    await this.purgeExpired();
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const record: SessionRecord = { id: hashToken(token), keyId: key.id, createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.ttlMs).toISOString() };
    await this.repo.put(record);
    return { token, record };
  }

  /**
   * The session and its key, when the token names a live session of a usable key. The lookup is by
   * the token's hash: a timing difference could only reveal bits of a hash of 256 random bits.
   */
  verify(token: string): { session: SessionRecord; key: ApiKeyRecord } | null {
    if (!TOKEN_RE.test(token)) return null;
    const session = this.repo.get(hashToken(token));
    if (!session || Date.parse(session.expiresAt) <= this.clock.now()) return null;
    const key = this.keys.get(session.keyId);
    if (!key || key.revokedAt) return null;
    return { session, key };
  }

  /** Ends one session (logout), by its record id; false when there was none. */
  async end(sessionId: string): Promise<boolean> {
    return this.repo.delete(sessionId);
  }

  /** Ends every session opened with `keyId` (the key was revoked). */
  async endForKey(keyId: string): Promise<number> {
    const doomed = this.repo.list((s) => s.keyId === keyId);
    await Promise.all(doomed.map((s) => this.repo.delete(s.id)));
    return doomed.length;
  }

  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    const doomed = this.repo.list((s) => Date.parse(s.expiresAt) <= now);
    await Promise.all(doomed.map((s) => this.repo.delete(s.id)));
    return doomed.length;
  }

  /** Live sessions (for tests and diagnostics). */
  count(): number {
    const now = this.clock.now();
    return this.repo.list((s) => Date.parse(s.expiresAt) > now).length;
  }
}
