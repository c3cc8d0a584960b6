/**
 * The audit trail's hash chain, pure (no file system): canonical serialisation, record hashes and
 * chain verification. Storage adapters (JSON Lines today) feed `verifyChain` / `ChainVerifier` with
 * the lines they read.
 *
 * A record's hash is the SHA-256 (hex) of the canonical JSON of every field but `hash`; canonical
 * means object keys sorted by code unit at every depth, no whitespace, `undefined` members omitted
 * (as JSON.stringify does), so the hash never depends on property order.
 */
import { createHash } from 'node:crypto';
import { jsonScalar, NOT_SCALAR } from '../json-scalar';
import type { AuditRecord, AuditVerification } from '../ports';

/** `prevHash` of the first record ever. */
export const GENESIS_HASH = '0'.repeat(64);

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Canonical JSON: like JSON.stringify (toJSON honoured, undefined/function members dropped,
 * non-finite numbers as null) but with object keys in sorted order at every depth.
 */
export function canonicalize(value: unknown): string {
  const out = canon(value, 0);
  return out === undefined ? 'null' : out;
}

/** Deeper than any record Cadre writes; reaching it means a cycle (cheaper than tracking a Set). */
const MAX_DEPTH = 256;

// Hot path: every audit record is hashed through here, so loops and concatenation, not map/join.
function canon(value: unknown, depth: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalize: BigInt is not JSON-serialisable');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (depth > MAX_DEPTH) throw new TypeError('canonicalize: circular or too deeply nested structure');
  const obj = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof obj.toJSON === 'function') return canon((obj.toJSON as () => unknown)(), depth + 1);
  if (Array.isArray(obj)) {
    let s = '[';
    for (let i = 0; i < obj.length; i++) {
      if (i > 0) s += ',';
      s += canon(obj[i], depth + 1) ?? 'null';
    }
    return s + ']';
  }
  const keys = Object.keys(obj).sort();
  let s = '{';
  let first = true;
  for (const key of keys) {
    const v = canon(obj[key], depth + 1);
    if (v === undefined) continue;
    if (!first) s += ',';
    first = false;
    s += JSON.stringify(key) + ':' + v;
  }
  return s + '}';
}

/** SHA-256 (hex) of the record's canonical form, every field but `hash` (ignored when present). */
export function hashRecord(record: Omit<AuditRecord, 'hash'> | AuditRecord): string {
  const { hash: _ignored, ...rest } = record as AuditRecord;
  void _ignored;
  return createHash('sha256').update(canonicalize(rest), 'utf8').digest('hex');
}

/**
 * The canonical JSON of a record (every field but `hash`) whose `data` is already canonical JSON
 * (`dataCanon`, e.g. from {@link canonicalData}): the top-level keys are sorted here, `data` is not
 * walked again. Equals `canonicalize(rest)` when `dataCanon === canonicalize(rest.data)`.
 */
export function canonicalizeWithData(rest: Omit<AuditRecord, 'hash'>, dataCanon: string): string {
  const obj = rest as unknown as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let s = '{';
  let first = true;
  for (const key of keys) {
    const v = key === 'data' ? dataCanon : canon(obj[key], 1);
    if (v === undefined) continue;
    if (!first) s += ',';
    first = false;
    s += JSON.stringify(key) + ':' + v;
  }
  return s + '}';
}

/**
 * An audit entry's data in its stored (JSON) form and its canonical JSON: what JSON.stringify +
 * JSON.parse + canonicalize did in three passes. One walk copies the data with its keys in sorted order
 * (the stored form, as parsing the canonical text would give it), and the native JSON.stringify of that
 * copy is the canonical text: the hot path of every audit record (the Review record holds the 21 gate
 * results). Keys that look like array indices are enumerated by JavaScript before the others whatever
 * their insertion order, so such data takes the canonical walk and a parse instead. Throws (TypeError)
 * when the data is not JSON-serialisable, as `canonicalize` does.
 */
export function canonicalData(data: Record<string, unknown>): { data: Record<string, unknown>; canon: string } {
  const state = { indexKeys: false };
  const copy = sortedCopy(data, 0, state);
  if (!state.indexKeys && copy !== undefined) return { data: copy as Record<string, unknown>, canon: JSON.stringify(copy) };
  const text = canonicalize(data);
  return { data: JSON.parse(text) as Record<string, unknown>, canon: text };
}

/**
 * Sorted key lists of the object shapes seen (the 21 gate results of a Review record share one):
 * comparing a key list with a remembered one is cheaper than sorting it again. Bounded.
 */
const SORTED_KEYS = new Map<string, Array<{ keys: string[]; sorted: string[] }>>();
let sortedKeyShapes = 0;
const MAX_SORTED_KEY_SHAPES = 512;

function sortedKeys(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  const bucket = SORTED_KEYS.get(keys[0]!);
  if (bucket) {
    for (const e of bucket) {
      if (e.keys.length !== keys.length) continue;
      let same = true;
      for (let i = 1; i < keys.length && same; i++) same = e.keys[i] === keys[i];
      if (same) return e.sorted;
    }
  }
  const sorted = keys.slice().sort();
  if (sortedKeyShapes < MAX_SORTED_KEY_SHAPES) {
    sortedKeyShapes++;
    if (bucket) bucket.push({ keys, sorted });
    else SORTED_KEYS.set(keys[0]!, [{ keys, sorted }]);
  }
  return sorted;
}

