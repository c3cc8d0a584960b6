/**
 * The contract's second API surface: projects, their metric series, predictions and remediations
 * (docs/api.md, "Projects, predictions, remediations"). Handlers translate requests into calls of the
 * engine's ProjectService and records into the contract's shapes; ingested metrics are parsed here
 * with observe-ai's parsers (Prometheus text / OpenMetrics, JSON series, CSV), the engine gets points.
 *
 * Rate limits of this surface are the contract's projects-API plans (Free, Pro, Enterprise), counted
 * per key apart from the agent-task API's, with the same X-RateLimit-* headers (rate-limit.ts).
 */
import { tenantOf } from '../../engine/tenants/tenant-id';
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { ApiKeyRecord, ApiPlan } from '../../auth/api-keys';
import type { Clock } from '../../engine/ports';
import type { Engine } from '../../engine/index';
import type { Principal } from '../../engine/executions/execution-service';
import { predictionView, remediationView, type IngestedSeries } from '../../engine/projects/project-service';
import { PROJECT_STATUSES, type ProjectRecord } from '../../engine/projects/records';
import { judgedPoints } from '../../skills/observe/detect';
import { parseMetrics } from '../../skills/observe/metrics-parse';
import { seriesKey } from '../../skills/observe/model';
import { HttpProblem, problem, problemFor } from '../problem';
import { RateLimiter, type PlanLimit } from '../rate-limit';
import { defineRoute, type RouteContext, type RouteDef } from '../route';

/** The contract's projects-API plans. Enterprise is "unlimited, custom": Cadre's ceiling is below. */
export const PROJECT_PLAN_LIMITS = Object.freeze({
  free: { hourly: 1000, burst: 100 },
  pro: { hourly: 10_000, burst: 1000 },
  enterprise: { hourly: 600_000, burst: 10_000 },
} satisfies Record<string, PlanLimit>);

/** A key's plan (agent-task API names) to its projects-API plan. */
export const PROJECT_PLAN_OF: Readonly<Record<ApiPlan, keyof typeof PROJECT_PLAN_LIMITS>> = Object.freeze({
  startup: 'free', growth: 'pro', scale: 'pro', enterprise: 'enterprise',
});

export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 20;
/** Ingest bodies are bounded by the door's 1 MiB body limit; this bounds the points of one request. */
export const MAX_INGEST_POINTS = 200_000;

export interface ProjectRouteDeps {
  engine: Pick<Engine, 'projects'>;
  clock?: Clock;
}

const iso = z.string();
const settingsSchema = z.strictObject({ auto_fix: z.boolean().optional(), predictive_analysis: z.boolean().optional(), security_scanning: z.boolean().optional() });
const repositorySchema = z.strictObject({
  type: z.string().trim().min(1).max(40).describe('Provider type: git, github, gitlab, bitbucket, local...'),
  url: z.string().trim().min(1).max(2000).describe('A repository URL (https://, ssh://, git@) or a local folder (absolute path or file:// URL)'),
});
const NewProjectSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5000).optional(),
  repository: repositorySchema,
  settings: settingsSchema.optional(),
}).meta({ id: 'NewProject' });
const ProjectPatchSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(5000).optional(),
  status: z.enum(PROJECT_STATUSES).optional(),
  settings: settingsSchema.optional(),
  metrics_path: z.string().trim().min(1).max(1000).nullable().optional().describe('Workspace-relative metrics file or folder observe-ai analyses on each detection (null: none)'),
}).meta({ id: 'ProjectPatch' });

const ProjectSchema = z.object({
  id: z.string(), name: z.string(), description: z.string(), status: z.enum(PROJECT_STATUSES), created_at: iso, updated_at: iso,
  repository: z.object({ type: z.string(), url: z.string() }).nullable(), workspace: z.string().nullable(), metrics_path: z.string().nullable(),
  settings: z.object({ auto_fix: z.boolean(), predictive_analysis: z.boolean(), security_scanning: z.boolean() }),
  metrics: z.object({ issues_prevented: z.number().int().nullable(), uptime: z.number().nullable(), performance_gain: z.number().nullable() }),
  metrics_basis: z.object({ issues_prevented: z.string(), uptime: z.string(), performance_gain: z.string() }),
}).meta({ id: 'Project' });
const Pagination = z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int() });
const ProjectListSchema = z.object({ projects: z.array(ProjectSchema), pagination: Pagination }).meta({ id: 'ProjectList' });

