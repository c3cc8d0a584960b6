/**
 * The `cadre` entry point (dist/cli.js): parses the command line (program.ts) and turns every error
 * into one line on stderr with its exit code (exit-codes.ts); a stack trace only with --debug.
 */
import { CommanderError } from 'commander';
import { CliError } from './cli-error';
import { closeAllTargets } from './context';
import { EXIT } from './exit-codes';
import { buildCli, routeNaturalLanguage } from './program';

async function main(): Promise<void> {
  const debug = process.argv.includes('--debug');
  const program = buildCli();
  // `cadre ... | head`: a reader that went away ends the command quietly, as other Unix tools do.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.OK);
  });
  const onSignal = () => {
    void closeAllTargets().finally(() => process.exit(EXIT.INTERRUPTED));
  };
  process.once('SIGINT', onSignal);
  try {
    await program.parseAsync(routeNaturalLanguage(process.argv, program));
  } catch (err) {
    await closeAllTargets();
    if (err instanceof CommanderError) {
      // --help and --version end here with 0; everything else commander refuses is a usage error.
      process.exit(err.exitCode === 0 ? EXIT.OK : EXIT.USAGE);
    }
    if (err instanceof CliError) {
      process.stderr.write(`cadre: ${err.message}\n`);
      if (debug && err.stack) process.stderr.write(`${err.stack}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`cadre: ${(err as Error).message ?? String(err)}${debug ? '' : ' (--debug shows where)'}\n`);
    if (debug) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    process.exit(EXIT.FAILED);
  }
  // A command that leaves handles open (the embedded engine's timers are unref'd) still ends here.
  process.exitCode ??= EXIT.OK;
}

void main();
