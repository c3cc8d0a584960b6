/**
 * `cadre auth login` keeps one API key per server URL in a file only its owner can read (0600, in a
 * 0700 folder): `$CADRE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/cadre`, else `~/.config/cadre`
 * (`%APPDATA%\cadre` on Windows). Every command finds the key of the server it talks to there when
 * CADRE_API_KEY is not set. The last server logged in to is the default one.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { CliError } from './cli-error';

export interface SavedLogin {
  key: string;
  savedAt: string;
}

interface CredentialsFile {
  /** The server used when a command names none (the last login). */
  default: string | null;
  servers: Record<string, SavedLogin>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['CADRE_CONFIG_DIR']?.trim()) return path.resolve(env['CADRE_CONFIG_DIR']);
  if (process.platform === 'win32' && env['APPDATA']) return path.join(env['APPDATA'], 'cadre');
  const xdg = env['XDG_CONFIG_HOME']?.trim();
  return path.join(xdg ? path.resolve(xdg) : path.join(homedir(), '.config'), 'cadre');
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'credentials.json');
}

/** A URL as the file keys it: no trailing slash, lower-case scheme and host. */
export function normalizeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    throw new CliError(`"${url}" is not a URL (e.g. http://127.0.0.1:7450)`, 2);
  }
}

export function readCredentials(env: NodeJS.ProcessEnv = process.env): CredentialsFile {
  const file = credentialsFile(env);
  if (!existsSync(file)) return { default: null, servers: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<CredentialsFile>;
    return { default: typeof parsed.default === 'string' ? parsed.default : null, servers: parsed.servers && typeof parsed.servers === 'object' ? parsed.servers : {} };
  } catch {
    throw new CliError(`${file} is not valid JSON; remove it and log in again (cadre auth login)`);
  }
}

function write(data: CredentialsFile, env: NodeJS.ProcessEnv): void {
  const file = credentialsFile(env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written to a new 0600 file then renamed: the key is never readable by others, not even for a moment.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export function saveLogin(url: string, key: string, env: NodeJS.ProcessEnv = process.env, makeDefault = true): void {
  const data = readCredentials(env);
  const u = normalizeUrl(url);
  data.servers[u] = { key, savedAt: new Date().toISOString() };
  if (makeDefault) data.default = u;
  write(data, env);
}

/** Removes the login of `url`; false when there was none. */
export function removeLogin(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const data = readCredentials(env);
  const u = normalizeUrl(url);
  if (!data.servers[u]) return false;
  delete data.servers[u];
  if (data.default === u) data.default = Object.keys(data.servers).find((s) => !s.startsWith('embedded:')) ?? null;
  write(data, env);
  return true;
}

export function loginOf(url: string, env: NodeJS.ProcessEnv = process.env): SavedLogin | null {
  return readCredentials(env).servers[normalizeUrl(url)] ?? null;
}

/** The embedded engine's own key for a data directory, kept beside the logins (`embedded:<dir>`). */
export function embeddedKeyOf(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | null {
  return readCredentials(env).servers[`embedded:${dataDir}`]?.key ?? null;
}

export function saveEmbeddedKey(dataDir: string, key: string, env: NodeJS.ProcessEnv = process.env): void {
  const data = readCredentials(env);
  data.servers[`embedded:${dataDir}`] = { key, savedAt: new Date().toISOString() };
  write(data, env);
}
