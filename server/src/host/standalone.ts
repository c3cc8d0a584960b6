/**
 * The standalone door: serves the API until SIGTERM/SIGINT, then shuts down gracefully (in-flight
 * writes flushed, lock released). Used by `node dist/server.js --standalone` and `cadre serve`.
 */
import type { ServerOptions } from './options';
import { startRuntime } from './runtime';

export async function runStandalone(opts: ServerOptions, env: NodeJS.ProcessEnv): Promise<void> {
  const log = (line: string) => process.stderr.write(`[cadre] ${line}\n`);
  const runtime = await startRuntime({ dataDir: opts.dataDir, port: opts.port, workspaceDir: opts.workspaceDir, skillModules: opts.skillModules, env, log });
  if (runtime.attached) {
    process.stdout.write(`Cadre is already running for ${runtime.dataDir} at ${runtime.url} (pid ${runtime.ownerPid}); attached to it instead of opening the store\n`);
    return;
  }
  if (runtime.newApiKey) {
    process.stdout.write(`New API key (shown once; only its hash is stored): ${runtime.newApiKey}\n`);
  }
  process.stdout.write(`Cadre listening on ${runtime.url}\n`);
  if (runtime.configSource) log(`configuration from ${runtime.configSource}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down`);
    try {
      await runtime.close();
      process.exit(0);
    } catch (err) {
      log(`shutdown failed: ${(err as Error).message}`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
