/**
 * GitHub integrations (contract: `POST {web_url}/api/v1/integrations/{source_host}`), their pull
 * requests, and the admin-only route that puts a credential secret into the secret store. Failures
 * of the credential and app checks answer 422 with `reason` (snake_case_fields, malformed_pem,
 * bad_webhook_secret, missing_permissions, branch_protection, ...) and a message naming what to fix;
 * no answer ever carries a secret's value.
 */
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import type { PrFlow } from '../../engine/pr-flow/pr-flow';
import { parseGithubCredential } from '../../integrations/github/credentials';
import { isIntegrationError } from '../../integrations/github/errors';
import { GithubIntegrations } from '../../integrations/github/github-integrations';
import { IntegrationViewSchema, integrationView, RegisterGithubSchema, PR_CAPABLE } from '../../integrations/github/registrations';
import { secretNameProblem, type SecretStore } from '../../secrets/secret-store';
import { HttpProblem, problem } from '../problem';
import { defineRoute, type RouteDef } from '../route';

const IdParams = z.object({ integration_id: z.string().regex(/^int_[0-9a-f]{24}$/, { message: 'an integration id is int_ and 24 hex characters' }) });
const SecretParams = z.object({ name: z.string().min(1).max(512).describe('Secret name (URL-encode the slashes: cadre%2Fintegrations%2Flocal%2Fgithub) or ARN') });

const PullSchema = z.object({
  id: z.string(), execution_id: z.string(), step: z.number(), agent_id: z.string(), repo: z.string(), branch: z.string(), acmf_mode: z.string(),
  status: z.string(), incident: z.string().nullable(), number: z.number().nullable(), url: z.string().nullable(), approval_id: z.string().nullable(),
  significant: z.object({ significant: z.boolean(), reasons: z.array(z.string()) }),
  review: z.object({ passed: z.boolean(), summary: z.string(), executionId: z.string().nullable(), findings: z.number(), at: z.string() }).nullable(),
  merge: z.object({ ready: z.boolean(), missing: z.array(z.string()), ci: z.string() }),
  error: z.object({ reason: z.string(), message: z.string() }).nullable(),
  created_at: z.string(), updated_at: z.string(),
});

/** An integration check that failed: 422 with its reason (409 for a duplicate registration). */
function integrationProblem(err: unknown): never {
  if (isIntegrationError(err)) {
    const conflict = typeof err.details['conflict'] === 'string';
    throw new HttpProblem(problem(conflict ? 409 : 422, conflict ? 'ERR_CONFLICT' : 'ERR_VALIDATION', conflict ? 'Conflict' : 'Integration Check Failed', err.message, { reason: err.reason, details: err.details }));
  }
  throw err;
}

function notFound(id: string): never {
  throw new EngineError('ERR_NOT_FOUND', `no GitHub integration ${id}`);
}

/** Field names of the GitHub credential secret, in any spelling (PascalCase, snake_case, camelCase). */
const GITHUB_FIELD = /^(app_?id|installation_?id|private_?key(_?pem)?|webhook_?secret)$/i;

