/**
 * Request validation with the route's zod schemas, and zod issues turned into the problem's
 * `errors: [{ field, message }]` list. `field` is a dotted path rooted at the source of the value:
 * `body.capabilities[0]`, `query.limit`, `params.taskId`, `headers.last-event-id`.
 *
 * Bounded: an answer lists at most MAX_FIELD_ERRORS errors and says how many there were
 * (`totalErrors`); only the listed ones are worded, so a body with 100,000 bad entries costs one
 * parse and a small answer (request arrays also carry a `.max()` in the schemas, which zod checks
 * without an issue per element).
 */
import type { z } from 'zod';
import { type FieldError, type Problem, problemFor } from './problem';

type Issue = z.core.$ZodIssue;

/** Errors listed in one 400 answer; the rest are counted in `totalErrors`. */
export const MAX_FIELD_ERRORS = 20;
/** Characters of one error message kept (zod quotes enum values, which may be long). */
const MAX_MESSAGE_CHARS = 300;
/** Characters of a field path kept (a path into deep input). */
const MAX_FIELD_CHARS = 200;

const IDENT = /^[A-Za-z_$][\w$-]*$/;

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** `['capabilities', 0]` under `body` → `body.capabilities[0]`. */
export function fieldPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENT.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
    if (out.length > MAX_FIELD_CHARS) break;
  }
  return clip(out, MAX_FIELD_CHARS);
}

/** A missing value says "is required" rather than zod's "expected string, received undefined". */
function wording(iss: Issue): string {
  if (iss.code === 'invalid_type' && /received undefined$/.test(iss.message)) return 'is required';
  return clip(iss.message, MAX_MESSAGE_CHARS);
}

/**
 * Field errors of `issues`, appended to `out` while it holds fewer than `max`; returns how many
 * errors the issues amount to (an unrecognized_keys issue counts one per key).
 */
export function issuesToFieldErrors(root: string, issues: readonly Issue[], out: FieldError[] = [], max = MAX_FIELD_ERRORS): number {
  let total = 0;
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) {
        if (out.length < max) out.push({ field: fieldPath(root, [...iss.path, key]), message: 'is not a known field' });
        else break;
      }
      total += iss.keys.length;
    } else {
      if (out.length < max) out.push({ field: fieldPath(root, iss.path), message: wording(iss) });
      total++;
    }
  }
  return total;
}

/** Field errors found so far for one request (capped), with the count of all of them. */
export interface FieldErrors extends Array<FieldError> {
  total?: number;
}

/** Entries one array or object of a body may hold: past it, the body is refused before any schema runs. */
export const MAX_BODY_ENTRIES = 10_000;

/**
 * The first array or object of `value` with more than MAX_BODY_ENTRIES entries, as a field error, or
 * null. Zod builds one issue per bad element (~20 µs each), so 100,000 bad entries would cost seconds
 * of CPU before the cap on listed errors could help; this walk is linear and allocation-free.
 */
export function oversizedEntry(value: unknown, root: string): FieldError | null {
  const stack: Array<{ v: unknown; path: PropertyKey[] }> = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      if (v.length > MAX_BODY_ENTRIES) return { field: fieldPath(root, path), message: `has ${v.length} entries; at most ${MAX_BODY_ENTRIES} are accepted` };
      for (let i = 0; i < v.length; i++) if (v[i] !== null && typeof v[i] === 'object') stack.push({ v: v[i], path: [...path, i] });
    } else {
      const keys = Object.keys(v);
      if (keys.length > MAX_BODY_ENTRIES) return { field: fieldPath(root, path), message: `has ${keys.length} fields; at most ${MAX_BODY_ENTRIES} are accepted` };
      for (const k of keys) {
        const c = (v as Record<string, unknown>)[k];
        if (c !== null && typeof c === 'object') stack.push({ v: c, path: [...path, k] });
      }
    }
  }
  return null;
}

/** Parses `value` with `schema`; on failure appends (at most MAX_FIELD_ERRORS) field errors to `errors` and returns undefined. */
export function parseInto<S extends z.ZodType>(schema: S, value: unknown, root: string, errors: FieldErrors): z.output<S> | undefined {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const counted = issuesToFieldErrors(root, r.error.issues, errors);
  errors.total = (errors.total ?? 0) + counted;
  return undefined;
}

/** The 400 for `errors`: the first MAX_FIELD_ERRORS listed (also in `detail`), `totalErrors` counts all. */
export function validationProblem(errors: FieldErrors, total: number = errors.total ?? errors.length): Problem {
  const listed = errors.slice(0, MAX_FIELD_ERRORS);
  const more = total > listed.length ? ` (and ${total - listed.length} more)` : '';
  return problemFor('ERR_VALIDATION', `the request is invalid: ${listed.map((e) => `${e.field} ${e.message}`).join('; ')}${more}`, { errors: listed, totalErrors: total });
}