const PredictionSchema = z.object({
  id: z.string(), type: z.string(), severity: z.string(), project_id: z.string(), status: z.enum(['open', 'resolved']), series: z.string(),
  detector: z.string(), observed: z.boolean(),
  confidence: z.number().min(0).max(1), description: z.string(),
  predicted_impact: z.object({ users_affected: z.number().int().nullable(), downtime_minutes: z.number().int().nullable(), revenue_loss: z.number().nullable(), basis: z.string() }),
  recommended_action: z.object({ type: z.string(), description: z.string(), can_auto_apply: z.boolean() }),
  predicted_at: iso, will_occur_at: iso, earliest_at: iso.nullable(), updated_at: iso, resolved_at: iso.nullable(), execution_id: z.string(),
}).meta({ id: 'Prediction' });
const PredictionListSchema = z.object({ predictions: z.array(PredictionSchema), pagination: Pagination }).meta({ id: 'PredictionList' });

const RemediationSchema = z.object({
  id: z.string(), status: z.string(), started_at: iso, completed_at: iso.nullable(), prediction_id: z.string(), project_id: z.string(),
  options: z.object({ create_backup: z.boolean(), notify_team: z.boolean(), rollback_on_failure: z.boolean() }), error: z.string().nullable(),
  steps: z.array(z.object({ name: z.string(), status: z.string(), progress: z.number().int(), reason: z.string().nullable(), execution_id: z.string().nullable(), detail: z.record(z.string(), z.unknown()).optional() })),
}).meta({ id: 'Remediation' });
const RemediationEnvelope = z.object({ remediation: RemediationSchema }).meta({ id: 'RemediationEnvelope' });
const RemediateSchema = z.strictObject({
  action: z.literal('apply'),
  mode: z.literal('automatic'),
  options: z.strictObject({ create_backup: z.boolean().optional(), notify_team: z.boolean().optional(), rollback_on_failure: z.boolean().optional() }).optional(),
}).meta({ id: 'RemediateRequest' });

const IngestSchema = z.strictObject({
  content: z.string().min(1).optional().describe('The samples: Prometheus text / OpenMetrics (with timestamps), JSON series or CSV with a header (absent: only limits change)'),
  format: z.enum(['prometheus', 'json-series', 'csv']).optional().describe('Default: sniffed from the content'),
  limits: z.record(z.string(), z.number().finite()).optional().describe('Series key → the capacity it must stay under (same unit); a series with a limit is forecast'),
}).meta({ id: 'MetricsIngest' });
const SeriesSummary = z.object({ key: z.string(), rate: z.boolean(), points: z.number().int(), first: iso.nullable(), last: iso.nullable(), last_value: z.number().nullable(), limit: z.number().nullable() });
const IngestResultSchema = z.object({ project_id: z.string(), series: z.array(SeriesSummary), detection: z.enum(['started', 'off']), detection_note: z.string() }).meta({ id: 'MetricsIngestResult' });
const SeriesListSchema = z.object({ project_id: z.string(), series: z.array(SeriesSummary) }).meta({ id: 'ProjectSeriesList' });

const projectIdParam = z.object({ project_id: z.string().startsWith('proj_', 'must start with proj_') });
const predictionIdParam = z.object({ prediction_id: z.string().startsWith('pred_', 'must start with pred_') });
const remediationIdParam = z.object({ remediation_id: z.string().startsWith('rem_', 'must start with rem_') });

const FORMAT_FILE = { prometheus: 'ingest.prom', 'json-series': 'ingest.json', csv: 'ingest.csv' } as const;

function principal(key: ApiKeyRecord): Principal {
  return { keyId: key.id, tenantId: tenantOf(key), callbackSecret: null };
}

/** 422 with the offending query fields (the contract's "422 out of range"). */
function unprocessable(errors: Array<{ field: string; message: string }>): HttpProblem {
  return new HttpProblem(problem(422, 'ERR_VALIDATION', 'Unprocessable Content', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors }));
}

