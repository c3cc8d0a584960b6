/**
 * The OpenAPI 3.1 document, generated from the route declarations and their zod schemas with
 * `z.toJSONSchema` (the same schemas that validate requests, so the two cannot drift). Schemas with
 * an id (`.meta({ id })`) become components under that name; others are named after their operation
 * (`postV1AdminKeys` → `PostV1AdminKeysRequest`, `...Response`, `...Response201`).
 */
import { z } from 'zod';
import { SESSION_COOKIE } from '../auth/sessions';
import { defaultOperationId, pathParamNames, type RouteDef } from './route';
import { ProblemSchema } from './schemas';

type Json = Record<string, unknown>;

export interface OpenApiMeta {
  title: string;
  version: string;
  description: string;
  /** The direct actions that have a skill, with the JSON Schemas of their input and result data (skills manifest). */
  actions?: readonly AgentActionDoc[];
}

export interface AgentActionDoc {
  agentId: string;
  action: string;
  description: string;
  input?: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/** `observe-ai` + `analyze` -> `ObserveAiAnalyze` (a component name). */
function actionKey(agentId: string, action: string): string {
  return `${agentId}-${action}`.split(/[^A-Za-z0-9]+/).filter(Boolean).map(pascal).join('');
}

/**
 * One concrete path per direct action (`/api/agents/observe-ai/analyze`, which OpenAPI matches before the
 * template), copied from the templated operation with the action's own input schema (body `input`,
 * and query parameters for GET) and its result data schema (`x-cadre-result`, the execution's
 * `output.result`).
 */
function addActionPaths(paths: Record<string, Json>, schemas: Json, actions: readonly AgentActionDoc[]): void {
  const generic = paths['/api/agents/{id}/{action}'];
  if (!generic) return;
  for (const a of actions) {
    const key = actionKey(a.agentId, a.action);
    if (a.input) schemas[`${key}Input`] = hoist(a.input, schemas);
    if (a.output) schemas[`${key}Result`] = hoist(a.output, schemas);
    const concrete: Json = {};
    for (const method of ['post', 'get'] as const) {
      const g = generic[method] as Json | undefined;
      if (!g) continue;
      const op = structuredClone(g);
      op['operationId'] = `${String(g['operationId'])}${key}`;
      op['summary'] = `${a.agentId} ${a.action}: ${a.description}`;
      const params = ((op['parameters'] ?? []) as Json[]).filter((p) => p['in'] !== 'path');
      const props = (a.input?.['properties'] ?? {}) as Record<string, Json>;
      if (method === 'get') for (const [name, s] of Object.entries(props)) params.push({ name, in: 'query', required: false, schema: s });
      if (params.length) op['parameters'] = params;
      else delete op['parameters'];
      if (method === 'post' && a.input) {
        op['requestBody'] = { required: false, content: { 'application/json': { schema: { allOf: [{ $ref: `${REF}AgentActionRequest` }, { type: 'object', properties: { input: { $ref: `${REF}${key}Input` } } }] } } } };
      }
      if (a.output) op['x-cadre-result'] = { $ref: `${REF}${key}Result` };
      concrete[method] = op;
    }
    paths[`/api/agents/${a.agentId}/${a.action}`] = concrete;
  }
}

const REF = '#/components/schemas/';

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Limit of the binding window (the one with the fewest requests left): requests per hour or per minute', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the binding window after this one', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the binding window frees its next slot', schema: { type: 'integer' } },
};

const AUTO_PROBLEMS: Record<number, string> = {
  400: 'Invalid request: malformed JSON or invalid fields (listed in `errors`)',
  401: 'Missing or invalid credentials',
  403: 'Refused: cross-origin use of a session cookie',
  413: 'Body larger than the limit (1 MiB)',
  415: 'Body not sent as application/json',
  429: 'Rate limit of the key\'s plan exceeded (see Retry-After)',
};

function pascal(s: string): string {
  return s[0]!.toUpperCase() + s.slice(1);
}

export function operationIdOf(route: RouteDef): string {
  return route.operationId ?? defaultOperationId(route.method, route.path);
}

/** Moves `$defs` and registry `__shared` definitions into components and points every `$ref` there. */
function hoist(value: unknown, components: Json): unknown {
  if (Array.isArray(value)) return value.map((v) => hoist(v, components));
  if (!value || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === '$schema' || k === '$id') continue;
    if (k === '$defs') {
      for (const [name, def] of Object.entries(v as Json)) if (!(name in components)) components[name] = hoist(def, components);
      continue;
    }
    if (k === '$ref' && typeof v === 'string') {
      const m = /(?:__shared)?#\/\$defs\/(.+)$/.exec(v);
      out[k] = m ? REF + m[1] : v;
      continue;
    }
    out[k] = hoist(v, components);
  }
  return out;
}

function convertNamed(named: Map<z.ZodType, string>, io: 'input' | 'output', components: Json): void {
  if (named.size === 0) return;
  const reg = z.registry<{ id: string }>();
  for (const [schema, id] of named) reg.add(schema, { id });
  const { schemas } = z.toJSONSchema(reg, { io, unrepresentable: 'any', uri: (id) => REF + id }) as { schemas: Record<string, Json> };
  const shared = schemas['__shared'];
  if (shared) hoist(shared, components);
  for (const [id, s] of Object.entries(schemas)) if (id !== '__shared') components[id] = hoist(s, components);
}

