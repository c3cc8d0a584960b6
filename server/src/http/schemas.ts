/**
 * Zod schemas of the HTTP door's own payloads (problems, health, info, keys, sessions). They
 * validate, type and document: the OpenAPI document is generated from them.
 */
import { z } from 'zod';
import { API_PLANS } from '../auth/api-keys';
import { ROLES } from '../auth/roles';
import { HTTP_METHODS } from './route';

export const FieldErrorSchema = z.object({
  field: z.string().describe('Dotted path of the offending value, rooted at its source: body.capabilities[0], query.limit, params.taskId'),
  message: z.string(),
}).meta({ id: 'FieldError' });

export const ProblemSchema = z.object({
  type: z.string().describe('URI naming the problem type (stable per code)'),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().describe('What went wrong, for a person'),
  instance: z.string().optional().describe('The request path'),
  code: z.string().describe('Stable error code, e.g. ERR_VALIDATION'),
  errors: z.array(FieldErrorSchema).max(20).optional().describe('Validation problems only: the offending fields (the first 20)'),
  totalErrors: z.number().int().optional().describe('Validation problems only: how many offending fields there were in all'),
}).meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' });

const componentStatus = z.object({ status: z.enum(['ok', 'degraded']), detail: z.string().optional() });

export const HealthReportSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  service: z.literal('cadre'),
  version: z.string(),
  pid: z.number().int(),
  uptime_s: z.number().int(),
  components: z.record(z.string(), componentStatus),
  memory: z.object({
    rss_bytes: z.number().int().describe('Resident set size of the server process (every thread)'),
    heap_used_bytes: z.number().int().describe('V8 heap in use on the main thread'),
    worker_threads: z.number().int().describe('Live agent worker threads (shared by the warm agents)'),
    warm_agents: z.number().int().describe('Agents placed on a live worker (warming or warm)'),
  }).optional(),
}).meta({ id: 'HealthReport' });

export const AuthModeSchema = z.enum(['none', 'key', 'session']);

export const InfoSchema = z.object({
  api_version: z.string().describe('Version of the API family, e.g. v1'),
  service: z.literal('cadre'),
  version: z.string().describe('Version of the Cadre server'),
  endpoints: z.array(z.object({
    method: z.enum(HTTP_METHODS),
    path: z.string(),
    auth: AuthModeSchema,
    summary: z.string(),
  })),
  documentation: z.object({
    openapi: z.string().describe('Path of the OpenAPI 3.1 document on this server'),
    reference: z.string().describe('The API reference in the Cadre repository'),
  }),
}).meta({ id: 'Info' });

export const OpenApiDocumentSchema = z.record(z.string(), z.unknown()).meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document' });

export const ApiPlanSchema = z.enum(API_PLANS).meta({ id: 'ApiPlan', description: 'Rate-limit plan of a key (contract "Limits", agent task API)' });

export const ApiRoleSchema = z.enum(ROLES).meta({
  id: 'ApiRole',
  description: 'What a key may decide: operator (run work, lower an ACMF mode), approver (also decide approvals, raise modes), admin (also manage keys)',
});

export const ApiKeyViewSchema = z.object({
  id: z.string(),
  prefix: z.string().describe('First characters of the key, to recognise it'),
  label: z.string(),
  plan: ApiPlanSchema,
  role: ApiRoleSchema,
  tenantId: z.string().describe('Tenant the key belongs to and acts in'),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
}).meta({ id: 'ApiKey' });

export const CreatedApiKeySchema = z.object({
  id: z.string(),
  key: z.string().nullable().describe('The key itself: shown this once, only its hash is stored (null in an Idempotency-Key replay: the key is never kept)'),
  prefix: z.string(),
  label: z.string(),
  plan: ApiPlanSchema,
  role: ApiRoleSchema,
  tenantId: z.string().describe('Tenant the key belongs to and acts in'),
  createdAt: z.string(),
}).meta({ id: 'CreatedApiKey' });

export const CreateApiKeySchema = z.strictObject({
  label: z.string().trim().min(1).max(200).default('api key'),
  plan: ApiPlanSchema.default('enterprise'),
  role: ApiRoleSchema.default('operator'),
}).meta({ id: 'CreateApiKey' });

export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeyViewSchema) }).meta({ id: 'ApiKeyList' });

export const SessionSchema = z.object({
  keyId: z.string().describe('The key the session is bound to'),
  createdAt: z.string(),
  expiresAt: z.string(),
}).meta({ id: 'Session' });
