/**
 * The HTTP door: a thin adapter over the engine. Routes translate requests to engine calls and
 * results to JSON; errors leave as problem+json.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { problem, sendJson, sendProblem, toProblem } from './problem';

export interface HealthReport {
  status: 'ok' | 'degraded';
  service: 'cadre';
  version: string;
  pid: number;
  uptime_s: number;
  components: Record<string, { status: 'ok' | 'degraded'; detail?: string }>;
}

export interface HttpDeps {
  health(): HealthReport;
  log(line: string): void;
}

type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => void | Promise<void>;

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: Handler;
}

/** Path router with `{param}` segments; answers 404 and 405 (with Allow) itself. */
export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, pattern, segments: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  list(): Array<{ method: string; path: string }> {
    return this.routes.map((r) => ({ method: r.method, path: r.pattern }));
  }

  resolve(method: string, path: string): { handler: Handler; params: Record<string, string> } | { allow: string[] } | null {
    const parts = path.split('/').filter(Boolean);
    const allow: string[] = [];
    for (const r of this.routes) {
      const params = match(r.segments, parts);
      if (!params) continue;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET')) return { handler: r.handler, params };
      allow.push(r.method);
    }
    return allow.length > 0 ? { allow } : null;
  }
}

function match(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p.startsWith('{') && p.endsWith('}')) {
      try {
        params[p.slice(1, -1)] = decodeURIComponent(parts[i]!);
      } catch {
        return null;
      }
    } else if (p !== parts[i]) return null;
  }
  return params;
}

export function buildRouter(deps: HttpDeps): Router {
  const router = new Router();
  router.add('GET', '/v1/health', (_req, res) => {
    const h = deps.health();
    sendJson(res, h.status === 'ok' ? 200 : 503, h);
  });
  return router;
}

export function createHttpServer(deps: HttpDeps): Server {
  const router = buildRouter(deps);
  const server = createServer((req, res) => {
    void dispatch(router, req, res, deps);
  });
  server.keepAliveTimeout = 5_000;
  return server;
}

async function dispatch(router: Router, req: IncomingMessage, res: ServerResponse, deps: HttpDeps): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  try {
    const found = router.resolve(req.method ?? 'GET', url.pathname);
    if (!found) return sendProblem(res, problem(404, 'ERR_ROUTE_NOT_FOUND', 'Not Found', `no route for ${req.method} ${url.pathname}`, { instance: url.pathname }));
    if ('allow' in found) return sendProblem(res, problem(405, 'ERR_METHOD_NOT_ALLOWED', 'Method Not Allowed', `${req.method} is not allowed on ${url.pathname}`, { instance: url.pathname }), { allow: found.allow.join(', ') });
    await found.handler(req, res, found.params);
  } catch (err) {
    if (!res.headersSent) sendProblem(res, { ...toProblem(err, deps.log), instance: url.pathname });
    else res.destroy();
  }
}
