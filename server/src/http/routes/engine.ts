/**
 * The agent-platform endpoints of the contract, in both path families. Handlers translate requests
 * into engine calls and records into the contract's shapes; no business logic lives here.
 */
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { PHASES } from '../../../../protocol/events';
import type { ApiKeyRecord, ApiKeys } from '../../auth/api-keys';
import { roleAtLeast, roleOf } from '../../auth/roles';
import { decideApprovalAsKey } from '../approval-decision';
import { modeRank } from '../../engine/acmf/policy';
import { AGENTS, findAgent, GATES, isActionEnabled, MAX_ADJUSTMENT_STEPS, type AgentDef } from '../../engine/catalog/index';
import { subscriptionRefusal } from '../../engine/catalog/subscription';
import { EngineError, isEngineError } from '../../engine/errors';
import { subscriptionOf, type Engine } from '../../engine/index';
import { tenantOf } from '../../engine/tenants/tenant-id';
import type { Principal } from '../../engine/executions/execution-service';
import type { ExecutionRecord } from '../../engine/executions/records';
import { rigorStatus, taskAccepted, taskStatus, workflowStatus, progressOf } from '../../engine/executions/views';
import {
  AcmfModeChangeSchema, ActionBodySchema, AgentListSchema, AgentStatusSchema, ApprovalDecisionSchema, ApprovalSchema, CoordinationSchema,
  CustomWorkflowAcceptedSchema, CustomWorkflowDetailsSchema, CustomWorkflowSchema, ExecutionRefSchema, idParam, RigorHealthSchema,
  RigorInvokeSchema, RigorStatusSchema, TaskAcceptedSchema, TaskStatusSchema, TaskSubmissionSchema, WorkflowAcceptedSchema,
  PaginationSchema, WorkflowInvokeSchema, WorkflowListQuerySchema, WorkflowListSchema, WorkflowStatusSchema,
} from '../engine-schemas';
import { HttpProblem, problemFor } from '../problem';
import { defineRoute, RESPONSE_SENT, type ResponseSent, type RouteDef } from '../route';
import { serveEventStream } from '../sse';

export interface EngineRouteDeps {
  engine: Engine;
  /** Counts usable keys: with one key only, the install is single-user and self-approval is on by default. */
  keys?: Pick<ApiKeys, 'activeCount'>;
  /** SSE heartbeat interval (tests shorten it). */
  heartbeatMs?: number;
}

const STREAM_PATH = '/api/admin/events/stream';
const streamUrl = (id: string) => `${STREAM_PATH}?execution_id=${encodeURIComponent(id)}`;
const accepted = { 202: { description: 'Accepted: the work is stored durably and runs in the background' } } as const;
const problems = {
  400: { description: 'Invalid request (the offending fields are listed)' },
  403: { description: 'Needs a higher intelligence tier (with a preview of what would run)' },
  503: { description: 'An agent of the plan is overloaded (Retry-After)' },
} as const;

function principal(key: ApiKeyRecord, idempotencyId?: string): Principal {
  // Callbacks are signed with the SHA-256 of the caller's key: the caller can verify without another secret.
  // What the key creates belongs to its tenant.
  return { keyId: key.id, tenantId: tenantOf(key), callbackSecret: key.hash, ...(idempotencyId ? { idempotencyId } : {}) };
}

/** What the client said about who acts (`by`), kept as a note beside the authenticated actor. */
function noteOf(by: string | undefined): { note?: string } {
  return by === undefined ? {} : { note: by };
}

/** A `source` that is not a URL must be an existing folder on this machine. */
function checkSource(source: string | undefined): string | undefined {
  if (source === undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(source)) return source;
  const abs = path.resolve(source);
  let dir = false;
  try {
    dir = statSync(abs).isDirectory();
  } catch {
    dir = false;
  }
  if (!dir) throw new EngineError('ERR_VALIDATION', `source ${abs} is not a folder on this machine`, { details: { errors: [{ field: 'body.source', message: 'not an existing folder or a repository URL' }] } });
  return abs;
}

