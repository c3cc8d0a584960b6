/**
 * Cadre's MCP server (the official SDK's McpServer): tools that call the engine directly, as the
 * REST routes do, and resources for an execution's report and SARIF. One McpServer is built per
 * HTTP request for the authenticated caller (stateless Streamable HTTP, see mcp-route.ts), so every
 * tool knows who calls without a session table.
 *
 * A tool that fails (bad input the schema could not catch, an engine refusal, a forbidden approval)
 * answers an MCP error result (`isError: true`) with a sentence for the model; it never throws into
 * the transport.
 */
import { tenantOf } from '../engine/tenants/tenant-id';
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ApiKeyRecord, ApiKeys } from '../auth/api-keys';
import { roleAtLeast, roleOf } from '../auth/roles';
import { findAgent, findWorkflow, VERBS, WORKFLOWS } from '../engine/catalog/index';
import { CAPABILITIES, INTELLIGENCE_TIERS } from '../engine/catalog/enums';
import { TASK_VERBS } from '../engine/catalog/verbs';
import { EngineError } from '../engine/errors';
import type { Engine } from '../engine/index';
import type { Principal } from '../engine/executions/execution-service';
import type { ExecutionRecord } from '../engine/executions/records';
import type { AttachmentStore } from '../engine/ports';
import { ReadinessError, runReadiness, StillRunningError, waitForEnd } from '../host/readiness';
import { decideApprovalAsKey } from '../http/approval-decision';
import { toProblem } from '../http/problem';
import { markdownReport, reportUri, sarifLog, sarifUri, summarize, summaryText } from './execution-result';
import { forwardProgress } from './progress';

export interface McpDeps {
  engine: Engine;
  keys: Pick<ApiKeys, 'verify' | 'activeCount'>;
  /** Where large step outputs live (the report and SARIF read them back). */
  attachments?: AttachmentStore;
  /** The server's workspace (--workspace, the editor's folder): the folder of calls that name no path. */
  defaultWorkspace(): string | undefined;
  version: string;
  log(line: string): void;
  /** Default wait of the run tools before they answer "still running" (tests shorten it). */
  defaultWaitSeconds?: number;
}

/** Who calls: the authenticated key (null in the documented unauthenticated mode), as the audit trail names it. */
export interface McpCaller {
  key: ApiKeyRecord | null;
  /** `key:<id>/mcp`, or `mcp:anonymous` without a key. */
  actor: string;
}

const DEFAULT_WAIT_S = 600;
const MAX_WAIT_S = 3600;
const RECENT_RESOURCES = 20;

type ToolExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number } | undefined;
  sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total?: number; message?: string } }) => Promise<void>;
};

/** A tool error as the model reads it: the engine's or the door's sentence, with its code. */
export class ToolRefusal extends Error {}

function errorResult(err: unknown, log: (line: string) => void): CallToolResult {
  let text: string;
  if (err instanceof ToolRefusal || err instanceof ReadinessError) text = err.message;
  else {
    const p = toProblem(err, log);
    text = p.status >= 500 && !(err instanceof EngineError) ? `internal error: ${(err as Error)?.message ?? String(err)}` : `${p.code ?? p.title}: ${p.detail}`;
  }
  return { isError: true, content: [{ type: 'text', text }] };
}

/** The folder an execution works in and the files it names, from a tool's `path` and `files`. */
export function resolveTarget(given: string | undefined, files: readonly string[] | undefined, fallback: string | undefined): { source: string; files: string[] } {
  const base = fallback ? path.resolve(fallback) : undefined;
  if (!given && !base) throw new ToolRefusal('no path given and the server has no workspace folder: pass `path` (a folder or a file on this machine)');
  const abs = given ? path.resolve(base ?? process.cwd(), given) : base!;
  if (!existsSync(abs)) throw new ToolRefusal(`path ${abs} does not exist on this machine`);
  let source = abs;
  const named: string[] = [];
  if (!statSync(abs).isDirectory()) {
    // A file: its project is the server's workspace when the file lies in it, else its repository, else its folder.
    source = base && isInside(abs, base) ? base : (repositoryOf(abs) ?? path.dirname(abs));
    named.push(abs);
  }
  for (const f of files ?? []) named.push(path.resolve(source, f));
  const rel = named.map((f) => {
    if (!isInside(f, source)) throw new ToolRefusal(`file ${f} lies outside the folder ${source}`);
    return path.relative(source, f).split(path.sep).join('/');
  });
  return { source, files: [...new Set(rel)] };
}

