/**
 * The standalone door: serves the API until SIGTERM/SIGINT, then shuts down gracefully (in-flight
 * writes flushed, lock released). Used by `node dist/server.js --standalone` and `cadre serve`.
 */
import { createWriteStream, mkdirSync, renameSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { ServerOptions } from './options';
import { startRuntime } from './runtime';

/** The server's log in its data directory (`cadre logs` prints and follows it). */
export const SERVER_LOG = 'server.log';
/** A log past this size at start is kept as server.log.1 (one generation) and a new one begun. */
const SERVER_LOG_MAX_BYTES = 5 * 1024 * 1024;

/** Every log line goes to stderr and, with its time, to the data directory's server.log. */
function serverLog(dataDir: string): (line: string) => void {
  const file = path.join(dataDir, SERVER_LOG);
  let stream: ReturnType<typeof createWriteStream> | null = null;
  try {
    mkdirSync(dataDir, { recursive: true });
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) > SERVER_LOG_MAX_BYTES) renameSync(file, `${file}.1`);
    stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
    // A log file that cannot be written never stops the server: stderr still has every line.
    stream.on('error', () => void (stream = null));
  } catch {
    stream = null;
  }
  return (line) => {
    process.stderr.write(`[cadre] ${line}\n`);
    stream?.write(`${new Date().toISOString()} ${line}\n`);
  };
}

/** What a person does after the first start: the key, how the CLI gets it, the first commands. */
function firstStartText(url: string, key: string): string {
  return [
    '',
    `New API key (shown once; only its hash is stored): ${key}`,
    '',
    'Next:',
    `  export CADRE_API_KEY=${key}`,
    `  # or keep it for the CLI: cadre auth login --url ${url}`,
    '  cadre status                 # the server, agents and approvals',
    '  cadre review --watch         # a real agent job on the current folder, live',
    '  Docs: docs/cli.md (every command), docs/api.md (the REST API)',
    '',
  ].join('\n') + '\n';
}

export async function runStandalone(opts: ServerOptions, env: NodeJS.ProcessEnv): Promise<void> {
  const log = serverLog(opts.dataDir);
  const runtime = await startRuntime({ dataDir: opts.dataDir, port: opts.port, workspaceDir: opts.workspaceDir, skillModules: opts.skillModules, env, log });
  if (runtime.attached) {
    process.stdout.write(`Cadre is already running for ${runtime.dataDir} at ${runtime.url} (pid ${runtime.ownerPid}); attached to it instead of opening the store\n`);
    return;
  }
  if (runtime.configSource) log(`configuration from ${runtime.configSource}`);
  // Last, after the start-up logs, so the key is not buried under them; one write with the listening
  // line, so whoever waits for that line has the key too.
  process.stdout.write(`Cadre listening on ${runtime.url}\n${runtime.newApiKey ? firstStartText(runtime.url, runtime.newApiKey) : ''}`);

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
