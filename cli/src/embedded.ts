/**
 * The embedded engine: with no server to talk to, the CLI runs the same composition as `cadre serve`
 * (server/src/host/runtime.ts `startRuntime`: store, audit trail, engine, workers, HTTP door) in this
 * process on an ephemeral loopback port, and talks to it with the same HTTP client as to a remote
 * server. So there is one code path for every command, and the data directory is the one a server
 * started later would open (executions this process leaves unfinished resume there).
 *
 * The CLI's key for it is kept in the credentials file (`embedded:<dataDir>`): the first start's key,
 * or one the CLI creates in the store (label "cli (embedded)") when the store already had keys.
 */
import type { Runtime } from '../../server/src/host/runtime';
import { CliError } from './cli-error';
import { embeddedKeyOf, saveEmbeddedKey } from './credentials';
import { engine } from './engine';
import { EXIT } from './exit-codes';

export interface Embedded {
  url: string;
  key: string;
  dataDir: string;
  /** A key made on this first start of the data directory (printed once, like the server does). */
  newApiKey: string | null;
  close(): Promise<void>;
}

export async function startEmbedded(opts: { dataDir: string; workspaceDir: string; env: NodeJS.ProcessEnv; log: (line: string) => void }): Promise<Embedded> {
  let runtime: Runtime;
  try {
    // Loaded only here: the engine's composition is most of the bundle, and most commands never start it.
    const { startRuntime } = engine();
    runtime = await startRuntime({ dataDir: opts.dataDir, port: 0, workspaceDir: opts.workspaceDir, env: opts.env, log: opts.log });
  } catch (err) {
    throw new CliError(`the embedded engine could not start on ${opts.dataDir}: ${(err as Error).message}`, EXIT.UNREACHABLE);
  }
  if (runtime.attached) {
    // Another process proved it owns the directory meanwhile: talk to it instead.
    const key = opts.env['CADRE_API_KEY']?.trim() || embeddedKeyOf(opts.dataDir, opts.env);
    if (!key) throw new CliError(`a Cadre server (pid ${runtime.ownerPid}) owns ${opts.dataDir} at ${runtime.url}; log in to it: cadre auth login --url ${runtime.url}`, EXIT.AUTH);
    return { url: runtime.url, key, dataDir: opts.dataDir, newApiKey: null, close: async () => {} };
  }
  const envKey = opts.env['CADRE_API_KEY']?.trim();
  let key: string;
  if (envKey) key = envKey; // adopted by startRuntime as an admin key
  else if (runtime.newApiKey) key = runtime.newApiKey;
  else {
    const saved = embeddedKeyOf(opts.dataDir, opts.env);
    key = saved && runtime.keys.verify(saved) ? saved : (await runtime.keys.create('cli (embedded)', 'enterprise', 'admin')).key;
  }
  if (!envKey) saveEmbeddedKey(opts.dataDir, key, opts.env);
  return { url: runtime.url, key, dataDir: opts.dataDir, newApiKey: runtime.newApiKey, close: () => runtime.close() };
}
