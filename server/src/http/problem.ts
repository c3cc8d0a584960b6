/**
 * RFC 9457 problem details: the only place that maps engine error codes to HTTP statuses.
 */
import type { ServerResponse } from 'node:http';
import type { EngineErrorCode } from '../engine/errors';
import { isEngineError } from '../engine/errors';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code?: string;
  errors?: Array<{ field: string; message: string }>;
  [extra: string]: unknown;
}

const STATUS: Record<EngineErrorCode, [number, string]> = {
  ERR_NOT_FOUND: [404, 'Not Found'],
  ERR_VALIDATION: [400, 'Invalid Request'],
  ERR_CONFLICT: [409, 'Conflict'],
  ERR_TIER_REQUIRED: [403, 'Tier Required'],
  ERR_ACMF_DENIED: [403, 'Not Allowed by ACMF Mode'],
  ERR_APPROVAL_REQUIRED: [409, 'Approval Required'],
  ERR_GATE_FAILED: [422, 'Quality Gate Failed'],
  ERR_SKILL_FAILED: [422, 'Agent Could Not Complete'],
  ERR_SKILL_UNAVAILABLE: [501, 'Agent Skill Not Available'],
  ERR_TIMEOUT: [504, 'Timed Out'],
  ERR_OVERLOADED: [503, 'Agent Overloaded'],
  ERR_CIRCUIT_OPEN: [503, 'Agent Temporarily Unavailable'],
  ERR_CANCELLED: [409, 'Cancelled'],
  ERR_CONFIG_INVALID: [500, 'Invalid Configuration'],
  ERR_STORE: [503, 'Store Unavailable'],
  ERR_AUDIT_BROKEN: [500, 'Audit Trail Broken'],
  ERR_DATA_DIR_LOCKED: [503, 'Data Directory Locked'],
  ERR_INTERNAL: [500, 'Internal Error'],
};

export function problemType(code: string): string {
  return `https://cadre.dev/problems/${code.toLowerCase().replace(/^err_/, '').replace(/_/g, '-')}`;
}

export function problem(status: number, code: string, title: string, detail: string, extra: Partial<Problem> = {}): Problem {
  return { type: problemType(code), title, status, detail, code, ...extra };
}

/** Maps anything thrown to a problem; unknown errors become a generic 500 (the details go to the log). */
export function toProblem(err: unknown, log: (line: string) => void): Problem {
  if (isEngineError(err)) {
    const [status, title] = STATUS[err.code] ?? [500, 'Internal Error'];
    return problem(status, err.code, title, err.message, err.details ? { details: err.details } : {});
  }
  log(`unexpected error: ${(err as Error)?.stack ?? String(err)}`);
  return problem(500, 'ERR_INTERNAL', 'Internal Error', 'The server hit an unexpected error; it has been logged.');
}

export function sendProblem(res: ServerResponse, p: Problem, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(p);
  res.writeHead(p.status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
