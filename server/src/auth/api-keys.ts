/**
 * API keys: 32 random bytes shown once, stored only as SHA-256 hashes, compared in constant time.
 * Every key may use every endpoint (the contract shows no scopes); its plan sets its rate limit.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EngineError } from '../engine/errors';
import type { Repository } from '../engine/ports';

export const API_PLANS = ['startup', 'growth', 'scale', 'enterprise'] as const;
export type ApiPlan = (typeof API_PLANS)[number];

export interface ApiKeyRecord {
  id: string;
  /** SHA-256 (hex) of the key. */
  hash: string;
  /** First characters of the key, to recognise it in a list. */
  prefix: string;
  label: string;
  plan: ApiPlan;
  createdAt: string;
  revokedAt?: string;
}

/** What may be shown of a key after its creation: never the key, never its hash. */
export interface ApiKeyView {
  id: string;
  prefix: string;
  label: string;
  plan: ApiPlan;
  createdAt: string;
  revokedAt: string | null;
}

export const KEY_PREFIX = 'cadre_';
/** Characters of a key shown in lists (`prefix`), also the lookup of verified keys. */
const VERIFIED_PREFIX_CHARS = KEY_PREFIX.length + 6;

// One-shot SHA-256 (crypto.hash, Node >= 20.12): no Hash object per call, on hot paths.
const ONE_SHOT = typeof hash === 'function';

/** SHA-256 (hex) of a key: what the store keeps. */
export function hashKey(key: string): string {
  return ONE_SHOT ? hash('sha256', key, 'hex') : createHash('sha256').update(key, 'utf8').digest('hex');
}

function sha256(s: string): Buffer {
  return ONE_SHOT ? hash('sha256', s, 'buffer') : createHash('sha256').update(s, 'utf8').digest();
}

export function keyView(r: ApiKeyRecord): ApiKeyView {
  return { id: r.id, prefix: r.prefix, label: r.label, plan: r.plan, createdAt: r.createdAt, revokedAt: r.revokedAt ?? null };
}

export class ApiKeys {
  /** Decoded hashes, so verification does not re-parse hex on every request. */
  private readonly digests = new Map<string, Buffer>();
  /** Keys that verified, by public prefix (in memory only; at most one per key). */
  private readonly verified = new Map<string, { key: Buffer; id: string; hash: string }>();

  constructor(private readonly repo: Repository<ApiKeyRecord>, private readonly now: () => number = Date.now) {}

  /** Creates a key; the clear value is returned once and never stored. */
  async create(label: string, plan: ApiPlan = 'enterprise'): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const record: ApiKeyRecord = { id: `key_${randomBytes(6).toString('hex')}`, hash: hashKey(key), prefix: key.slice(0, KEY_PREFIX.length + 6), label, plan, createdAt: new Date(this.now()).toISOString() };
    await this.repo.put(record);
    return { key, record };
  }

  /** Accepts a key given by the environment (automation): stored hashed, once. */
  async adopt(key: string, label: string): Promise<ApiKeyRecord> {
    const hash = hashKey(key);
    const existing = this.repo.list((r) => r.hash === hash)[0];
    if (existing) return existing;
    const record: ApiKeyRecord = { id: `key_${randomBytes(6).toString('hex')}`, hash, prefix: key.slice(0, Math.min(12, key.length)), label, plan: 'enterprise', createdAt: new Date(this.now()).toISOString() };
    await this.repo.put(record);
    return record;
  }

  /**
   * The record of a valid, unrevoked key, or null. Every stored hash is compared, in constant time.
   * A key that verified once is remembered in memory under its public prefix (the part shown in
   * lists) and later compared in constant time with the presented key itself, which spares a
   * SHA-256 per request; the record is re-read each time, so revocation takes effect at once.
   */
  verify(key: string): ApiKeyRecord | null {
    const prefix = key.slice(0, VERIFIED_PREFIX_CHARS);
    const known = this.verified.get(prefix);
    if (known) {
      const presented = Buffer.from(key, 'utf8');
      if (presented.length === known.key.length && timingSafeEqual(presented, known.key)) {
        const r = this.repo.get(known.id);
        if (r && !r.revokedAt && r.hash === known.hash) return r;
        this.verified.delete(prefix);
        return null;
      }
    }
    const presented = sha256(key);
    let match: ApiKeyRecord | null = null;
    for (const r of this.repo.list()) {
      if (timingSafeEqual(presented, this.digest(r.hash)) && !r.revokedAt) match = r;
    }
    if (match && !known) this.verified.set(prefix, { key: Buffer.from(key, 'utf8'), id: match.id, hash: match.hash });
    return match;
  }

  get(id: string): ApiKeyRecord | undefined {
    return this.repo.get(id);
  }

  list(): ApiKeyRecord[] {
    return this.repo.list().sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** Revokes a key (idempotent: a revoked key keeps its first revocation time); ERR_NOT_FOUND if unknown. */
  async revoke(id: string): Promise<ApiKeyRecord> {
    const current = this.repo.get(id);
    if (!current) throw new EngineError('ERR_NOT_FOUND', `no API key with id "${id}"`, { details: { id } });
    if (current.revokedAt) return current;
    return this.repo.update(id, { revokedAt: new Date(this.now()).toISOString() });
  }

  /** True when no usable key exists yet (first start). */
  none(): boolean {
    return this.repo.list((r) => !r.revokedAt).length === 0;
  }

  private digest(hex: string): Buffer {
    let b = this.digests.get(hex);
    if (!b) {
      b = Buffer.from(hex, 'hex');
      if (b.length !== 32) b = Buffer.alloc(32); // a corrupt record matches nothing
      this.digests.set(hex, b);
    }
    return b;
  }
}
