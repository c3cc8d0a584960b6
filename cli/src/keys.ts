/**
 * `cadre keys create|list|revoke|generate`: API key management.
 *
 * When a server owns the data directory (its lock's pid proves the lock's token on its port: see
 * server/src/host/owner-lock.ts), the commands go through its admin endpoints (`/v1/admin/keys`)
 * with the key in `CADRE_API_KEY`; without that variable they refuse with one line rather than touch
 * a store another process owns. The key is never sent to a port that did not prove the token. When
 * no server runs, the CLI takes the data directory's lock for the moment of the change, opens the
 * store, changes it and releases the lock (a server starting meanwhile waits for it).
 * `generate` prints a new key in the generated form (for CADRE_API_KEY) and stores nothing.
 */
import { type Command, Option } from 'commander';
import { API_PLANS, type ApiKeyRecord, ApiKeys, type ApiKeyView, type ApiPlan, generateKey, keyView } from '../../server/src/auth/api-keys';
import { type Role, ROLES } from '../../server/src/auth/roles';
import { type SessionRecord, Sessions, SESSIONS_COLLECTION } from '../../server/src/auth/sessions';
import { COLLECTIONS } from '../../server/src/engine/ports';
import { OwnerLock } from '../../server/src/host/owner-lock';
import { version as VERSION } from '../../package.json';
import { CliError } from './cli-error';
import { examples, globals, table } from './context';
import { dataDirOf } from './connection';
import { loginOf } from './credentials';
import { engine } from './engine';
import { EXIT } from './exit-codes';
import { ApiClient } from './http-client';

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  plan: ApiPlan;
  role: Role;
  label: string;
  createdAt: string;
}

/** The three operations, over HTTP or directly on the store. */
interface KeysBackend {
  readonly where: string;
  create(label: string, plan: ApiPlan, role: Role): Promise<CreatedKey>;
  list(): Promise<ApiKeyView[]>;
  revoke(id: string): Promise<ApiKeyView>;
}

function httpBackend(base: string, key: string | null, keySource: string): KeysBackend {
  const api = new ApiClient(base, key, { keySource, timeoutMs: 10_000 });
  return {
    where: `the server at ${base}`,
    create: (label, plan, role) => api.call<CreatedKey>('POST', '/v1/admin/keys', { label, plan, role }),
    list: async () => (await api.call<{ keys: ApiKeyView[] }>('GET', '/v1/admin/keys')).keys,
    revoke: (id) => api.call<ApiKeyView>('DELETE', `/v1/admin/keys/${encodeURIComponent(id)}`),
  };
}

function directBackend(keys: ApiKeys, sessions: Sessions, dataDir: string): KeysBackend {
  return {
    where: `the store in ${dataDir}`,
    create: async (label, plan, role) => {
      const { key, record } = await keys.create(label, plan, role);
      return { id: record.id, key, prefix: record.prefix, plan: record.plan, role, label: record.label, createdAt: record.createdAt };
    },
    list: async () => keys.list().map(keyView),
    revoke: async (id) => {
      if (!keys.get(id)) throw new CliError(`no API key with id "${id}"`);
      const record = await keys.revoke(id);
      await sessions.endForKey(id);
      return keyView(record);
    },
  };
}

/** CADRE_API_KEY, else the key `cadre auth login` kept for the URL. */
function keyOf(url: string): { key: string | null; source: string } {
  const env = process.env['CADRE_API_KEY']?.trim();
  if (env) return { key: env, source: 'CADRE_API_KEY' };
  const saved = loginOf(url);
  return saved ? { key: saved.key, source: `the login saved for ${url}` } : { key: null, source: 'nowhere' };
}

function ownedBy(pid: number, dataDir: string): CliError {
  return new CliError(`a Cadre server (pid ${pid}) owns ${dataDir}; set CADRE_API_KEY to one of its API keys (or cadre auth login) to manage keys through its API`, EXIT.AUTH);
}