function inlineSchema(schema: z.ZodType, components: Json): Json {
  return hoist(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }), components) as Json;
}

export function buildOpenApi(routes: readonly RouteDef[], meta: OpenApiMeta): Json {
  const used = new Set<string>(['Problem']);
  const inputs = new Map<z.ZodType, string>();
  const outputs = new Map<z.ZodType, string>([[ProblemSchema, 'Problem']]);
  const nameOf = (schema: z.ZodType, map: Map<z.ZodType, string>, fallback: string): string => {
    const known = map.get(schema);
    if (known) return known;
    let name = (z.globalRegistry.get(schema)?.id as string | undefined) ?? fallback;
    if (used.has(name)) {
      let n = 2;
      while (used.has(`${name}${n}`)) n++;
      name = `${name}${n}`;
    }
    used.add(name);
    map.set(schema, name);
    return name;
  };

  // Name every request and response schema first; convert them in one pass per direction.
  const ops = routes.map((route) => {
    const opId = operationIdOf(route);
    const body = route.body ? nameOf(route.body, inputs, `${pascal(opId)}Request`) : null;
    const responses = Object.entries(route.responses).map(([status, spec]) => ({
      status: Number(status),
      spec,
      schemaName: spec.schema ? nameOf(spec.schema, outputs, `${pascal(opId)}Response${status === '200' ? '' : status}`) : null,
    }));
    return { route, opId, body, responses };
  });

  const schemas: Json = {};
  convertNamed(outputs, 'output', schemas);
  convertNamed(inputs, 'input', schemas);

  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const { route, opId, body, responses } of ops) {
    route.tags.forEach((t) => tags.add(t));
    const parameters: Json[] = [];
    const paramSchema = route.params ? inlineSchema(route.params, schemas) : null;
    const paramProps = (paramSchema?.['properties'] ?? {}) as Record<string, Json>;
    for (const name of pathParamNames(route.path)) {
      const s = paramProps[name] ?? { type: 'string' };
      const { description, ...rest } = s as Json & { description?: string };
      parameters.push({ name, in: 'path', required: true, schema: rest, ...(description ? { description } : {}) });
    }
    if (route.query) {
      const q = inlineSchema(route.query, schemas);
      const required = new Set((q['required'] ?? []) as string[]);
      for (const [name, s] of Object.entries((q['properties'] ?? {}) as Record<string, Json>)) {
        const { description, ...rest } = s as Json & { description?: string };
        parameters.push({ name, in: 'query', required: required.has(name), schema: rest, ...(description ? { description } : {}) });
      }
    }

    const authed = route.auth !== 'none';
    const limited = route.rateLimited ?? authed;
    const headers = limited ? Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }])) : undefined;
    const resp: Record<string, Json> = {};
    for (const { status, spec, schemaName } of responses) {
      const contentType = status >= 400 && !schemaName ? 'application/problem+json' : 'application/json';
      const name = schemaName ?? (status >= 400 ? 'Problem' : null);
      resp[String(status)] = {
        description: spec.description,
        ...(name ? { content: { [contentType]: { schema: { $ref: REF + name } } } } : {}),
        ...(headers ? { headers } : {}),
      };
    }
    const auto = new Set<number>();
    if (authed) auto.add(401);
    if (limited) auto.add(429);
    if (route.auth === 'session') auto.add(403);
    if (route.body) [400, 413, 415].forEach((s) => auto.add(s));
    if (route.params || route.query) auto.add(400);
    for (const status of auto) {
      if (resp[String(status)]) continue;
      resp[String(status)] = {
        description: AUTO_PROBLEMS[status],
        content: { 'application/problem+json': { schema: { $ref: REF + 'Problem' } } },
        ...(status === 429 ? { headers: { ...headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
        ...(status === 401 ? { headers: { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } } : {}),
      };
    }

    const op: Json = {
      operationId: opId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [...route.tags],
      // Whose data the route touches (docs/api.md "Tenants"); the isolation test probes each one by it.
      'x-cadre-tenancy': route.tenancy,
      security: route.auth === 'none' ? [] : route.auth === 'key' ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: !route.body!.safeParse(undefined).success, content: { 'application/json': { schema: { $ref: REF + body } } } } } : {}),
      responses: resp,
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }

  if (meta.actions?.length) addActionPaths(paths, schemas, meta.actions);

  return {
    openapi: '3.1.0',
    info: { title: meta.title, version: meta.version, description: meta.description },
    tags: [...tags].sort().map((name) => ({ name })),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer cadre_...' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Session opened by POST /api/session (session-protected endpoints only)' },
      },
      headers: {
        ...RATE_LIMIT_HEADERS,
        'Retry-After': { description: 'Seconds to wait before the next request can succeed', schema: { type: 'integer' } },
        'WWW-Authenticate': { description: 'Bearer realm="cadre" (with error="invalid_token" for a wrong or revoked key)', schema: { type: 'string' } },
      },
    },
  };
}
