/**
 * Request validation with the route's zod schemas, and zod issues turned into the problem's
 * `errors: [{ field, message }]` list. `field` is a dotted path rooted at the source of the value:
 * `body.capabilities[0]`, `query.limit`, `params.taskId`, `headers.last-event-id`.
 */
import type { z } from 'zod';
import type { FieldError } from './problem';

type Issue = z.core.$ZodIssue;

const IDENT = /^[A-Za-z_$][\w$-]*$/;

/** `['capabilities', 0]` under `body` → `body.capabilities[0]`. */
export function fieldPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENT.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

/** A missing value says "is required" rather than zod's "expected string, received undefined". */
const errorMap = (iss: { code: string; input?: unknown }): string | undefined =>
  iss.code === 'invalid_type' && iss.input === undefined ? 'is required' : undefined;

export function issuesToFieldErrors(root: string, issues: readonly Issue[]): FieldError[] {
  const out: FieldError[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push({ field: fieldPath(root, [...iss.path, key]), message: 'is not a known field' });
    } else {
      out.push({ field: fieldPath(root, iss.path), message: iss.message });
    }
  }
  return out;
}

/** Parses `value` with `schema`; on failure appends the field errors to `errors` and returns undefined. */
export function parseInto<S extends z.ZodType>(schema: S, value: unknown, root: string, errors: FieldError[]): z.output<S> | undefined {
  // A per-parse error map costs ~10x the parse itself, so it is only used to word a failure.
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const worded = schema.safeParse(value, { error: errorMap });
  errors.push(...issuesToFieldErrors(root, (worded.error ?? r.error).issues));
  return undefined;
}