/** Runs `fn` against the owner's API, or against the store under the data directory's lock. */
export async function withKeysBackend<T>(dataDir: string, url: string | undefined, fn: (b: KeysBackend) => Promise<T>): Promise<T> {
  if (url) {
    const { key, source } = keyOf(url);
    if (!key) throw new CliError(`set CADRE_API_KEY to an API key of the server at ${url} (or cadre auth login --url ${url})`, EXIT.AUTH);
    return fn(httpBackend(url.replace(/\/+$/, ''), key, source));
  }
  // Only an owner that proves the lock's token gets the key; a stale lock (dead or reused pid) is taken over.
  const outcome = await OwnerLock.acquire(dataDir, VERSION);
  if (!outcome.owner) return viaOwner(outcome.info.pid, outcome.info.port, dataDir, fn);
  try {
    const { openStore, storeFilePath } = engine();
    const store = await openStore({ file: storeFilePath(dataDir) });
    try {
      const keys = new ApiKeys(store.collection<ApiKeyRecord>(COLLECTIONS.apiKeys));
      const sessions = new Sessions(store.collection<SessionRecord>(SESSIONS_COLLECTION), keys);
      return await fn(directBackend(keys, sessions, dataDir));
    } finally {
      await store.close();
    }
  } finally {
    outcome.lock.release();
  }
}

function viaOwner<T>(pid: number, port: number | null, dataDir: string, fn: (b: KeysBackend) => Promise<T>): Promise<T> {
  if (!port) throw new CliError(`the Cadre server (pid ${pid}) owning ${dataDir} is still starting; try again in a moment`, EXIT.UNREACHABLE);
  const url = `http://127.0.0.1:${port}`;
  const { key, source } = keyOf(url);
  if (!key) throw ownedBy(pid, dataDir);
  return fn(httpBackend(url, key, source));
}

export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('API keys: create (shown once), list, revoke, generate; through the owning server\'s API, or on the store when none runs');

  const create = keys.command('create').description('create an API key; it is printed once, only its hash is stored')
    .option('-l, --label <label>', 'label shown in lists', 'cli')
    .addOption(new Option('-p, --plan <plan>', 'rate-limit plan').choices(API_PLANS).default('enterprise'))
    .addOption(new Option('-r, --role <role>', 'what the key may decide: operator (run work), approver (also decide approvals, raise ACMF modes), admin (also manage keys)').choices(ROLES).default('operator'))
    .action(async (o: { label: string; plan: ApiPlan; role: Role }, cmd: Command) => {
      const g = globals(cmd);
      const created = await withKeysBackend(dataDirOf(g.dataDir), g.url, (b) => b.create(o.label, o.plan, o.role));
      if (g.json) return void process.stdout.write(JSON.stringify(created) + '\n');
      process.stdout.write(`Created API key ${created.id} (role ${created.role}, plan ${created.plan}, label "${created.label}")\n`);
      process.stdout.write(`Key (shown once; only its hash is stored): ${created.key}\n`);
    });
  examples(create, 'cadre keys create --role approver --label "release manager"', 'cadre keys create --json | jq -r .key');

  const list = keys.command('list').description('list API keys (never the keys themselves)')
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const all = await withKeysBackend(dataDirOf(g.dataDir), g.url, (b) => b.list());
      if (g.json) return void process.stdout.write(JSON.stringify(all) + '\n');
      if (all.length === 0) return void process.stdout.write('no API keys\n');
      const rows = [['ID', 'PREFIX', 'ROLE', 'PLAN', 'CREATED', 'STATUS', 'LABEL']];
      for (const k of all) rows.push([k.id, `${k.prefix}…`, k.role, k.plan, k.createdAt, k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.label]);
      process.stdout.write(table(rows));
    });
  examples(list, 'cadre keys list', 'cadre keys list --json');

  const generate = keys.command('generate')
    .description('print a new key in the generated form, for CADRE_API_KEY (an admin key once a server adopts it); stores nothing')
    .action(() => void process.stdout.write(`${generateKey()}\n`));
  examples(generate, 'export CADRE_API_KEY=$(cadre keys generate)');

  const revoke = keys.command('revoke').description('revoke an API key and end its sessions').argument('<id>', 'key id (key_...)')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const revoked = await withKeysBackend(dataDirOf(g.dataDir), g.url, (b) => b.revoke(id));
      if (g.json) return void process.stdout.write(JSON.stringify(revoked) + '\n');
      process.stdout.write(`Revoked API key ${revoked.id} (label "${revoked.label}") at ${revoked.revokedAt}; its sessions are ended\n`);
    });
  examples(revoke, 'cadre keys revoke key_0123456789abcdef');
}
