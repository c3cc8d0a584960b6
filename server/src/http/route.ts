/**
 * Routes as data. A route declares its method, path, auth, zod schemas and responses; the app builds
 * the router, validates requests and generates the OpenAPI document from the same declarations, so
 * what is served and what is documented cannot drift.
 *
 * @example
 * export const getTask = defineRoute({
 *   method: 'GET', path: '/v1/agents/tasks/{taskId}', auth: 'key',
 *   summary: 'Task status', tags: ['tasks'],
 *   params: z.object({ taskId: z.string().startsWith('task_') }),
 *   responses: { 200: { description: 'The task', schema: TaskStatus }, 404: { description: 'No such task' } },
 *   handler: (ctx) => ({ status: 200, body: tasks.get(ctx.params.taskId) }),
 * });
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { ApiKeyRecord } from '../auth/api-keys';
import type { Role } from '../auth/roles';
import type { SessionRecord } from '../auth/sessions';
import type { HeaderMap } from './problem';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * `none`: anyone (only `/v1/health`); `key`: `Authorization: Bearer <key>`; `session`: the
 * `cadre_session` cookie from `POST /api/session`, or the bearer key.
 */
export type AuthMode = 'none' | 'key' | 'session';

/**
 * Whose data a route touches, declared by every route (a route without it does not compile, and
 * test/integration/http/tenant-isolation.test.ts probes each one):
 * - `tenant`: the caller's tenant's objects only; another tenant's object answers 404 like a missing one;
 * - `install`: the install's own state (agent modes, the store, tenants): keys of the default tenant only (403);
 * - `catalog`: data of no tenant (the agent catalog, the schedule, the API description);
 * - `public`: unauthenticated (health; signed inbound webhooks, which name their own tenant's objects).
 */
export const TENANCIES = ['tenant', 'install', 'catalog', 'public'] as const;
export type Tenancy = (typeof TENANCIES)[number];

/** `'/a/{x}/b/{y}'` → `'x' | 'y'`. */
export type PathParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParamNames<Rest> : never;
export type PathParams<P extends string> = { [K in PathParamNames<P>]: string };

/** Query values as they arrive: one string, or an array when the name repeats. */
export type RawQuery = Record<string, string | string[]>;

export interface ResponseSpec {
  description: string;
  /** The JSON body (statuses >= 400 default to the problem schema). */
  schema?: z.ZodType;
}
export type ResponsesSpec = Readonly<Record<number, ResponseSpec>>;

/** How the caller authenticated: with the bearer key, or with a session cookie bound to that key. */
export type Credential = { kind: 'key' } | { kind: 'session'; session: SessionRecord };

type Parsed<S, Fallback> = [S] extends [z.ZodType] ? z.output<S> : Fallback;

export interface RouteContext<
  Path extends string = string,
  A extends AuthMode = AuthMode,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
> {
  /** Request method (`HEAD` reaches GET routes). */
  readonly method: string;
  /** The request path (without the query string). */
  readonly path: string;
  /** Path parameters: parsed by `params` when declared, else the decoded strings. */
  readonly params: Parsed<P, PathParams<Path>>;
  /** Query parameters: parsed by `query` when declared, else the raw strings. */
  readonly query: Parsed<Q, RawQuery>;
  /** The JSON body parsed by `body` (undefined when the route declares none). */
  readonly body: Parsed<B, undefined>;
  /**
   * The exact bytes received, on routes declaring `rawBody: true` (signed inbound webhooks verify an
   * HMAC over them; re-serialising the parsed JSON would not give the same bytes). Empty without a body.
   */
  readonly rawBody: Buffer;
  /** The key record of the caller (for sessions: the key the session was opened with). */
  readonly principal: A extends 'none' ? null : ApiKeyRecord;
  readonly credential: A extends 'none' ? null : Credential;
  /**
   * The authenticated caller as the audit trail names it (`key:<id>`, `key:<id>/session:<...>`):
   * what decisions are attributed to. A `by` in the body is only ever a note.
   */
  readonly actor: A extends 'none' ? null : string;
  /** The caller's tenant (its key's; the default tenant on unauthenticated routes). */
  readonly tenantId: string;
  /**
   * The request's `Idempotency-Key` claim on an idempotent route (undefined without the header): a
   * handler that creates something durably stores it with what it creates, so `recover` can find it.
   */
  readonly idempotencyId: string | undefined;
  readonly req: IncomingMessage;
  /** Headers the app already decided (CORS, rate limit) are set on it before the handler runs. */
  readonly res: ServerResponse;
  log(line: string): void;
}

