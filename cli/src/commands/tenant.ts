/**
 * `cadre tenant create|list|show|update|delete|key|me`: the server's tenants (POST|GET /v1/admin/tenants,
 * GET|PATCH|DELETE /v1/admin/tenants/{id}, POST /v1/admin/tenants/{id}/keys, GET /v1/tenant). All but
 * `me` need a key of the install (the default tenant); the server answers 403 install_only otherwise.
 */
import type { Command } from 'commander';
import { usage } from '../cli-error';
import type { Target } from '../connection';
import type { Json } from '../http-client';
import { examples, printData, table, withTarget } from '../context';
import { ROLES } from '../../../server/src/auth/roles';

const QUOTAS = ['executionsPerDay', 'concurrentExecutions', 'projects', 'webhooks'] as const;
const UNSUPPORTED = 'this server has no tenants yet (no /v1/admin/tenants route); update it';

/** `--quota projects=5` (repeatable); `none` lifts a limit. */
function quotasOf(list: string[]): Record<string, number | null> | undefined {
  if (list.length === 0) return undefined;
  const out: Record<string, number | null> = {};
  for (const q of list) {
    const m = /^([A-Za-z]+)=(\d+|none)$/.exec(q.trim());
    if (!m || !(QUOTAS as readonly string[]).includes(m[1]!)) throw usage(`--quota "${q}": expected <name>=<count|none> with name one of ${QUOTAS.join(', ')}`);
    out[m[1]!] = m[2] === 'none' ? null : Number(m[2]);
  }
  return out;
}

function usageLine(t: Json): string {
  const u = (t['usage'] as Json[] | undefined) ?? [];
  return u.map((q) => `${String(q['name'])} ${String(q['used'])}/${q['limit'] === null ? '∞' : String(q['limit'])}${q['exceeded'] ? ' (at limit)' : ''}`).join(', ');
}

function describe(t: Json): string {
  return [`${String(t['id'])} ${String(t['name'])}${t['deletedAt'] ? ` (deleted ${String(t['deletedAt'])})` : ''}`, `  usage: ${usageLine(t)}`].join('\n');
}

export function registerTenantCommands(program: Command): void {
  const tn = program.command('tenant').description("tenants: who owns keys, executions, projects and webhooks (the install's admin)");
  const call = (t: Target, method: string, p: string, body?: unknown) => t.api.call<Json>(method, p, body, { notFound: UNSUPPORTED });
  const collect = (v: string, all: string[]) => [...all, v];

  const create = tn.command('create <name>').description('create a tenant (its keys come from `cadre tenant key`)')
    .option('-q, --quota <name=count>', `a quota (repeatable): ${QUOTAS.join(', ')}`, collect, [] as string[])
    .action(async (name: string, o: { quota: string[] }, cmd: Command) => {
      const quotas = quotasOf(o.quota);
      await withTarget(cmd, async (t, g) => {
        const r = await call(t, 'POST', '/v1/admin/tenants', { name, ...(quotas ? { quotas } : {}) });
        printData(g, r, () => `${describe(r)}\nnext: cadre tenant key ${String(r['id'])} --label "${name} admin"`);
      });
    });
  examples(create, 'cadre tenant create acme --quota projects=5 --quota executionsPerDay=200');

  const list = tn.command('list').description('tenants with their usage against quotas')
    .option('--all', 'deleted tenants too')
    .action(async (o: { all?: boolean }, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `/v1/admin/tenants${o.all ? '?include_deleted=true' : ''}`);
      const items = (r['tenants'] as Json[] | undefined) ?? [];
      printData(g, r, () => table([['ID', 'NAME', 'USAGE', 'DELETED'], ...items.map((x) => [String(x['id']), String(x['name']), usageLine(x), x['deletedAt'] ? String(x['deletedAt']) : '-'])]));
    }));
  examples(list, 'cadre tenant list', 'cadre tenant list --all --json');

  const show = tn.command('show <tenantId>').description('one tenant: quotas, usage, subscription')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', `/v1/admin/tenants/${encodeURIComponent(id)}`);
      printData(g, r, () => describe(r));
    }));
  examples(show, 'cadre tenant show tnt_0123456789abcdef01234567');

  const update = tn.command('update <tenantId>').description('rename a tenant or change its quotas')
    .option('--name <name>', 'the new name')
    .option('-q, --quota <name=count|none>', 'a quota to set or lift (repeatable)', collect, [] as string[])
    .action(async (id: string, o: { name?: string; quota: string[] }, cmd: Command) => {
      const quotas = quotasOf(o.quota);
      if (!o.name && !quotas) throw usage('nothing to change: give --name or --quota');
      await withTarget(cmd, async (t, g) => {
        const r = await call(t, 'PATCH', `/v1/admin/tenants/${encodeURIComponent(id)}`, { ...(o.name ? { name: o.name } : {}), ...(quotas ? { quotas } : {}) });
        printData(g, r, () => describe(r));
      });
    });
  examples(update, 'cadre tenant update tnt_0123456789abcdef01234567 --quota projects=none --name "acme corp"');

  const del = tn.command('delete <tenantId>').description('delete a tenant: its keys are revoked at once, its records stay readable to the install')
    .action(async (id: string, _o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'DELETE', `/v1/admin/tenants/${encodeURIComponent(id)}`);
      printData(g, r, () => `${id} deleted; its keys are revoked`);
    }));
  examples(del, 'cadre tenant delete tnt_0123456789abcdef01234567');

  const key = tn.command('key <tenantId>').description("create a key of a tenant (shown once; default role admin: the tenant's own administrator)")
    .option('--label <label>', 'what the key is for', 'api key')
    .option('--role <role>', `${ROLES.join(', ')}`, 'admin')
    .action(async (id: string, o: { label: string; role: string }, cmd: Command) => {
      if (!(ROLES as readonly string[]).includes(o.role)) throw usage(`--role "${o.role}": expected one of ${ROLES.join(', ')}`);
      await withTarget(cmd, async (t, g) => {
        const r = await call(t, 'POST', `/v1/admin/tenants/${encodeURIComponent(id)}/keys`, { label: o.label, role: o.role });
        printData(g, r, () => `${String(r['id'])} (${String(r['role'])}) of ${id}\nkey (shown once, store it now): ${String(r['key'])}`);
      });
    });
  examples(key, 'cadre tenant key tnt_0123456789abcdef01234567 --label "acme CI" --role operator');

  const me = tn.command('me').description("the tenant of the key in use, with its usage against quotas")
    .action(async (_o: unknown, cmd: Command) => withTarget(cmd, async (t, g) => {
      const r = await call(t, 'GET', '/v1/tenant');
      printData(g, r, () => describe(r));
    }));
  examples(me, 'cadre tenant me --json');
}
