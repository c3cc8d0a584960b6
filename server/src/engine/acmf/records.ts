import type { AcmfMode } from '../catalog/enums';

/** Why and by whom an agent's mode changed. Kept in the agent's record and in the audit trail. */
export interface ModeChange {
  at: string;
  from: AcmfMode;
  to: AcmfMode;
  reason: string;
  /** `engine` for automatic regression/progression, `config` for the config file, `user:<name>` for a person. */
  by: string;
}

/** Persisted ACMF state of one agent (store collection `agents`, id = agent id). */
export interface AgentAcmfState {
  id: string;
  mode: AcmfMode;
  tasks: number;
  successes: number;
  consecutiveSuccess: number;
  /** Failed reviews since the last passed one: drives the stricter gate thresholds. */
  recentFailures: number;
  /** Quality score 0..1 after each finished step, newest last, capped. */
  qualityHistory: Array<{ at: string; score: number }>;
  history: ModeChange[];
  /** A promotion that a person must confirm (never applied silently). */
  pendingPromotion?: { to: AcmfMode; reason: string; proposedAt: string };
  /**
   * The `acmf_mode` of the configuration last applied to this record. When the configured value
   * changes, the new value is applied once (a person edited the file); otherwise the persisted mode wins.
   */
  configuredMode?: AcmfMode;
  /** Outcomes of the last reviews (true = passed), newest last, capped: the quality score's recent trend. */
  recentOutcomes?: boolean[];
}

export type RiskLevel = 'none' | 'low' | 'medium' | 'high' | 'critical';

/** An action an agent proposes in Generate; Inspect rates it and ACMF decides. */
export interface ProposedAction {
  /** Stable kind, e.g. `read`, `write_file`, `delete_file`, `git_push`, `open_pr`, `run_command`, `deploy`, `call_webhook`. */
  kind: string;
  description: string;
  /** Workspace-relative paths the action touches. */
  paths?: string[];
  /** The action leaves the machine (network, remote git, a PR, a webhook). */
  external?: boolean;
  /** The action targets production. */
  production?: boolean;
  /** The action deletes files or data, rewrites git history or force-pushes (whatever its kind). */
  destructive?: boolean;
}

/** `closed`: the execution ended (completed, failed or cancelled) while the approval was pending; deciding it is a conflict. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'closed';

/** Store collection `approvals`. */
export interface ApprovalRecord {
  id: string;
  executionId: string;
  agentId: string;
  action: ProposedAction;
  risk: RiskLevel;
  riskReasons: string[];
  status: ApprovalStatus;
  requestedAt: string;
  /** Optional deadline (ISO); see docs/decisions.md for the outcome when it passes. */
  expiresAt?: string;
  decidedAt?: string;
  decidedBy?: string;
  reason?: string;
}