export function integrationRoutes(deps: { github: GithubIntegrations; secrets: SecretStore; prFlow?: PrFlow }): RouteDef[] {
  const { github } = deps;
  return [
    defineRoute({
      method: 'POST', path: '/api/v1/integrations/github', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['integrations'],
      summary: 'Register a GitHub App integration (the agents listed may open pull requests)',
      description: `Only PR-capable agents may be listed (${PR_CAPABLE.join(', ')}); another answers 422 naming body.config.agents[i]. ` +
        'With verify (default true) the credential secret is read and checked (PascalCase fields, PEM, WebhookSecret) and the app installation\'s ' +
        'permissions (Contents and Pull requests write, Metadata read) and the repository are checked on GitHub; a failure answers 422 with its `reason`.',
      body: RegisterGithubSchema,
      responses: { 201: { description: 'The integration', schema: IntegrationViewSchema }, 409: { description: 'The same name is registered for the repository' }, 422: { description: 'An agent is not PR-capable, or a credential/app check failed' } },
      handler: async (ctx) => {
        const bad = GithubIntegrations.notPrCapable(ctx.body.config.agents);
        if (bad.length > 0) {
          throw new HttpProblem(problem(422, 'ERR_VALIDATION', 'Invalid Request', `only PR-capable agents may open pull requests (${PR_CAPABLE.join(', ')}); not: ${bad.join(', ')}`, {
            errors: bad.map((a) => ({ field: `body.config.agents[${ctx.body.config.agents.indexOf(a)}]`, message: `${a} is not a PR-capable agent` })),
          }));
        }
        const secretProblem = ctx.body.secrets_manager_arn ? secretNameProblem(ctx.body.secrets_manager_arn) ?? github.secretNameRefusal(ctx.tenantId, ctx.body.secrets_manager_arn) : null;
        if (secretProblem) throw new HttpProblem(problem(422, 'ERR_VALIDATION', 'Invalid Request', `secrets_manager_arn: ${secretProblem}`, { errors: [{ field: 'body.secrets_manager_arn', message: secretProblem }] }));
        const rec = await github.register(ctx.body, ctx.actor, ctx.tenantId).catch(integrationProblem);
        ctx.log(`integration ${rec.id} registered for ${rec.repo} (agents ${rec.agents.join(', ')})`);
        return { status: 201, body: integrationView(rec), headers: { location: `/api/v1/integrations/github/${rec.id}` } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/integrations/github', auth: 'key', tenancy: 'tenant', tags: ['integrations'],
      summary: 'GitHub integrations',
      responses: { 200: { description: 'Every integration, oldest first', schema: z.object({ integrations: z.array(IntegrationViewSchema) }) } },
      handler: (ctx) => ({ status: 200, body: { integrations: github.list(ctx.tenantId).map(integrationView) } }),
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/integrations/github/{integration_id}', auth: 'key', tenancy: 'tenant', tags: ['integrations'],
      summary: 'One GitHub integration (with its last error, if any)',
      params: IdParams,
      responses: { 200: { description: 'The integration', schema: IntegrationViewSchema }, 404: { description: 'No such integration' } },
      handler: (ctx) => ({ status: 200, body: integrationView(github.getFor(ctx.tenantId, ctx.params.integration_id) ?? notFound(ctx.params.integration_id)) }),
    }),
    defineRoute({
      method: 'DELETE', path: '/api/v1/integrations/github/{integration_id}', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['integrations'],
      summary: 'Remove a GitHub integration (its secret stays in the secret store)',
      params: IdParams,
      responses: { 200: { description: 'The removed integration', schema: IntegrationViewSchema }, 404: { description: 'No such integration' } },
      handler: async (ctx) => {
        const rec = github.getFor(ctx.tenantId, ctx.params.integration_id) ?? notFound(ctx.params.integration_id);
        await github.remove(rec.id);
        return { status: 200, body: integrationView(rec) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/api/v1/integrations/github/{integration_id}/verify', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['integrations'],
      summary: 'Check the credential secret, the app permissions and the repository again',
      params: IdParams,
      responses: { 200: { description: 'The verified integration', schema: IntegrationViewSchema }, 404: { description: 'No such integration' }, 422: { description: 'A check failed (reason)' } },
      handler: async (ctx) => {
        if (!github.getFor(ctx.tenantId, ctx.params.integration_id)) notFound(ctx.params.integration_id);
        return { status: 200, body: integrationView(await github.verify(ctx.params.integration_id).catch(integrationProblem)) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/v1/integrations/github/{integration_id}/pulls', auth: 'key', tenancy: 'tenant', tags: ['integrations'],
      summary: 'Pull requests of the integration: ACMF level, status, review, what is missing before merge',
      params: IdParams,
      responses: { 200: { description: 'Oldest first', schema: z.object({ pulls: z.array(PullSchema) }) }, 404: { description: 'No such integration' } },
      handler: (ctx) => {
        if (!github.getFor(ctx.tenantId, ctx.params.integration_id)) notFound(ctx.params.integration_id);
        const flow = deps.prFlow;
        const pulls = flow ? flow.list((r) => r.integrationId === ctx.params.integration_id) : [];
        return {
          status: 200,
          body: {
            pulls: pulls.map((r) => ({
              id: r.id, execution_id: r.executionId, step: r.step, agent_id: r.agentId, repo: r.repo, branch: r.branch, acmf_mode: r.mode, status: r.status,
              incident: r.incident, number: r.number ?? null, url: r.url ?? null, approval_id: r.approvalId ?? null, significant: r.significant,
              review: r.review ?? null, merge: flow!.mergeReadiness(r), error: r.error ?? null, created_at: r.createdAt, updated_at: r.updatedAt,
            })),
          },
        };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/api/v1/secrets/{name}', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['integrations'],
      summary: 'Store a secret (a JSON object) in the secret store; the value is never answered back',
      description: 'Needs the admin role. A GitHub credential secret (fields AppID, InstallationID, PrivateKeyPEM, WebhookSecret) is checked ' +
        'before it is stored: snake_case field names, a malformed PEM or a WebhookSecret that is not 64 hex characters answer 422 with the reason.',
      params: SecretParams,
      body: z.record(z.string(), z.unknown()),
      responses: { 200: { description: 'Stored', schema: z.object({ name: z.string(), backend: z.string(), checked: z.string().nullable() }) }, 422: { description: 'The name or the GitHub credential is invalid' } },
      handler: async (ctx) => {
        const bad = secretNameProblem(ctx.params.name) ?? github.secretNameRefusal(ctx.tenantId, ctx.params.name);
        if (bad) throw new HttpProblem(problem(422, 'ERR_VALIDATION', 'Invalid Request', `secret name: ${bad}`, { errors: [{ field: 'params.name', message: bad }] }));
        const raw = JSON.stringify(ctx.body);
        let checked: string | null = null;
        if (Object.keys(ctx.body).some((k) => GITHUB_FIELD.test(k))) {
          try {
            parseGithubCredential(raw, ctx.params.name);
          } catch (err) {
            integrationProblem(err);
          }
          checked = 'github';
        }
        await deps.secrets.put(ctx.params.name, raw);
        ctx.log(`secret ${ctx.params.name} stored (${deps.secrets.kind})`);
        return { status: 200, body: { name: ctx.params.name, backend: deps.secrets.kind, checked }, headers: { 'cache-control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/api/v1/secrets/{name}', auth: 'key', tenancy: 'tenant', role: 'admin', tags: ['integrations'],
      summary: 'Remove a secret from the secret store',
      params: SecretParams,
      responses: { 200: { description: 'Removed', schema: z.object({ name: z.string(), deleted: z.boolean() }) } },
      handler: async (ctx) => {
        const bad = github.secretNameRefusal(ctx.tenantId, ctx.params.name);
        if (bad) throw new HttpProblem(problem(422, 'ERR_VALIDATION', 'Invalid Request', `secret name: ${bad}`, { errors: [{ field: 'params.name', message: bad }] }));
        return { status: 200, body: { name: ctx.params.name, deleted: await deps.secrets.delete(ctx.params.name) } };
      },
    }),
  ];
}
