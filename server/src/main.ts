/**
 * Entry of `dist/server.js`: a language server (spawned by the extension over IPC or stdio) or,
 * with `--standalone`, the local API server. Both host the same engine.
 */
import { isEngineError } from './engine/errors';
import { parseServerArgs, SERVER_USAGE, UsageError } from './host/options';
import { runStandalone } from './host/standalone';
import { runLanguageServer } from './lsp/language-server';

function fail(message: string, code = 1): never {
  process.stderr.write(`cadre: ${message}\n`);
  process.exit(code);
}

function main(): void {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SERVER_USAGE);
    return;
  }
  let opts;
  try {
    opts = parseServerArgs(argv, process.env);
  } catch (err) {
    if (err instanceof UsageError) fail(`${err.message}\n${SERVER_USAGE}`, 2);
    throw err;
  }
  if (opts.standalone) {
    runStandalone(opts, process.env).catch((err: unknown) => fail(isEngineError(err) ? err.message : (err as Error).message));
  } else if (argv.some((a) => /^--(stdio|node-ipc|socket|pipe)/.test(a))) {
    runLanguageServer(opts, process.env);
  } else {
    fail(`no transport given: pass --standalone to serve the API, or --stdio / --node-ipc for an editor\n${SERVER_USAGE}`, 2);
  }
}

main();
