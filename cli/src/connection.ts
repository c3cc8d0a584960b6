/**
 * Which server a command talks to, with which key. In order:
 *   1. `--url` (or CADRE_URL): that server, nothing else;
 *   2. the server that owns the data directory (it proved its lock's token: server/src/host/owner-lock.ts);
 *   3. the server of the last `cadre auth login`;
 *   4. a server answering on the default port (7450, or CADRE_PORT);
 *   5. else the embedded engine in this process (embedded.ts), said in one line on stderr; `--no-embedded`
 *      (or CADRE_NO_EMBEDDED=1) makes that an "unreachable" error (exit 3) instead.
 * The key: CADRE_API_KEY, else the login saved for that URL (credentials.ts).
 */
import * as path from 'node:path';
import { DEFAULT_PORT, parseServerArgs } from '../../server/src/host/options';
import { provenOwner, readLock } from '../../server/src/host/owner-lock';
import { CliError } from './cli-error';
import { credentialsFile, embeddedKeyOf, loginOf, normalizeUrl, readCredentials } from './credentials';
import { type Embedded, startEmbedded } from './embedded';
import { EXIT } from './exit-codes';
import { ApiClient, serverAnswers } from './http-client';

/** The options every command takes (declared once, on the program). */
export interface GlobalOptions {
  url?: string;
  dataDir?: string;
  json?: boolean;
  debug?: boolean;
  yes?: boolean;
  color?: boolean;
  embedded?: boolean;
}

export interface Target {
  api: ApiClient;
  /** Set when the engine runs in this process: commands wait for their executions before exiting. */
  embedded: Embedded | null;
  close(): Promise<void>;
}

export function dataDirOf(dir: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return parseServerArgs(dir ? ['--data-dir', dir] : [], env).dataDir;
}

/** The local server the CLI looks for when nothing else names one: 127.0.0.1 on CADRE_PORT, else 7450. */
export function defaultUrl(env: NodeJS.ProcessEnv = process.env): string {
  const p = env['CADRE_PORT']?.trim();
  if (p && !/^\d{1,5}$/.test(p)) throw new CliError(`CADRE_PORT must be a port number (got "${p}")`, EXIT.USAGE);
  return `http://127.0.0.1:${p || DEFAULT_PORT}`;
}

function keyFor(url: string, env: NodeJS.ProcessEnv): { key: string | null; source: string } {
  const envKey = env['CADRE_API_KEY']?.trim();
  if (envKey) return { key: envKey, source: 'CADRE_API_KEY' };
  const login = loginOf(url, env);
  return login ? { key: login.key, source: `the login saved for ${normalizeUrl(url)} (cadre auth login)` } : { key: null, source: 'nowhere' };
}

function remote(url: string, env: NodeJS.ProcessEnv): Target {
  const { key, source } = keyFor(url, env);
  return { api: new ApiClient(normalizeUrl(url), key, { keySource: source }), embedded: null, close: async () => {} };
}

/** Only where the server is, without starting anything (for commands that never run the engine). */
export async function resolveUrl(g: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const explicit = g.url ?? env['CADRE_URL']?.trim();
  if (explicit) return normalizeUrl(explicit);
  const dataDir = dataDirOf(g.dataDir, env);
  const lock = readLock(path.join(dataDir, 'cadre.lock'));
  if (lock?.port && (await provenOwner(dataDir))) return `http://127.0.0.1:${lock.port}`;
  const saved = readCredentials(env).default;
  if (saved) return saved;
  return defaultUrl(env);
}

export async function connect(g: GlobalOptions, env: NodeJS.ProcessEnv = process.env, say: (line: string) => void = (l) => void process.stderr.write(`${l}\n`)): Promise<Target> {
  const explicit = g.url ?? env['CADRE_URL']?.trim();
  if (explicit) return remote(explicit, env);
  const dataDir = dataDirOf(g.dataDir, env);
  const lock = readLock(path.join(dataDir, 'cadre.lock'));
  if (lock?.port) {
    // The key goes only to a process that proves the lock's token; a stale lock is taken over below.
    if (await provenOwner(dataDir)) {
      const url = `http://127.0.0.1:${lock.port}`;
      // The key the embedded engine used on this directory is one of this owner's keys too.
      const embeddedKey = env['CADRE_API_KEY']?.trim() || loginOf(url, env) ? null : embeddedKeyOf(dataDir, env);
      return embeddedKey ? { api: new ApiClient(url, embeddedKey, { keySource: `the CLI's key for ${dataDir}` }), embedded: null, close: async () => {} } : remote(url, env);
    }
  }
  const saved = readCredentials(env).default;
  if (saved) return remote(saved, env);
  const fallback = defaultUrl(env);
  if (await serverAnswers(fallback)) return remote(fallback, env);
  if (g.embedded === false || env['CADRE_NO_EMBEDDED'] === '1') {
    throw new CliError(`no Cadre server answers at ${fallback} (start one with: cadre serve, or name one with --url)`, EXIT.UNREACHABLE);
  }
  say(`cadre: no server at ${fallback}; running the engine in this process on ${dataDir} (embedded; cadre serve starts a server)`);
  const embedded = await startEmbedded({ dataDir, workspaceDir: process.cwd(), env, log: g.debug ? (l) => say(`[cadre] ${l}`) : () => {} });
  if (embedded.newApiKey) say(`cadre: first start of ${dataDir}: its admin API key is saved for the CLI in ${credentialsFile(env)}`);
  return { api: new ApiClient(embedded.url, embedded.key, { keySource: 'the embedded engine' }), embedded, close: () => embedded.close() };
}