/** A key JavaScript would enumerate before string keys (an array index), whatever the insertion order. */
const INDEX_KEY = /^(?:0|[1-9][0-9]*)$/;

/** `canon`'s walk producing a value instead of text: JSON values only, object keys inserted in sorted order. */
function sortedCopy(value: unknown, depth: number, state: { indexKeys: boolean }): unknown {
  if (value === null) return null;
  // String(-0) is "0" in the canonical text, so the parsed form holds 0 (JSON's rule).
  const scalar = jsonScalar(value);
  if (scalar !== NOT_SCALAR) return scalar;
  if (typeof value === 'bigint') throw new TypeError('canonicalize: BigInt is not JSON-serialisable');
  if (depth > MAX_DEPTH) throw new TypeError('canonicalize: circular or too deeply nested structure');
  const obj = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof obj.toJSON === 'function') return sortedCopy((obj.toJSON as () => unknown)(), depth + 1, state);
  if (Array.isArray(obj)) {
    const out = new Array<unknown>(obj.length);
    for (let i = 0; i < obj.length; i++) {
      const v = sortedCopy(obj[i], depth + 1, state);
      out[i] = v === undefined ? null : v;
    }
    return out;
  }
  const keys = sortedKeys(Object.keys(obj));
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const v = sortedCopy(obj[key], depth + 1, state);
    if (v === undefined) continue;
    const c = key.charCodeAt(0);
    if (c >= 48 && c <= 57 && INDEX_KEY.test(key)) state.indexKeys = true;
    // JSON.parse makes "__proto__" an own property; an assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/** A record with its hash and its stored line (the canonical JSON with `hash` last), serialised once. */
export interface ChainedRecord {
  record: AuditRecord;
  /** The record as one JSON text (no newline): what the trail writes. */
  json: string;
}

/**
 * `chainRecord` for a writer: with `dataCanon` (the canonical JSON of `fields.data`) the canonical form
 * is built once, hashed, and reused as the stored line, so a record is serialised once.
 */
export function chainRecordJson(
  prev: { seq: number; hash: string } | null,
  fields: Omit<AuditRecord, 'seq' | 'prevHash' | 'hash'>,
  dataCanon: string,
): ChainedRecord {
  const base = recordBase(prev, fields);
  const text = canonicalizeWithData(base, dataCanon);
  const hash = createHash('sha256').update(text, 'utf8').digest('hex');
  return { record: { ...base, hash }, json: `${text.slice(0, -1)},"hash":"${hash}"}` };
}

function recordBase(prev: { seq: number; hash: string } | null, fields: Omit<AuditRecord, 'seq' | 'prevHash' | 'hash'>): Omit<AuditRecord, 'hash'> {
  return {
    seq: prev ? prev.seq + 1 : 1,
    ts: fields.ts,
    kind: fields.kind,
    ...(fields.executionId !== undefined ? { executionId: fields.executionId } : {}),
    ...(fields.agentId !== undefined ? { agentId: fields.agentId } : {}),
    ...(fields.tenantId !== undefined ? { tenantId: fields.tenantId } : {}),
    actor: fields.actor,
    data: fields.data,
    prevHash: prev ? prev.hash : GENESIS_HASH,
  };
}

/** Builds the full record (with its hash) that follows `prev` (null for the first record ever). */
export function chainRecord(
  prev: { seq: number; hash: string } | null,
  fields: Omit<AuditRecord, 'seq' | 'prevHash' | 'hash'>,
): AuditRecord {
  const base = recordBase(prev, fields);
  return { ...base, hash: hashRecord(base) };
}

/** One stored line, with where it was read from (1-based line). */
export type ChainLine =
  | { file: string; line: number; text: string }
  | { file: string; line: number; record: unknown };

export type BrokenLink = NonNullable<AuditVerification['firstBroken']>;

/** Checks that a parsed value has the shape of an AuditRecord; returns the problem or null. */
export function recordShapeProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (!Number.isSafeInteger(r['seq']) || (r['seq'] as number) < 1) return 'seq is not a positive integer';
  if (typeof r['ts'] !== 'string') return 'ts is not a string';
  if (typeof r['kind'] !== 'string' || r['kind'] === '') return 'kind is not a non-empty string';
  if (typeof r['actor'] !== 'string') return 'actor is not a string';
  if (r['executionId'] !== undefined && typeof r['executionId'] !== 'string') return 'executionId is not a string';
  if (r['agentId'] !== undefined && typeof r['agentId'] !== 'string') return 'agentId is not a string';
  if (r['tenantId'] !== undefined && typeof r['tenantId'] !== 'string') return 'tenantId is not a string';
  if (r['data'] === null || typeof r['data'] !== 'object' || Array.isArray(r['data'])) return 'data is not an object';
  if (typeof r['prevHash'] !== 'string' || !HEX64.test(r['prevHash'])) return 'prevHash is not 64 hex digits';
  if (typeof r['hash'] !== 'string' || !HEX64.test(r['hash'])) return 'hash is not 64 hex digits';
  const known = new Set(['seq', 'ts', 'kind', 'executionId', 'agentId', 'tenantId', 'actor', 'data', 'prevHash', 'hash']);
  const extra = Object.keys(r).find((k) => !known.has(k));
  if (extra !== undefined) return `unexpected field "${extra}"`;
  return null;
}

