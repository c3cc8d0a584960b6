/**
 * API keys: 32 random bytes shown once, stored only as SHA-256 hashes, compared in constant time.
 * Its plan sets a key's rate limit; its role (roles.ts) what it may decide. The list shows a short
 * prefix (`cadre_` + 8 characters of the random part), never enough of a key to guess the rest.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EngineError } from '../engine/errors';
import type { Repository } from '../engine/ports';
import { type Role, roleOf } from './roles';
import { DEFAULT_TENANT_ID, tenantOf } from '../engine/tenants/tenant-id';

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
  /** Absent on keys stored before roles existed: they count as admin (`roleOf`). */
  role?: Role;
  /** Tenant the key belongs to and acts in (absent: stored before tenants, the default tenant; `tenantOf`). */
  tenantId?: string;
  createdAt: string;
  revokedAt?: string;
}

/** What may be shown of a key after its creation: never the key, never its hash. */
export interface ApiKeyView {
  id: string;
  prefix: string;
  label: string;
  plan: ApiPlan;
  role: Role;
  tenantId: string;
  createdAt: string;
  revokedAt: string | null;
}

export const KEY_PREFIX = 'cadre_';
/** Characters of the random part of a key shown in lists. */
export const SHOWN_RANDOM_CHARS = 8;
/** A generated key: the prefix and 32 random bytes in base64url (43 characters). */
const GENERATED_KEY_RE = /^cadre_[A-Za-z0-9_-]{43}$/;
/**
 * 43 random base64url characters show ~31 distinct ones on average; fewer than 20 happens by chance
 * with a probability far below 1e-9, and catches hand-made keys such as `cadre_aaaa...` or a pattern.
 */
const MIN_DISTINCT_CHARS = 20;

/** A new key in the generated form (not stored anywhere). */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Why `key` is not in the generated form (prefix, length, alphabet, entropy), or null when it is. */
export function weakKeyReason(key: string): string | null {
  if (!key.startsWith(KEY_PREFIX)) return `it does not start with "${KEY_PREFIX}"`;
  if (!GENERATED_KEY_RE.test(key)) return `it is not "${KEY_PREFIX}" followed by 43 base64url characters (32 random bytes)`;
  if (new Set(key.slice(KEY_PREFIX.length)).size < MIN_DISTINCT_CHARS) return 'its characters are too repetitive to be random';
  return null;
}

/** The one line a refused CADRE_API_KEY gets. */
export const MAKE_KEY_HINT = `make one with \`cadre keys generate\` or \`node -e "console.log('cadre_'+require('crypto').randomBytes(32).toString('base64url'))"\``;

/** The part of a key shown in lists: `cadre_` and the first 8 characters of its random part. */
export function shownPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + SHOWN_RANDOM_CHARS);
}

const SHORT_PREFIX_RE = /^cadre_[A-Za-z0-9_-]{1,8}$/;
/** Shown instead of the prefix of a stored key that was not in the generated form. */
export const MASKED_PREFIX = 'cadre_(weak)';
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
  return { id: r.id, prefix: r.prefix, label: r.label, plan: r.plan, role: roleOf(r), tenantId: tenantOf(r), createdAt: r.createdAt, revokedAt: r.revokedAt ?? null };
}

export class ApiKeys {
  /** Decoded hashes, so verification does not re-parse hex on every request. */
  private readonly digests = new Map<string, Buffer>();
  /** Keys that verified, by public prefix (in memory only; at most one per key). */
  private readonly verified = new Map<string, { key: Buffer; id: string; hash: string }>();

  constructor(private readonly repo: Repository<ApiKeyRecord>, private readonly now: () => number = Date.now) {}

  /** Creates a key; the clear value is returned once and never stored. */
  async create(label: string, plan: ApiPlan = 'enterprise', role: Role = 'operator', tenantId: string = DEFAULT_TENANT_ID): Promise<{ key: string; record: ApiKeyRecord }> {
    const key = generateKey();
    const record: ApiKeyRecord = { id: `key_${randomBytes(6).toString('hex')}`, hash: hashKey(key), prefix: shownPrefix(key), label, plan, role, tenantId, createdAt: new Date(this.now()).toISOString() };
    await this.repo.put(record);
    return { key, record };
  }

  /**
   * Accepts a key given by the environment (automation, an admin key): stored hashed, once. The key
   * must be in the generated form (`weakKeyReason`); ERR_VALIDATION otherwise.
   */
  async adopt(key: string, label: string): Promise<ApiKeyRecord> {
    const weak = weakKeyReason(key);
    if (weak) throw new EngineError('ERR_VALIDATION', `the key is not a generated Cadre key: ${weak}`, { details: { field: 'key' } });
    const hash = hashKey(key);
    const existing = this.repo.list((r) => r.hash === hash)[0];
    if (existing) return existing;
    const record: ApiKeyRecord = { id: `key_${randomBytes(6).toString('hex')}`, hash, prefix: shownPrefix(key), label, plan: 'enterprise', role: 'admin', createdAt: new Date(this.now()).toISOString() };
    await this.repo.put(record);
    return record;
  }

  /**
   * Brings keys stored by earlier versions up to date, once per start: a key without a role becomes
   * `admin` (it could do everything before); a prefix that is not the short generated form (an
   * adopted `CADRE_API_KEY` kept its first 12 characters, the whole of a short secret) is masked,
   * and such a key, which was not generated, is revoked. Returns what changed, for the log.
   */
  async migrate(): Promise<{ roles: number; masked: string[] }> {
    let roles = 0;
    const masked: string[] = [];
    for (const r of this.repo.list()) {
      const patch: Partial<ApiKeyRecord> = {};
      if (r.role === undefined) {
        patch.role = 'admin';
        roles++;
      }
      if (!SHORT_PREFIX_RE.test(r.prefix) && r.prefix !== MASKED_PREFIX) {
        if (/^cadre_[A-Za-z0-9_-]{9,}$/.test(r.prefix)) {
          patch.prefix = r.prefix.slice(0, KEY_PREFIX.length + SHOWN_RANDOM_CHARS);
        } else {
          patch.prefix = MASKED_PREFIX;
          if (!r.revokedAt) patch.revokedAt = new Date(this.now()).toISOString();
          masked.push(r.id);
        }
      }
      if (Object.keys(patch).length > 0) await this.repo.update(r.id, patch);
    }
    return { roles, masked };
  }

  /** Keys that can still be used (of one tenant when given: a tenant with one key is single-user). */
  activeCount(tenantId?: string): number {
    return this.repo.list((r) => !r.revokedAt && (tenantId === undefined || tenantOf(r) === tenantId)).length;
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

  /** Keys, oldest first (of one tenant when given). */
  list(tenantId?: string): ApiKeyRecord[] {
    return this.repo.list((r) => tenantId === undefined || tenantOf(r) === tenantId).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** Revokes every key of a tenant (a deleted tenant); returns how many were revoked now. */
  async revokeTenant(tenantId: string): Promise<number> {
    const live = this.repo.list((r) => !r.revokedAt && tenantOf(r) === tenantId);
    for (const r of live) await this.revoke(r.id);
    return live.length;
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
