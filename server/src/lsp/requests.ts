/**
 * The editor's custom requests (protocol/lsp.ts): the Agents, Executions, Approvals and Readiness
 * views, the catalog, running tasks, workflows and agent actions, cancelling, the dashboard and an
 * API key for the editor. Each handler validates its params with zod (InvalidParams with a readable
 * message), answers from the engine this process owns (a server attached to another owner answers
 * with an error naming the owner's pid) and uses the same engine calls as the REST routes.
 */
import { ErrorCodes, LSPErrorCodes, ResponseError, type Connection, type RequestType } from 'vscode-languageserver/node';
import { userInfo } from 'node:os';
import { z } from 'zod';
import {
  AgentsRequest, ApprovalsRequest, CancelExecutionRequest, CatalogRequest, CreateApiKeyRequest, DashboardRequest, DecideApprovalRequest, ExecutionsRequest,
  FoldersRequest, InvokeAgentRequest, ProposedChangesRequest, ReadinessRequest, RunTaskRequest, RunWorkflowRequest, SetAgentModeRequest, type WorkspaceFolderRow,
} from '../../../protocol/lsp';
import { ClientRequests, type ClientRequestHandlers, type ClientRequestName } from '../../../protocol/lsp-messages';
import { CAPABILITIES, findAgent, WORKFLOWS } from '../engine/catalog/index';
import { isEngineError } from '../engine/errors';
import type { OwnerRuntime, Runtime } from '../host/runtime';
import { ReadinessError, runReadiness } from '../host/readiness';
import { agentQuality, agentsView, approvalRow, auditRow, catalogView, executionRow, proposedChange, runStatus, verification, weekGrid } from './views';

/** The workspace folders the server serves (workspace-folders.ts). */
export interface FolderSource {
  list(): WorkspaceFolderRow[];
  first(): WorkspaceFolderRow | undefined;
  find(uriOrPath: string): WorkspaceFolderRow | undefined;
}

export interface RequestDeps {
  runtime(): Runtime | null;
  folders: FolderSource;
  log(line: string): void;
  /** How long ReadinessRequest waits for deploy-ai (default 2 minutes). */
  readinessTimeoutMs?: number;
}

const NONE = { keyId: null, callbackSecret: null } as const;
/** Who cancels from the editor (the audit trail and the execution's error say so). */
const EDITOR = 'editor';

// ---------------------------------------------------------------------------------------------
// Params

const Empty = z.union([z.object({}).passthrough(), z.null(), z.undefined()]);
const Input = z.record(z.string(), z.unknown());
const Schemas = {
  executions: z.object({ limit: z.number().int().min(1).max(200).optional(), id: z.string().min(1).optional() }).strict().nullish(),
  decide: z.object({ id: z.string().min(1), approved: z.boolean(), by: z.string().trim().min(1).max(200), reason: z.string().max(2000).optional() }).strict(),
  setMode: z.object({ agentId: z.string().min(1), mode: z.enum(['OBSERVE', 'LEARNING', 'ASSISTED', 'AUTONOMOUS']), reason: z.string().trim().min(1, 'say why the mode changes').max(2000), by: z.string().trim().min(1).max(200).optional() }).strict(),
  runTask: z.object({ prompt: z.string().trim().min(1).max(20_000), capabilities: z.array(z.enum(CAPABILITIES)).min(1).optional(), folder: z.string().min(1).optional() }).strict(),
  runWorkflow: z.object({ workflowId: z.string().trim().min(1), input: Input.optional(), folder: z.string().min(1).optional() }).strict(),
  invoke: z.object({ agentId: z.string().min(1), action: z.string().min(1), input: Input.optional(), folder: z.string().min(1).optional() }).strict(),
  readiness: z.union([z.object({ folder: z.string().min(1).optional() }).strict(), z.null(), z.undefined()]),
  cancel: z.object({ executionId: z.string().min(1) }).strict(),
  dashboard: z.object({ executionId: z.string().min(1).optional() }).strict().nullish(),
  changes: z.object({ executionId: z.string().min(1) }).strict(),
};

