/**
 * The MCP server the extension started, offered to VS Code's agent mode with no configuration
 * (`vscode.lm.registerMcpServerDefinitionProvider`, VS Code 1.101+), and an MCP client to it for the
 * extension's own language-model tools (lm-tools.ts), so both reach the agents through the same
 * tools and answers (docs/mcp.md).
 *
 * The definition carries the server's URL (`<api>/mcp`, known once the server is ready; a restart
 * on another port fires a change) and, when VS Code starts it, the extension's API key as an
 * `Authorization` header. The key is the one kept in SecretStorage; a key the server no longer
 * knows (another data directory) is replaced by a new one the server creates over LSP.
 *
 * VS Code before 1.101 has neither `registerMcpServerDefinitionProvider` nor
 * `McpHttpServerDefinition`: the provider is then not registered (one line in the output says so
 * and points at `cadre mcp`), everything else works.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as vscode from 'vscode';
import { ClientRequests } from '../../protocol/lsp-messages';
import { API_KEY_SECRET } from './commands';
import type { ServerHost } from './server-host';

/** The id of `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'cadre.mcpServer';
/** How long the first listing waits for the server (its start takes a few seconds; a crash loop longer). */
const PROVIDE_WAIT_MS = 60_000;

/** The 1.101 API, declared here because the extension builds against @types/vscode 1.100. */
interface McpHttpServerDefinitionLike {
  readonly label: string;
  uri: vscode.Uri;
  headers: Record<string, string>;
  version?: string;
}
interface McpServerDefinitionProviderLike {
  readonly onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  readonly onDidChange?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpHttpServerDefinitionLike[]>;
  resolveMcpServerDefinition?(server: McpHttpServerDefinitionLike, token: vscode.CancellationToken): vscode.ProviderResult<McpHttpServerDefinitionLike>;
}
type McpApi = {
  register(id: string, provider: McpServerDefinitionProviderLike): vscode.Disposable;
  Definition: new (label: string, uri: vscode.Uri, headers?: Record<string, string>, version?: string) => McpHttpServerDefinitionLike;
};

/** The editor's MCP API when it has one (VS Code 1.101+), else null. */
export function mcpApi(v: typeof vscode = vscode): McpApi | null {
  const lm = v.lm as unknown as { registerMcpServerDefinitionProvider?: McpApi['register'] };
  const Definition = (v as unknown as { McpHttpServerDefinition?: McpApi['Definition'] }).McpHttpServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') return null;
  return { register: (id, p) => lm.registerMcpServerDefinitionProvider!.call(v.lm, id, p), Definition };
}

/** The MCP endpoint of the running server, or null while it is not ready. */
export function mcpUrl(host: ServerHost): string | null {
  return host.state.kind === 'ready' ? `${host.state.info.url.replace(/\/+$/, '')}/mcp` : null;
}

/**
 * An API key the running server accepts: the stored one when the server knows it (checked with a
 * cheap authenticated GET), else a new admin key created over LSP (the editor's user owns this
 * install) and stored. A server attached to another process cannot create one: the stored key is
 * then the only candidate and its refusal is reported.
 */
export async function ensureApiKey(context: vscode.ExtensionContext, host: ServerHost): Promise<string> {
  if (host.state.kind !== 'ready') throw new Error('the Cadre server is not ready yet');
  const base = host.state.info.url.replace(/\/+$/, '');
  const stored = await context.secrets.get(API_KEY_SECRET);
  if (stored) {
    const res = await fetch(`${base}/v1/approvals?limit=1`, { headers: { authorization: `Bearer ${stored}` } });
    await res.body?.cancel();
    if (res.status !== 401) return stored;
  }
  if (host.state.info.attached) {
    throw new Error(`the server at ${base} belongs to another Cadre process (pid ${host.state.info.ownerPid}) and does not accept this editor's key: copy a key of that process into "Cadre: Copy API Key"'s secret or restart the server`);
  }
  const created = await host.request(ClientRequests.createApiKey, {});
  await context.secrets.store(API_KEY_SECRET, created.key);
  return created.key;
}

/** Registers the provider when the editor has the API; returns what to dispose. */
export function registerMcpProvider(context: vscode.ExtensionContext, host: ServerHost, output: vscode.LogOutputChannel, api: McpApi | null = mcpApi()): vscode.Disposable {
  if (!api) {
    output.info('This VS Code has no MCP server API (1.101+): agent mode does not list Cadre by itself; "cadre mcp" prints the configuration to add it (docs/mcp.md)');
    return new vscode.Disposable(() => {});
  }
  const changed = new vscode.EventEmitter<void>();
  let lastUrl: string | null = null;
  const stateSub = host.onDidChangeState(() => {
    const url = mcpUrl(host);
    if (url !== lastUrl) {
      lastUrl = url;
      changed.fire();
    }
  });
  const registration = api.register(MCP_PROVIDER_ID, {
    onDidChangeMcpServerDefinitions: changed.event,
    // VS Code 1.100 (the proposed form of this API) listens on `onDidChange` instead.
    onDidChange: changed.event,
    // Asked at registration, usually before the server is ready: the answer waits for it (its URL),
    // since an editor that does not follow the change event would otherwise never ask again.
    provideMcpServerDefinitions: async () => {
      if (host.state.kind !== 'ready') await Promise.race([host.whenReady().catch(() => undefined), new Promise((r) => setTimeout(r, PROVIDE_WAIT_MS))]);
      const url = mcpUrl(host);
      if (!url || host.state.kind !== 'ready') return [];
      return [new api.Definition('Cadre', vscode.Uri.parse(url), {}, host.state.info.version)];
    },
    // Called when VS Code starts the server: the key is looked up (or created) only then.
    resolveMcpServerDefinition: async (server) => {
      const key = await ensureApiKey(context, host);
      server.headers = { ...server.headers, Authorization: `Bearer ${key}` };
      return server;
    },
  });
  return vscode.Disposable.from(registration, stateSub, changed);
}

/**
 * Calls one tool of the server's MCP endpoint as this editor (its key): the language-model tools'
 * way to the agents. The connection lives for the call (the server is stateless).
 */
export async function callCadreTool(
  context: vscode.ExtensionContext, host: ServerHost, name: string, args: Record<string, unknown>, token?: vscode.CancellationToken,
): Promise<{ isError: boolean; text: string; structured: Record<string, unknown> | undefined }> {
  const url = mcpUrl(host);
  if (!url) throw new Error('the Cadre server is not ready yet');
  const key = await ensureApiKey(context, host);
  const client = new Client({ name: 'cadre-vscode', version: host.state.kind === 'ready' ? host.state.info.version : '0' });
  const abort = new AbortController();
  const sub = token?.onCancellationRequested(() => abort.abort());
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    // Agents can take minutes: progress keeps the request alive, the tool's own wait bounds it.
    const r = await client.callTool({ name, arguments: args }, undefined, { signal: abort.signal, timeout: 15 * 60_000, resetTimeoutOnProgress: true, onprogress: () => {} });
    const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
    return {
      isError: r.isError === true,
      text: content.filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n'),
      structured: r.structuredContent as Record<string, unknown> | undefined,
    };
  } finally {
    sub?.dispose();
    await client.close().catch(() => undefined);
  }
}