function mustBe(rec: ExecutionRecord, kinds: ExecutionRecord['kind'][], what: string, id: string): ExecutionRecord {
  if (!kinds.includes(rec.kind)) throw new EngineError('ERR_NOT_FOUND', `no ${what} ${id}`, { details: { id } });
  return rec;
}

/**
 * The GET form of a direct action: `source`, `prompt`, `scope` and `intelligence` in the query are the
 * request's own fields (as in the POST body), every other parameter is the action's input.
 */
function actionQuery(query: Record<string, string>): z.output<typeof ActionBodySchema> {
  const { source, prompt, scope, intelligence, ...input } = query;
  const parsed = ActionBodySchema.safeParse({ ...(source ? { source } : {}), ...(prompt ? { prompt } : {}), ...(scope ? { scope } : {}), ...(intelligence ? { intelligence } : {}), input });
  if (!parsed.success) {
    throw new EngineError('ERR_VALIDATION', `invalid query: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, {
      details: { errors: parsed.error.issues.map((i) => ({ field: `query.${i.path.join('.')}`, message: i.message })) },
    });
  }
  return parsed.data;
}

export function engineRoutes(deps: EngineRouteDeps): RouteDef[] {
  const { engine } = deps;
  const ex = engine.executions;
  // Every read by id goes through the caller's tenant: another tenant's execution is not found.
  const find = (ctx: { tenantId: string }, id: string, kinds: ExecutionRecord['kind'][], what: string) => mustBe(ex.getFor(ctx.tenantId, id), kinds, what, id);
  /** An idempotent retry finds only what the same tenant created. */
  const replayed = (ctx: { tenantId: string }, id: string) => {
    const rec = ex.findByIdempotency(id);
    return rec && tenantOf(rec) === ctx.tenantId ? rec : undefined;
  };

  const taskRoutes = (prefix: '/v1' | '/api') => [
    defineRoute({
      method: 'POST', path: `${prefix}/agents/tasks`, auth: 'key', tenancy: 'tenant', idempotent: true, tags: ['tasks'],
      summary: 'Submit a development task',
      description: 'Routed by the orchestrator of each capability; a BUILD task starts with req-ai, planner-ai and architect-ai. Answered once the task is on disk.',
      body: TaskSubmissionSchema,
      responses: { 202: { description: accepted[202].description, schema: TaskAcceptedSchema }, ...problems },
      recover: (ctx, id) => {
        const rec = replayed(ctx, id);
        // The 202 as it was answered: every execution is accepted `queued`.
        return rec ? { status: 202 as const, body: taskAccepted({ ...rec, status: 'queued' }, `${prefix}/agents/tasks/${rec.id}`), headers: { location: `${prefix}/agents/tasks/${rec.id}` } } : undefined;
      },
      handler: async (ctx) => {
        const b = ctx.body;
        const source = checkSource(b.source);
        const rec = await ex.submitTask({ ...b, ...(source ? { source } : {}) }, principal(ctx.principal, ctx.idempotencyId));
        return { status: 202, body: taskAccepted(rec, `${prefix}/agents/tasks/${rec.id}`), headers: { location: `${prefix}/agents/tasks/${rec.id}` } };
      },
    }),
    defineRoute({
      method: 'GET', path: `${prefix}/agents/tasks/{taskId}`, auth: 'key', tenancy: 'tenant', tags: ['tasks'],
      summary: 'Task status and progress',
      params: idParam('taskId'),
      responses: { 200: { description: 'The task', schema: TaskStatusSchema }, 404: { description: 'No such task' } },
      handler: (ctx) => {
        const rec = find(ctx, ctx.params.taskId, ['task'], 'task');
        return { status: 200, body: taskStatus(rec, ex.live(rec.id)) };
      },
    }),
  ];

  const workflowAccepted = (rec: ExecutionRecord, statusPath: string) => ({ workflowId: rec.id, statusUrl: statusPath, streamUrl: streamUrl(rec.id) });
  const customAccepted = (id: string, definitionId: string) => {
    const statusUrl = `/v1/customer/workflow/${id}/status`;
    return { status: 202 as const, body: { workflowId: id, definitionId, statusUrl, streamUrl: streamUrl(id) }, headers: { location: `/v1/customer/workflow/${id}` } };
  };

  return [
    ...taskRoutes('/v1'),
    ...taskRoutes('/api'),

    defineRoute({
      method: 'POST', path: '/api/workflows/invoke', auth: 'key', tenancy: 'tenant', idempotent: true, tags: ['workflows'],
      summary: 'Invoke a capability workflow (a domain workflow or a cross-capability template)',
      body: WorkflowInvokeSchema,
      responses: { 202: { description: accepted[202].description, schema: WorkflowAcceptedSchema }, ...problems },
      recover: (ctx, id) => {
        const rec = replayed(ctx, id);
        return rec ? { status: 202 as const, body: workflowAccepted(rec, `/api/workflows/${rec.id}/status`), headers: { location: `/api/workflows/${rec.id}/status` } } : undefined;
      },
      handler: async (ctx) => {
        const source = checkSource(ctx.body.input.source);
        const rec = await ex.invokeWorkflow({ ...ctx.body, input: { ...ctx.body.input, ...(source ? { source } : {}) } }, principal(ctx.principal, ctx.idempotencyId));
        return { status: 202, body: workflowAccepted(rec, `/api/workflows/${rec.id}/status`), headers: { location: `/api/workflows/${rec.id}/status` } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/workflows/{id}/status', auth: 'key', tenancy: 'tenant', tags: ['workflows'],
      summary: 'Workflow status: status, phases (the agent steps with their RIGOR phases), output',
      params: idParam('id'),
      responses: { 200: { description: 'The workflow', schema: WorkflowStatusSchema }, 404: { description: 'No such workflow' } },
      handler: (ctx) => {
        const rec = find(ctx, ctx.params.id, ['workflow', 'task'], 'workflow');
        return { status: 200, body: workflowStatus(rec, ex.live(rec.id)) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/workflows', auth: 'key', tenancy: 'tenant', tags: ['workflows'],
      summary: 'List workflow executions, newest first',
      query: WorkflowListQuerySchema,
      responses: { 200: { description: 'The workflows', schema: WorkflowListSchema } },
      handler: (ctx) => {
        // Counted and paged on the summaries in memory: only the page's records are read.
        const filter = { kind: 'workflow' as const, tenantId: ctx.tenantId, ...(ctx.query.status ? { status: ctx.query.status } : {}) };
        const total = ex.count(filter);
        const page = ex.list({ ...filter, limit: ctx.query.limit, offset: (ctx.query.page - 1) * ctx.query.limit });
        return {
          status: 200,
          body: {
            total,
            pagination: { page: ctx.query.page, limit: ctx.query.limit, total },
            workflows: page.map((r) => ({ workflowId: r.id, workflow: r.request.workflow, status: r.status, progress: progressOf(r, ex.live(r.id)), createdAt: r.createdAt, completedAt: r.completedAt })),
          },
        };
      },
    }),
    defineRoute({
      method: 'POST', path: '/api/workflows/cancel/{id}', auth: 'key', tenancy: 'tenant', tags: ['workflows'],
      summary: 'Cancel a running workflow (the running agent is stopped through its AbortSignal)',
      params: idParam('id'),
      responses: { 200: { description: 'The cancelled workflow', schema: WorkflowStatusSchema }, 404: { description: 'No such workflow' }, 409: { description: 'The workflow has already ended' } },
      handler: async (ctx) => {
        find(ctx, ctx.params.id, ['workflow', 'task', 'rigor', 'action'], 'workflow');
        const rec = await ex.cancel(ctx.params.id, ctx.actor);
        return { status: 200, body: workflowStatus(rec) };
      },
    }),

    ...(['/v1/admin/rigor/invoke/{agentId}', '/api/v1/rigor/invoke/{agentId}'] as const).map((p) => {
      /** The 202 of a RIGOR invocation (`status` as it was answered: the execution's at acceptance). */
      const rigorAccepted = (rec: ExecutionRecord, status: ExecutionRecord['status'] = rec.status) => {
        const statusPath = p.startsWith('/v1') ? `/v1/admin/rigor/status/${rec.id}` : `/api/v1/rigor/status/${rec.id}`;
        return { status: 202 as const, body: { executionId: rec.id, status, statusUrl: statusPath, streamUrl: streamUrl(rec.id) }, headers: { location: statusPath } };
      };
      return defineRoute({
        method: 'POST', path: p, auth: 'key', tenancy: 'tenant', idempotent: true, tags: ['rigor'],
        summary: 'Run one agent through the five RIGOR phases',
        description: '`acmfMode` caps the agent\'s ACMF mode for this execution; it never raises it.',
        params: z.object({ agentId: z.string().min(1).describe('Agent id (the contract\'s {personality})') }),
        body: RigorInvokeSchema,
        responses: { 202: { description: accepted[202].description, schema: ExecutionRefSchema }, 404: { description: 'Unknown agent' }, ...problems },
        recover: (ctx, id) => {
          const rec = replayed(ctx, id);
          return rec ? rigorAccepted(rec, 'queued') : undefined;
        },
        handler: async (ctx) => {
          const source = checkSource(ctx.body.source);
          return rigorAccepted(await ex.invokeRigor(ctx.params.agentId, { ...ctx.body, ...(source ? { source } : {}) }, principal(ctx.principal, ctx.idempotencyId)));
        },
      });
    }),
    ...(['/v1/admin/rigor/status/{executionId}', '/api/v1/rigor/status/{executionId}'] as const).map((p) =>
      defineRoute({
        method: 'GET', path: p, auth: 'key', tenancy: 'tenant', tags: ['rigor'],
        summary: 'Status and result of a RIGOR execution, with the full gate table of its Review',
        params: idParam('executionId'),
        responses: { 200: { description: 'The execution', schema: RigorStatusSchema }, 404: { description: 'No such execution' } },
        handler: async (ctx) => {
          const rec = find(ctx, ctx.params.executionId, ['rigor', 'action'], 'RIGOR execution');
          // The full gate table is on the step record (no scan of the audit trail).
          return { status: 200, body: rigorStatus(rec, ex.live(rec.id)) };
        },
      }),
    ),
    defineRoute({
      method: 'GET', path: '/v1/admin/rigor/health', auth: 'key', tenancy: 'tenant', tags: ['rigor'],
      summary: 'Health of the RIGOR framework: phases, gates, audit chain, executions',
      responses: { 200: { description: 'Healthy', schema: RigorHealthSchema }, 503: { description: 'Degraded (the audit chain is broken)', schema: RigorHealthSchema } },
      handler: async (ctx) => {
        // A probe polled often: only the records appended since its last call are hashed (a full
        // verification runs at start-up, in govern-ai's audit and in `cadre audit verify`).
        const v = await (engine.audit.verifyNew?.() ?? engine.audit.verify());
        const running = ex.count({ status: 'in_progress', tenantId: ctx.tenantId });
        const awaitingApproval = ex.count({ status: 'awaiting_approval', tenantId: ctx.tenantId });
        const body = {
          status: v.ok ? ('ok' as const) : ('degraded' as const),
          phases: [...PHASES],
          gates: GATES.length,
          audit: { records: v.checked, intact: v.ok, checked: v.checked, firstBroken: v.firstBroken ?? null },
          executions: { running, awaitingApproval },
        };
        return v.ok ? { status: 200, body } : { status: 503, body };
      },
    }),

    defineRoute({
      method: 'POST', path: '/v1/customer/workflow', auth: 'key', tenancy: 'tenant', idempotent: true, tags: ['workflows'],
      summary: 'Define and run a customer workflow (ordered agent steps, a pattern, input mapping)',
      body: CustomWorkflowSchema,
      responses: { 202: { description: accepted[202].description, schema: CustomWorkflowAcceptedSchema }, ...problems },
      recover: (ctx, id) => {
        const rec = replayed(ctx, id);
        return rec?.definitionId ? customAccepted(rec.id, rec.definitionId) : undefined;
      },
      handler: async (ctx) => {
        const source = checkSource(ctx.body.input.source);
        const { definition, execution } = await ex.runCustomWorkflow({ ...ctx.body, input: { ...ctx.body.input, ...(source ? { source } : {}) } }, principal(ctx.principal, ctx.idempotencyId));
        return customAccepted(execution.id, definition.id);
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/customer/workflow/{id}', auth: 'key', tenancy: 'tenant', tags: ['workflows'],
      summary: 'A customer workflow: its definition and its run with results',
      params: idParam('id'),
      responses: { 200: { description: 'The workflow', schema: CustomWorkflowDetailsSchema }, 404: { description: 'No such customer workflow' } },
      handler: (ctx) => {
        const rec = ex.getFor(ctx.tenantId, ctx.params.id);
        const def = rec.definitionId ? ex.definition(rec.definitionId) : undefined;
        if (!def) throw new EngineError('ERR_NOT_FOUND', `no customer workflow ${ctx.params.id}`, { details: { id: ctx.params.id } });
        return { status: 200, body: { definition: { id: def.id, name: def.name, pattern: def.pattern, lead: def.lead, createdAt: def.createdAt, steps: def.steps }, execution: workflowStatus(rec, ex.live(rec.id)) } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/customer/workflow/{id}/status', auth: 'key', tenancy: 'tenant', tags: ['workflows'],
      summary: 'Execution status of a customer workflow',
      params: idParam('id'),
      responses: { 200: { description: 'The status', schema: WorkflowStatusSchema }, 404: { description: 'No such customer workflow' } },
      handler: (ctx) => {
        const rec = ex.getFor(ctx.tenantId, ctx.params.id);
        if (!rec.definitionId) throw new EngineError('ERR_NOT_FOUND', `no customer workflow ${ctx.params.id}`, { details: { id: ctx.params.id } });
        return { status: 200, body: workflowStatus(rec, ex.live(rec.id)) };
      },
    }),

    defineRoute({
      method: 'GET', path: '/v1/agents/list', auth: 'key', tenancy: 'catalog', tags: ['agents'],
      summary: 'The 25 agents with their domains, roles, tier, availability, warm state, ACMF mode and load',
      responses: { 200: { description: 'The agents', schema: AgentListSchema } },
      handler: async () => ({ status: 200, body: { agents: await Promise.all(AGENTS.map((a) => agentView(engine, a))) } }),
    }),
    defineRoute({
      method: 'GET', path: '/v1/agents/{id}/status', auth: 'key', tenancy: 'tenant', tags: ['agents'],
      summary: 'Health and status of one agent, with its ACMF history and recent steps',
      params: z.object({ id: z.string().min(1) }),
      responses: { 200: { description: 'The agent', schema: AgentStatusSchema }, 404: { description: 'Unknown agent' } },
      handler: async (ctx) => {
        const agent = findAgent(ctx.params.id);
        if (!agent) throw new EngineError('ERR_NOT_FOUND', `unknown agent "${ctx.params.id}"`);
        const view = await agentView(engine, agent);
        const state = await engine.acmf.state(agent.id);
        const recent = ex.list({ limit: 200, tenantId: ctx.tenantId }).flatMap((r) => r.steps.filter((s) => s.agentId === agent.id).map((s) => ({ executionId: r.id, step: s.step, action: s.action, status: s.status, passed: s.passed, completedAt: s.completedAt }))).slice(0, 20);
        const breaker = engine.fleet.breakers.get(agent.id).snapshot();
        const strictness = { recentFailures: engine.acmf.strictness(agent.id), maxSteps: MAX_ADJUSTMENT_STEPS };
        return { status: 200, body: { ...view, health: breaker.state === 'closed' ? ('ok' as const) : ('degraded' as const), acmfHistory: state.history, recent, strictness } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/agents/orchestrator/coordination', auth: 'key', tenancy: 'tenant', tags: ['agents'],
      summary: "Live orchestration status of all active agents on the caller's tasks",
      responses: { 200: { description: 'Active executions of this key and the agents working on them', schema: CoordinationSchema } },
      handler: (ctx) => {
        const mine = ex.list({ ownerKeyId: ctx.principal.id, tenantId: ctx.tenantId, active: true });
        const counts = new Map<string, number>();
        for (const r of mine) for (const s of r.steps) if (s.status === 'running') counts.set(s.agentId, (counts.get(s.agentId) ?? 0) + 1);
        return {
          status: 200,
          body: {
            executions: mine.map((r) => ({ executionId: r.id, kind: r.kind, status: r.status, orchestrator: r.orchestrator, currentAgent: r.currentAgent, phase: ex.live(r.id)?.phase ?? null, progress: progressOf(r, ex.live(r.id)) })),
            agents: [...counts].map(([agentId, activeSteps]) => ({ agentId, activeSteps })),
          },
        };
      },
    }),

    ...(['POST', 'GET'] as const).map((method) =>
      defineRoute({
        method, path: '/api/agents/{id}/{action}', auth: 'session', tenancy: 'tenant', idempotent: method === 'POST', tags: ['agents'],
        summary: `Direct agent action (${method})`,
        description: method === 'GET'
          ? 'Runs the action with the query parameters as input and waits up to 30 s: 200 with the result, or 202 with the execution reference when it takes longer.'
          : 'Runs the action; 202 with the execution reference.',
        params: z.object({ id: z.string().min(1), action: z.string().min(1) }),
        ...(method === 'POST' ? { body: ActionBodySchema } : {}),
        recover: (ctx, id) => {
          const rec = replayed(ctx, id);
          const statusUrl = rec ? `/api/v1/rigor/status/${rec.id}` : '';
          return rec ? { status: 202 as const, body: { executionId: rec.id, status: 'queued' as const, statusUrl, streamUrl: streamUrl(rec.id) }, headers: { location: statusUrl } } : undefined;
        },
        responses: { 200: { description: 'The finished execution', schema: RigorStatusSchema }, 202: { description: accepted[202].description, schema: ExecutionRefSchema }, 404: { description: 'Unknown agent or action' }, ...problems },
        handler: async (ctx) => {
          const body = (ctx.body ?? actionQuery(ctx.query as Record<string, string>)) as z.output<typeof ActionBodySchema>;
          const source = checkSource(body.source);
          const rec = await ex.runAction(ctx.params.id, ctx.params.action, { ...body, ...(source ? { source } : {}) }, principal(ctx.principal, ctx.idempotencyId));
          const statusUrl = `/api/v1/rigor/status/${rec.id}`;
          if (method === 'GET') {
            const done = await waitUntilDone(ex, rec.id, 30_000);
            // A question answered in one call: input the action could not use (unparseable file, unknown
            // format, a path outside the workspace) is the caller's 422, naming the file and line the
            // skill named; the execution stays readable at statusUrl.
            const step = done?.steps.find((st) => st.outcome === 'needs_input');
            if (done && done.status === 'failed' && step) {
              throw new EngineError('ERR_NEEDS_INPUT', step.reason ?? done.error?.message ?? 'the action needs other input', {
                details: { executionId: rec.id, statusUrl, agentId: step.agentId, action: step.action, errors: [{ field: 'query', message: step.reason ?? done.error?.message ?? '' }] },
              });
            }
            if (done) return { status: 200, body: rigorStatus(done) };
          }
          return { status: 202, body: { executionId: rec.id, status: ex.get(rec.id).status, statusUrl, streamUrl: streamUrl(rec.id) }, headers: { location: statusUrl } };
        },
      }),
    ),

    defineRoute({
      method: 'GET', path: STREAM_PATH, auth: 'key', tenancy: 'tenant', tags: ['events'],
      summary: "Server-sent progress events of one execution, or without execution_id the caller's tenant service stream (resume with Last-Event-ID)",
      description: "With `execution_id`: that execution's events, ending after its terminal event. Without it: the caller's tenant service stream " +
        '(`pipeline_event`: the incident chain, numbered per tenant), which stays open (docs/api.md, "Service event stream").',
      query: z.object({ execution_id: z.string().min(1).optional(), last_event_id: z.coerce.number().int().min(0).optional() }),
      responses: { 200: { description: 'text/event-stream: phase_started, work_progress, phase_completed and the documented extras; pipeline_event on the service stream' }, 404: { description: 'Unknown execution' } },
      rateLimited: true,
      handler: async (ctx): Promise<ResponseSent> => {
        const opts = { ...(deps.heartbeatMs ? { heartbeatMs: deps.heartbeatMs } : {}), log: ctx.log };
        // No execution: the service stream of the key's own tenant (another tenant's events never reach it).
        if (ctx.query.execution_id === undefined) await serveEventStream(ctx.req, ctx.res, engine.pipelineEvents.source(tenantOf(ctx.principal)), opts);
        else {
          ex.getFor(ctx.tenantId, ctx.query.execution_id); // another tenant's stream is not found
          await serveEventStream(ctx.req, ctx.res, ex.eventSource(ctx.query.execution_id), opts);
        }
        return RESPONSE_SENT;
      },
    }),

    defineRoute({
      method: 'GET', path: '/v1/approvals', auth: 'key', tenancy: 'tenant', tags: ['approvals'],
      summary: 'ACMF approvals (pending by default)',
      query: z.object({
        status: z.enum(['pending', 'approved', 'denied', 'expired', 'closed', 'all']).default('pending'), execution_id: z.string().optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe('1-based page of `limit` approvals, oldest first'),
      }),
      responses: { 200: { description: 'The approvals, oldest first', schema: z.object({ approvals: z.array(ApprovalSchema), pagination: PaginationSchema }) } },
      handler: (ctx) => {
        const filter = { ...(ctx.query.execution_id ? { executionId: ctx.query.execution_id } : {}), ...(ctx.query.status !== 'all' ? { status: ctx.query.status } : {}) };
        const all = engine.approvals.list(ctx.tenantId, filter);
        const from = (ctx.query.page - 1) * ctx.query.limit;
        return { status: 200, body: { approvals: all.slice(from, from + ctx.query.limit), pagination: { page: ctx.query.page, limit: ctx.query.limit, total: all.length } } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/approvals/{id}/decision', auth: 'key', tenancy: 'tenant', role: 'approver', idempotent: true, tags: ['approvals'],
      summary: 'Grant or deny a pending approval; who and when go to the audit trail',
      description: 'Needs the approver or admin role. The decision is attributed to the calling key (`key:<id>`); a `by` in the body is ' +
        'kept as a note only. The key that started the execution may not approve its own high- or critical-risk action unless ' +
        'self-approval is allowed (`security.self_approval`, on by default when only one key exists); such a decision is recorded as self-approved.',
      params: z.object({ id: z.string().min(1) }),
      body: ApprovalDecisionSchema,
      responses: {
        200: { description: 'The decided approval', schema: ApprovalSchema },
        403: { description: 'The key lacks the approver role, or approves its own high-risk action without self-approval' },
        404: { description: 'No such approval' },
        409: { description: 'Already decided or expired' },
      },
      handler: async (ctx) => {
        // The same rules for every key-authenticated door (approval-decision.ts; the MCP tool uses it too).
        const rec = await decideApprovalAsKey(engine, deps.keys?.activeCount(ctx.tenantId) ?? 1, ctx.params.id, ctx.principal, ctx.actor!, ctx.body);
        return { status: 200, body: rec };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/agents/{id}/acmf', auth: 'key', tenancy: 'install', tags: ['agents'],
      summary: "Set an agent's ACMF mode (a person's decision, with the reason, audited)",
      description: 'Lowering a mode (towards OBSERVE) is open to every key; raising it needs the approver or admin role. The change is ' +
        'attributed to the calling key; a `by` in the body is kept as a note only.',
      params: z.object({ id: z.string().min(1) }),
      body: AcmfModeChangeSchema,
      responses: {
        200: { description: 'The agent', schema: AgentStatusSchema.pick({ id: true, acmf: true, acmfHistory: true }) },
        403: { description: 'Raising the mode needs the approver role' },
        404: { description: 'Unknown agent' },
      },
      handler: async (ctx) => {
        const agent = findAgent(ctx.params.id);
        if (!agent) throw new EngineError('ERR_NOT_FOUND', `unknown agent "${ctx.params.id}"`);
        const current = (await engine.acmf.state(agent.id)).mode;
        if (modeRank(ctx.body.mode) > modeRank(current) && !roleAtLeast(roleOf(ctx.principal), 'approver')) {
          throw new HttpProblem(problemFor('ERR_FORBIDDEN',
            `raising ${agent.id} from ${current} to ${ctx.body.mode} needs a key with the approver role or higher; this key (${ctx.principal.id}) has the ${roleOf(ctx.principal)} role (lowering is open to every key)`,
            { requiredRole: 'approver', role: roleOf(ctx.principal) }));
        }
        const st = await engine.acmf.setMode(agent.id, ctx.body.mode, ctx.actor, ctx.body.reason, noteOf(ctx.body.by));
        return { status: 200, body: { id: agent.id, acmf: acmfView(st), acmfHistory: st.history } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/agents/fleet/schedule', auth: 'key', tenancy: 'catalog', tags: ['agents'],
      summary: 'Which agent is warm when, for the coming week (America/New_York business hours)',
      query: z.object({ from: z.iso.datetime().optional(), tier: z.enum(['core', 'pro', 'ultra']).optional() }),
      responses: { 200: { description: 'The week grid', schema: z.record(z.string(), z.unknown()) } },
      handler: (ctx) => ({ status: 200, body: engine.fleet.schedule(ctx.query.from ? Date.parse(ctx.query.from) : engine.clock.now(), ctx.query.tier ?? engine.config.defaults.intelligence) as unknown as Record<string, unknown> }),
    }),
  ];
}

function acmfView(st: { mode: 'OBSERVE' | 'LEARNING' | 'ASSISTED' | 'AUTONOMOUS'; qualityHistory: Array<{ score: number }>; pendingPromotion?: { to: string; reason: string; proposedAt: string } }) {
  return { mode: st.mode, qualityScore: st.qualityHistory.at(-1)?.score ?? null, pendingPromotion: st.pendingPromotion ?? null };
}

/**
 * Whether a direct action can run, asked of the engine: the RIGOR pipeline knows whether it has a
 * skill (and a model when the skill needs one), the subscription whether it covers the agent's
 * domains and the action's commercial tag, the intelligence tier whether the action is part of it.
 */
function actionView(engine: Engine, a: AgentDef, x: AgentDef['actions'][number], tier: Engine['config']['defaults']['intelligence']) {
  const refusal = subscriptionRefusal(subscriptionOf(engine.config), { domains: a.domains.map((d) => d.domain), tag: x.tierTag ?? a.tierTag });
  const unavailable = refusal?.reason
    ?? (isActionEnabled(tier, x) ? null : `${a.id} ${x.name} is a [${x.tierTag}] action, above the ${tier} intelligence tier`)
    ?? engine.rigor.readiness(a.id, x.name).unavailable;
  return { name: x.name, tierTag: x.tierTag, enabled: unavailable === null, ...(unavailable !== null ? { unavailableReason: unavailable } : {}) };
}

async function agentView(engine: Engine, a: AgentDef) {
  const st = await engine.acmf.state(a.id);
  const f = engine.fleet.status(a.id);
  const tier = engine.config.defaults.intelligence;
  return {
    id: a.id, displayName: a.displayName, description: a.description,
    domains: a.domains.map((d) => ({ domain: d.domain, role: d.role })),
    tierTag: a.tierTag, availability: a.availability, prCapable: a.prCapable,
    actions: a.actions.map((x) => actionView(engine, a, x, tier)),
    state: f.warm.state === 'draining' ? ('warm' as const) : f.warm.state,
    acmf: acmfView(st),
    load: { running: f.load.running, queued: f.load.queued, capacity: f.load.capacity, load: f.load.load, pressure: f.load.pressure },
  };
}

/** The execution once it has ended (the engine's one wait), or null when it still runs after `timeoutMs`. */
async function waitUntilDone(ex: Engine['executions'], id: string, timeoutMs: number): Promise<ExecutionRecord | null> {
  try {
    return await ex.whenSettled(id, { timeoutMs });
  } catch (err) {
    if (isEngineError(err) && err.code === 'ERR_TIMEOUT') return null;
    throw err;
  }
}
