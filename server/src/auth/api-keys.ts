/**
 * API keys: 32 random bytes shown once, stored only as SHA-256 hashes, compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
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

const KEY_PREFIX = 'cadre_';

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export class ApiKeys {
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

  /** The record of a valid, unrevoked key, or null. Every stored hash is compared, in constant time. */
  verify(key: string): ApiKeyRecord | null {
    const presented = Buffer.from(hashKey(key), 'hex');
    let match: ApiKeyRecord | null = null;
    for (const r of this.repo.list()) {
      if (timingSafeEqual(presented, Buffer.from(r.hash, 'hex')) && !r.revokedAt) match = r;
    }
    return match;
  }

  list(): ApiKeyRecord[] {
    return this.repo.list().sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async revoke(id: string): Promise<ApiKeyRecord> {
    return this.repo.update(id, { revokedAt: new Date(this.now()).toISOString() });
  }

  /** True when no usable key exists yet (first start). */
  none(): boolean {
    return this.repo.list((r) => !r.revokedAt).length === 0;
  }
}
