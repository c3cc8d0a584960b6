/**
 * Base of the sidebar trees: data is fetched from the server on demand and re-fetched when a
 * server event says it changed (debounced, so a burst of progress events costs one request).
 */
import * as vscode from 'vscode';

export abstract class RefreshingTree<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  protected readonly changed = new vscode.EventEmitter<T | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly debounceMs = 200) {}

  /** Asks VS Code to re-read the tree soon; repeated calls within the debounce window merge. */
  refresh(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire(undefined);
    }, this.debounceMs);
  }

  abstract getTreeItem(element: T): vscode.TreeItem;
  abstract getChildren(element?: T): vscode.ProviderResult<T[]>;

  dispose(): void {
    clearTimeout(this.timer);
    this.changed.dispose();
  }
}

/** A row that says why a tree is empty or failed, instead of an empty tree. */
export function messageItem(text: string, icon = 'info'): vscode.TreeItem {
  const item = new vscode.TreeItem(text, vscode.TreeItemCollapsibleState.None);
  item.iconPath = new vscode.ThemeIcon(icon);
  item.contextValue = 'message';
  return item;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