/** What a handler returns: one of its declared statuses, with a body of that status's schema. */
export type RouteResult<R extends ResponsesSpec> = {
  // (no `& number` on the keys: it would widen a handler's `status: 201` to number during inference)
  [S in keyof R]: R[S] extends { schema: infer X extends z.ZodType }
    ? { status: S; body: z.input<X>; headers?: HeaderMap }
    : { status: S; body?: undefined; headers?: HeaderMap };
}[keyof R];

/** The type of `RESPONSE_SENT` (nominal: a private member, so no other value passes for it). */
export class ResponseSent {
  private readonly marker = 'cadre.http.responseSent';
  toString(): string {
    return this.marker;
  }
}

/** Returned by a handler that wrote the response itself (server-sent events). */
export const RESPONSE_SENT: ResponseSent = new ResponseSent();

type MaybePromise<T> = T | Promise<T>;

export interface RouteSpec<
  Path extends string,
  A extends AuthMode,
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  R extends ResponsesSpec,
> {
  method: HttpMethod;
  /** OpenAPI-style template: `/v1/agents/tasks/{taskId}`. */
  path: Path;
  auth: A;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** Default: derived from method and path (`getV1AgentsTasksByTaskId`). */
  operationId?: string;
  /** Keys must name the path's `{params}`; values arrive as strings (use z.coerce for numbers). */
  params?: P;
  /** Values arrive as strings (arrays when repeated); use z.coerce for numbers and booleans. */
  query?: Q;
  /** JSON body; a request carrying one must say `Content-Type: application/json`. */
  body?: B;
  /** Keep the received bytes as `ctx.rawBody` (the body is still parsed as JSON when `body` is declared). */
  rawBody?: boolean;
  responses: R;
  /** Counted against the caller's plan (default: true for authenticated routes). */
  rateLimited?: boolean;
  /** The least role the caller's key needs (default: any key); 403 ERR_FORBIDDEN otherwise. */
  role?: Role;
  /** Whose data the route touches (see `Tenancy`). */
  tenancy: Tenancy;
  /**
   * POST that creates something: an `Idempotency-Key` header makes a retry with the same key and
   * body answer the first result instead of running again (idempotency.ts).
   */
  idempotent?: boolean | { redact(body: unknown): unknown };
  /**
   * With `idempotent`: the answer of a request whose claim a crashed process left in flight, rebuilt
   * from what the handler had durably created with `ctx.idempotencyId` (undefined: it created
   * nothing, and the handler runs). Closes the window between the handler's write and the kept answer.
   */
  recover?(ctx: RouteContext<Path, A, P, Q, B>, idempotencyId: string): MaybePromise<NoInfer<RouteResult<R>> | undefined>;
  handler(ctx: RouteContext<Path, A, P, Q, B>): MaybePromise<NoInfer<RouteResult<R>> | ResponseSent>;
}

/** A route with its types erased, as the app and the router hold it. */
export type RouteDef = Readonly<RouteSpec<string, AuthMode, z.ZodObject | undefined, z.ZodObject | undefined, z.ZodType | undefined, ResponsesSpec>> & {
  readonly kind: 'cadre.route';
};

/** Declares a route; the types of `ctx` and of the result follow from the schemas. */
export function defineRoute<
  const Path extends string,
  A extends AuthMode,
  // `const` keeps the status keys literal, so a handler's `{ status: 201 }` is checked against them.
  const R extends ResponsesSpec,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<Path, A, P, Q, B, R>): RouteDef {
  return Object.freeze({ ...spec, kind: 'cadre.route' }) as unknown as RouteDef;
}

/** Names of the `{params}` of a path template, in order. */
export function pathParamNames(path: string): string[] {
  const names: string[] = [];
  for (const seg of path.split('/')) if (seg.startsWith('{') && seg.endsWith('}')) names.push(seg.slice(1, -1));
  return names;
}

/** `GET /v1/agents/tasks/{taskId}` → `getV1AgentsTasksByTaskId`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path.split('/').filter(Boolean).map((seg) => {
    const param = seg.startsWith('{') && seg.endsWith('}');
    const parts = (param ? seg.slice(1, -1) : seg).split(/[^A-Za-z0-9]+/).filter(Boolean);
    const word = parts.map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');
    return param ? `By${word}` : word;
  });
  return method.toLowerCase() + words.join('');
}
