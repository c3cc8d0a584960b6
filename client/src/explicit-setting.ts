/**
 * A setting's value only where the user set it (user, workspace or workspace folder, the narrowest
 * first), never the declared default: unset, the server's configuration (each folder's `.cadre.yaml`,
 * or the install's) decides. Kept apart from `vscode` so it is tested without an editor.
 */

/** The levels of `WorkspaceConfiguration.inspect()` a user can set. */
export interface SettingLevels<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export function explicitValue<T>(levels: SettingLevels<T> | undefined): T | undefined {
  return levels?.workspaceFolderValue ?? levels?.workspaceValue ?? levels?.globalValue;
}
