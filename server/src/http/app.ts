/**
 * The HTTP door: a thin adapter over the engine. Routes are data (`defineRoute`); the app checks
 * every request in a fixed order, then hands the handler typed input:
 *
 *   Host (403) → CORS preflight → route (404 / 405 + Allow) → credentials (401, 403) → rate limit
 *   (429) → Content-Type (415) → body size (413) → JSON (400) → params / query / body schemas (400)
 *   → handler → JSON response, or the handler streams (SSE).
 *
 * Every error leaves as application/problem+json (problem.ts); never a stack, never a 500 for input.
 * The composition root passes the routes: `createHttpServer(deps, [...sessionRoutes(..), ...])`;
 * `/v1/health`, `/v1/info` and `/v1/openapi.json` are built in, since they describe the router.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ApiKeyRecord, ApiKeys, ApiPlan } from '../auth/api-keys';
import { actorOf, roleAtLeast, roleOf } from '../auth/roles';
import { DEFAULT_TENANT_ID, tenantOf } from '../engine/tenants/tenant-id';
import { SESSION_COOKIE, type Sessions } from '../auth/sessions';
import type { Clock } from '../engine/ports';
import { readCookie } from './cookies';
import { buildOpenApi, type AgentActionDoc } from './openapi';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_S, OriginPolicy, type OriginPolicyConfig } from './origin-policy';
import { IDEMPOTENCY_HEADER, idempotencyKeyProblem, type IdempotencyStore, keepHeaders, REPLAYED_HEADER, requestHash, type StoredAnswer } from './idempotency';
import { type HeaderMap, HttpProblem, isHttpProblem, problemFor, retryAfterOf, sendProblem, toProblem } from './problem';
import { type PlanLimit, RateLimiter } from './rate-limit';
import { checkJsonContentType, DEFAULT_MAX_BODY_BYTES, discardRest, hasBody, parseJson, readBody } from './request-body';
import { type Credential, ResponseSent, type RawQuery, type RouteDef, pathParamNames } from './route';
import { Router } from './router';
import { systemRoutes } from './routes/system';
import { type FieldErrors, oversizedEntry, parseInto, validationProblem } from './validation';

export interface HealthReport {
  status: 'ok' | 'degraded';
  service: 'cadre';
  version: string;
  pid: number;
  uptime_s: number;
  components: Record<string, { status: 'ok' | 'degraded'; detail?: string }>;
  /** Filled in by the /v1/health route (rss, heap) from what the host reports (its agent workers). */
  memory?: { rss_bytes: number; heap_used_bytes: number; worker_threads: number; warm_agents: number };
}

export interface HttpDeps {
  /** Server version (in /v1/info and the OpenAPI document). */
  version: string;
  /** The direct actions with a skill and their input/result schemas, documented one path each in the OpenAPI document. */
  agentActions?: readonly AgentActionDoc[];
  health(): HealthReport;
  log(line: string): void;
  /** Bearer-key verification. */
  keys: Pick<ApiKeys, 'verify'>;
  /** Session-cookie verification. */
  sessions: Pick<Sessions, 'verify'>;
  /** `defaults.server` of the configuration: allowed Host names and CORS origins. */
  server?: { allowed_hosts?: readonly string[]; cors_origins?: readonly string[] };
  /** Drives the rate limiter (tests). */
  clock?: Clock;
  /** Replaces the contract's plan limits (tests, benchmarks). */
  plans?: Readonly<Record<ApiPlan, PlanLimit>>;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Validate every JSON response against its declared schema (tests; a mismatch is a 500). */
  checkResponses?: boolean;
  /** Answers kept for `Idempotency-Key` (routes marked `idempotent`); without it the header is ignored. */
  idempotency?: IdempotencyStore;
  /**
   * Proof that this process owns the data directory's lock: `GET /v1/health` with
   * `X-Cadre-Lock-Nonce: <nonce>` answers `X-Cadre-Lock-Proof: <HMAC(token, nonce)>` (owner-lock.ts).
   */
  lockProof?(nonce: string): string | null;
}

interface CompiledRoute {
  def: RouteDef;
  authed: boolean;
  limited: boolean;
}

