/**
 * The stored form of a record: exactly what `JSON.parse(JSON.stringify(record))` gives (toJSON honoured,
 * undefined / function / symbol members dropped, in arrays null, non-finite numbers as null and -0 as 0,
 * a cycle or a BigInt a TypeError), so memory holds what a restart would read back. Built without the
 * text, and sharing what the previous version of the record already holds.
 *
 * Why: the store's JSON round trip of the whole record on every put and update was the largest single
 * CPU cost of a RIGOR step (an execution record is rewritten three times per step, each time a new
 * version of which one step changed; an agent's ACMF record carries 100 quality points per step).
 * A new version is mostly made of the previous version's objects (`{ ...current, steps }` with the
 * unchanged steps, the request, the history points): those are already in stored form, so they are
 * reused as they are and only what changed is copied. The previous version's objects are found where
 * they were (same key, same index) or, in an array, anywhere in the previous array (a history that
 * shifted by one, a step inserted).
 *
 * This relies on the store's rule that records are replaced, never changed in place (compaction relies
 * on it too): an object of a stored record is never mutated afterwards, so sharing it between versions
 * is safe.
 */

import { jsonScalar, NOT_SCALAR } from '../engine/json-scalar';

/** Beyond this depth the JSON round trip takes over for the subtree (it reports cycles as JSON.stringify does). */
const MAX_DEPTH = 200;

/**
 * The stored form of `value` (see the module comment). `previous` is the stored version it replaces
 * (absent: nothing is shared). Throws what JSON.stringify would throw.
 */
export function storedForm<T>(value: T, previous?: unknown): T {
  return copy(value, previous, '', 0) as T;
}

function copy(value: unknown, prev: unknown, key: string, depth: number): unknown {
  const scalar = jsonScalar(value);
  if (scalar !== NOT_SCALAR) return scalar;
  // JSON.stringify's own error (or a BigInt.prototype.toJSON someone defined).
  if (typeof value === 'bigint') return roundTrip(value);
  if (value === null) return null;
  if (value === prev) return value; // the previous version's object: stored already
  if (depth > MAX_DEPTH) return roundTrip(value);
  const obj = value as Record<string, unknown>;
  if (typeof obj['toJSON'] === 'function') return copy((obj['toJSON'] as (k: string) => unknown)(key), undefined, key, depth + 1);
  if (obj instanceof Number || obj instanceof String || obj instanceof Boolean) return roundTrip(obj);
  return Array.isArray(obj) ? copyArray(obj, prev, depth) : copyObject(obj, prev, depth);
}

function copyArray(arr: unknown[], prev: unknown, depth: number): unknown[] {
  const old = Array.isArray(prev) ? (prev as unknown[]) : undefined;
  let oldSet: Set<unknown> | undefined;
  const out = new Array<unknown>(arr.length);
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    let c: unknown;
    if (old !== undefined && typeof v === 'object' && v !== null) {
      // Kept from the previous version, where it was or moved (a history shifted by one, a step inserted).
      if (v === old[i] || (oldSet ??= new Set(old)).has(v)) c = v;
      else c = copy(v, old[i], String(i), depth + 1);
    } else {
      c = copy(v, undefined, String(i), depth + 1);
    }
    out[i] = c === undefined ? null : c;
  }
  return out;
}

function copyObject(obj: Record<string, unknown>, prev: unknown, depth: number): Record<string, unknown> {
  const old = typeof prev === 'object' && prev !== null && !Array.isArray(prev) ? (prev as Record<string, unknown>) : undefined;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    if (k === '__proto__') {
      // JSON.parse makes "__proto__" an own property; an assignment would set the prototype instead.
      const v = copy(obj[k], undefined, k, depth + 1);
      if (v !== undefined) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      continue;
    }
    const v = copy(obj[k], old?.[k], k, depth + 1);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The JSON round trip, for what the walk leaves to JSON itself (deep or cyclic trees, boxed primitives, BigInt). */
function roundTrip(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}
