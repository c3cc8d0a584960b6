import { EXIT, type ExitCode } from './exit-codes';

/** An error the CLI reports as one `cadre: <message>` line on stderr, with its exit code (exit-codes.ts). */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: ExitCode = EXIT.FAILED) {
    super(message);
  }
}

/** A usage error (exit 2): found before anything was sent. */
export function usage(message: string): CliError {
  return new CliError(message, EXIT.USAGE);
}
