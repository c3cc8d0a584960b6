/**
 * Action kinds (ProposedAction.kind): the one table that ACMF risk (acmf/risk.ts), the Review gates
 * (rigor/gate-evaluators.ts) and the agent workers (the kinds `allowed()` is asked for) all read.
 * An unknown kind is treated as a change inside the workspace (low risk, mutating), never as a read.
 */

/** Kinds that only look: they change nothing (unless flagged external/production/destructive). */
export const READ_KINDS: ReadonlySet<string> = new Set([
  'read', 'read_file', 'list_files', 'list', 'search', 'grep', 'stat', 'analyze', 'scan', 'inspect',
  'parse', 'git_log', 'git_diff', 'git_status', 'git_show', 'git_blame', 'read_config', 'read_metrics',
  'security_scan', 'secret_scan', 'dependency_audit', 'lint',
]);

/** Kinds that destroy something, with the reason they give. */
export const DESTRUCTIVE_KINDS: Readonly<Record<string, string>> = {
  delete_file: 'deletes files',
  delete_files: 'deletes files',
  delete_directory: 'deletes a directory',
  delete: 'deletes data',
  drop_table: 'deletes data (drops a table)',
  delete_branch: 'deletes a git branch',
  git_rewrite_history: 'rewrites git history',
  git_rebase: 'rewrites git history (rebase)',
  git_reset_hard: 'rewrites git history (hard reset)',
  git_amend: 'rewrites git history (amend)',
  git_filter_repo: 'rewrites git history (filter-repo)',
  git_force_push: 'force-pushes (overwrites remote history)',
  force_push: 'force-pushes (overwrites remote history)',
};

/** Kinds whose effect leaves the machine. */
export const EXTERNAL_KINDS: ReadonlySet<string> = new Set([
  'git_push', 'git_force_push', 'force_push', 'delete_branch', 'open_pr', 'create_pr', 'update_pr', 'merge_pr',
  'close_pr', 'comment_pr', 'call_webhook', 'send_webhook', 'http_request', 'network', 'notify', 'send_message',
  'create_issue', 'update_issue', 'deploy', 'deploy_staging', 'deploy_production', 'publish', 'publish_package',
]);

/** Kinds that target production whatever their flags say. */
export const PRODUCTION_KINDS: ReadonlySet<string> = new Set(['deploy_production', 'production_deploy', 'rollback_production']);

/** Kinds that change the workspace (known, so that the reason can say so). */
export const WRITE_KINDS: ReadonlySet<string> = new Set([
  'write_file', 'create_file', 'edit_file', 'patch_file', 'apply_patch', 'rename_file', 'move_file', 'format',
  'git_commit', 'git_checkout', 'create_branch', 'git_merge', 'run_command', 'run_tests', 'install_dependencies',
]);

/** Tokens of a kind (split on `_`, `-`, `.`) that mark it as touching secrets, auth or security configuration. */
export const SECURITY_KIND_TOKENS: ReadonlySet<string> = new Set([
  'secret', 'secrets', 'credential', 'credentials', 'auth', 'oauth', 'permission', 'permissions', 'iam', 'acl',
  'rbac', 'password', 'token', 'tokens', 'certificate', 'security',
]);

/**
 * Kinds that change how agents are judged rather than the workspace (adapt-ai's proposals): a gate
 * threshold or an ACMF mode of an agent, a finding suppressed. Applied only through ACMF.
 */
export const ADAPTATION_KINDS: ReadonlySet<string> = new Set(['tune_agent', 'suppress_finding']);

export const KNOWN_CHANGE_KINDS: ReadonlySet<string> = new Set([
  ...READ_KINDS, ...WRITE_KINDS, ...EXTERNAL_KINDS, ...PRODUCTION_KINDS, ...Object.keys(DESTRUCTIVE_KINDS), ...ADAPTATION_KINDS,
]);

/** Kinds that rewrite history or overwrite a remote: the destructive-change gate requires an approval for each. */
export const HISTORY_REWRITE_KINDS: ReadonlySet<string> = new Set([
  'git_rewrite_history', 'git_rebase', 'git_reset_hard', 'git_amend', 'git_filter_repo', 'git_force_push', 'force_push',
]);

/** Kinds that delete files or data. */
export const DELETE_KINDS: ReadonlySet<string> = new Set(['delete_file', 'delete_files', 'delete_directory', 'delete', 'drop_table', 'delete_branch']);

/** True when an action of this kind changes something (every kind that is not a pure read, unknown kinds included). */
export function isMutatingKind(kind: string): boolean {
  return !READ_KINDS.has(kind);
}

/** Every kind the table names, reads first: the kinds a worker asks `allowed()` about when a call starts. */
export const KNOWN_ACTION_KINDS: readonly string[] = [...KNOWN_CHANGE_KINDS];
