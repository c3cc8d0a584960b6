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
import { VERSION } from '../../server/src/host/runtime';
import { openStore, storeFilePath } from '../../server/src/store/lowdb-store';
import { CliError } from './cli-error';

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

function httpBackend(base: string, key: string): KeysBackend {
  const call = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(base + p, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      throw new CliError(`no Cadre server answers at ${base}`);
    }
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: reported below
    }
    if (!res.ok) {
      const detail = (json as { detail?: string } | null)?.detail ?? `HTTP ${res.status}`;
      if (res.status === 401 || res.status === 403) throw new CliError(`the server at ${base} refused CADRE_API_KEY: ${detail}`);
      throw new CliError(detail);
    }
    return json as T;
  };
  return {
    where: `the server at ${base}`,
    create: (label, plan, role) => call<CreatedKey>('POST', '/v1/admin/keys', { label, plan, role }),
    list: async () => (await call<{ keys: ApiKeyView[] }>('GET', '/v1/admin/keys')).keys,
    revoke: (id) => call<ApiKeyView>('DELETE', `/v1/admin/keys/${encodeURIComponent(id)}`),
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

function envKey(): string | null {
  return process.env['CADRE_API_KEY']?.trim() || null;
}

function ownedBy(pid: number, dataDir: string): CliError {
  return new CliError(`a Cadre server (pid ${pid}) owns ${dataDir}; set CADRE_API_KEY to one of its API keys to manage keys through its API`);
}

/** Runs `fn` against the owner's API, or against the store under the data directory's lock. */
export async function withKeysBackend<T>(dataDir: string, url: string | undefined, fn: (b: KeysBackend) => Promise<T>): Promise<T> {
  if (url) {
    const key = envKey();
    if (!key) throw new CliError(`set CADRE_API_KEY to an API key of the server at ${url}`);
    return fn(httpBackend(url.replace(/\/+$/, ''), key));
  }
  // Only an owner that proves the lock's token gets the key; a stale lock (dead or reused pid) is taken over.
  const outcome = await OwnerLock.acquire(dataDir, VERSION);
  if (!outcome.owner) return viaOwner(outcome.info.pid, outcome.info.port, dataDir, fn);
  try {
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
  const key = envKey();
  if (!key) throw ownedBy(pid, dataDir);
  if (!port) throw new CliError(`the Cadre server (pid ${pid}) owning ${dataDir} is still starting; try again in a moment`);
  return fn(httpBackend(`http://127.0.0.1:${port}`, key));
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export function registerKeysCommands(program: Command, dataDirOf: (opt: string | undefined) => string): void {
  const keys = program.command('keys').description('API keys: create (shown once), list, revoke');
  const where = (c: Command) =>
    c.option('-d, --data-dir <dir>', 'data directory (default $CADRE_HOME, else ~/.cadre)')
      .option('-u, --url <url>', 'manage the keys of the server at this URL (needs CADRE_API_KEY)')
      .option('--json', 'print JSON');

  where(keys.command('create').description('create an API key; it is printed once, only its hash is stored'))
    .option('-l, --label <label>', 'label shown in lists', 'cli')
    .addOption(new Option('-p, --plan <plan>', 'rate-limit plan').choices(API_PLANS).default('enterprise'))
    .addOption(new Option('-r, --role <role>', 'what the key may decide: operator (run work), approver (also decide approvals, raise ACMF modes), admin (also manage keys)').choices(ROLES).default('operator'))
    .action(async (o: { dataDir?: string; url?: string; json?: boolean; label: string; plan: ApiPlan; role: Role }) => {
      const created = await withKeysBackend(dataDirOf(o.dataDir), o.url, (b) => b.create(o.label, o.plan, o.role));
      if (o.json) return void process.stdout.write(JSON.stringify(created) + '\n');
      process.stdout.write(`Created API key ${created.id} (role ${created.role}, plan ${created.plan}, label "${created.label}")\n`);
      process.stdout.write(`Key (shown once; only its hash is stored): ${created.key}\n`);
    });

  where(keys.command('list').description('list API keys (never the keys themselves)'))
    .action(async (o: { dataDir?: string; url?: string; json?: boolean }) => {
      const list = await withKeysBackend(dataDirOf(o.dataDir), o.url, (b) => b.list());
      if (o.json) return void process.stdout.write(JSON.stringify(list) + '\n');
      if (list.length === 0) return void process.stdout.write('no API keys\n');
      const rows = [['ID', 'PREFIX', 'ROLE', 'PLAN', 'CREATED', 'STATUS', 'LABEL']];
      for (const k of list) rows.push([k.id, `${k.prefix}…`, k.role, k.plan, k.createdAt, k.revokedAt ? `revoked ${k.revokedAt}` : 'active', k.label]);
      process.stdout.write(table(rows));
    });

  keys.command('generate')
    .description('print a new key in the generated form, for CADRE_API_KEY (an admin key once a server adopts it); stores nothing')
    .action(() => void process.stdout.write(`${generateKey()}\n`));

  where(keys.command('revoke').description('revoke an API key and end its sessions').argument('<id>', 'key id (key_...)'))
    .action(async (id: string, o: { dataDir?: string; url?: string; json?: boolean }) => {
      const revoked = await withKeysBackend(dataDirOf(o.dataDir), o.url, (b) => b.revoke(id));
      if (o.json) return void process.stdout.write(JSON.stringify(revoked) + '\n');
      process.stdout.write(`Revoked API key ${revoked.id} (label "${revoked.label}") at ${revoked.revokedAt}; its sessions are ended\n`);
    });
}