/** page (default 1, >= 1), limit (default 20, 1..100) from raw query strings; out of range → 422. */
export function pageOf(query: { page?: string | undefined; limit?: string | undefined }): { page: number; limit: number } {
  const errors: Array<{ field: string; message: string }> = [];
  const int = (raw: string | undefined, field: string, def: number, min: number, max: number) => {
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n)) { errors.push({ field: `query.${field}`, message: `must be an integer (got "${raw}")` }); return def; }
    if (n < min || n > max) { errors.push({ field: `query.${field}`, message: `must be between ${min} and ${max === Number.MAX_SAFE_INTEGER ? 'any' : max} (got ${n})` }); return def; }
    return n;
  };
  const page = int(query.page, 'page', 1, 1, Number.MAX_SAFE_INTEGER);
  const limit = int(query.limit, 'limit', DEFAULT_PAGE_LIMIT, 1, MAX_PAGE_LIMIT);
  if (errors.length) throw unprocessable(errors);
  return { page, limit };
}

/** A repository URL to the local folder it names (absolute path or file://), null for a remote one; a missing folder is 422. */
export function workspaceOf(url: string): string | null {
  let local: string | null = null;
  if (/^file:\/\//i.test(url)) {
    try { local = fileURLToPath(url); } catch { throw unprocessable([{ field: 'body.repository.url', message: `${url} is not a valid file:// URL` }]); }
  } else if (path.isAbsolute(url)) local = url;
  else if (!/^(?:[a-z][a-z0-9+.-]*:\/\/|[\w.-]+@[\w.-]+:)/i.test(url)) {
    throw unprocessable([{ field: 'body.repository.url', message: `${url} is neither a repository URL (https://, ssh://, git@host:) nor an absolute local folder` }]);
  }
  if (local === null) return null;
  const abs = path.resolve(local);
  let dir = false;
  try { dir = statSync(abs).isDirectory(); } catch { dir = false; }
  if (!dir) throw unprocessable([{ field: 'body.repository.url', message: `${abs} is not a folder on this machine` }]);
  return abs;
}

/** metrics_path must name a file or folder inside the project's workspace (422 otherwise). */
export function checkMetricsPath(workspace: string | null, rel: string): void {
  const field = 'body.metrics_path';
  if (!workspace) throw unprocessable([{ field, message: 'the project has no local workspace (its repository is remote)' }]);
  if (path.isAbsolute(rel)) throw unprocessable([{ field, message: `${rel} must be relative to the workspace ${workspace}` }]);
  const abs = path.resolve(workspace, rel);
  const inside = path.relative(workspace, abs);
  if (inside.startsWith('..') || path.isAbsolute(inside)) throw unprocessable([{ field, message: `${rel} is outside the workspace` }]);
  try { statSync(abs); } catch { throw unprocessable([{ field, message: `${rel} does not exist in ${workspace}` }]); }
}

/** Parses the ingest body into timestamped series (counters as per-second rates, as capacity-ai forecasts them). */
export function parseIngest(content: string, format: keyof typeof FORMAT_FILE | undefined): IngestedSeries[] {
  let parsed;
  try {
    parsed = parseMetrics(format ? FORMAT_FILE[format] : 'ingest', content);
  } catch (err) {
    throw unprocessable([{ field: 'body.content', message: (err as Error).message }]);
  }
  if (!parsed.items.length) {
    const s = parsed.skipped[0];
    throw unprocessable([{ field: 'body.content', message: s ? `no sample could be read (${parsed.format}): line ${s.line}: ${s.reason}` : `no sample in the content (${parsed.format})` }]);
  }
  const out: IngestedSeries[] = [];
  let total = 0;
  for (const s of parsed.items) {
    // Histogram buckets are left to their _count and _sum, as observe-ai and capacity-ai do.
    if (s.name.endsWith('_bucket')) continue;
    const j = judgedPoints(s);
    const untimed = j.points.filter((p) => p.t === null);
    if (untimed.length) {
      throw unprocessable([{ field: 'body.content', message: `${seriesKey(s.name, s.labels)}: ${untimed.length} sample(s) without a timestamp${untimed[0]!.line ? ` (line ${untimed[0]!.line})` : ''}; a prediction needs to know when each sample was taken` }]);
    }
    const points = j.points.filter((p) => Number.isFinite(p.v)).map((p) => [p.t!, p.v] as [number, number]);
    total += points.length;
    if (total > MAX_INGEST_POINTS) throw unprocessable([{ field: 'body.content', message: `more than ${MAX_INGEST_POINTS} samples in one request; send them in parts` }]);
    if (points.length) out.push({ key: j.rate ? `rate(${seriesKey(s.name, s.labels)})` : seriesKey(s.name, s.labels), rate: j.rate, points });
  }
  if (!out.length) throw unprocessable([{ field: 'body.content', message: 'no series with values (only histogram buckets?)' }]);
  return out;
}

