/**
 * What the PR flow needs from a source host (GitHub today), as a port: the engine decides (ACMF
 * mode, significance, order, exactly-once), the adapter (server/src/integrations/github) talks to
 * the host. No octokit, no git and no HTTP here.
 */
import type { AcmfMode } from '../catalog/enums';

export interface HostIntegration {
  id: string;
  /** `github`: the segment of the bus topic `agent.<host>.pr.create`. */
  host: string;
  /** Tenant that registered it: only its executions' changes go through it. */
  tenantId: string;
  /** `owner/name`. */
  repo: string;
  agents: readonly string[];
  requireReview: boolean;
}

/** The local commit a PR carries: coder-ai's commit on its own branch, in the workspace's repository. */
export interface LocalCommit {
  /** The workspace (repository) it was made in; null: the server's default workspace. */
  source: string | null;
  branch: string;
  commit: string;
  base: string | null;
}

export interface HostPull { number: number; url: string; htmlUrl: string; headSha: string; branch: string; state: string; merged: boolean }
export interface HostPullFile { path: string; status: string; additions: number; deletions: number; patch: string | null }

/** CI results the webhooks reported for one head commit (workflow_run, check_suite, check_run). */
export interface CiSummary {
  /** `pending` while a run is not completed; `success` when every completed run succeeded; else `failure`. */
  state: 'none' | 'pending' | 'success' | 'failure';
  runs: Array<{ name: string; status: string; conclusion: string | null }>;
}

export interface SourceHostPort {
  readonly host: string;
  integrationsFor(agentId: string): HostIntegration[];
  integration(id: string): HostIntegration | undefined;
  /** The repository's default branch (what PRs target). */
  defaultBranch(integrationId: string): Promise<string>;
  /** Head commit of a branch on the host, or null when it does not exist there. */
  branchHead(integrationId: string, branch: string): Promise<string | null>;
  /** The local commit's changes pushed as the NEW branch `branch` on top of the host's default branch. */
  pushBranch(integrationId: string, req: { branch: string; local: LocalCommit; message: string }): Promise<{ sha: string; base: string }>;
  findPull(integrationId: string, branch: string): Promise<HostPull | null>;
  openPull(integrationId: string, req: { branch: string; base: string; title: string; body: string }): Promise<HostPull>;
  addLabels(integrationId: string, number: number, labels: string[]): Promise<void>;
  comment(integrationId: string, number: number, body: string): Promise<void>;
  pullFiles(integrationId: string, number: number): Promise<HostPullFile[]>;
  ci(integrationId: string, headSha: string): CiSummary;
}

/** review-ai on a pull request's diff (the host runs it as an execution). */
export interface PullReviewer {
  review(req: { integrationId: string; pull: HostPull; local: LocalCommit; executionId: string; agentId: string }): Promise<{ passed: boolean; summary: string; executionId: string | null; findings: number }>;
}

/** deploy-ai to staging (the configured command, ACMF-gated: the execution asks for approval when its mode says so). */
export interface StagingDeployer {
  deploy(req: { integrationId: string; pull: HostPull; local: LocalCommit; executionId: string }): Promise<{ executionId: string | null; status: string }>;
}

export type PrStatus =
  | 'observed' | 'awaiting_approval' | 'denied' | 'opening' | 'open' | 'review_failed' | 'review_passed' | 'deploying' | 'deployed'
  | 'merged' | 'closed' | 'failed';

export interface PrRecord {
  /** `<executionId>:<step>:<integrationId>`: one PR per step and integration, whatever retries or restarts happen. */
  id: string;
  executionId: string;
  step: number;
  agentId: string;
  integrationId: string;
  repo: string;
  branch: string;
  /** The ACMF level the PR was handled at (recorded in the PR body and label). */
  mode: AcmfMode;
  incident: string | null;
  significant: { significant: boolean; reasons: string[] };
  status: PrStatus;
  approvalId?: string;
  number?: number;
  url?: string;
  headSha?: string;
  local: LocalCommit;
  files: Array<{ path: string; additions: number; deletions: number }>;
  evidence: PrEvidence;
  review?: { passed: boolean; summary: string; executionId: string | null; findings: number; at: string };
  /** A person's approving review on the host (incident PRs need one before merge). */
  humanApproval?: { by: string; at: string };
  deploy?: { executionId: string | null; status: string; at: string };
  error?: { reason: string; message: string };
  createdAt: string;
  updatedAt: string;
}

export interface PrEvidence {
  confidence: number | null;
  gates: Array<{ number: number; gate: string; status: string; value: unknown; threshold: number | null }>;
  findingsFixed: string[];
  summary: string | null;
  coverage: number | null;
}

export const PR_COLLECTION = 'pullRequests';
