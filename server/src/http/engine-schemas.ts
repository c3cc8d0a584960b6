/**
 * Zod schemas of the agent-platform endpoints: requests are validated with them and the OpenAPI
 * document is generated from them. Field names follow the contract exactly where it shows them;
 * the rest is documented in docs/api.md.
 */
import { z } from 'zod';
import { PHASES, STEP_OUTCOMES } from '../../../protocol/events';
import { ACMF_MODES, CAPABILITIES, INTELLIGENCE_TIERS, PRIORITIES, SCOPES } from '../engine/catalog/enums';
import { EXECUTION_STATUSES } from '../engine/executions/records';
import { TASK_VERBS } from '../engine/catalog/verbs';

const iso = z.string().describe('ISO 8601 UTC timestamp');
const outcomeSchema = z.enum(STEP_OUTCOMES).nullable().describe('How the step ended: completed, not_applicable, needs_input, failed (its own artifact failed a gate) or error; null while it runs');
const prompt = z.string().trim().min(1, 'must not be empty').max(20_000);

export const TaskSubmissionSchema = z.strictObject({
  task: prompt.describe('Description of the development task'),
  capabilities: z.array(z.enum(CAPABILITIES)).min(1, 'name at least one capability').max(20),
  intelligence: z.enum(INTELLIGENCE_TIERS).optional().describe('Default core'),
  scope: z.enum(SCOPES).optional().describe('RIGOR quality level; default mvp'),
  priority: z.enum(PRIORITIES).optional().describe('Default normal'),
  source: z.string().min(1).max(4096).optional().describe('Path to a project folder on this machine, or a repository URL'),
  callbackUrl: z.url({ protocol: /^https?$/ }).optional().describe('Receives a signed completion notification'),
  verb: z.enum(TASK_VERBS).optional().describe('Cadre extension: the task verb whose agents run (docs/api.md "Task verbs"); absent: a leading "verb:" in task, else the capabilities\' domain workflows'),
  input: z.record(z.string(), z.unknown()).optional().describe('Cadre extension: input of the steps, e.g. files (the files to work on), trace (an error to debug), logs'),
}).meta({ id: 'TaskSubmission' });

const ErrorInfoSchema = z.object({
  code: z.string(), message: z.string(), step: z.number().int().nullable(), agentId: z.string().nullable(),
}).meta({ id: 'ExecutionError', description: 'Why an execution failed or was cancelled' });

const OutputSchema = z.object({
  summary: z.string(),
  passed: z.boolean(),
  steps: z.array(z.object({ step: z.number().int(), agentId: z.string(), action: z.string(), passed: z.boolean().nullable(), outcome: outcomeSchema, reason: z.string().nullable(), confidence: z.number().nullable(), summary: z.string().nullable() })),
  result: z.unknown().describe("The last completed step's artifact data"),
}).meta({ id: 'ExecutionOutput' });

const statusEnum = z.enum(EXECUTION_STATUSES);

export const TaskAcceptedSchema = z.object({
  taskId: z.string().startsWith('task_'),
  status: statusEnum,
  estimatedCompletion: iso,
  agentsAssigned: z.array(z.string()),
  statusUrl: z.string(),
}).meta({ id: 'TaskAccepted' });

export const TaskStatusSchema = z.object({
  taskId: z.string(),
  status: statusEnum,
  progress: z.number().int().min(0).max(100),
  currentAgent: z.string().nullable(),
  completedPhases: z.array(z.string()),
  estimatedCompletion: iso,
  output: OutputSchema.nullable(),
  error: ErrorInfoSchema.nullable(),
  createdAt: iso,
  startedAt: iso.nullable(),
  completedAt: iso.nullable(),
}).meta({ id: 'TaskStatus' });

const PhaseStateSchema = z.object({ phase: z.enum(PHASES), status: z.enum(['Completed', 'Running', 'Pending', 'Failed', 'Skipped']), durationMs: z.number().nullable() });

