/**
 * Custom LSP messages between the extension (client) and the bundled server: their method names and
 * shapes, with no runtime dependency. The typed declarations both sides use are in protocol/lsp-messages.ts.
 */
import type { EngineEvent, GateResultData, Phase, StepOutcome } from './events';

export type ServerHealth = 'starting' | 'ok' | 'warning' | 'error' | 'stopped';

/** Server → client, once, when the engine and the HTTP API are up (or attached to another owner). */
export namespace ServerReadyNotification {
  export const method = 'cadre/serverReady';
  export interface Params {
    /** Base URL of the local REST + SSE API. */
    url: string;
    port: number;
    /** True when another process owns the data directory and this server is its client. */
    attached: boolean;
    ownerPid: number;
    dataDir: string;
    version: string;
    /** A newly created API key, sent once on first start so the client can keep it in SecretStorage. */
    newApiKey?: string;
  }
}

/** Server → client, whenever the server's health changes. */
export namespace ServerStatusNotification {
  export const method = 'cadre/status';
  export interface Params {
    health: ServerHealth;
    message: string;
  }
}

/** When the server scans open documents for diagnostics (client → server, in `initializationOptions`). */
export type DiagnosticsMode = 'onSave' | 'onChange';

/** `initializationOptions` the client may send with `initialize`. */
export interface CadreInitializationOptions {
  /** Default `onSave`: scan on open and save; `onChange` also scans (debounced) while typing. */
  diagnostics?: DiagnosticsMode;
  /** Overrides the configuration's `defaults.intelligence` (the editor setting `cadre.intelligence.tier`). */
  intelligence?: 'core' | 'pro' | 'ultra';
  /** Overrides the configuration's `llm` section (the editor settings `cadre.llm.*`); the key only by env var name. */
  llm?: { provider: 'none' | 'openai-compatible' | 'editor'; baseUrl?: string; model?: string; apiKeyEnv?: string };
}

/**
 * The settings the client sends in `workspace/didChangeConfiguration` (`{ settings: { cadre: … } }`):
 * the same shape as the initialization options, applied to the running server without a restart
 * (an absent `llm` means the configuration file's `llm` section). Only `cadre.server.*` (port, data
 * directory) needs a new server process.
 */
export type CadreSettings = CadreInitializationOptions;

/** The `data` of a Cadre diagnostic: the finding's fingerprint and its fix, when it has one. */
export interface CadreDiagnosticData {
  fingerprint: string;
  fix?: {
    description: string;
    /** 1-based positions, `endColumn` exclusive; `file` workspace-relative (the Finding shape). */
    edits: Array<{ file: string; range: { startLine: number; startColumn: number; endLine: number; endColumn: number }; newText: string }>;
  };
}

/** Commands the server's code actions offer; `cadre.*` commands run on the server through workspace/executeCommand. */
export const CadreCommands = {
  scanFile: 'cadre.scanFile',
  reviewSelection: 'cadre.reviewSelection',
  fixSelection: 'cadre.fixSelection',
  explainSelection: 'cadre.explainSelection',
  generateTests: 'cadre.generateTests',
} as const;
export type CadreCommand = (typeof CadreCommands)[keyof typeof CadreCommands];

