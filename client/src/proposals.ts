/**
 * Agent-proposed edits in the editor: a diff preview of each file (the working copy against the
 * agent's version), written to the working tree only when a person applies them, and only onto the
 * exact content the agent started from (never over newer or uncommitted work).
 */
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { ProposedChangesRequest, type ProposedChange, type ProposedFile } from '../../protocol/lsp';
import { ClientRequests } from '../../protocol/lsp-messages';
import type { ServerHost } from './server-host';

export const PROPOSAL_SCHEME = 'cadre-proposal';
/** More files than this open as a list to pick from rather than as diff tabs. */
const MAX_DIFF_TABS = 5;

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class ProposalReviewer implements vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly registration: vscode.Disposable;

  constructor(private readonly host: ServerHost, private readonly output: vscode.LogOutputChannel, private readonly who: () => string) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, {
      provideTextDocumentContent: (uri) => this.contents.get(uri.toString()) ?? '',
    });
  }

  /** Fetches an execution's proposed changes, opens their diffs and offers to apply them. */
  async show(executionId: string): Promise<void> {
    const { changes } = await this.host.request(ClientRequests.changes, { executionId } satisfies ProposedChangesRequest.Params);
    if (changes.length === 0) {
      void vscode.window.showInformationMessage(`Cadre: ${executionId} proposed no file changes`);
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!folder) throw new Error('open a folder to review proposed changes');
    const files = changes.flatMap((c) => c.files.map((f) => ({ change: c, file: f, uri: vscode.Uri.joinPath(folder, f.path) })));
    const withContent = files.filter((f) => f.file.after !== null);
    if (withContent.length === 0) {
      // Nothing to preview file by file: show the diff itself.
      const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: changes.map((c) => c.diff).join('\n') });
      await vscode.window.showTextDocument(doc, { preview: true });
      return;
    }
    for (const f of withContent.slice(0, MAX_DIFF_TABS)) await this.openDiff(executionId, f.change, f.file, f.uri);
    const first = changes[0]!;
    const where = first.mode === 'branch' ? `committed on branch ${first.branch}` : 'proposed only (nothing written)';
    const choice = await vscode.window.showInformationMessage(
      `Cadre: ${first.agentId} ${first.action} changes ${withContent.length} file${withContent.length === 1 ? '' : 's'}, ${where}. Apply to your working tree?`,
      'Apply', 'Discard',
    );
    if (choice !== 'Apply') return;
    await this.apply(executionId, withContent);
  }

  private async openDiff(executionId: string, change: ProposedChange, file: ProposedFile, uri: vscode.Uri): Promise<void> {
    const proposal = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${executionId}/${change.step}/${file.path}` });
    this.contents.set(proposal.toString(), file.after ?? '');
    await vscode.commands.executeCommand('vscode.diff', uri, proposal, `${file.path} ↔ ${change.agentId} (${change.mode})`, { preview: false });
  }

  /** Writes each file's proposed content, refusing any file that changed since the agent read it. */
  private async apply(executionId: string, files: Array<{ change: ProposedChange; file: ProposedFile; uri: vscode.Uri }>): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    const docs: vscode.TextDocument[] = [];
    const stale: string[] = [];
    for (const f of files) {
      const doc = await vscode.workspace.openTextDocument(f.uri);
      if (sha256(doc.getText()) !== f.file.beforeSha256) {
        stale.push(f.file.path);
        continue;
      }
      edit.replace(f.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), f.file.after ?? doc.getText());
      docs.push(doc);
    }
    if (stale.length > 0) {
      void vscode.window.showWarningMessage(`Cadre: not applied: ${stale.join(', ')} changed since the agent read ${stale.length === 1 ? 'it' : 'them'} (uncommitted or newer edits are never overwritten); run the agent again`);
      return;
    }
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the edit');
    for (const d of docs) await d.save();
    this.output.info(`applied ${executionId}'s proposed changes to ${docs.map((d) => vscode.workspace.asRelativePath(d.uri)).join(', ')} (by ${this.who()})`);
    void vscode.window.showInformationMessage(`Cadre: applied ${docs.length} file${docs.length === 1 ? '' : 's'} from ${executionId}`);
  }

  dispose(): void {
    this.registration.dispose();
    this.contents.clear();
  }
}
