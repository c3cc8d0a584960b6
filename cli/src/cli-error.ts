/** An error the CLI reports as one `cadre: <message>` line on stderr, exit code 1. */
export class CliError extends Error {}