/** The single argument of every Cadre command: the document and the selection (0-based LSP range). */
export interface CadreCommandArgs {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** What a Cadre command returns: the execution it started. */
export interface CadreCommandResult {
  executionId: string;
}

// ---------------------------------------------------------------------------------------------
// The editor's views. The server answers these from the engine it owns (the same views as the REST
// API); every engine event is forwarded as `cadre/event`, so the views refresh on events, never on
// a timer. A server attached to another owner answers them with an error naming the owner's pid.


/** Server → client: every engine event, as the SSE stream carries it (work_progress coalesced to ≤ 10/s per execution). */
export namespace EngineEventNotification {
  export const method = 'cadre/event';
  export type Params = EngineEvent;
}

/**
 * Server → client: an approval was filed, decided, expired or closed, in a run or outside one (the PR flow
 * files its pull-request approval after its execution ended, so no `cadre/event` tells the editor).
 * The Approvals view refreshes on it; `approval` is the row as `cadre/approvals` lists it.
 */
export namespace ApprovalChangedNotification {
  export const method = 'cadre/approvalChanged';
  export interface Params {
    change: 'requested' | 'decided' | 'expired' | 'closed';
    approval: ApprovalRow;
    /** pending, approved, denied, expired or closed. */
    status: string;
    decidedBy: string | null;
  }
}

export type DomainName = 'BUILD' | 'OPERATE' | 'SECURE' | 'GOVERN' | 'OPTIMIZE' | 'EVOLVE';
export type AcmfModeName = 'OBSERVE' | 'LEARNING' | 'ASSISTED' | 'AUTONOMOUS';
export type WarmState = 'warm' | 'cold' | 'warming';

export interface AgentRow {
  id: string;
  name: string;
  /** The agent's role in this domain (debug-ai and review-ai have one in BUILD and one in OPERATE). */
  role: string;
  warm: WarmState;
  acmfMode: AcmfModeName;
  /** The agent's commercial tier tag; null = every plan. */
  tier: 'PRO' | 'ULTRA' | null;
  load: { running: number; queued: number; capacity: number };
  /** Actions with an embedded skill (what "Invoke agent action" offers). */
  actions: string[];
  /** Direct actions that cannot run here, each with the engine's reason (no skill, no model, not in the subscription or tier). */
  unavailable?: Array<{ action: string; reason: string }>;
}

/** Client → server: the Agents tree. */
export namespace AgentsRequest {
  export const method = 'cadre/agents';
  export type Params = Record<string, never>;
  export interface Result {
    domains: Array<{ domain: DomainName; agents: AgentRow[] }>;
    /** The configured intelligence tier. */
    intelligence: 'core' | 'pro' | 'ultra';
  }
}

export type RunStatus = 'queued' | 'running' | 'waiting_approval' | 'completed' | 'failed' | 'cancelled';
export type PhaseState = 'completed' | 'running' | 'pending';

export interface StepRow {
  step: number;
  agentId: string;
  action: string;
  status: RunStatus | 'pending' | 'skipped';
  confidence: number | null;
  durationMs: number | null;
  phases: Array<{ phase: Phase; state: PhaseState; durationMs: number | null }>;
  /** The 21 gate results of the step's Review, when it has run. */
  gates: GateResultData[];
  /** How the step ended (protocol/events.ts STEP_OUTCOMES); null while it runs or when the execution stopped first. */
  outcome?: StepOutcome | null;
  /** Why it did not complete (failed gates, error, what was not applicable or missing); null when it completed. */
  reason?: string | null;
}

export interface ExecutionRow {
  id: string;
  kind: 'task' | 'workflow' | 'rigor';
  /** Workflow id, or `<agent> <action>`, or the task's prompt (shortened). */
  title: string;
  status: RunStatus;
  /** 0–100. */
  progress: number;
  createdAt: string;
  finishedAt: string | null;
  error: { code: string; message: string } | null;
  steps: StepRow[];
  /** The file (workspace-relative) and 0-based line range the execution works on, when it has one. */
  target?: { uri: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } };
  /** The folder the execution works on (its `source`): in a multi-root workspace each folder has its own settings. */
  folder?: { name: string; path: string };
}

/** Client → server: running and recent executions, newest first (default limit 30, max 200). */
export namespace ExecutionsRequest {
  export const method = 'cadre/executions';
  export interface Params { limit?: number; id?: string }
  export type Result = ExecutionRow[];
}

export interface ApprovalRow {
  id: string;
  executionId: string | null;
  agentId: string;
  action: string;
  risk: string;
  reason: string;
  requestedAt: string;
  expiresAt: string | null;
}

