/**
 * What the engine hands a GOVERN / EVOLVE step instead of facts when it could not gather them for the
 * request (an unknown approval, a target of another tenant, a refused decision): the skill turns it
 * into the step's outcome (needs_input naming `field`, or a refusal), never into invented facts.
 */
export interface FactError {
  error: {
    /** `not_found` (also for another tenant's object: no existence leak), `invalid`, `refused`, `conflict`. */
    code: 'not_found' | 'invalid' | 'refused' | 'conflict';
    message: string;
    /** The input field at fault (`decide.approvalId`, `executionId`, ...). */
    field?: string;
    /** Why a refusal: `self_approval`, `own_execution`, `role`, `no_key`. */
    reason?: string;
  };
}

export function factError(code: FactError['error']['code'], message: string, field?: string, reason?: string): FactError {
  return { error: { code, message, ...(field ? { field } : {}), ...(reason ? { reason } : {}) } };
}

export function isFactError(v: unknown): v is FactError {
  return typeof v === 'object' && v !== null && 'error' in v && typeof (v as FactError).error?.message === 'string';
}
