/**
 * GitHub integration registrations (contract, "Source-hosting integration registration"), kept in the
 * store's `githubIntegrations` collection (durable, like every record): the repository, the app
 * installation, which agents may open PRs, the name of the credential secret and the API URL (GitHub
 * Enterprise Server: `https://<host>/api/v3`). The credential itself stays in the secret store;
 * a record holds the secret's NAME only.
 */
import { z } from 'zod';
import { AGENTS } from '../../engine/catalog/agents';
import { DEFAULT_API_URL } from './github-api';

export const PR_CAPABLE: readonly string[] = AGENTS.filter((a) => a.prCapable).map((a) => a.id);
export const INTEGRATIONS_COLLECTION = 'githubIntegrations';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** https, or http on loopback (a local stand-in); no credentials or query in the URL. */
export const apiUrlSchema = z.string().max(500).refine((s) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname))) && !u.username && !u.password && !u.search && !u.hash;
  } catch {
    return false;
  }
}, { message: 'must be an https URL (GitHub Enterprise Server: https://<host>/api/v3), or http on loopback' });

export const RegisterGithubSchema = z.strictObject({
  integration_name: z.string().trim().min(1).max(100).describe('A name for people'),
  github_repo: z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/, { message: 'must be owner/repository' }).describe('owner/repository'),
  github_installation_id: z.number().int().positive().describe('Installation id of the GitHub App on the repository'),
  secrets_manager_arn: z.string().min(1).max(512).optional().describe('ARN or name of the credential secret; default <namespace>/integrations/<customer_id>/github'),
  api_url: apiUrlSchema.optional().describe(`GitHub REST API base URL (default ${DEFAULT_API_URL}; GitHub Enterprise Server: https://<host>/api/v3)`),
  config: z.strictObject({
    agents: z.array(z.string().min(1).max(64)).min(1).max(PR_CAPABLE.length).describe(`Agents allowed to open PRs: ${PR_CAPABLE.join(', ')}`),
    require_review: z.boolean().default(true).describe('review-ai reviews each PR before staging'),
  }),
  verify: z.boolean().default(true).describe('Read the secret and check the app permissions and repository now (false: at first use)'),
});
export type RegisterGithub = z.output<typeof RegisterGithubSchema>;

export interface GithubIntegrationRecord {
  /** `int_` and 24 hex characters. */
  id: string;
  /** Tenant that registered it: only its executions open pull requests through it (absent: the default tenant). */
  tenantId?: string;
  host: 'github';
  integrationName: string;
  repo: string;
  installationId: number;
  /** The credential secret's name or ARN (never its value). */
  secretName: string;
  apiUrl: string;
  agents: string[];
  requireReview: boolean;
  /** The app id read from the secret at the last verification (not a secret). */
  appId: number | null;
  permissions: Record<string, string> | null;
  verifiedAt: string | null;
  /** The last failure of a verification or PR step (reason and message; never a secret). */
  lastError: { reason: string; message: string; at: string } | null;
  createdAt: string;
  createdBy: string;
}

export const IntegrationViewSchema = z.object({
  integration_id: z.string(),
  host: z.literal('github'),
  integration_name: z.string(),
  github_repo: z.string(),
  github_installation_id: z.number(),
  secrets_manager_arn: z.string(),
  api_url: z.string(),
  config: z.object({ agents: z.array(z.string()), require_review: z.boolean() }),
  app_id: z.number().nullable(),
  permissions: z.record(z.string(), z.string()).nullable(),
  verified_at: z.string().nullable(),
  last_error: z.object({ reason: z.string(), message: z.string(), at: z.string() }).nullable(),
  webhook_url: z.string(),
  created_at: z.string(),
  created_by: z.string(),
});

export function integrationView(r: GithubIntegrationRecord): z.input<typeof IntegrationViewSchema> {
  return {
    integration_id: r.id, host: 'github', integration_name: r.integrationName, github_repo: r.repo, github_installation_id: r.installationId,
    secrets_manager_arn: r.secretName, api_url: r.apiUrl, config: { agents: [...r.agents], require_review: r.requireReview },
    app_id: r.appId, permissions: r.permissions, verified_at: r.verifiedAt, last_error: r.lastError,
    webhook_url: '/api/webhooks/github', created_at: r.createdAt, created_by: r.createdBy,
  };
}
