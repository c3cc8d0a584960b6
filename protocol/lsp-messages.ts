/**
 * Every custom Cadre message between the extension and its language server, declared once as a
 * typed `RequestType<P, R, E>` / `NotificationType<P>` over the method names and shapes of
 * protocol/lsp.ts. The server's handler table (server/src/lsp/requests.ts) is type-checked against
 * `ClientRequests`, and the client sends through the same declarations, so a method, a parameter
 * or a result type is spelled in one place.
 *
 * Kept apart from protocol/lsp.ts because these are runtime values from vscode-languageserver-protocol
 * (the package both vscode-languageserver and vscode-languageclient are built on, so the same class
 * is accepted on both sides): the skills and the webview import protocol/lsp.ts for its shapes and
 * must not pull the protocol library into their bundles.
 */
import { NotificationType, RequestType } from 'vscode-languageserver-protocol';
import {
  AgentsRequest, ApprovalChangedNotification, ApprovalsRequest, CancelExecutionRequest, CatalogRequest, CreateApiKeyRequest, DashboardRequest, DecideApprovalRequest, EngineEventNotification,
  ExecutionsRequest, FoldersRequest, InvokeAgentRequest, LlmCompleteRequest, ProposedChangesRequest, ReadinessRequest, RunTaskRequest, RunWorkflowRequest,
  ServerReadyNotification, ServerStatusNotification, SetAgentModeRequest,
} from './lsp';

/** The `data` of a Cadre request's error: the engine's error code, and details when it has them. */
export interface CadreErrorData {
  code: string;
  details?: unknown;
  executionId?: string;
}

const request = <P, R>(method: string) => new RequestType<P, R, CadreErrorData | undefined>(method);
const notification = <P>(method: string) => new NotificationType<P>(method);

/** Client → server requests: the server registers exactly one handler for each (test/unit/lsp/lsp-messages.test.ts). */
export const ClientRequests = {
  agents: request<AgentsRequest.Params, AgentsRequest.Result>(AgentsRequest.method),
  catalog: request<CatalogRequest.Params, CatalogRequest.Result>(CatalogRequest.method),
  executions: request<ExecutionsRequest.Params | null, ExecutionsRequest.Result>(ExecutionsRequest.method),
  changes: request<ProposedChangesRequest.Params, ProposedChangesRequest.Result>(ProposedChangesRequest.method),
  approvals: request<ApprovalsRequest.Params, ApprovalsRequest.Result>(ApprovalsRequest.method),
  decideApproval: request<DecideApprovalRequest.Params, DecideApprovalRequest.Result>(DecideApprovalRequest.method),
  setAgentMode: request<SetAgentModeRequest.Params, SetAgentModeRequest.Result>(SetAgentModeRequest.method),
  runTask: request<RunTaskRequest.Params, RunTaskRequest.Result>(RunTaskRequest.method),
  runWorkflow: request<RunWorkflowRequest.Params, RunWorkflowRequest.Result>(RunWorkflowRequest.method),
  invokeAgent: request<InvokeAgentRequest.Params, InvokeAgentRequest.Result>(InvokeAgentRequest.method),
  cancel: request<CancelExecutionRequest.Params, CancelExecutionRequest.Result>(CancelExecutionRequest.method),
  readiness: request<ReadinessRequest.Params, ReadinessRequest.Result>(ReadinessRequest.method),
  dashboard: request<DashboardRequest.Params | null, DashboardRequest.Result>(DashboardRequest.method),
  createApiKey: request<CreateApiKeyRequest.Params, CreateApiKeyRequest.Result>(CreateApiKeyRequest.method),
  folders: request<FoldersRequest.Params, FoldersRequest.Result>(FoldersRequest.method),
} as const;

/** Server → client requests: the extension answers each. */
export const ServerRequests = {
  llmComplete: request<LlmCompleteRequest.Params, LlmCompleteRequest.Result>(LlmCompleteRequest.method),
} as const;

/** Server → client notifications. */
export const ServerNotifications = {
  ready: notification<ServerReadyNotification.Params>(ServerReadyNotification.method),
  status: notification<ServerStatusNotification.Params>(ServerStatusNotification.method),
  event: notification<EngineEventNotification.Params>(EngineEventNotification.method),
  approvalChanged: notification<ApprovalChangedNotification.Params>(ApprovalChangedNotification.method),
} as const;

export type ClientRequestName = keyof typeof ClientRequests;
/** The params and result of a declared request. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- inference positions only
export type ParamsOf<T> = T extends RequestType<infer P, any, any> ? P : never;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- inference positions only
export type ResultOf<T> = T extends RequestType<any, infer R, any> ? R : never;

/**
 * The server's handler table: one handler per declared client request, with the declared params and
 * result. A handler for an undeclared name, a missing one, or one with another params or result type
 * does not compile.
 */
export type ClientRequestHandlers = {
  [K in ClientRequestName]: (params: ParamsOf<(typeof ClientRequests)[K]>) => Promise<ResultOf<(typeof ClientRequests)[K]>>;
};
