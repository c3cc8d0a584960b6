/**
 * The editor's workspace folders as the server serves them: each folder is its own workspace for
 * the agents (a file's findings are named relative to its folder, a command on a file runs on that
 * folder, readiness checks one folder). The list follows workspace/didChangeWorkspaceFolders.
 *
 * The engine itself is one per server: its base configuration and the default workspace of a request
 * that names no folder are the first folder's, as when the server started; each other folder's own
 * .cadre.yaml applies to the executions on it (host/folder-settings.ts).
 */
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkspaceFolder, WorkspaceFoldersChangeEvent } from 'vscode-languageserver/node';
import type { WorkspaceFolderRow } from '../../../protocol/lsp';

function fsPath(uri: string): string | null {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : null;
  } catch {
    return null;
  }
}

/** `file` is `dir` or lies under it. */
function contains(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export class WorkspaceFolders {
  /** In the editor's order; only `file:` folders (the agents work on disk). */
  private rows: WorkspaceFolderRow[] = [];

  /** `fallbackDir`: the server's --workspace, served as the only folder when the editor sends none. */
  constructor(private readonly fallbackDir?: string) {
    if (fallbackDir) this.rows = [row({ uri: pathToFileURL(fallbackDir).href, name: path.basename(fallbackDir) })].flatMap((r) => r ?? []);
  }

  /** The folders of `initialize` (workspaceFolders, else rootUri). A --workspace given to the server comes first. */
  initialize(folders: WorkspaceFolder[] | null | undefined, rootUri: string | null | undefined): void {
    const given = folders && folders.length > 0 ? folders : rootUri ? [{ uri: rootUri, name: path.basename(fsPath(rootUri) ?? rootUri) }] : [];
    const rows = given.flatMap((f) => row(f) ?? []);
    const first = this.fallbackDir ? this.rows[0] : undefined;
    this.rows = first ? [first, ...rows.filter((r) => r.path !== first.path)] : rows;
  }

  /** workspace/didChangeWorkspaceFolders. Returns the folders removed (their documents' diagnostics go). */
  change(e: WorkspaceFoldersChangeEvent): WorkspaceFolderRow[] {
    const removed = this.rows.filter((r) => e.removed.some((f) => sameFolder(f.uri, r)));
    this.rows = this.rows.filter((r) => !removed.includes(r));
    for (const f of e.added) {
      const r = row(f);
      if (r && !this.rows.some((x) => x.path === r.path)) this.rows.push(r);
    }
    return removed;
  }

  list(): WorkspaceFolderRow[] {
    return this.rows.map((r) => ({ ...r }));
  }

  /** The first folder: the engine's configuration and the default workspace. */
  first(): WorkspaceFolderRow | undefined {
    return this.rows[0];
  }

  /** The folder that contains the document (the innermost, when folders nest); undefined outside every folder. */
  folderOf(uri: string): WorkspaceFolderRow | undefined {
    const file = fsPath(uri);
    if (!file) return undefined;
    let best: WorkspaceFolderRow | undefined;
    for (const r of this.rows) if (contains(r.path, file) && (!best || r.path.length > best.path.length)) best = r;
    return best;
  }

  /** A folder by the URI the client names (or its path); undefined when the server does not serve it. */
  find(uriOrPath: string): WorkspaceFolderRow | undefined {
    const p = fsPath(uriOrPath) ?? (path.isAbsolute(uriOrPath) ? uriOrPath : null);
    return p === null ? undefined : this.rows.find((r) => path.resolve(r.path) === path.resolve(p));
  }
}

function row(f: WorkspaceFolder): WorkspaceFolderRow | undefined {
  const p = fsPath(f.uri);
  return p ? { uri: pathToFileURL(p).href, name: f.name, path: p } : undefined;
}

function sameFolder(uri: string, r: WorkspaceFolderRow): boolean {
  const p = fsPath(uri);
  return p !== null && path.resolve(p) === path.resolve(r.path);
}
