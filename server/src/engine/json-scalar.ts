/**
 * What JSON makes of a scalar, for the walks that build JSON values without the text (the store's
 * stored form, store/stored-form.ts, and the audit trail's key-sorted copy, audit/chain.ts): one rule
 * for numbers (non-finite as null, -0 as 0) and for what JSON drops (undefined, functions, symbols).
 */

/** Returned for what is not a scalar here: null, objects and arrays, BigInt (each walk decides those). */
export const NOT_SCALAR: unique symbol = Symbol('not a JSON scalar');

/** `JSON.parse(JSON.stringify(value))` for a string, boolean or number; undefined for what JSON drops; else NOT_SCALAR. */
export function jsonScalar(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return NOT_SCALAR;
  }
}