/** Client → server: pending ACMF approvals. */
export namespace ApprovalsRequest {
  export const method = 'cadre/approvals';
  export type Params = Record<string, never>;
  export type Result = ApprovalRow[];
}

/** Client → server: decide an approval; `by` is who decided (recorded in the audit trail). */
export namespace DecideApprovalRequest {
  export const method = 'cadre/approvals/decide';
  export interface Params { id: string; approved: boolean; by: string; reason?: string }
  export interface Result { id: string; approved: boolean; by: string; decidedAt: string }
}

/**
 * Client → server: set an agent's ACMF mode with the reason (the same engine call as REST
 * `POST /v1/agents/{id}/acmf`). The editor's user is the principal recorded in the audit trail;
 * `by` is what the client says about who it is, kept as a note.
 */
export namespace SetAgentModeRequest {
  export const method = 'cadre/agents/setMode';
  export interface Params { agentId: string; mode: AcmfModeName; reason: string; by?: string }
  export interface Result { agentId: string; from: AcmfModeName; mode: AcmfModeName; by: string }
}

export type ReadinessCheckId = 'clean-tree' | 'branch-pushed' | 'tests' | 'coverage' | 'critical-findings' | 'review' | 'approvals';

export interface ReadinessCheck {
  id: ReadinessCheckId;
  title: string;
  status: 'pass' | 'fail' | 'unknown';
  /** What was looked at and what was found, one or two lines. */
  evidence: string;
  /** How to fix a failing check: a VS Code command the client can run (with its arguments). */
  fix?: { title: string; command: string; arguments?: unknown[] };
}

/**
 * Client → server: run deploy-ai's readiness checks on a workspace folder (an execution of deploy-ai
 * `readiness`); `folder` is the folder's URI, default the first workspace folder.
 */
export namespace ReadinessRequest {
  export const method = 'cadre/readiness';
  export interface Params { folder?: string }
  export interface Result { executionId: string; ready: boolean; checkedAt: string; checks: ReadinessCheck[]; folder?: WorkspaceFolderRow }
}

/** A workspace folder the server serves: each is its own workspace for the agents. */
export interface WorkspaceFolderRow {
  uri: string;
  name: string;
  /** The folder's path on disk. */
  path: string;
}

/** Client → server: the workspace folders the server serves now (folders come and go with workspace/didChangeWorkspaceFolders). */
export namespace FoldersRequest {
  export const method = 'cadre/folders';
  export type Params = Record<string, never>;
  export interface Result { folders: WorkspaceFolderRow[] }
}

export interface WorkflowChoice { id: string; name: string; kind: 'domain' | 'template'; agents: string[]; description: string }

/** Client → server: what can be run (workflows and templates; agents' actions come with AgentsRequest). */
export namespace CatalogRequest {
  export const method = 'cadre/catalog';
  export type Params = Record<string, never>;
  export interface Result { workflows: WorkflowChoice[] }
}

/** Client → server: start a task (routed by the orchestrators), like POST /v1/agents/tasks. */
export namespace RunTaskRequest {
  export const method = 'cadre/runTask';
  /** `folder`: the workspace folder's URI the task works on (default the first folder). */
  export interface Params { prompt: string; capabilities?: string[]; folder?: string }
  export interface Result { executionId: string }
}

/** Client → server: start a workflow or template by id. */
export namespace RunWorkflowRequest {
  export const method = 'cadre/runWorkflow';
  export interface Params { workflowId: string; input?: Record<string, unknown>; folder?: string }
  export interface Result { executionId: string }
}

/** Client → server: invoke one agent action on the workspace. */
export namespace InvokeAgentRequest {
  export const method = 'cadre/invoke';
  export interface Params { agentId: string; action: string; input?: Record<string, unknown>; folder?: string }
  export interface Result { executionId: string }
}

