/**
 * The CLI's exit codes (docs/cli.md): scripts branch on them, so each means one thing and never
 * changes. A command that prints data exits 0 once it printed it; one that follows an execution exits
 * with what the execution came to.
 */
export const EXIT = {
  /** Done: the command did what it said (an execution it followed completed). */
  OK: 0,
  /** The execution failed or was cancelled, or the server refused the request (validation, not found, conflict). */
  FAILED: 1,
  /** Usage: an unknown command or option, a missing or malformed argument. Nothing was sent. */
  USAGE: 2,
  /** No server answers at the URL (or the embedded engine could not start). */
  UNREACHABLE: 3,
  /** Authentication or authorization: no key, a wrong or revoked key, or a key without the role the action needs. */
  AUTH: 4,
  /** The execution waits for a person's approval (the line before says which command continues it). */
  AWAITING_APPROVAL: 5,
  /** Interrupted with Ctrl+C (128 + SIGINT). */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
