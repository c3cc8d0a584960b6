/**
 * The engine's one error type. Doors map `code` to their own vocabulary (HTTP status, LSP error,
 * CLI exit); they branch on `code`, never on the message or on `instanceof` (bundles duplicate classes).
 */
export type EngineErrorCode =
  | 'ERR_NOT_FOUND'
  | 'ERR_VALIDATION'
  | 'ERR_CONFLICT'
  | 'ERR_TIER_REQUIRED'
  | 'ERR_ACMF_DENIED'
  | 'ERR_APPROVAL_REQUIRED'
  | 'ERR_GATE_FAILED'
  | 'ERR_SKILL_FAILED'
  | 'ERR_SKILL_UNAVAILABLE'
  | 'ERR_NEEDS_INPUT'
  | 'ERR_TIMEOUT'
  | 'ERR_OVERLOADED'
  | 'ERR_QUOTA_EXCEEDED'
  | 'ERR_CIRCUIT_OPEN'
  | 'ERR_CANCELLED'
  | 'ERR_CONFIG_INVALID'
  | 'ERR_STORE'
  | 'ERR_AUDIT_BROKEN'
  | 'ERR_DATA_DIR_LOCKED'
  | 'ERR_INTERNAL';

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly retryable: boolean;

  constructor(
    code: EngineErrorCode,
    message: string,
    opts: { details?: Record<string, unknown>; cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'EngineError';
    this.code = code;
    this.details = opts.details;
    this.retryable = opts.retryable ?? false;
  }
}

/** True for any object carrying an engine error code, whichever bundle created it. */
export function isEngineError(err: unknown): err is EngineError {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code.startsWith('ERR_') && (err as { name?: unknown }).name === 'EngineError';
}