function isInside(file: string, dir: string): boolean {
  const r = path.relative(dir, file);
  return r !== '' && !r.startsWith('..') && !path.isAbsolute(r);
}

function repositoryOf(file: string): string | null {
  for (let d = path.dirname(file); ; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return d;
    if (path.dirname(d) === d) return null;
  }
}

const waitFields = {
  wait: z.boolean().default(true).describe('Wait for the execution to end (with progress notifications) before answering; false answers at once with its id'),
  timeoutSeconds: z.number().int().min(1).max(MAX_WAIT_S).optional().describe(`How long to wait before answering "still running" (default ${DEFAULT_WAIT_S} s); the execution goes on either way`),
};
const pathField = z.string().min(1).max(4096).optional().describe("A folder or a file on this machine (absolute, or relative to the server's workspace); default the server's workspace folder");

export function buildMcpServer(deps: McpDeps, caller: McpCaller): McpServer {
  const { engine, log } = deps;
  const ex = engine.executions;
  // The caller's tenant bounds everything the tools see and create (no key: the loopback-only mode, the default tenant).
  const tenantId = tenantOf(caller.key);
  const who: Principal = caller.key ? { keyId: caller.key.id, tenantId, callbackSecret: caller.key.hash } : { keyId: null, tenantId, callbackSecret: null };
  const server = new McpServer(
    { name: 'cadre', title: 'Cadre agents', version: deps.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: 'Cadre runs 25 AI agents through the RIGOR pipeline (Research, Inspect, Generate, Optimize, Review) under ACMF autonomy modes. ' +
        'Use cadre_run_task with a verb (review, security, test, ...) on a path for the common jobs; findings come back with file:line:column. ' +
        'Actions ACMF does not let an agent take alone wait for an approval (cadre_list_approvals, cadre_decide_approval).',
    },
  );

  /** Runs a tool body; every failure becomes an MCP error result. */
  const guard = <A>(fn: (args: A, extra: ToolExtra) => Promise<CallToolResult>) => async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
    try {
      return await fn(args, extra);
    } catch (err) {
      return errorResult(err, log);
    }
  };

  /** The answer of a run tool: waits (forwarding progress) unless told not to, then the execution's summary. */
  const answer = async (rec: ExecutionRecord, args: { wait: boolean; timeoutSeconds?: number | undefined }, extra: ToolExtra): Promise<CallToolResult> => {
    if (args.wait) {
      const token = extra._meta?.progressToken;
      const stop = token !== undefined
        ? forwardProgress(engine, rec.id, token, (p) => extra.sendNotification({ method: 'notifications/progress', params: p }), log)
        : async () => {};
      try {
        rec = await waitForEnd(engine, rec.id, (args.timeoutSeconds ?? deps.defaultWaitSeconds ?? DEFAULT_WAIT_S) * 1000, extra.signal);
      } catch (err) {
        if (!(err instanceof StillRunningError)) throw err;
        rec = ex.get(rec.id);
      } finally {
        // The progress already queued (the end included) goes out before the result; nothing after it.
        await stop();
      }
    }
    return executionResult(rec);
  };

  const executionResult = async (rec: ExecutionRecord): Promise<CallToolResult> => {
    const s = await summarize(engine, rec, deps.attachments);
    const running = !['completed', 'failed', 'cancelled'].includes(s.status);
    const text = summaryText(s) + (running ? `\n\nStill ${s.status}: call cadre_get_execution with executionId ${s.executionId} for its result.` : '');
    return {
      content: [
        { type: 'text', text },
        { type: 'resource_link', uri: s.resources.report, name: `report of ${s.executionId}`, mimeType: 'text/markdown' },
        { type: 'resource_link', uri: s.resources.sarif, name: `SARIF of ${s.executionId}`, mimeType: 'application/sarif+json' },
      ],
      structuredContent: s as unknown as Record<string, unknown>,
    };
  };

  server.registerTool('cadre_run_task', {
    title: 'Run a Cadre task verb',
    description: 'Runs the agents of a task verb on a folder or files: review (review-ai; security-ai too at ULTRA), security (security-ai scan, threathunter-ai), ' +
      'test (tester-ai), debug (debug-ai; pass the error in prompt), code (the BUILD workflow), deploy, monitor, incident, maintain, capacity, backup. ' +
      'Answers with each step\'s outcome and the findings with file:line:column.',
    inputSchema: {
      verb: z.enum(TASK_VERBS).describe('The task verb'),
      prompt: z.string().trim().min(1).max(20_000).describe('What to do, in words (e.g. "review for bugs", an error message to debug)'),
      path: pathField,
      files: z.array(z.string().min(1).max(4096)).max(500).optional().describe('Files to work on (relative to path, or absolute inside it)'),
      intelligence: z.enum(INTELLIGENCE_TIERS).optional().describe('Intelligence tier (default: the configuration\'s)'),
      ...waitFields,
    },
    annotations: { title: 'Run a Cadre task verb', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  }, guard(async (args, extra) => {
    const target = resolveTarget(args.path, args.files, deps.defaultWorkspace());
    const verb = VERBS.find((v) => v.verb === args.verb)!;
    const rec = await ex.submitTask({
      task: args.prompt, verb: args.verb, capabilities: [verb.capability], source: target.source,
      ...(args.intelligence ? { intelligence: args.intelligence } : {}),
      ...(target.files.length ? { input: { files: target.files } } : {}),
    }, who);
    return answer(rec, args, extra);
  }));

  server.registerTool('cadre_run_workflow', {
    title: 'Run a Cadre workflow',
    description: `Runs a domain workflow or a cross-capability template on a folder. Workflows: ${WORKFLOWS.map((w) => w.id).join(', ')}.`,
    inputSchema: {
      workflow: z.string().trim().min(1).max(100).describe('Workflow id or alias, e.g. full-sdlc, build, secure'),
      prompt: z.string().trim().min(1).max(20_000).describe('What the workflow should achieve'),
      capability: z.enum(CAPABILITIES).optional().describe('Capability to run it under (default: the workflow\'s first)'),
      path: pathField,
      ...waitFields,
    },
    annotations: { title: 'Run a Cadre workflow', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  }, guard(async (args, extra) => {
    const wf = findWorkflow(args.workflow);
    if (!wf) throw new ToolRefusal(`unknown workflow "${args.workflow}" (one of ${WORKFLOWS.map((w) => w.id).join(', ')})`);
    const target = resolveTarget(args.path, undefined, deps.defaultWorkspace());
    const rec = await ex.invokeWorkflow({ capability: args.capability ?? wf.capabilities[0]!, workflow: wf.id, input: { prompt: args.prompt, source: target.source } }, who);
    return answer(rec, args, extra);
  }));

  server.registerTool('cadre_invoke_agent', {
    title: 'Invoke one agent action',
    description: 'Runs one action of one agent through the five RIGOR phases (e.g. security-ai scan, review-ai review, debug-ai diagnose), with the action\'s input.',
    inputSchema: {
      agentId: z.string().trim().min(1).max(100).describe('Agent id, e.g. review-ai'),
      action: z.string().trim().min(1).max(100).describe('Action name, e.g. review'),
      prompt: z.string().trim().min(1).max(20_000).optional(),
      input: z.record(z.string(), z.unknown()).optional().describe('The action\'s input (e.g. files, trace)'),
      path: pathField,
      ...waitFields,
    },
    annotations: { title: 'Invoke one agent action', readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  }, guard(async (args, extra) => {
    if (!findAgent(args.agentId)) throw new ToolRefusal(`unknown agent "${args.agentId}"`);
    const target = resolveTarget(args.path, undefined, deps.defaultWorkspace());
    const rec = await ex.runAction(args.agentId, args.action, { prompt: args.prompt ?? `${args.agentId} ${args.action}`, input: args.input ?? {}, source: target.source }, who);
    return answer(rec, args, extra);
  }));

  server.registerTool('cadre_get_execution', {
    title: 'Status and result of an execution',
    description: 'The status of a task, workflow or agent execution, each step\'s outcome and, once it has ended, its findings with their locations.',
    inputSchema: { executionId: z.string().trim().min(1).max(200) },
    annotations: { title: 'Status and result of an execution', readOnlyHint: true, openWorldHint: false },
  }, guard(async (args) => executionResult(ex.getFor(tenantId, args.executionId))));

  server.registerTool('cadre_cancel_execution', {
    title: 'Cancel an execution',
    description: 'Stops a running execution (its running agent through its abort signal).',
    inputSchema: { executionId: z.string().trim().min(1).max(200) },
    annotations: { title: 'Cancel an execution', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  }, guard(async (args) => (ex.getFor(tenantId, args.executionId), executionResult(await ex.cancel(args.executionId, caller.actor)))));

  server.registerTool('cadre_list_approvals', {
    title: 'List ACMF approvals',
    description: 'Actions the agents may not take alone under their ACMF mode, waiting for a person (pending by default).',
    inputSchema: {
      status: z.enum(['pending', 'approved', 'denied', 'expired', 'closed', 'all']).default('pending'),
      executionId: z.string().trim().min(1).max(200).optional(),
    },
    annotations: { title: 'List ACMF approvals', readOnlyHint: true, openWorldHint: false },
  }, guard(async (args) => {
    const approvals = engine.approvals.list(tenantId, { ...(args.executionId ? { executionId: args.executionId } : {}), ...(args.status !== 'all' ? { status: args.status } : {}) });
    const lines = approvals.map((a) => `- ${a.id} [${a.status}] ${a.agentId} ${a.action.kind} (${a.risk} risk) in ${a.executionId}${a.decidedBy ? `, decided by ${a.decidedBy}` : ''}`);
    return {
      content: [{ type: 'text', text: approvals.length ? `${approvals.length} approval(s):\n${lines.join('\n')}` : `No ${args.status === 'all' ? '' : `${args.status} `}approvals.` }],
      structuredContent: { approvals } as unknown as Record<string, unknown>,
    };
  }));

  server.registerTool('cadre_decide_approval', {
    title: 'Approve or deny an ACMF approval',
    description: 'Grants or denies a pending approval as the calling API key (needs the approver or admin role; the key that started an execution may not approve its own high-risk action unless self-approval is on). Recorded in the audit trail as decided through MCP.',
    inputSchema: {
      approvalId: z.string().trim().min(1).max(200),
      approved: z.boolean().describe('true grants, false denies'),
      reason: z.string().max(2000).optional(),
    },
    annotations: { title: 'Approve or deny an ACMF approval', readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  }, guard(async (args) => {
    const key = caller.key;
    if (!key) throw new ToolRefusal('deciding an approval needs an API key with the approver role: send Authorization: Bearer <key> (the unauthenticated MCP mode cannot decide)');
    if (!roleAtLeast(roleOf(key), 'approver')) {
      throw new ToolRefusal(`ERR_FORBIDDEN: deciding an approval needs a key with the approver role or higher; this key (${key.id}) has the ${roleOf(key)} role`);
    }
    const rec = await decideApprovalAsKey(engine, deps.keys.activeCount(), args.approvalId, key, caller.actor, { approved: args.approved, by: 'via MCP', reason: args.reason });
    return {
      content: [{ type: 'text', text: `Approval ${rec.id} ${rec.status} by ${rec.decidedBy ?? caller.actor} at ${rec.decidedAt ?? ''} (${rec.agentId} ${rec.action.kind}, ${rec.risk} risk).` }],
      structuredContent: rec as unknown as Record<string, unknown>,
    };
  }));

  server.registerTool('cadre_readiness', {
    title: 'Deployment readiness',
    description: 'deploy-ai checks whether a folder is ready to deploy: clean tree, branch pushed, tests, coverage, open critical findings, last review, pending approvals.',
    inputSchema: { path: pathField, timeoutSeconds: waitFields.timeoutSeconds },
    annotations: { title: 'Deployment readiness', readOnlyHint: true, openWorldHint: false },
  }, guard(async (args, extra) => {
    const target = resolveTarget(args.path, undefined, deps.defaultWorkspace());
    if (target.files.length) throw new ToolRefusal('readiness checks a folder (a repository), not a file');
    const token = extra._meta?.progressToken;
    let stop: () => Promise<void> = async () => {};
    try {
      const r = await runReadiness(engine, target.source, who, {
        timeoutMs: (args.timeoutSeconds ?? 120) * 1000, signal: extra.signal,
        started: (rec) => {
          if (token !== undefined) stop = forwardProgress(engine, rec.id, token, (p) => extra.sendNotification({ method: 'notifications/progress', params: p }), log);
        },
      });
      const lines = r.checks.map((c) => `${c.status === 'pass' ? '✔' : c.status === 'fail' ? '✘' : '·'} ${c.title}: ${c.status} (${c.evidence})${c.fix ? ` [fix: ${c.fix.title}]` : ''}`);
      return {
        content: [{ type: 'text', text: `${r.ready ? 'Ready to deploy' : 'Not ready to deploy'} (${target.source}, ${r.executionId}):\n${lines.join('\n')}` }],
        structuredContent: { ...r, workspace: target.source } as unknown as Record<string, unknown>,
      };
    } finally {
      await stop();
    }
  }));

  const recent = (kind: 'report' | 'sarif') => async () => ({
    resources: ex.list({ limit: RECENT_RESOURCES, tenantId }).map((r) => ({
      uri: kind === 'report' ? reportUri(r.id) : sarifUri(r.id),
      name: `${kind === 'report' ? 'Report' : 'SARIF'} of ${r.id}`,
      description: `${r.kind} ${r.status}: ${r.request.prompt.replace(/\s+/g, ' ').slice(0, 120)}`,
      mimeType: kind === 'report' ? 'text/markdown' : 'application/sarif+json',
    })),
  });
  const executionOf = (variables: Record<string, string | string[]>): ExecutionRecord => {
    const id = String(variables['id'] ?? '');
    const rec = ex.find(id);
    if (!rec || tenantOf(rec) !== tenantId) throw new EngineError('ERR_NOT_FOUND', `no execution ${id}`, { details: { id } });
    return rec;
  };

  server.registerResource('execution-report', new ResourceTemplate('cadre://executions/{id}/report', { list: recent('report') }), {
    title: 'Execution report', description: 'An execution\'s steps, outcomes and findings as Markdown', mimeType: 'text/markdown',
  }, async (uri, variables) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await markdownReport(engine, executionOf(variables), deps.attachments) }] }));

  server.registerResource('execution-sarif', new ResourceTemplate('cadre://executions/{id}/sarif', { list: recent('sarif') }), {
    title: 'Execution SARIF', description: 'The findings of an execution as one SARIF 2.1.0 log', mimeType: 'application/sarif+json',
  }, async (uri, variables) => ({ contents: [{ uri: uri.href, mimeType: 'application/sarif+json', text: JSON.stringify(await sarifLog(executionOf(variables), deps.attachments), null, 2) }] }));

  return server;
}