export const StepViewSchema = z.object({
  step: z.number().int(), agentId: z.string(), action: z.string(), domain: z.string().nullable(), round: z.number().int(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled']), outcome: outcomeSchema, reason: z.string().nullable(), attempts: z.number().int(),
  phases: z.array(PhaseStateSchema), confidence: z.number().nullable(), passed: z.boolean().nullable(), summary: z.string().nullable(),
  gates: z.object({ passed: z.number().int(), failed: z.number().int(), notApplicable: z.number().int(), failedGates: z.array(z.string()) }),
  error: z.object({ code: z.string(), message: z.string() }).nullable(), addedBecause: z.string().nullable(), startedAt: iso.nullable(), completedAt: iso.nullable(),
}).meta({ id: 'WorkflowPhase', description: 'One agent step of a workflow with its RIGOR phases' });

export const WorkflowInvokeSchema = z.strictObject({
  capability: z.enum(CAPABILITIES),
  workflow: z.string().trim().min(1).max(100).describe('A template or domain workflow id, e.g. full-sdlc or generate-code'),
  input: z.strictObject({
    prompt,
    scope: z.enum(SCOPES).optional(),
    intelligence: z.enum(INTELLIGENCE_TIERS).optional().describe('Cadre extension; default from the configuration'),
    source: z.string().min(1).max(4096).optional(),
  }),
}).meta({ id: 'WorkflowInvoke' });

export const WorkflowAcceptedSchema = z.object({ workflowId: z.string(), statusUrl: z.string(), streamUrl: z.string() }).meta({ id: 'WorkflowAccepted' });

export const WorkflowStatusSchema = z.object({
  workflowId: z.string(), workflow: z.string().nullable(), status: statusEnum, pattern: z.string(), progress: z.number().int(), currentAgent: z.string().nullable(),
  phases: z.array(StepViewSchema), output: OutputSchema.nullable(), error: ErrorInfoSchema.nullable(), createdAt: iso, startedAt: iso.nullable(), completedAt: iso.nullable(),
}).meta({ id: 'WorkflowStatus' });

export const WorkflowListQuerySchema = z.object({
  status: statusEnum.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('1-based page of `limit` workflows, newest first'),
});

/** The contract's list pagination (projects): page, limit, total. */
export const PaginationSchema = z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int() }).meta({ id: 'Pagination' });

export const WorkflowListSchema = z.object({
  workflows: z.array(z.object({ workflowId: z.string(), workflow: z.string().nullable(), status: statusEnum, progress: z.number().int(), createdAt: iso, completedAt: iso.nullable() })),
  total: z.number().int(),
  pagination: PaginationSchema,
}).meta({ id: 'WorkflowList' });

export const RigorInvokeSchema = z.strictObject({
  prompt,
  priority: z.enum(PRIORITIES).optional(),
  acmfMode: z.enum(ACMF_MODES).optional().describe('Caps the agent\'s mode for this execution; never raises it'),
  scope: z.enum(SCOPES).optional(),
  intelligence: z.enum(INTELLIGENCE_TIERS).optional(),
  source: z.string().min(1).max(4096).optional(),
}).meta({ id: 'RigorInvoke' });

export const ExecutionRefSchema = z.object({ executionId: z.string(), status: statusEnum, statusUrl: z.string(), streamUrl: z.string() }).meta({ id: 'ExecutionReference' });

const GateResultSchema = z.object({
  gate: z.string(), number: z.number().int(), category: z.enum(['safety', 'correctness', 'performance', 'compliance']),
  status: z.enum(['pass', 'fail', 'not_applicable']), value: z.union([z.number(), z.string(), z.boolean(), z.null()]), threshold: z.number().nullable(), reason: z.string(),
}).meta({ id: 'GateResult' });

export const RigorStatusSchema = z.object({
  executionId: z.string(), agentId: z.string(), action: z.string(), status: statusEnum,
  acmfMode: z.string().nullable().describe('The ACMF mode the agent acted under (its own mode, capped by the request); null before Inspect'),
  acmfModeCap: z.string().nullable().describe('The acmfMode of the request (a cap, never a raise)'),
  outcome: outcomeSchema, reason: z.string().nullable(), phases: z.array(PhaseStateSchema),
  confidence: z.number().nullable(), passed: z.boolean().nullable(), gates: z.array(GateResultSchema), output: z.unknown(), error: ErrorInfoSchema.nullable(),
  createdAt: iso, startedAt: iso.nullable(), completedAt: iso.nullable(),
}).meta({ id: 'RigorExecution' });

export const RigorHealthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  phases: z.array(z.enum(PHASES)),
  gates: z.number().int(),
  audit: z.object({ records: z.number().int(), intact: z.boolean(), checked: z.number().int(), firstBroken: z.unknown().nullable() }),
  executions: z.object({ running: z.number().int(), awaitingApproval: z.number().int() }),
}).meta({ id: 'RigorHealth' });

export const CustomWorkflowSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  pattern: z.enum(['sequential', 'parallel', 'hierarchical', 'group_chat', 'debate']).default('sequential'),
  lead: z.string().optional().describe('Coordinator (hierarchical), aggregator (parallel), moderator (group_chat) or judge (debate)'),
  steps: z.array(z.strictObject({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional().describe('Default step<N>'),
    agent: z.string(),
    action: z.string().optional().describe("Default: the agent's default action"),
    depends_on: z.array(z.string()).max(50).optional(),
    input: z.record(z.string(), z.unknown()).optional().describe('Input mapping: literals, $goal.prompt, $steps.<id>.summary, $steps.<id>.output.<path>'),
  })).max(50),
  input: z.strictObject({ prompt, scope: z.enum(SCOPES).optional(), intelligence: z.enum(INTELLIGENCE_TIERS).optional(), source: z.string().min(1).max(4096).optional() }),
}).meta({ id: 'CustomWorkflow' });

