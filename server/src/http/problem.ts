/**
 * RFC 9457 problem details: the only place that maps error codes to HTTP statuses. Engine codes
 * come from `EngineError`; the HTTP door adds its own (`ERR_ROUTE_NOT_FOUND`, `ERR_AUTH_REQUIRED`,
 * ...). Every code of both tables is listed in docs/api.md (a unit test keeps them in step).
 */
import type { ServerResponse } from 'node:http';
import type { EngineErrorCode } from '../engine/errors';
import { isEngineError } from '../engine/errors';

/** One offending input of a 400: `field` is a dotted path rooted at its source (`body.capabilities[0]`). */
export interface FieldError {
  field: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code?: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

const ENGINE_STATUS: Record<EngineErrorCode, [number, string]> = {
  ERR_NOT_FOUND: [404, 'Not Found'],
  ERR_VALIDATION: [400, 'Invalid Request'],
  ERR_CONFLICT: [409, 'Conflict'],
  ERR_TIER_REQUIRED: [403, 'Tier Required'],
  ERR_ACMF_DENIED: [403, 'Not Allowed by ACMF Mode'],
  ERR_APPROVAL_REQUIRED: [409, 'Approval Required'],
  ERR_GATE_FAILED: [422, 'Quality Gate Failed'],
  ERR_SKILL_FAILED: [422, 'Agent Could Not Complete'],
  ERR_SKILL_UNAVAILABLE: [501, 'Agent Skill Not Available'],
  ERR_NEEDS_INPUT: [422, 'Input Required'],
  ERR_TIMEOUT: [504, 'Timed Out'],
  ERR_OVERLOADED: [503, 'Agent Overloaded'],
  ERR_QUOTA_EXCEEDED: [429, 'Tenant Quota Exceeded'],
  ERR_CIRCUIT_OPEN: [503, 'Agent Temporarily Unavailable'],
  ERR_CANCELLED: [409, 'Cancelled'],
  ERR_CONFIG_INVALID: [500, 'Invalid Configuration'],
  ERR_STORE: [503, 'Store Unavailable'],
  ERR_AUDIT_BROKEN: [500, 'Audit Trail Broken'],
  ERR_DATA_DIR_LOCKED: [503, 'Data Directory Locked'],
  ERR_INTERNAL: [500, 'Internal Error'],
};

/** Codes raised by the HTTP door itself (transport, auth, limits), with their status and title. */
export const HTTP_STATUS = {
  ERR_ROUTE_NOT_FOUND: [404, 'Not Found'],
  ERR_METHOD_NOT_ALLOWED: [405, 'Method Not Allowed'],
  ERR_AUTH_REQUIRED: [401, 'Authentication Required'],
  ERR_AUTH_INVALID: [401, 'Invalid Credentials'],
  ERR_HOST_NOT_ALLOWED: [403, 'Host Not Allowed'],
  ERR_CROSS_ORIGIN: [403, 'Cross-Origin Request Refused'],
  ERR_MALFORMED_JSON: [400, 'Malformed JSON'],
  ERR_UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported Media Type'],
  ERR_PAYLOAD_TOO_LARGE: [413, 'Payload Too Large'],
  ERR_RATE_LIMITED: [429, 'Too Many Requests'],
  ERR_FORBIDDEN: [403, 'Forbidden'],
  ERR_IDEMPOTENCY_KEY_REUSED: [422, 'Idempotency Key Reused'],
  ERR_IDEMPOTENCY_IN_PROGRESS: [409, 'Request In Progress'],
} as const satisfies Record<string, readonly [number, string]>;

export type HttpErrorCode = keyof typeof HTTP_STATUS;
export type ProblemCode = EngineErrorCode | HttpErrorCode;

/** Every code this API can answer with, and its status and title (docs/api.md lists them all). */
export const PROBLEM_CODES: Readonly<Record<ProblemCode, readonly [number, string]>> = { ...ENGINE_STATUS, ...HTTP_STATUS };

export function problemType(code: string): string {
  return `https://cadre.dev/problems/${code.toLowerCase().replace(/^err_/, '').replace(/_/g, '-')}`;
}

export function problem(status: number, code: string, title: string, detail: string, extra: Partial<Problem> = {}): Problem {
  return { type: problemType(code), title, status, detail, code, ...extra };
}

/** A problem for a known code: status and title come from the table. */
export function problemFor(code: ProblemCode, detail: string, extra: Partial<Problem> = {}): Problem {
  const [status, title] = PROBLEM_CODES[code];
  return problem(status, code, title, detail, extra);
}

/**
 * Thrown by the HTTP layer (and by route handlers that need an HTTP-only answer) to leave with a
 * problem; `headers` go on the response (e.g. `Retry-After`, `WWW-Authenticate`, `Allow`).
 */
export class HttpProblem extends Error {
  readonly problem: Problem;
  readonly headers: Readonly<Record<string, string>>;

  constructor(p: Problem, headers: Record<string, string> = {}) {
    // An expected outcome (401, 404, 429, ...), not a bug: capturing a stack would only cost time.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(p.detail);
    Error.stackTraceLimit = limit;
    this.name = 'HttpProblem';
    this.problem = p;
    this.headers = headers;
  }
}

/** True for an `HttpProblem` from any bundle (checked by name, not `instanceof`). */
export function isHttpProblem(err: unknown): err is HttpProblem {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'HttpProblem' &&
    typeof (err as { problem?: unknown }).problem === 'object';
}

/** Maps anything thrown to a problem; unknown errors become a generic 500 (the details go to the log). */
export function toProblem(err: unknown, log: (line: string) => void): Problem {
  if (isHttpProblem(err)) return err.problem;
  if (isEngineError(err)) {
    const [status, title] = ENGINE_STATUS[err.code] ?? [500, 'Internal Error'];
    if (status >= 500) log(`${err.code}: ${err.message}`);
    // Engine messages are written for people (never a stack); typed details go along, except for internal errors.
    const extra: Partial<Problem> = err.details && err.code !== 'ERR_INTERNAL' ? { details: err.details } : {};
    // Field errors found by the engine (request fields it validates, input a step needs) join the errors[] list.
    const fieldErrors = err.details?.['errors'];
    if ((err.code === 'ERR_VALIDATION' || err.code === 'ERR_NEEDS_INPUT') && Array.isArray(fieldErrors)) {
      // Capped like the door's own validation errors (validation.ts): the first 20, and the count.
      extra.errors = (fieldErrors as Array<{ field: string; message: string }>).slice(0, 20).map((e) => ({ field: /^(body|query|params)\./.test(e.field) ? e.field : `body.${e.field}`, message: e.message }));
      extra['totalErrors'] = fieldErrors.length;
    }
    return problem(status, err.code, title, err.message, extra);
  }
  log(`unexpected error: ${(err as Error)?.stack ?? String(err)}`);
  return problemFor('ERR_INTERNAL', 'The server hit an unexpected error; it has been logged.');
}

/** `Retry-After` (seconds) for a retryable engine error that says when (`details.retryAfterMs`). */
export function retryAfterOf(err: unknown): string | null {
  if (!isEngineError(err)) return null;
  const ms = err.details?.['retryAfterMs'];
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? String(Math.max(1, Math.ceil(ms / 1000))) : null;
}

export type HeaderMap = Record<string, string | number | string[]>;

export function sendProblem(res: ServerResponse, p: Problem, headers: HeaderMap = {}): void {
  const body = JSON.stringify(p);
  res.writeHead(p.status, { ...headers, 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: HeaderMap = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