const KEY_CREDENTIAL: Credential = Object.freeze({ kind: 'key' });
const EMPTY_QUERY: RawQuery = Object.freeze(Object.create(null) as RawQuery);
const WWW_AUTH = 'Bearer realm="cadre"';
const WWW_AUTH_INVALID = 'Bearer realm="cadre", error="invalid_token"';

function rawQueryOf(qs: string): RawQuery {
  if (qs === '') return EMPTY_QUERY;
  const out = Object.create(null) as RawQuery;
  for (const [k, v] of new URLSearchParams(qs)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export class HttpApp {
  readonly routes: readonly RouteDef[];
  private readonly router = new Router<CompiledRoute>();
  private readonly policy: OriginPolicy;
  private readonly limiter: RateLimiter;
  private readonly maxBody: number;
  private openapiCache: Record<string, unknown> | null = null;
  private readonly expectsContinue = new WeakSet<IncomingMessage>();

  constructor(private readonly deps: HttpDeps, routes: readonly RouteDef[] = []) {
    const policyConfig: OriginPolicyConfig = { allowedHosts: deps.server?.allowed_hosts ?? [], corsOrigins: deps.server?.cors_origins ?? [] };
    this.policy = new OriginPolicy(policyConfig);
    this.limiter = new RateLimiter({ ...(deps.plans ? { plans: deps.plans } : {}), ...(deps.clock ? { clock: deps.clock } : {}) });
    this.maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.routes = [...systemRoutes(this, deps), ...routes];
    for (const def of this.routes) {
      checkRoute(def);
      const authed = def.auth !== 'none';
      this.router.add(def.method, def.path, { def, authed, limited: def.rateLimited ?? authed });
    }
  }

  /** The request listener. Synchronous until something really waits (a body, an async handler). */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    try {
      this.dispatch(req, res);
    } catch (err) {
      this.fail(req, res, err, {}, req.url ?? '/');
    }
  };

  /**
   * Listener for `Expect: 100-continue` requests ('checkContinue'): `100 Continue` is sent only when
   * the body is about to be read, so a refused request (401, 413 by Content-Length, ...) is never uploaded.
   */
  readonly handleContinue = (req: IncomingMessage, res: ServerResponse): void => {
    this.expectsContinue.add(req);
    this.handle(req, res);
  };

  /** Endpoints as listed by /v1/info, from the router itself. */
  endpoints(): Array<{ method: RouteDef['method']; path: string; auth: RouteDef['auth']; summary: string }> {
    return this.router.list().map(({ value: { def } }) => ({ method: def.method, path: def.path, auth: def.auth, summary: def.summary }));
  }

  openapi(): Record<string, unknown> {
    return (this.openapiCache ??= buildOpenApi(this.routes, {
      ...(this.deps.agentActions ? { actions: this.deps.agentActions } : {}),
      title: 'Cadre API',
      version: this.deps.version,
      description: 'The local REST API of Cadre (agent orchestration). Every endpoint but /v1/health needs `Authorization: Bearer <key>`. ' +
        'Requests whose Host header is not a loopback name or a configured host are refused with 403. Errors are application/problem+json (RFC 9457).',
    }));
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    let path: string;
    let qs: string;
    if (url.charCodeAt(0) === 47 /* / */) {
      const q = url.indexOf('?');
      path = q < 0 ? url : url.slice(0, q);
      qs = q < 0 ? '' : url.slice(q + 1);
    } else {
      // absolute-form (`GET http://host/path`) or garbage
      try {
        const u = new URL(url);
        path = u.pathname;
        qs = u.search.slice(1);
      } catch {
        path = url;
        qs = '';
      }
    }
    const method = req.method ?? 'GET';
    const headers: HeaderMap = {};

    if (!this.policy.allowsHost(req.headers.host, req.socket.localPort)) {
      return this.fail(req, res, new HttpProblem(problemFor('ERR_HOST_NOT_ALLOWED',
        `Host "${String(req.headers.host ?? '')}" is not a loopback name or a configured host (defaults.server.allowed_hosts)`)), headers, path);
    }
    const cors = this.policy.corsOrigin(req.headers.origin);
    if (cors) {
      headers['access-control-allow-origin'] = cors;
      headers['access-control-expose-headers'] = CORS_EXPOSED_HEADERS;
    }
    if (this.policy.corsEnabled) headers['vary'] = 'Origin';
    if (method === 'OPTIONS') return this.options(req, res, path, cors, headers);

    const match = this.router.find(method, path);
    if (match.kind === 'not-found') {
      return this.fail(req, res, new HttpProblem(problemFor('ERR_ROUTE_NOT_FOUND', `no route for ${method} ${path}`)), headers, path);
    }
    if (match.kind === 'method-not-allowed') {
      return this.fail(req, res, new HttpProblem(problemFor('ERR_METHOD_NOT_ALLOWED', `${method} is not allowed on ${path} (allowed: ${match.allow.join(', ')})`), { allow: match.allow.join(', ') }), headers, path);
    }
    const route = match.value;
    const def = route.def;
    const ctx = new Context(method, path, match.params, qs, req, res, headers, this.deps.log);
    try {
      if (route.authed) {
        const who = this.authenticate(req, def, cors);
        ctx.principal = who.principal;
        ctx.credential = who.credential;
        if (def.role && !roleAtLeast(roleOf(who.principal), def.role)) {
          throw new HttpProblem(problemFor('ERR_FORBIDDEN',
            `${method} ${def.path} needs a key with the ${def.role} role${def.role === 'admin' ? '' : ' or higher'}; this key (${who.principal.id}) has the ${roleOf(who.principal)} role`,
            { requiredRole: def.role, role: roleOf(who.principal) }));
        }
        // The install's own state is administered from the default tenant only.
        if (def.tenancy === 'install' && tenantOf(who.principal) !== DEFAULT_TENANT_ID) {
          throw new HttpProblem(problemFor('ERR_FORBIDDEN',
            `${method} ${def.path} administers the install: it needs a key of the install's default tenant; this key (${who.principal.id}) belongs to tenant ${tenantOf(who.principal)}`,
            { reason: 'install_only' }));
        }
        if (route.limited) {
          const d = this.limiter.take(who.principal.id, who.principal.plan);
          headers['x-ratelimit-limit'] = String(d.limit);
          headers['x-ratelimit-remaining'] = String(d.remaining);
          headers['x-ratelimit-reset'] = String(d.resetS);
          if (!d.allowed) {
            throw new HttpProblem(problemFor('ERR_RATE_LIMITED',
              `the ${who.principal.plan} plan allows ${d.limit} requests per ${d.window}; retry in ${d.resetS} s`), { 'retry-after': String(d.resetS) });
          }
        }
      }
      if (!hasBody(req)) return this.invoke(def, ctx, undefined);
      checkJsonContentType(req);
      if (this.expectsContinue.has(req) && !(Number(req.headers['content-length']) > this.maxBody)) res.writeContinue();
      readBody(req, this.maxBody).then(
        (buf) => {
          if (def.rawBody) ctx.rawBody = buf;
          return this.invoke(def, ctx, parseJson(buf));
        },
        (err: unknown) => this.fail(req, res, err, headers, path),
      ).catch((err: unknown) => this.fail(req, res, err, headers, path));
    } catch (err) {
      this.fail(req, res, err, headers, path);
    }
  }

  /** Validates the input with the route's schemas, runs the handler and sends its result. */
  private invoke(def: RouteDef, ctx: Context, raw: unknown): void {
    try {
      const errors: FieldErrors = [];
      if (def.params) ctx.params = parseInto(def.params, ctx.params, 'params', errors);
      ctx.query = def.query ? parseInto(def.query, rawQueryOf(ctx.qs), 'query', errors) : rawQueryOf(ctx.qs);
      if (def.body) {
        const oversized = oversizedEntry(raw, 'body');
        if (oversized) throw new HttpProblem(validationProblem([oversized]));
        ctx.body = parseInto(def.body, raw, 'body', errors);
      }
      if (errors.length > 0) throw new HttpProblem(validationProblem(errors));
      if (def.idempotent && this.deps.idempotency && ctx.principal) {
        const key = ctx.req.headers[IDEMPOTENCY_HEADER];
        if (typeof key === 'string') return this.invokeIdempotent(def, ctx, raw, key, this.deps.idempotency);
      }
      const returned = def.handler(ctx as never) as unknown;
      if (returned instanceof Promise) {
        returned.then((r: unknown) => this.respond(def, ctx, r)).catch((err: unknown) => this.fail(ctx.req, ctx.response, err, ctx.headers, ctx.path));
        return;
      }
      this.respond(def, ctx, returned);
    } catch (err) {
      this.fail(ctx.req, ctx.response, err, ctx.headers, ctx.path);
    }
  }

  /**
   * The handler under an `Idempotency-Key` (idempotency.ts): a replay answers the kept result, a
   * new key runs the handler and keeps its answer (not a 5xx) before sending it.
   */
  private invokeIdempotent(def: RouteDef, ctx: Context, raw: unknown, key: string, store: IdempotencyStore): void {
    const bad = idempotencyKeyProblem(key);
    if (bad) {
      throw new HttpProblem(validationProblem([{ field: 'headers.idempotency-key', message: bad }]));
    }
    const principal = ctx.principal!;
    const fail = (err: unknown) => this.fail(ctx.req, ctx.response, err, ctx.headers, ctx.path);
    const run = async (): Promise<void> => {
      const outcome = await store.begin(principal.id, key, ctx.method, ctx.path, requestHash(ctx.method, ctx.path, raw));
      if (outcome.kind === 'in_progress') {
        throw new HttpProblem(problemFor('ERR_IDEMPOTENCY_IN_PROGRESS', `a request with Idempotency-Key "${key}" is still running; retry when it has answered`), { 'retry-after': '1' });
      }
      if (outcome.kind === 'mismatch') {
        throw new HttpProblem(problemFor('ERR_IDEMPOTENCY_KEY_REUSED',
          `Idempotency-Key "${key}" was used for another request (${outcome.record.method} ${outcome.record.path} with another body) within 24 h; use a new key for a new request`));
      }
      if (outcome.kind === 'replay') return this.replay(ctx, outcome.answer);
      ctx.idempotencyId = outcome.id;
      // A claim a crashed process left in flight: what its handler created durably is the answer.
      const recovered = outcome.abandoned && def.recover ? await def.recover(ctx as never, outcome.id) : undefined;
      if (recovered) {
        const r = recovered as { status: number; body?: unknown; headers?: Record<string, unknown> };
        const body = def.idempotent && typeof def.idempotent === 'object' ? def.idempotent.redact(r.body) : r.body;
        const answer = { status: r.status, body, problem: false, headers: keepHeaders(r.headers) };
        await store.finish(outcome.id, answer);
        return this.replay(ctx, answer);
      }
      let result: unknown;
      try {
        result = await def.handler(ctx as never);
      } catch (err) {
        const p = toProblem(err, this.deps.log);
        if (p.status >= 500) await store.abandon(outcome.id);
        else await store.finish(outcome.id, { status: p.status, body: { ...p, instance: ctx.path }, problem: true, headers: {} });
        throw err;
      }
      const r = result as { status?: number; body?: unknown; headers?: Record<string, unknown> } | undefined;
      if (result instanceof ResponseSent || !r || typeof r.status !== 'number' || r.status >= 500) {
        await store.abandon(outcome.id);
      } else {
        const body = def.idempotent && typeof def.idempotent === 'object' ? def.idempotent.redact(r.body) : r.body;
        await store.finish(outcome.id, { status: r.status, body, problem: false, headers: keepHeaders(r.headers) });
      }
      this.respond(def, ctx, result);
    };
    run().catch(fail);
  }

  private replay(ctx: Context, answer: StoredAnswer): void {
    const out: HeaderMap = { ...ctx.headers, ...answer.headers, [REPLAYED_HEADER]: 'true' };
    if (answer.problem) return sendProblem(ctx.response, answer.body as never, out);
    const res = ctx.response;
    if (answer.body === undefined) {
      res.writeHead(answer.status, out);
      res.end();
      return;
    }
    const json = JSON.stringify(answer.body);
    out['content-type'] = 'application/json; charset=utf-8';
    out['content-length'] = Buffer.byteLength(json);
    res.writeHead(answer.status, out);
    res.end(json);
  }

  private respond(def: RouteDef, ctx: Context, returned: unknown): void {
    if (returned instanceof ResponseSent) return;
    const result = returned as { status: number; body?: unknown; headers?: HeaderMap } | undefined;
    if (!result || typeof result !== 'object' || typeof result.status !== 'number') {
      throw new Error(`handler of ${def.method} ${def.path} returned no response`);
    }
    if (this.deps.checkResponses) this.checkResponse(def, result.status, result.body);
    const res = ctx.response;
    const out: HeaderMap = ctx.headersApplied ? {} : ctx.headers;
    if (result.headers) Object.assign(out, result.headers);
    if (result.body === undefined) {
      res.writeHead(result.status, out);
      res.end();
      return;
    }
    const json = JSON.stringify(result.body);
    out['content-type'] = 'application/json; charset=utf-8';
    out['content-length'] = Buffer.byteLength(json);
    res.writeHead(result.status, out);
    res.end(json);
  }

  /** Bearer key, or (session routes) the session cookie; throws 401 / 403 problems. */
  private authenticate(req: IncomingMessage, def: RouteDef, cors: string | null): { principal: ApiKeyRecord; credential: Credential } {
    const authz = req.headers.authorization;
    if (authz !== undefined) {
      if (authz.length < 8 || authz.slice(0, 7).toLowerCase() !== 'bearer ') {
        throw new HttpProblem(problemFor('ERR_AUTH_INVALID', 'the Authorization header must be "Bearer <API key>"'), { 'www-authenticate': WWW_AUTH_INVALID });
      }
      const principal = this.deps.keys.verify(authz.slice(7).trim());
      if (!principal) throw new HttpProblem(problemFor('ERR_AUTH_INVALID', 'the API key is not valid (unknown or revoked)'), { 'www-authenticate': WWW_AUTH_INVALID });
      return { principal, credential: KEY_CREDENTIAL };
    }
    if (def.auth === 'session') {
      const token = readCookie(req.headers.cookie, SESSION_COOKIE);
      if (token !== null) {
        const found = this.deps.sessions.verify(token);
        if (!found) throw new HttpProblem(problemFor('ERR_AUTH_INVALID', 'the session has expired or was ended; open a new one with POST /api/session'), { 'www-authenticate': WWW_AUTH_INVALID });
        refuseCrossOriginCookie(req, cors);
        return { principal: found.key, credential: { kind: 'session', session: found.session } };
      }
    }
    const how = def.auth === 'session' ? 'an Authorization: Bearer <API key> header or a session cookie' : 'an Authorization: Bearer <API key> header';
    throw new HttpProblem(problemFor('ERR_AUTH_REQUIRED', `this endpoint needs ${how}`), { 'www-authenticate': WWW_AUTH });
  }

  private options(req: IncomingMessage, res: ServerResponse, path: string, cors: string | null, headers: HeaderMap): void {
    const match = this.router.find('OPTIONS', path);
    if (match.kind === 'not-found') return this.fail(req, res, new HttpProblem(problemFor('ERR_ROUTE_NOT_FOUND', `no route for ${path}`)), headers, path);
    const allow = match.kind === 'method-not-allowed' ? match.allow : [];
    const preflight = req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (preflight) {
      if (!cors) {
        return this.fail(req, res, new HttpProblem(problemFor('ERR_CROSS_ORIGIN', `origin ${req.headers.origin} is not allowed (defaults.server.cors_origins)`)), headers, path);
      }
      res.writeHead(204, {
        ...headers,
        'access-control-allow-methods': allow.join(', '),
        'access-control-allow-headers': CORS_ALLOWED_HEADERS,
        'access-control-max-age': String(CORS_MAX_AGE_S),
        'content-length': '0',
      });
      res.end();
      return;
    }
    res.writeHead(204, { ...headers, allow: [...allow, 'OPTIONS'].join(', '), 'content-length': '0' });
    res.end();
  }

  /** Answers with the problem for `err` (plus the headers decided so far), or cuts a started response. */
  private fail(req: IncomingMessage, res: ServerResponse, err: unknown, headers: HeaderMap, path: string): void {
    if ((err as { name?: string })?.name === 'ClientAborted') {
      res.destroy();
      return;
    }
    if (res.headersSent) {
      this.deps.log(`error after the response started on ${req.method} ${path}: ${(err as Error)?.message ?? String(err)}`);
      res.destroy();
      return;
    }
    const p = { ...toProblem(err, this.deps.log), instance: path };
    const retryAfter = retryAfterOf(err);
    const extra = isHttpProblem(err) ? err.headers : retryAfter ? { 'retry-after': retryAfter } : {};
    // A body we did not (fully) read is dropped within bounds, so the client gets to read this answer.
    if (hasBody(req)) discardRest(req);
    sendProblem(res, p, { ...headers, ...extra });
  }

  private checkResponse(def: RouteDef, status: number, body: unknown): void {
    const spec = def.responses[status];
    if (!spec) throw new Error(`${def.method} ${def.path} answered ${status}, which it does not declare`);
    if (spec.schema) {
      const r = spec.schema.safeParse(body);
      if (!r.success) throw new Error(`${def.method} ${def.path} answered ${status} with a body that does not match its schema: ${r.error.message}`);
    } else if (body !== undefined) {
      throw new Error(`${def.method} ${def.path} answered ${status} with a body, which it does not declare`);
    }
  }
}

/**
 * The handler's context (`RouteContext` at run time), filled in as the checks pass. Headers decided
 * before the handler (CORS, rate limit) go on the response with the handler's result in one
 * `writeHead`; a handler that reaches for `res` (to stream) gets them set on it first.
 */
class Context {
  headersApplied = false;
  idempotencyId: string | undefined = undefined;
  principal: ApiKeyRecord | null = null;
  credential: Credential | null = null;
  private actorName: string | null = null;
  query: unknown = undefined;
  body: unknown = undefined;
  rawBody: Buffer = Buffer.alloc(0);

  constructor(
    readonly method: string,
    readonly path: string,
    public params: unknown,
    readonly qs: string,
    readonly req: IncomingMessage,
    readonly response: ServerResponse,
    readonly headers: HeaderMap,
    readonly log: (line: string) => void,
  ) {}

  /** `key:<id>` (or with its session): who the audit trail names for what this request decides. */
  get tenantId(): string {
    return tenantOf(this.principal);
  }

  get actor(): string | null {
    if (!this.principal) return null;
    return (this.actorName ??= actorOf(this.principal.id, this.credential?.kind === 'session' ? this.credential.session : null));
  }

  get res(): ServerResponse {
    if (!this.headersApplied) {
      this.headersApplied = true;
      for (const name in this.headers) this.response.setHeader(name, this.headers[name] as string);
    }
    return this.response;
  }
}

/** A refusal when a browser sends the session cookie from another origin (CSRF defence). */
function refuseCrossOriginCookie(req: IncomingMessage, cors: string | null): void {
  if (cors) return;
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  const sameOrigin = origin === undefined || origin === `http://${req.headers.host}`;
  if (!sameOrigin || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
    throw new HttpProblem(problemFor('ERR_CROSS_ORIGIN', 'a session cookie is accepted only from the same origin; cross-origin callers use the bearer key'));
  }
}

/** Route declarations are checked when the app is built, not when a request finds the mistake. */
function checkRoute(def: RouteDef): void {
  if (!def.path.startsWith('/')) throw new Error(`route path must start with "/": ${def.path}`);
  const names = pathParamNames(def.path);
  if (def.params) {
    const keys = Object.keys(def.params.shape);
    const missing = names.filter((n) => !keys.includes(n));
    const extra = keys.filter((k) => !names.includes(k));
    if (missing.length || extra.length) throw new Error(`${def.method} ${def.path}: params schema keys [${keys.join(', ')}] must be the path's {params} [${names.join(', ')}]`);
  }
  if (def.body && def.method === 'GET') throw new Error(`${def.method} ${def.path}: a GET route takes no body`);
}

export function createHttpApp(deps: HttpDeps, routes: readonly RouteDef[] = []): HttpApp {
  return new HttpApp(deps, routes);
}

/** The HTTP server of the API (not yet listening): built-in routes plus `routes`. */
export function createHttpServer(deps: HttpDeps, routes: readonly RouteDef[] = []): Server {
  const app = createHttpApp(deps, routes);
  const server = createServer(app.handle);
  server.on('checkContinue', app.handleContinue);
  server.keepAliveTimeout = 5_000;
  return server;
}