function parse<T extends z.ZodType>(method: string, schema: T, params: unknown): z.output<T> {
  const r = schema.safeParse(params);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'params'}: ${i.message}`).join('; ');
  throw new ResponseError(ErrorCodes.InvalidParams, `${method}: invalid params: ${problems}`);
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Engine errors to LSP errors: a bad request is InvalidParams, the rest RequestFailed, with the engine's code in `data`. */
export function toResponseError(method: string, err: unknown): ResponseError<unknown> {
  if (err instanceof ResponseError) return err;
  if (isEngineError(err)) {
    const invalid = err.code === 'ERR_VALIDATION' || err.code === 'ERR_NOT_FOUND';
    return new ResponseError(invalid ? ErrorCodes.InvalidParams : LSPErrorCodes.RequestFailed, `${method}: ${err.message}`, { code: err.code, ...(err.details ? { details: err.details } : {}) });
  }
  return new ResponseError(ErrorCodes.InternalError, `${method}: ${(err as Error)?.message ?? String(err)}`);
}

function owner(method: string, deps: RequestDeps): OwnerRuntime {
  const rt = deps.runtime();
  if (!rt) throw new ResponseError(LSPErrorCodes.RequestFailed, `${method}: Cadre is still starting`);
  if (rt.attached) {
    throw new ResponseError(LSPErrorCodes.RequestFailed, `${method}: the data directory ${rt.dataDir} is owned by another Cadre process (pid ${rt.ownerPid}, ${rt.url}); this editor's server is attached to it and cannot answer. Use that process's API or stop it and restart the server.`);
  }
  return rt;
}

/** The folder a request names (its URI), or the first folder; a folder the server does not serve is InvalidParams. */
function folderOf(method: string, deps: RequestDeps, folder: string | undefined): WorkspaceFolderRow | undefined {
  if (folder === undefined) return deps.folders.first();
  const found = deps.folders.find(folder);
  if (!found) throw new ResponseError(ErrorCodes.InvalidParams, `${method}: ${folder} is not a workspace folder of this editor (${deps.folders.list().map((f) => f.name).join(', ') || 'none open'})`);
  return found;
}

function workspace(method: string, deps: RequestDeps, folder: string | undefined): WorkspaceFolderRow {
  const ws = folderOf(method, deps, folder);
  if (!ws) throw new ResponseError(LSPErrorCodes.RequestFailed, `${method}: no workspace folder is open`);
  return ws;
}

// ---------------------------------------------------------------------------------------------
// Handlers

/** The part of a connection the table registers on. */
export type RequestRegistrar = Pick<Connection, 'onRequest'>;

/** Registers one handler per declared client request (protocol/lsp-messages.ts ClientRequests), each through its typed declaration. */
export function registerViewRequests(connection: RequestRegistrar, deps: RequestDeps): void {
  const handlers = viewHandlers(deps);
  const register = <K extends ClientRequestName>(name: K) => {
    // The table ties each name's handler to its declaration; one register call serves them all.
    const type = ClientRequests[name] as unknown as RequestType<unknown, unknown, unknown>;
    const handler = handlers[name] as (params: unknown) => Promise<unknown>;
    connection.onRequest(type, async (params: unknown) => {
      try {
        return await handler(params);
      } catch (err) {
        throw toResponseError(type.method, err);
      }
    });
  };
  for (const name of Object.keys(ClientRequests) as ClientRequestName[]) register(name);
}

/**
 * The handlers, one per declared client request, type-checked against the declarations (exported for
 * tests that call them without a connection). The params are what the wire carried: each handler
 * validates them before use.
 */
export function viewHandlers(deps: RequestDeps): ClientRequestHandlers {
  return {
    agents: async (params) => {
      parse(AgentsRequest.method, Empty, params);
      return agentsView(owner(AgentsRequest.method, deps).engine);
    },

    catalog: async (params) => {
      parse(CatalogRequest.method, Empty, params);
      owner(CatalogRequest.method, deps);
      return catalogView();
    },

    executions: async (params) => {
      const p = parse(ExecutionsRequest.method, Schemas.executions, params) ?? {};
      const { engine } = owner(ExecutionsRequest.method, deps);
      if (p.id) {
        const rec = engine.executions.get(p.id);
        return [executionRow(engine, rec)];
      }
      return engine.executions.list({ limit: p.limit ?? 30 }).map((rec) => executionRow(engine, rec));
    },

    changes: async (params) => {
      const p = parse(ProposedChangesRequest.method, Schemas.changes, params);
      const { engine } = owner(ProposedChangesRequest.method, deps);
      const rec = engine.executions.get(p.executionId);
      return { executionId: rec.id, changes: rec.steps.flatMap((s) => proposedChange(s) ?? []) };
    },

    approvals: async (params) => {
      parse(ApprovalsRequest.method, Empty, params);
      return owner(ApprovalsRequest.method, deps).engine.acmf.listApprovals({ status: 'pending' }).map(approvalRow);
    },

    decideApproval: async (params) => {
      const p = parse(DecideApprovalRequest.method, Schemas.decide, params);
      const { engine } = owner(DecideApprovalRequest.method, deps);
      // The editor's user is the authenticated principal here (the LSP pipe is theirs); the name the client sends is a note.
      const rec = await engine.acmf.decideApproval(p.id, { approved: p.approved, by: editorActor(), note: p.by, ...(p.reason ? { reason: p.reason } : {}) });
      return { id: rec.id, approved: rec.status === 'approved', by: rec.decidedBy ?? p.by, decidedAt: rec.decidedAt ?? new Date().toISOString() };
    },

    setAgentMode: async (params) => {
      const p = parse(SetAgentModeRequest.method, Schemas.setMode, params);
      const { engine } = owner(SetAgentModeRequest.method, deps);
      if (!findAgent(p.agentId)) throw new ResponseError(ErrorCodes.InvalidParams, `${SetAgentModeRequest.method}: unknown agent "${p.agentId}"`);
      // The person at the editor owns this install (as for approvals): raising and lowering are both theirs to decide.
      const from = (await engine.acmf.state(p.agentId)).mode;
      const by = editorActor();
      const st = await engine.acmf.setMode(p.agentId, p.mode, by, p.reason, p.by ? { note: p.by } : {});
      return { agentId: p.agentId, from, mode: st.mode, by };
    },

    runTask: async (params) => {
      const p = parse(RunTaskRequest.method, Schemas.runTask, params);
      const { engine } = owner(RunTaskRequest.method, deps);
      const ws = folderOf(RunTaskRequest.method, deps, p.folder)?.path;
      const rec = await engine.executions.submitTask({ task: p.prompt, capabilities: p.capabilities ?? ['BUILD'], ...(ws ? { source: ws } : {}) }, NONE);
      return { executionId: rec.id };
    },

    runWorkflow: async (params) => {
      const p = parse(RunWorkflowRequest.method, Schemas.runWorkflow, params);
      const { engine } = owner(RunWorkflowRequest.method, deps);
      const key = p.workflowId.trim().toLowerCase();
      const wf = WORKFLOWS.find((w) => w.id === key || w.aliases?.includes(key));
      if (!wf) throw new ResponseError(ErrorCodes.InvalidParams, `${RunWorkflowRequest.method}: unknown workflow "${p.workflowId}" (one of ${WORKFLOWS.map((w) => w.id).join(', ')})`);
      const input = p.input ?? {};
      const prompt = typeof input['prompt'] === 'string' && input['prompt'].trim() ? input['prompt'] : `run ${wf.id}`;
      const ws = folderOf(RunWorkflowRequest.method, deps, p.folder)?.path;
      const rec = await engine.executions.invokeWorkflow({ capability: wf.capabilities[0]!, workflow: wf.id, input: { ...input, prompt, ...(ws ? { source: ws } : {}) } }, NONE);
      return { executionId: rec.id };
    },

    invokeAgent: async (params) => {
      const p = parse(InvokeAgentRequest.method, Schemas.invoke, params);
      const { engine } = owner(InvokeAgentRequest.method, deps);
      if (!findAgent(p.agentId)) throw new ResponseError(ErrorCodes.InvalidParams, `${InvokeAgentRequest.method}: unknown agent "${p.agentId}"`);
      const input = p.input ?? {};
      const prompt = typeof input['prompt'] === 'string' && input['prompt'].trim() ? input['prompt'] : `${p.agentId} ${p.action}`;
      const ws = folderOf(InvokeAgentRequest.method, deps, p.folder)?.path;
      const rec = await engine.executions.runAction(p.agentId, p.action, { prompt, input, ...(ws ? { source: ws } : {}) }, NONE);
      return { executionId: rec.id };
    },

    cancel: async (params) => {
      const p = parse(CancelExecutionRequest.method, Schemas.cancel, params);
      const { engine } = owner(CancelExecutionRequest.method, deps);
      const rec = await engine.executions.cancel(p.executionId, EDITOR);
      return { executionId: rec.id, status: runStatus(rec.status) };
    },

    readiness: async (params) => {
      const p = parse(ReadinessRequest.method, Schemas.readiness, params) ?? {};
      const rt = owner(ReadinessRequest.method, deps);
      const folder = workspace(ReadinessRequest.method, deps, p.folder);
      // The engine's one readiness service, as REST's direct action and the MCP tool use it.
      try {
        const r = await runReadiness(rt.engine, folder.path, NONE, { timeoutMs: deps.readinessTimeoutMs ?? 120_000, prompt: `deploy-ai readiness of ${folder.name}` });
        return { ...r, folder };
      } catch (err) {
        if (!(err instanceof ReadinessError)) throw err;
        throw new ResponseError(LSPErrorCodes.RequestFailed, `${ReadinessRequest.method}: ${err.message}`, { code: err.code, executionId: err.executionId });
      }
    },

    dashboard: async (params) => {
      const p = parse(DashboardRequest.method, Schemas.dashboard, params) ?? {};
      const rt = owner(DashboardRequest.method, deps);
      const { engine } = rt;
      const rec = p.executionId ? engine.executions.get(p.executionId) : (engine.executions.list({ kind: 'workflow', limit: 1 })[0] ?? engine.executions.list({ limit: 1 })[0]);
      // Each refresh verifies only the records appended since the last verification (the verified prefix);
      // a full verification runs at start-up, in govern-ai's audit and in `cadre audit verify`.
      const [records, verified] = await Promise.all([rec ? rt.audit.query({ executionId: rec.id }) : Promise.resolve([]), rt.audit.verifyNew()]);
      return {
        execution: rec ? executionRow(engine, rec) : null,
        audit: { records: records.map(auditRow), verified: verification(verified) },
        schedule: weekGrid(engine.fleet.schedule(engine.clock.now(), engine.config.defaults.intelligence)),
        agents: await agentQuality(engine),
      };
    },

    createApiKey: async (params) => {
      parse(CreateApiKeyRequest.method, Empty, params);
      // The editor's user owns this install (the language server's pipe is theirs): their key is an admin key.
      const created = await owner(CreateApiKeyRequest.method, deps).keys.create('vscode', 'enterprise', 'admin');
      return { key: created.key, id: created.record.id };
    },

    folders: async (params) => {
      parse(FoldersRequest.method, Empty, params);
      return { folders: deps.folders.list() };
    },
  };
}

/** The person at the editor, as the audit trail names them: `editor:<OS user>`. */
function editorActor(): string {
  try {
    return `editor:${userInfo().username || process.env['USER'] || 'unknown'}`;
  } catch {
    return `editor:${process.env['USER'] ?? process.env['USERNAME'] ?? 'unknown'}`;
  }
}