/** Client → server: cancel a running execution. */
export namespace CancelExecutionRequest {
  export const method = 'cadre/cancel';
  export interface Params { executionId: string }
  export interface Result { executionId: string; status: RunStatus }
}

export interface AuditRow { seq: number; ts: string; type: string; agentId: string | null; summary: string; hash: string }

/** Client → server: everything the dashboard shows. */
export namespace DashboardRequest {
  export const method = 'cadre/dashboard';
  /** Without an id: the most recent workflow (or execution). */
  export interface Params { executionId?: string }
  export interface Result {
    execution: ExecutionRow | null;
    /** The run's audit records and the chain's verification result. */
    audit: { records: AuditRow[]; verified: { ok: boolean; detail: string } };
    /** The fleet schedule as a week grid: for each agent, 7 days × 24 hours of warm (true) / cold. */
    schedule: { timezone: string; agents: Array<{ id: string; mode: string; week: boolean[][] }> };
    /** Each agent's ACMF mode and its quality scores over its recent outcomes (oldest first). */
    agents: Array<{ id: string; domain: DomainName; mode: AcmfModeName; quality: number[] }>;
  }
}

/** Client → server: create an API key for the editor (labelled `vscode`), shown once. */
export namespace CreateApiKeyRequest {
  export const method = 'cadre/apiKey';
  export type Params = Record<string, never>;
  export interface Result { key: string; id: string }
}

/** Server → client: complete chat messages with the editor's language-model API (llm.provider `editor`). */
export namespace LlmCompleteRequest {
  export const method = 'cadre/llm.complete';
  export interface Params {
    messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
    maxTokens?: number;
    temperature?: number;
  }
  export interface Result {
    text: string;
    model: string;
    usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  }
}

/** Commands the extension registers (the palette's "Cadre: …"); readiness fixes and views refer to them. */
export const ClientCommands = {
  runTask: 'cadre.runTask',
  runWorkflow: 'cadre.runWorkflow',
  /** Arguments: (agentId?: string, action?: string) — asks for what is missing. */
  invokeAgent: 'cadre.invokeAgent',
  /** Arguments: (agent?: string | an Agents view item) — asks for the agent, the mode and the reason. */
  setAgentMode: 'cadre.setAgentMode',
  cancelExecution: 'cadre.cancelExecution',
  openDashboard: 'cadre.openDashboard',
  showFleetSchedule: 'cadre.showFleetSchedule',
  runReadiness: 'cadre.runReadiness',
  selectLlmProvider: 'cadre.selectLlmProvider',
  copyApiKey: 'cadre.copyApiKey',
  openApi: 'cadre.openApi',
  restartServer: 'cadre.restartServer',
  showOutput: 'cadre.showOutput',
  approve: 'cadre.approve',
  deny: 'cadre.deny',
  /** Focuses the Approvals view. */
  focusApprovals: 'cadre.approvals.focus',
} as const;

export interface ProposedFile {
  /** Workspace-relative path. */
  path: string;
  /** SHA-256 (hex) of the file's content the agent started from: the edit applies only to that content. */
  beforeSha256: string;
  /** The proposed content; null when it was too large to keep (the diff still shows it). */
  after: string | null;
}

export interface ProposedChange {
  step: number;
  agentId: string;
  action: string;
  /** `branch`: committed on a new branch (ACMF allowed it); `proposal`: nothing was written. */
  mode: 'branch' | 'proposal';
  branch: string | null;
  /** The unified diff (secrets redacted). */
  diff: string;
  files: ProposedFile[];
}

/**
 * Client → server: the file edits an execution's agents proposed or committed on a branch, for the
 * editor's diff preview. The editor writes them to the working tree only when a person applies them.
 */
export namespace ProposedChangesRequest {
  export const method = 'cadre/changes';
  export interface Params { executionId: string }
  export interface Result { executionId: string; changes: ProposedChange[] }
}