export function projectRoutes(deps: ProjectRouteDeps): RouteDef[] {
  const projects = deps.engine.projects;
  const limiter = new RateLimiter({
    plans: { startup: PROJECT_PLAN_LIMITS.free, growth: PROJECT_PLAN_LIMITS.pro, scale: PROJECT_PLAN_LIMITS.pro, enterprise: PROJECT_PLAN_LIMITS.enterprise },
    ...(deps.clock ? { clock: deps.clock } : {}),
  });

  /** Counts the request against the key's projects-API plan; sets the headers, 429 past the limit. */
  const limit = (ctx: { principal: ApiKeyRecord; res: RouteContext['res'] }) => {
    const key = ctx.principal;
    const d = limiter.take(key.id, key.plan);
    ctx.res.setHeader('x-ratelimit-limit', String(d.limit));
    ctx.res.setHeader('x-ratelimit-remaining', String(d.remaining));
    ctx.res.setHeader('x-ratelimit-reset', String(d.resetS));
    if (!d.allowed) {
      throw new HttpProblem(problemFor('ERR_RATE_LIMITED', `the projects API's ${PROJECT_PLAN_OF[key.plan]} plan allows ${d.limit} requests per ${d.window}; retry in ${d.resetS} s`), { 'retry-after': String(d.resetS) });
    }
  };

  const view = (p: ProjectRecord) => {
    const m = projects.metricsOf(p);
    return {
      id: p.id, name: p.name, description: p.description, status: p.status, created_at: p.createdAt, updated_at: p.updatedAt,
      repository: p.repository, workspace: p.workspace, metrics_path: p.metricsPath ?? null, settings: p.settings, metrics: m.metrics, metrics_basis: m.basis,
    };
  };
  const seriesSummaries = (projectId: string) => projects.seriesOf(projectId).map((s) => ({
    key: s.key, rate: s.rate, points: s.points.length,
    first: s.points.length ? new Date(s.points[0]![0]).toISOString() : null, last: s.points.length ? new Date(s.points.at(-1)![0]).toISOString() : null,
    last_value: s.points.at(-1)?.[1] ?? null, limit: s.limit,
  }));
  const common = { auth: 'key' as const, tenancy: 'tenant' as const, rateLimited: false, tags: ['projects'] };
  const problems = { 401: { description: 'No or invalid key' }, 429: { description: 'Projects-API plan limit reached (Retry-After)' } } as const;

  return [
    defineRoute({
      ...common, method: 'GET', path: '/v1/projects', summary: 'List projects',
      description: 'page (default 1), limit (default 20, at most 100), status (active, paused, archived); out of range: 422. Oldest first.',
      query: z.object({ page: z.string().optional(), limit: z.string().optional(), status: z.string().optional() }),
      responses: { 200: { description: 'A page of projects', schema: ProjectListSchema }, 422: { description: 'page, limit or status out of range' }, ...problems },
      handler: (ctx) => {
        limit(ctx);
        const pg = pageOf(ctx.query);
        const status = ctx.query.status;
        if (status !== undefined && !(PROJECT_STATUSES as readonly string[]).includes(status)) throw unprocessable([{ field: 'query.status', message: `must be one of ${PROJECT_STATUSES.join(', ')} (got "${status}")` }]);
        const r = projects.list({ ...pg, tenantId: ctx.tenantId, ...(status ? { status: status as ProjectRecord['status'] } : {}) });
        return { status: 200, body: { projects: r.items.map(view), pagination: { page: pg.page, limit: pg.limit, total: r.total } } };
      },
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/projects', summary: 'Create a project', idempotent: true,
      description: 'name and repository {type, url} are required; description and settings are optional (settings default: auto_fix false, predictive_analysis true, security_scanning false). A local folder as repository.url (absolute path or file://) is the project\'s workspace.',
      body: NewProjectSchema,
      responses: { 201: { description: 'The project (status active)', schema: ProjectSchema }, 400: { description: 'Invalid body' }, 422: { description: 'repository.url names no folder or URL' }, ...problems },
      handler: async (ctx) => {
        limit(ctx);
        const b = ctx.body;
        const workspace = workspaceOf(b.repository.url);
        const rec = await projects.create({ name: b.name, ...(b.description !== undefined ? { description: b.description } : {}), repository: b.repository, workspace, ...(b.settings ? { settings: b.settings } : {}) }, principal(ctx.principal));
        return { status: 201, body: view(rec), headers: { location: `/v1/projects/${rec.id}` } };
      },
    }),
    defineRoute({
      ...common, method: 'GET', path: '/v1/projects/{project_id}', summary: 'One project with its metrics', params: projectIdParam,
      responses: { 200: { description: 'The project', schema: ProjectSchema }, 404: { description: 'No such project' }, ...problems },
      handler: (ctx) => { limit(ctx); return { status: 200, body: view(projects.getFor(ctx.tenantId, ctx.params.project_id)) }; },
    }),
    defineRoute({
      ...common, method: 'PATCH', path: '/v1/projects/{project_id}', summary: 'Change a project\'s name, description, status, settings or metrics_path', params: projectIdParam, body: ProjectPatchSchema,
      responses: { 200: { description: 'The project', schema: ProjectSchema }, 404: { description: 'No such project' }, ...problems },
      handler: async (ctx) => {
        limit(ctx);
        const { metrics_path: mp, ...rest } = ctx.body;
        if (mp) checkMetricsPath(projects.getFor(ctx.tenantId, ctx.params.project_id).workspace, mp);
        projects.getFor(ctx.tenantId, ctx.params.project_id);
        return { status: 200, body: view(await projects.update(ctx.params.project_id, { ...rest, ...(mp !== undefined ? { metricsPath: mp } : {}) })) };
      },
    }),
    defineRoute({
      ...common, method: 'DELETE', path: '/v1/projects/{project_id}', summary: 'Delete a project with its series and predictions (remediations stay)', params: projectIdParam,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such project' }, ...problems },
      handler: async (ctx) => { limit(ctx); projects.getFor(ctx.tenantId, ctx.params.project_id); await projects.delete(ctx.params.project_id); return { status: 204 }; },
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/projects/{project_id}/metrics', summary: 'Ingest metric samples; series with a limit are forecast',
      description: 'The samples are stored (durably) before the answer; capacity-ai then forecasts every series with a limit (one execution each) and predictions are created, updated or resolved.',
      params: projectIdParam, body: IngestSchema,
      responses: { 202: { description: 'Stored; detection runs in the background', schema: IngestResultSchema }, 404: { description: 'No such project' }, 409: { description: 'The project is archived' }, 422: { description: 'The content could not be read (file, line and reason)' }, ...problems },
      handler: async (ctx) => {
        limit(ctx);
        const id = ctx.params.project_id;
        const project = projects.getFor(ctx.tenantId, id);
        if (ctx.body.content === undefined && !Object.keys(ctx.body.limits ?? {}).length) throw unprocessable([{ field: 'body.content', message: 'give content (samples), limits, or both' }]);
        const batch = ctx.body.content === undefined ? [] : parseIngest(ctx.body.content, ctx.body.format);
        await projects.ingest(id, batch, ctx.body.limits ?? {});
        const on = project.settings.predictive_analysis && project.status === 'active';
        const withLimit = projects.seriesOf(id).filter((s) => s.limit !== null).length;
        if (on) projects.detectLater(id, principal(ctx.principal));
        const note = !project.settings.predictive_analysis ? 'settings.predictive_analysis is false'
          : project.status !== 'active' ? `the project is ${project.status}`
            : withLimit === 0 ? 'no series has a limit: give limits {series: capacity} to be forecast against' : `${withLimit} series with a limit are forecast by capacity-ai`;
        return { status: 202, body: { project_id: id, series: seriesSummaries(id), detection: on ? 'started' as const : 'off' as const, detection_note: note } };
      },
    }),
    defineRoute({
      ...common, method: 'GET', path: '/v1/projects/{project_id}/metrics', summary: 'The project\'s ingested series (summaries)', params: projectIdParam,
      responses: { 200: { description: 'Series', schema: SeriesListSchema }, 404: { description: 'No such project' }, ...problems },
      handler: (ctx) => { limit(ctx); projects.getFor(ctx.tenantId, ctx.params.project_id); return { status: 200, body: { project_id: ctx.params.project_id, series: seriesSummaries(ctx.params.project_id) } }; },
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/projects/{project_id}/predictions/detect', summary: 'Run detection now (capacity-ai on the series with a limit, observe-ai on metrics_path)',
      params: projectIdParam,
      responses: { 202: { description: 'Detection started', schema: z.object({ project_id: z.string(), detection: z.literal('started') }) }, 404: { description: 'No such project' }, 409: { description: 'Prediction is off for this project' }, ...problems },
      handler: (ctx) => {
        limit(ctx);
        const p = projects.getFor(ctx.tenantId, ctx.params.project_id);
        if (!p.settings.predictive_analysis || p.status !== 'active') throw new HttpProblem(problemFor('ERR_CONFLICT', `detection is off for ${p.id}: ${p.status !== 'active' ? `the project is ${p.status}` : 'settings.predictive_analysis is false'}`));
        projects.detectLater(p.id, principal(ctx.principal));
        return { status: 202, body: { project_id: p.id, detection: 'started' as const } };
      },
    }),
    defineRoute({
      ...common, method: 'GET', path: '/v1/projects/{project_id}/predictions', summary: 'The project\'s predictions, newest first',
      description: 'page, limit as for projects; status open or resolved (default both).',
      params: projectIdParam, query: z.object({ page: z.string().optional(), limit: z.string().optional(), status: z.string().optional() }),
      responses: { 200: { description: 'A page of predictions', schema: PredictionListSchema }, 404: { description: 'No such project' }, 422: { description: 'page, limit or status out of range' }, ...problems },
      handler: (ctx) => {
        limit(ctx);
        const pg = pageOf(ctx.query);
        const status = ctx.query.status;
        if (status !== undefined && status !== 'open' && status !== 'resolved') throw unprocessable([{ field: 'query.status', message: `must be open or resolved (got "${status}")` }]);
        projects.getFor(ctx.tenantId, ctx.params.project_id);
        const r = projects.predictionsOf(ctx.params.project_id, { ...pg, ...(status ? { status } : {}) });
        return { status: 200, body: { predictions: r.items.map(predictionView), pagination: { page: pg.page, limit: pg.limit, total: r.total } } };
      },
    }),
    defineRoute({
      ...common, method: 'GET', path: '/v1/predictions/{prediction_id}', summary: 'One prediction', params: predictionIdParam,
      responses: { 200: { description: 'The prediction', schema: PredictionSchema }, 404: { description: 'No such prediction' }, ...problems },
      handler: (ctx) => { limit(ctx); return { status: 200, body: predictionView(projects.predictionFor(ctx.tenantId, ctx.params.prediction_id)) }; },
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/predictions/{prediction_id}/remediate', summary: 'Remediate a prediction through the engine', idempotent: true,
      description: 'Steps create_backup (backup-ai snapshot), apply, verify (detection again), notify, rollback_on_failure; poll GET /v1/remediations/{remediation_id}. Options default to true.',
      params: predictionIdParam, body: RemediateSchema,
      responses: { 202: { description: 'Started', schema: RemediationEnvelope }, 404: { description: 'No such prediction' }, 409: { description: 'Resolved prediction, or a remediation of it in progress' }, ...problems },
      handler: async (ctx) => {
        limit(ctx);
        const o = ctx.body.options ?? {};
        projects.predictionFor(ctx.tenantId, ctx.params.prediction_id);
        const rec = await projects.remediate(ctx.params.prediction_id, { create_backup: o.create_backup ?? true, notify_team: o.notify_team ?? true, rollback_on_failure: o.rollback_on_failure ?? true }, principal(ctx.principal));
        return { status: 202, body: { remediation: remediationView(rec) }, headers: { location: `/v1/remediations/${rec.id}` } };
      },
    }),
    defineRoute({
      ...common, method: 'GET', path: '/v1/remediations/{remediation_id}', summary: 'A remediation and its steps', params: remediationIdParam,
      responses: { 200: { description: 'The remediation', schema: RemediationEnvelope }, 404: { description: 'No such remediation' }, ...problems },
      handler: (ctx) => { limit(ctx); return { status: 200, body: { remediation: remediationView(projects.remediationFor(ctx.tenantId, ctx.params.remediation_id)) } }; },
    }),
  ];
}
