/**
 * Multi-root workspaces: each folder is its own workspace for the agents. A command works on the
 * folder of the active editor's file, the only folder, or the folder the person picks.
 */
import * as vscode from 'vscode';

/** The folder's URI as the server names it; undefined = none open (the server's default); null = the pick was cancelled. */
export async function commandFolder(title: string): Promise<string | undefined | null> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) return undefined;
  if (folders.length === 1) return folders[0]!.uri.toString();
  const doc = vscode.window.activeTextEditor?.document;
  const own = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
  if (own) return own.uri.toString();
  const pick = await vscode.window.showWorkspaceFolderPick({ placeHolder: `${title}: which folder?` });
  return pick ? pick.uri.toString() : null;
}

/** The active editor's file relative to its own workspace folder (the agents' `files` input). */
export function workspaceFile(): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc && doc.uri.scheme === 'file' ? vscode.workspace.asRelativePath(doc.uri, false) : undefined;
}
