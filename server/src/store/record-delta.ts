/**
 * What changed between two stored versions of a record, as a list of path assignments the journal
 * carries instead of the whole new version (a `u` op), and how a replay applies them.
 *
 * Why: an execution record is rewritten at every step (its checkpoint), and it holds every step's
 * 21-gate table: written whole, a 9-step workflow journalled ~30 KB per step, serialised on the main
 * thread, growing with the workflow's length. A step's checkpoint changes one step and a few top-level
 * fields, which is what the journal now carries.
 *
 * The diff is cheap because stored versions share what did not change (stored-form.ts): a subtree
 * that is the same object in both versions is skipped without a look inside. It descends into plain
 * objects and arrays that did not shrink, up to MAX_DEPTH levels; deeper, or when most of an array
 * changed (a history shifted by one), the new value is assigned whole.
 *
 * A delta is only correct over the exact version it was computed from: the journal store computes it
 * against the version its previous journal record for that record held, and writes a whole record
 * again after a compaction (see journal-store.ts).
 */

/**
 * One change: `[path, value]` assigns, `[path]` deletes an object member, `[path, k, items]` drops the
 * first k elements of the array at path and appends items (a bounded history that moved on: an agent's
 * last 100 quality scores gain one and lose the oldest at every step).
 */
export type DeltaChange = [Array<string | number>, unknown] | [Array<string | number>] | [Array<string | number>, number, unknown[]];

const MAX_DEPTH = 4;
/** More changes than this: the whole record is simpler to write and to replay. */
const MAX_CHANGES = 48;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** The changes that turn `base` into `next` (both stored forms), or null when writing `next` whole is better. */
export function recordDelta(base: object, next: object): DeltaChange[] | null {
  const out: DeltaChange[] = [];
  diff(base, next, [], 0, out);
  return out.length > MAX_CHANGES ? null : out;
}

function diff(a: unknown, b: unknown, path: Array<string | number>, depth: number, out: DeltaChange[]): void {
  if (a === b || out.length > MAX_CHANGES) return;
  if (depth < MAX_DEPTH && isPlainObject(a) && isPlainObject(b)) {
    for (const k of Object.keys(b)) {
      if (!own(a, k)) out.push([[...path, k], b[k]]);
      else if (a[k] !== b[k]) diff(a[k], b[k], [...path, k], depth + 1, out);
    }
    for (const k of Object.keys(a)) if (!own(b, k)) out.push([[...path, k]]);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length > 0 && b.length > 0 && a[0] !== b[0]) {
    const k = shiftOf(a, b);
    if (k > 0) {
      out.push([path, k, b.slice(a.length - k)]);
      return;
    }
  }
  if (depth < MAX_DEPTH && Array.isArray(a) && Array.isArray(b) && b.length >= a.length) {
    let changed = b.length - a.length;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) changed++;
    // Most elements differ (a shifted history, a rewritten list): one assignment of the whole array.
    if (changed * 2 > b.length && b.length > 2) {
      out.push([path, b]);
      return;
    }
    for (let i = 0; i < b.length; i++) {
      if (i >= a.length) out.push([[...path, i], b[i]]);
      else if (a[i] !== b[i]) diff(a[i], b[i], [...path, i], depth + 1, out);
    }
    return;
  }
  out.push([path, b]);
}

/**
 * k when `b` is `a` without its first k elements, then some appended, the kept part being at least half
 * of `b` (elements compared by identity: versions share the objects they kept, stored-form.ts); else 0.
 */
function shiftOf(a: unknown[], b: unknown[]): number {
  const k = a.indexOf(b[0], 1);
  if (k < 0) return 0;
  const kept = a.length - k;
  if (kept * 2 < b.length || kept > b.length) return 0;
  for (let i = 1; i < kept; i++) if (a[i + k] !== b[i]) return 0;
  return k;
}

/** Checks the shape of a journalled delta; returns why it is not one, or null. */
export function deltaProblem(changes: unknown): string | null {
  if (!Array.isArray(changes)) return 'changes are not a list';
  for (const c of changes) {
    if (!Array.isArray(c) || c.length < 1 || c.length > 3) return 'a change is not [path], [path, value] or [path, k, items]';
    if (c.length === 3 && (!Number.isInteger(c[1]) || (c[1] as number) < 1 || !Array.isArray(c[2]))) return 'a shift is not [path, k >= 1, items]';
    const p = c[0] as unknown;
    if (!Array.isArray(p) || !p.every((k) => typeof k === 'string' || (typeof k === 'number' && Number.isInteger(k) && k >= 0))) return 'a change has an invalid path';
    if (p.length === 0 && (c.length !== 2 || !isPlainObject(c[1]))) return 'a change of the whole record is not an object';
  }
  return null;
}

/**
 * Applies `changes` to `record` in place (replay only: a record just parsed from the journal, shared
 * with nothing). Returns the record (a whole-record assignment replaces it), or why it cannot apply.
 */
export function applyDelta(record: Record<string, unknown>, changes: DeltaChange[]): Record<string, unknown> | string {
  let root: Record<string, unknown> = record;
  for (const c of changes) {
    const p = c[0];
    if (p.length === 0) {
      root = c[1] as Record<string, unknown>;
      continue;
    }
    let at: unknown = root;
    for (let i = 0; i < p.length - 1; i++) {
      at = (at as Record<string | number, unknown>)[p[i]!];
      if (typeof at !== 'object' || at === null) return `path ${p.slice(0, i + 1).join('.')} is not an object or array`;
    }
    const last = p[p.length - 1]!;
    if (Array.isArray(at) ? typeof last !== 'number' || last > at.length : typeof last !== 'string') return `path ${p.join('.')} does not fit the record`;
    if (c.length === 3) {
      const arr = (at as Record<string | number, unknown>)[last];
      if (!Array.isArray(arr) || arr.length < c[1]) return `path ${p.join('.')} is not an array of at least ${c[1]} elements`;
      arr.splice(0, c[1]);
      for (const item of c[2]) arr.push(item);
    } else if (c.length === 1) {
      if (Array.isArray(at)) return `path ${p.join('.')} deletes an array element`;
      delete (at as Record<string, unknown>)[last as string];
    } else if (last === '__proto__') {
      // JSON.parse makes "__proto__" an own property; an assignment would set the prototype instead.
      Object.defineProperty(at, last, { value: c[1], enumerable: true, writable: true, configurable: true });
    } else {
      (at as Record<string | number, unknown>)[last] = c[1];
    }
  }
  return root;
}
