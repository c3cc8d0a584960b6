/**
 * The records of the second API surface (projects, their ingested metric series, predictions and
 * remediations), kept in the store's collections below. Field names follow the contract where it
 * names them (snake_case in the API); the records keep what the views need and nothing derived.
 */

export const PROJECT_COLLECTIONS = {
  projects: 'projects',
  series: 'projectSeries',
  predictions: 'predictions',
  remediations: 'remediations',
  benchmarks: 'projectBenchmarks',
  fixedFindings: 'projectFixedFindings',
} as const;

export const PROJECT_STATUSES = ['active', 'paused', 'archived'] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

export interface ProjectSettings {
  auto_fix: boolean;
  predictive_analysis: boolean;
  security_scanning: boolean;
}

export interface ProjectRecord {
  id: string;
  name: string;
  description: string;
  status: ProjectStatus;
  repository: { type: string; url: string } | null;
  /** The local folder the project lives in (from a path or file:// repository URL), or null for a remote repository. */
  workspace: string | null;
  settings: ProjectSettings;
  /** Workspace-relative metrics file or folder observe-ai analyses on each detection (absent: none). */
  metricsPath?: string | null;
  createdAt: string;
  updatedAt: string;
  ownerKeyId: string | null;
  /** Tenant that owns it (absent: the default tenant; tenants/tenant-id.ts). */
  tenantId?: string;
}

/** One ingested metric series of a project: points sorted by time, bounded (oldest dropped first). */
export interface ProjectSeriesRecord {
  /** `<projectId>|<series key>`. */
  id: string;
  projectId: string;
  key: string;
  /** Points are per-second rates of a counter (observe-ai's judgedPoints), not raw totals. */
  rate: boolean;
  /** The capacity the series must stay under (same unit), from the ingest request; null: none given. */
  limit: number | null;
  /** [ms since the epoch, value]. */
  points: Array<[number, number]>;
  updatedAt: string;
}

export const PREDICTION_TYPES = ['capacity_exhaustion', 'error_rate_breach', 'latency_regression', 'anomaly'] as const;
export type PredictionType = (typeof PREDICTION_TYPES)[number];
export const PREDICTION_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type PredictionSeverity = (typeof PREDICTION_SEVERITIES)[number];

export interface PredictionRecord {
  id: string;
  projectId: string;
  /** The series whose forecast reaches its limit, or in which observe-ai found the anomaly. */
  seriesKey: string;
  /**
   * What found it: `capacity-ai` (absent on older records) or `observe-ai:<anomaly kind>`. One open
   * prediction per (detector, series).
   */
  detector?: string;
  type: PredictionType;
  severity: PredictionSeverity;
  /** open: the forecast still reaches the limit; resolved: a later detection no longer does. */
  status: 'open' | 'resolved';
  confidence: number;
  description: string;
  predicted_impact: { users_affected: number | null; downtime_minutes: number | null; revenue_loss: number | null; basis: string };
  recommended_action: { type: string; description: string; can_auto_apply: boolean };
  predicted_at: string;
  will_occur_at: string;
  /** The earliest plausible time (upper 95% bound of the forecast reaches the limit). */
  earliest_at: string | null;
  updated_at: string;
  resolved_at: string | null;
  /** The capacity-ai execution of the latest detection. */
  executionId: string;
  detail: { limit: number; lastValue: number; lastAt: string | null; method: string; text: string; observed?: boolean; kind?: string };
}

export const REMEDIATION_STATUSES = ['in_progress', 'completed', 'not_applicable', 'needs_approval', 'failed', 'rolled_back'] as const;
export type RemediationStatus = (typeof REMEDIATION_STATUSES)[number];
export const REMEDIATION_STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped', 'not_applicable', 'needs_approval', 'failed'] as const;
export type RemediationStepStatus = (typeof REMEDIATION_STEP_STATUSES)[number];
export const REMEDIATION_STEPS = ['create_backup', 'apply', 'verify', 'notify', 'rollback_on_failure'] as const;
export type RemediationStepName = (typeof REMEDIATION_STEPS)[number];

export interface RemediationStep {
  name: RemediationStepName;
  status: RemediationStepStatus;
  progress: number;
  reason: string | null;
  /** The execution that ran this step through the engine, when one did. */
  executionId: string | null;
  detail: Record<string, unknown> | null;
}

export interface RemediationRecord {
  id: string;
  predictionId: string;
  projectId: string;
  status: RemediationStatus;
  action: 'apply';
  mode: 'automatic';
  options: { create_backup: boolean; notify_team: boolean; rollback_on_failure: boolean };
  started_at: string;
  completed_at: string | null;
  steps: RemediationStep[];
  error: string | null;
  ownerKeyId: string | null;
  /** Tenant that owns it (its project's). */
  tenantId?: string;
}
