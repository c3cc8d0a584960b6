/**
 * `POST /mcp`: the MCP Streamable HTTP endpoint on the API's own port. The HTTP door does what it
 * does for every route first (Host check against DNS rebinding, the bearer key → 401, the rate
 * limit, JSON content type, the 1 MiB body bound); this route adds the Origin check the MCP spec asks
 * for, then hands the request to the SDK's transport with a server built for the caller.
 *
 * Stateless: every POST gets its own McpServer and transport (no `Mcp-Session-Id`, nothing kept
 * between requests, nothing to leak when a client disappears). Progress of a long tool call travels
 * on that POST's own SSE response. `GET /mcp` (a standalone notification stream) and `DELETE /mcp`
 * (ending a session) have nothing to serve without sessions: the router answers 405, which the spec
 * allows and clients expect.
 *
 * Authentication: the API key (`Authorization: Bearer <key>`), as for REST. `CADRE_MCP_AUTH=none`
 * (an environment variable of the server process: a repository's .cadre.yaml cannot set it) lets
 * loopback callers in without a key; a key sent anyway is still verified and used.
 */
import type { IncomingMessage } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ApiKeyRecord } from '../auth/api-keys';
import { actorOf } from '../auth/roles';
import { HttpProblem, problemFor } from '../http/problem';
import { defineRoute, RESPONSE_SENT, type RouteDef } from '../http/route';
import { buildMcpServer, type McpCaller, type McpDeps } from './mcp-server';

export const MCP_PATH = '/mcp';

export interface McpRouteDeps extends McpDeps {
  /** Origins allowed besides the server's own (defaults.server.cors_origins). */
  corsOrigins?: readonly string[];
  /** Without a key from loopback (CADRE_MCP_AUTH=none). */
  unauthenticated?: boolean;
}

/** The setting that turns off the key check: `CADRE_MCP_AUTH=none`; anything else but `key`/unset is an error. */
export function mcpAuthMode(env: NodeJS.ProcessEnv): 'key' | 'none' {
  const v = env['CADRE_MCP_AUTH']?.trim().toLowerCase();
  if (v === undefined || v === '' || v === 'key') return 'key';
  if (v === 'none') return 'none';
  throw new Error(`CADRE_MCP_AUTH must be "key" (the default) or "none" (no key from loopback), not "${env['CADRE_MCP_AUTH']}"`);
}

const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * A browser page of another origin may not drive the agents (DNS rebinding, a malicious page on
 * localhost's neighbour port): an `Origin` header must be this server's own origin or a configured
 * CORS origin. Clients that are not browsers send none.
 */
export function originAllowed(origin: string | undefined, localPort: number | undefined, corsOrigins: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes(origin)) return true;
  return LOOPBACK_NAMES.some((h) => origin.toLowerCase() === `http://${h}:${localPort ?? 0}`);
}

export function mcpRoutes(deps: McpRouteDeps): RouteDef[] {
  const cors = deps.corsOrigins ?? [];
  const unauthenticated = deps.unauthenticated === true;
  if (unauthenticated) deps.log('MCP: CADRE_MCP_AUTH=none: /mcp answers loopback callers without an API key');
  return [
    defineRoute({
      method: 'POST', path: MCP_PATH, auth: unauthenticated ? 'none' : 'key', tenancy: 'tenant', rawBody: true, tags: ['mcp'],
      rateLimited: true,
      summary: 'MCP server (Streamable HTTP): Cadre\'s tools and resources for MCP clients',
      description: 'JSON-RPC messages of the Model Context Protocol (docs/mcp.md). Needs `Authorization: Bearer <key>` unless the server runs with CADRE_MCP_AUTH=none ' +
        '(loopback only). A request with an `Origin` other than the server\'s own or a configured CORS origin is refused (403).',
      responses: { 200: { description: 'A JSON-RPC response, or text/event-stream with progress notifications and the response' }, 202: { description: 'A notification or response was accepted' }, 403: { description: 'Cross-origin request' } },
      handler: async (ctx) => {
        const req = ctx.req;
        if (!originAllowed(req.headers.origin, req.socket.localPort, cors)) {
          throw new HttpProblem(problemFor('ERR_CROSS_ORIGIN', `origin ${String(req.headers.origin)} may not use the MCP endpoint (only this server's own origin or defaults.server.cors_origins)`));
        }
        const key = ctx.principal ?? (unauthenticated ? optionalKey(req, deps) : null);
        if (!key && unauthenticated && !LOOPBACK_ADDRESSES.has(req.socket.remoteAddress ?? '')) {
          throw new HttpProblem(problemFor('ERR_AUTH_REQUIRED', 'the MCP endpoint without a key answers loopback callers only; send Authorization: Bearer <API key>'));
        }
        const caller: McpCaller = { key, actor: key ? `${actorOf(key.id)}/mcp` : 'mcp:anonymous' };
        const body = ctx.rawBody.length ? (JSON.parse(ctx.rawBody.toString('utf8')) as unknown) : undefined;
        const server = buildMcpServer(deps, caller);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const res = ctx.res;
        res.on('close', () => {
          void transport.close().catch(() => undefined);
          void server.close().catch(() => undefined);
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return RESPONSE_SENT;
      },
    }),
  ];
}

/** In the unauthenticated mode a key may still be sent: a valid one is used, a wrong one refused. */
function optionalKey(req: IncomingMessage, deps: McpRouteDeps): ApiKeyRecord | null {
  const authz = req.headers.authorization;
  if (authz === undefined) return null;
  const key = /^bearer\s+/i.test(authz) ? deps.keys.verify(authz.replace(/^bearer\s+/i, '').trim()) : null;
  if (!key) throw new HttpProblem(problemFor('ERR_AUTH_INVALID', 'the API key is not valid (unknown or revoked)'), { 'www-authenticate': 'Bearer realm="cadre", error="invalid_token"' });
  return key;
}
