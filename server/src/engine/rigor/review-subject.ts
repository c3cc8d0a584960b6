/** What the Review phase judges: everything the step did and declared, gathered by the pipeline. */
import type { Phase } from '../../../../protocol/events';
import type { ApprovalRecord, ProposedAction, RiskLevel } from '../acmf/records';
import type { Artifact, Evidence, OutputSchema, StepRequest } from './skill';

export type ActionVerdict = 'allow' | 'approval_required' | 'observe_only';

export interface ActionDecision {
  action: ProposedAction;
  risk: RiskLevel;
  reasons: string[];
  decision: ActionVerdict;
  /** The approval asked for it, once decided (or still pending). */
  approval?: ApprovalRecord;
}

/** A policy-as-code rule from the config (`defaults.policies`). */
export interface PolicyRule {
  id: string;
  description?: string;
  deny_paths?: string[];
  max_changed_lines?: number;
}

/** Checks that need the outside world (file system, parsers, the secret rules), injected as a port. */
export interface ReviewChecks {
  /** True when the workspace-relative or absolute path resolves inside the workspace (no traversal, no symlink escape). */
  insideWorkspace(workspace: string, path: string): boolean;
  /** `ok` true/false with a reason, or `null` when no parser exists for the file's language. */
  syntax(path: string, content: string): { ok: boolean; reason: string } | null;
  /** Rule ids of secrets found in the text. */
  secrets(text: string): string[];
  matchesGlob(path: string, glob: string): boolean;
}

export interface ReviewSubject {
  request: StepRequest;
  evidence: Evidence;
  artifact: Artifact;
  outputSchema?: OutputSchema;
  decisions: ActionDecision[];
  phaseDurations: Partial<Record<Phase, number>>;
  /** Phases of this step already recorded in the audit trail, and whether those records verify. */
  audit: { recorded: Phase[]; intact: boolean; reason?: string };
  protectedPaths: string[];
  policies: PolicyRule[];
  deniedLicenses: string[];
  checks: ReviewChecks;
}