export interface ChainVerifierOptions {
  /**
   * Verify only records whose seq is >= fromSeq. The record just before (fromSeq - 1) is still
   * checked (its own hash, and that the first verified record links to it); records before it are
   * only parsed. Unparsable lines are reported wherever they are (their seq cannot be known).
   */
  fromSeq?: number;
}

/**
 * Incremental chain verifier: push lines in trail order, stop at the first broken link.
 *
 * Reasons (`firstBroken.reason`) start with a stable word:
 * - `unparsable:` the line is not JSON;
 * - `malformed:` JSON, but not an audit record;
 * - `tampered:` the record's hash does not recompute (its content was changed);
 * - `broken link:` prevHash is not the previous record's hash (a record removed, inserted or reordered);
 * - `sequence:` seq is not the previous seq + 1.
 */
export class ChainVerifier {
  private readonly fromSeq: number;
  private prev: { seq: number; hash: string } | null = null;
  private checkedCount = 0;
  private broken: BrokenLink | undefined;

  constructor(opts: ChainVerifierOptions = {}) {
    this.fromSeq = Math.max(1, Math.floor(opts.fromSeq ?? 1));
  }

  get done(): boolean {
    return this.broken !== undefined;
  }

  /** Feeds one line; returns false once the chain is known to be broken (further lines are ignored). */
  push(line: ChainLine): boolean {
    if (this.broken) return false;
    let value: unknown;
    if ('text' in line) {
      try {
        value = JSON.parse(line.text);
      } catch {
        return this.fail(line, null, `unparsable: the line is not valid JSON${line.text.trim() === '' ? ' (empty line)' : ''}`);
      }
    } else {
      value = line.record;
    }
    const shape = recordShapeProblem(value);
    if (shape) {
      const seq = value && typeof value === 'object' && Number.isSafeInteger((value as { seq?: unknown }).seq)
        ? (value as { seq: number }).seq : null;
      return this.fail(line, seq, `malformed: ${shape}`);
    }
    const rec = value as AuditRecord;

    // Records before the anchor (fromSeq - 1) are skipped until we reach it.
    const anchorSeq = this.fromSeq - 1;
    if (this.prev === null && rec.seq < anchorSeq) return true;

    const computed = hashRecord(rec);
    if (computed !== rec.hash) {
      return this.fail(line, rec.seq, `tampered: the record's hash does not recompute (stored ${short(rec.hash)}, computed ${short(computed)})`);
    }
    if (this.prev === null) {
      if (anchorSeq === 0 || rec.seq > anchorSeq) {
        // Start of the verified range without an anchor: either the true beginning, or the anchor is missing.
        const expectedSeq = anchorSeq === 0 ? 1 : anchorSeq;
        if (anchorSeq === 0 && rec.prevHash !== GENESIS_HASH) {
          return this.fail(line, rec.seq, `broken link: the first record's prevHash is not the genesis hash (a record before it was removed)`);
        }
        if (rec.seq !== expectedSeq) {
          return this.fail(line, rec.seq, `sequence: expected seq ${expectedSeq}, found ${rec.seq}`);
        }
      }
      this.prev = { seq: rec.seq, hash: rec.hash };
      if (rec.seq >= this.fromSeq) this.checkedCount++;
      return true;
    }
    if (rec.prevHash !== this.prev.hash) {
      return this.fail(line, rec.seq, `broken link: prevHash ${short(rec.prevHash)} is not the hash of the previous record seq ${this.prev.seq} (${short(this.prev.hash)}): a record was removed, inserted or reordered`);
    }
    if (rec.seq !== this.prev.seq + 1) {
      return this.fail(line, rec.seq, `sequence: expected seq ${this.prev.seq + 1}, found ${rec.seq}`);
    }
    this.prev = { seq: rec.seq, hash: rec.hash };
    if (rec.seq >= this.fromSeq) this.checkedCount++;
    return true;
  }

  /** The last verified record (seq and hash), or null. */
  get last(): { seq: number; hash: string } | null {
    return this.prev;
  }

  result(): AuditVerification {
    return this.broken
      ? { ok: false, checked: this.checkedCount, firstBroken: this.broken }
      : { ok: true, checked: this.checkedCount };
  }

  private fail(line: ChainLine, seq: number | null, reason: string): false {
    this.broken = { file: line.file, line: line.line, seq, reason };
    return false;
  }
}

/** Verifies a whole sequence of lines in trail order; reports the first broken link. */
export function verifyChain(lines: Iterable<ChainLine>, opts: ChainVerifierOptions = {}): AuditVerification {
  const v = new ChainVerifier(opts);
  for (const line of lines) if (!v.push(line)) break;
  return v.result();
}

function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
}
