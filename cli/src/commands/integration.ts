/**
 * `cadre integration add|list|show|remove|verify|pulls` and `cadre integration secret <file>`: the
 * GitHub App integration (POST|GET /api/v1/integrations/github, GET|DELETE .../{id}, POST .../{id}/verify,
 * GET .../{id}/pulls, PUT /api/v1/secrets/{name}). The credential file is read here and sent once; the
 * server checks it (PascalCase fields, PEM, WebhookSecret) and never answers it back.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { AGENTS } from '../../../server/src/engine/catalog/agents';
import { usage } from '../cli-error';
import type { Target } from '../connection';
import type { Json } from '../http-client';
import { examples, printData, table, withTarget } from '../context';

const BASE = '/api/v1/integrations/github';
const UNSUPPORTED = 'this server has no GitHub integration routes; update it';
/** The agents the catalog marks PR-capable (the server refuses others with a 422). */
const PR_CAPABLE_HINT = AGENTS.filter((a) => a.prCapable).map((a) => a.id).join(', ');

const line = (i: Json): string => {
  const cfg = (i['config'] as Json | undefined) ?? {};
  const err = i['last_error'] as Json | null | undefined;
  return `${i['integration_id']} ${i['github_repo']} (${i['integration_name']}) agents: ${(cfg['agents'] as string[] | undefined)?.join(', ') ?? '-'}; review: ${cfg['require_review'] ? 'required' : 'off'}; ${i['verified_at'] ? `verified ${i['verified_at']}` : 'not verified'}${err ? `; last error: ${err['reason']}: ${err['message']}` : ''}`;
};

export function registerIntegrationCommands(program: Command): void {
  const ig = program.command('integration').description('GitHub App integration: the repositories where agents open ACMF-gated pull requests');
  const call = (t: Target, method: string, p: string, body?: unknown) => t.api.call<Json>(method, p, body, { notFound: UNSUPPORTED });

  const add = ig.command('add <owner/repo>')
    .description('register a repository: the app installation, the credential secret and the agents allowed to open PRs')
    .requiredOption('--installation <id>', 'installation id of the GitHub App on the repository')
    .requiredOption('-a, --agent <agent>', `an agent allowed to open PRs (repeatable): ${PR_CAPABLE_HINT}`, (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--name <name>', 'a name for people (default: the repository)')
    .option('--secret <name>', 'name or ARN of the credential secret (default: <namespace>/integrations/<customer_id>/github)')
    .option('--api-url <url>', 'GitHub Enterprise Server API, e.g. https://github.example.com/api/v3')
    .option('--no-review', 'do not have review-ai review each PR before staging')
    .option('--no-verify', 'register without reading the secret and checking the app permissions now')
    .action(async (repo: string, o: { installation: string; agent: string[]; name?: string; secret?: string; apiUrl?: string; review: boolean; verify: boolean }, cmd: Command) => {
      const installation = Number(o.installation);
      if (!Number.isInteger(installation) || installation <= 0) throw usage(`--installation must be a positive whole number (got "${o.installation}")`);
      if (!/^[^/\s]+\/[^/\s]+$/.test(repo)) throw usage(`"${repo}" is not owner/repository`);
      await withTarget(cmd, async (t, g) => {
        const r = await call(t, 'POST', BASE, {
          integration_name: o.name ?? repo, github_repo: repo, github_installation_id: installation,
          ...(o.secret ? { secrets_manager_arn: o.secret } : {}), ...(o.apiUrl ? { api_url: o.apiUrl } : {}),
          config: { agents: o.agent, require_review: o.review }, verify: o.verify,
        });
        printData(g, r, () => line(r));
      });
    });
  examples(add, 'cadre integration add octo-org/service --installation 4242 --agent coder-ai --agent maintain-ai', 'cadre integration add octo/app --installation 7 --agent coder-ai --api-url https://ghe.example.com/api/v3');

  const list = ig.command('list').description('registered integrations')
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', BASE);
      const items = (r['integrations'] as Json[] | undefined) ?? [];
      printData(g, r, () => (items.length === 0 ? 'no integrations (cadre integration add --help)' : table([['ID', 'REPOSITORY', 'AGENTS', 'VERIFIED'], ...items.map((i) => [String(i['integration_id']), String(i['github_repo']), ((i['config'] as Json)['agents'] as string[]).join(','), String(i['verified_at'] ?? 'no')])])));
    }));
  examples(list, 'cadre integration list', 'cadre integration list --json');

  const show = ig.command('show <integrationId>').description('one integration, with its permissions and last error')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `${BASE}/${encodeURIComponent(id)}`);
      printData(g, r, () => `${line(r)}${r['permissions'] ? `\npermissions: ${Object.entries(r['permissions'] as Json).map(([k, v]) => `${k}=${String(v)}`).join(', ')}` : ''}`);
    }));
  examples(show, 'cadre integration show int_0123456789abcdef01234567');

  const verify = ig.command('verify <integrationId>').description('read the secret again and check the app permissions and the repository')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'POST', `${BASE}/${encodeURIComponent(id)}/verify`);
      printData(g, r, () => line(r));
    }));
  examples(verify, 'cadre integration verify int_0123456789abcdef01234567');

  const remove = ig.command('remove <integrationId>').description('delete an integration (its secret stays where it is)')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'DELETE', `${BASE}/${encodeURIComponent(id)}`);
      printData(g, r, () => `${id} removed`);
    }));
  examples(remove, 'cadre integration remove int_0123456789abcdef01234567');

  const pulls = ig.command('pulls <integrationId>').description('pull requests the agents opened or proposed, with their review and merge readiness')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `${BASE}/${encodeURIComponent(id)}/pulls`);
      const items = (r['pulls'] as Json[] | undefined) ?? [];
      printData(g, r, () => (items.length === 0 ? 'no pull requests yet' : table([['AGENT', 'STATUS', 'ACMF', 'PR', 'MERGE'], ...items.map((p) => [String(p['agent_id']), String(p['status']), String(p['acmf_mode']), String(p['url'] ?? p['branch']), (p['merge'] as Json)['ready'] ? 'ready' : `missing: ${((p['merge'] as Json)['missing'] as string[]).join(', ')}`])])));
    }));
  examples(pulls, 'cadre integration pulls int_0123456789abcdef01234567 --json');

  const secret = ig.command('secret <file>')
    .description('store the GitHub App credential (a JSON file with AppID, InstallationID, PrivateKeyPEM, WebhookSecret) in the server\'s secret store')
    .option('--name <name>', 'secret name', 'cadre/integrations/local/github')
    .action(async (file: string, o: { name: string }, cmd: Command) => {
      let body: unknown;
      try {
        body = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw usage(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not a JSON object'} (give a JSON file with AppID, InstallationID, PrivateKeyPEM, WebhookSecret)`);
      }
      await withTarget(cmd, async (t, g) => {
        const r = await call(t, 'PUT', `/api/v1/secrets/${encodeURIComponent(o.name)}`, body);
        printData(g, r, () => `secret ${o.name} stored (${String(r['backend'])}); the server never shows it again`);
      });
    });
  examples(secret, 'cadre integration secret ./github-app.json', 'cadre integration secret ./app.json --name acme/integrations/cust-7/github');
}