export const CustomWorkflowAcceptedSchema = z.object({ workflowId: z.string(), definitionId: z.string(), statusUrl: z.string(), streamUrl: z.string() }).meta({ id: 'CustomWorkflowAccepted' });

export const CustomWorkflowDetailsSchema = z.object({
  definition: z.object({
    id: z.string(), name: z.string(), pattern: z.string(), lead: z.string().nullable(), createdAt: iso,
    steps: z.array(z.object({ id: z.string(), agentId: z.string(), action: z.string(), dependsOn: z.array(z.string()), input: z.record(z.string(), z.unknown()) })),
  }),
  execution: WorkflowStatusSchema,
}).meta({ id: 'CustomWorkflowDetails' });

export const ActionBodySchema = z.strictObject({
  prompt: z.string().max(20_000).optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  scope: z.enum(SCOPES).optional(),
  intelligence: z.enum(INTELLIGENCE_TIERS).optional(),
  source: z.string().min(1).max(4096).optional(),
}).meta({ id: 'AgentActionRequest' });

export const AgentViewSchema = z.object({
  id: z.string(),
  displayName: z.string(),
  description: z.string(),
  domains: z.array(z.object({ domain: z.string(), role: z.string() })),
  tierTag: z.enum(['PRO', 'ULTRA']).nullable(),
  availability: z.enum(['always_on', 'business_hours', 'commercial']),
  prCapable: z.boolean(),
  actions: z.array(z.object({ name: z.string(), tierTag: z.enum(['PRO', 'ULTRA']).nullable(), enabled: z.boolean(), unavailableReason: z.string().optional().describe('Why the action cannot run here (no skill, no model, not in the subscription or the intelligence tier); present when enabled is false') })),
  state: z.enum(['warm', 'warming', 'cold']),
  acmf: z.object({ mode: z.enum(ACMF_MODES), qualityScore: z.number().nullable(), pendingPromotion: z.object({ to: z.string(), reason: z.string(), proposedAt: z.string() }).nullable() }),
  load: z.object({ running: z.number().int(), queued: z.number().int(), capacity: z.number().int(), load: z.number(), pressure: z.boolean() }),
}).meta({ id: 'Agent' });

export const AgentListSchema = z.object({ agents: z.array(AgentViewSchema) }).meta({ id: 'AgentList' });

export const AgentStatusSchema = AgentViewSchema.extend({
  health: z.enum(['ok', 'degraded']),
  acmfHistory: z.array(z.object({ at: z.string(), from: z.string(), to: z.string(), reason: z.string(), by: z.string() })),
  strictness: z.object({ recentFailures: z.number().int(), maxSteps: z.number().int() }).optional().describe('Failed reviews since the last passed one (each makes the gate thresholds one step stricter, at most maxSteps)'),
  recent: z.array(z.object({ executionId: z.string(), step: z.number().int(), action: z.string(), status: z.string(), passed: z.boolean().nullable(), completedAt: iso.nullable() })),
}).meta({ id: 'AgentStatus' });

export const CoordinationSchema = z.object({
  executions: z.array(z.object({
    executionId: z.string(), kind: z.string(), status: statusEnum, orchestrator: z.object({ tier: z.number().int(), domains: z.array(z.string()) }),
    currentAgent: z.string().nullable(), phase: z.string().nullable(), progress: z.number().int(),
  })),
  agents: z.array(z.object({ agentId: z.string(), activeSteps: z.number().int() })),
}).meta({ id: 'Coordination' });

export const ApprovalSchema = z.object({
  id: z.string(), executionId: z.string(), agentId: z.string(),
  action: z.object({ kind: z.string(), description: z.string(), paths: z.array(z.string()).optional(), external: z.boolean().optional(), production: z.boolean().optional(), destructive: z.boolean().optional() }),
  risk: z.string(), riskReasons: z.array(z.string()), status: z.enum(['pending', 'approved', 'denied', 'expired', 'closed']),
  requestedAt: iso, expiresAt: iso.optional(), decidedAt: iso.optional(), decidedBy: z.string().optional(), reason: z.string().optional(),
}).meta({ id: 'Approval' });

export const ApprovalDecisionSchema = z.strictObject({
  approved: z.boolean(),
  by: z.string().trim().min(1).max(200).optional().describe('A note on who decides, e.g. user:alice: kept in the audit record as data.note; the decision is attributed to the calling key'),
  reason: z.string().max(2000).optional(),
}).meta({ id: 'ApprovalDecision' });

export const AcmfModeChangeSchema = z.strictObject({
  mode: z.enum(ACMF_MODES),
  by: z.string().trim().min(1).max(200).optional().describe('A note on who changes it (audit data.note); the change is attributed to the calling key'),
  reason: z.string().trim().min(1).max(2000),
}).meta({ id: 'AcmfModeChange' });

export const idParam = (name: string, prefix?: string) => z.object({ [name]: prefix ? z.string().startsWith(`${prefix}_`, `must start with ${prefix}_`) : z.string().min(1) });
