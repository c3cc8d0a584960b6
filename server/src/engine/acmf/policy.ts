/**
 * ACMF policy: what an agent in a given mode may do with an action of a given risk. Tables, not
 * nested ifs; see docs/decisions.md "ACMF decision table" and "ACMF pull-request behaviour".
 */
import { ACMF_MODES, type AcmfMode } from '../catalog/enums';
import type { RiskLevel } from './records';
import { riskRank } from './risk';

/**
 * - `observe_only`: the action is logged as proposed and not executed (OBSERVE).
 * - `allow`: the action runs without a person (still reviewed and audited).
 * - `approval_required`: the action waits for a person's approval (`awaiting_approval`).
 */
export type AcmfDecision = 'observe_only' | 'allow' | 'approval_required';

/**
 * Mode x risk. `none` is only ever given to pure reads (see risk.ts), so every mode allows reads
 * and Research works even in OBSERVE.
 *
 * - OBSERVE "observe only, no execution": reads allowed, everything else observe_only.
 * - LEARNING "execute with full review": every change (risk low and up) needs a person's approval.
 * - ASSISTED "execute, approval only for critical actions": only critical needs approval.
 * - AUTONOMOUS "full autonomy with audit trail": everything allowed, audited.
 */
export const DECISION_TABLE: Readonly<Record<AcmfMode, Readonly<Record<RiskLevel, AcmfDecision>>>> = {
  OBSERVE: { none: 'allow', low: 'observe_only', medium: 'observe_only', high: 'observe_only', critical: 'observe_only' },
  LEARNING: { none: 'allow', low: 'approval_required', medium: 'approval_required', high: 'approval_required', critical: 'approval_required' },
  ASSISTED: { none: 'allow', low: 'allow', medium: 'allow', high: 'allow', critical: 'approval_required' },
  AUTONOMOUS: { none: 'allow', low: 'allow', medium: 'allow', high: 'allow', critical: 'allow' },
};

/** The decision for an action of `risk` taken by an agent in `mode`. */
export function decide(mode: AcmfMode, risk: RiskLevel): AcmfDecision {
  return DECISION_TABLE[mode][risk];
}

// ---------------------------------------------------------------------------------------------
// Mode ladder
// ---------------------------------------------------------------------------------------------

export function modeRank(mode: AcmfMode): number {
  return ACMF_MODES.indexOf(mode);
}

export function isAcmfMode(value: unknown): value is AcmfMode {
  return typeof value === 'string' && (ACMF_MODES as readonly string[]).includes(value);
}

/** One level less autonomy; OBSERVE stays OBSERVE. */
export function lowerMode(mode: AcmfMode): AcmfMode {
  return ACMF_MODES[Math.max(0, modeRank(mode) - 1)]!;
}

/** One level more autonomy; AUTONOMOUS stays AUTONOMOUS. */
export function higherMode(mode: AcmfMode): AcmfMode {
  return ACMF_MODES[Math.min(ACMF_MODES.length - 1, modeRank(mode) + 1)]!;
}

/** The mode with less autonomy of the two. */
export function minMode(a: AcmfMode, b: AcmfMode): AcmfMode {
  return modeRank(a) <= modeRank(b) ? a : b;
}

// ---------------------------------------------------------------------------------------------
// Pull requests (contract: "Source-hosting app integration")
// ---------------------------------------------------------------------------------------------

/** How a PR comes into being in a mode. */
export type PrCreation = 'log_only' | 'after_approval' | 'automatic';

export interface PrBehaviour {
  /** The mode that governs this PR (an incident PR: at most LEARNING). */
  mode: AcmfMode;
  creation: PrCreation;
  /**
   * With creation `automatic`: a PR whose risk is at least this level is a "significant change"
   * and needs approval before creation; null = never.
   */
  approvalFromRisk: RiskLevel | null;
  /** The agent may update and merge its own PR without a person. */
  manage: boolean;
  /** A person must approve before the PR is merged. */
  mergeNeedsApproval: boolean;
  /** Human-readable summary (PR metadata, logs). */
  summary: string;
}

/** The contract's PR table. "Significant" in ASSISTED = risk high or above (deletions, protected paths, ...). */
export const PR_BEHAVIOUR: Readonly<Record<AcmfMode, Omit<PrBehaviour, 'mode'>>> = {
  OBSERVE: {
    creation: 'log_only',
    approvalFromRisk: null,
    manage: false,
    mergeNeedsApproval: true,
    summary: 'logs the proposed changes, takes no action',
  },
  LEARNING: {
    creation: 'after_approval',
    approvalFromRisk: 'none',
    manage: false,
    mergeNeedsApproval: true,
    summary: 'submits a PR request for human approval before creation',
  },
  ASSISTED: {
    creation: 'automatic',
    approvalFromRisk: 'high',
    manage: false,
    mergeNeedsApproval: true,
    summary: 'creates PRs automatically; significant changes (risk high or critical) need approval',
  },
  AUTONOMOUS: {
    creation: 'automatic',
    approvalFromRisk: null,
    manage: true,
    mergeNeedsApproval: false,
    summary: 'creates and manages PRs independently',
  },
};

/** Mode that governs an incident-fix PR: LEARNING by default, never more autonomy than the agent has. */
export const INCIDENT_PR_MODE: AcmfMode = 'LEARNING';

/**
 * PR behaviour of an agent in `mode`. Incident PRs default to LEARNING (contract): they are governed
 * by the lower of the agent's mode and LEARNING, and always need human approval before merge.
 */
export function prBehaviour(mode: AcmfMode, opts: { incident?: boolean } = {}): PrBehaviour {
  const effective = opts.incident ? minMode(mode, INCIDENT_PR_MODE) : mode;
  const row = PR_BEHAVIOUR[effective];
  return { mode: effective, ...row, mergeNeedsApproval: opts.incident ? true : row.mergeNeedsApproval };
}

/** Decision for creating a PR of `risk` (the risk of the PR action and its changed paths). */
export function decidePr(mode: AcmfMode, risk: RiskLevel, opts: { incident?: boolean } = {}): AcmfDecision {
  const b = prBehaviour(mode, opts);
  switch (b.creation) {
    case 'log_only':
      return 'observe_only';
    case 'after_approval':
      return 'approval_required';
    case 'automatic':
      return b.approvalFromRisk !== null && riskRank(risk) >= riskRank(b.approvalFromRisk) ? 'approval_required' : 'allow';
  }
}
