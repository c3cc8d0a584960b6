/**
 * The language server's code actions in the editor (quick fixes that apply a finding's edits, and
 * the five agent actions on a selection or file), and the `cadre.*` agent commands they run. An
 * agent command returns the execution it started, which the editor then follows inline.
 */
import * as vscode from 'vscode';
import { CadreCommands, type CadreCommandArgs, type CadreCommandResult } from '../../protocol/lsp';
import type { InlineProgress } from './inline-progress';
import type { ProposalReviewer } from './proposals';
import type { ServerHost } from './server-host';

const TITLES: Record<string, string> = {
  [CadreCommands.scanFile]: 'security-ai scan',
  [CadreCommands.reviewSelection]: 'review-ai review',
  [CadreCommands.fixSelection]: 'coder-ai fix',
  [CadreCommands.explainSelection]: 'debug-ai explain',
  [CadreCommands.generateTests]: 'tester-ai generate tests',
};

/** The editor's selection as the commands' argument (the active editor when none is given). */
export function selectionArgs(editor: vscode.TextEditor | undefined): CadreCommandArgs | undefined {
  if (!editor) return undefined;
  const s = editor.selection;
  return { uri: editor.document.uri.toString(), range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } } };
}

export function registerAgentActions(host: ServerHost, progress: InlineProgress, proposals: ProposalReviewer, output: vscode.LogOutputChannel): vscode.Disposable[] {
  const provider: vscode.CodeActionProvider = {
    provideCodeActions: async (doc, range, context, token) => {
      const lsp = host.lsp;
      if (!lsp) return [];
      try {
        return await lsp.codeActions(doc, range, context, token);
      } catch (err) {
        // A failed request (e.g. the server restarting) shows no actions rather than an error popup.
        output.warn(`code actions for ${doc.uri.toString()} failed: ${(err as Error).message}`);
        return [];
      }
    },
  };
  const disposables: vscode.Disposable[] = [
    vscode.languages.registerCodeActionsProvider({ scheme: 'file' }, provider, {
      providedCodeActionKinds: [vscode.CodeActionKind.QuickFix, vscode.CodeActionKind.Source.append('cadre')],
    }),
  ];
  for (const [command, title] of Object.entries(TITLES)) {
    disposables.push(
      vscode.commands.registerCommand(command, async (arg?: CadreCommandArgs) => {
        const args = arg ?? selectionArgs(vscode.window.activeTextEditor);
        if (!args) return void vscode.window.showWarningMessage(`Cadre: open a file to run ${title}`);
        const lsp = host.lsp;
        if (!lsp || host.state.kind !== 'ready') return void vscode.window.showWarningMessage('Cadre: the server is not ready yet');
        try {
          // Saved first: agents read the file from disk.
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === args.uri);
          if (doc?.isDirty) await doc.save();
          const r = (await lsp.executeCommand(command, [args])) as CadreCommandResult;
          // coder-ai's edits are shown as a diff and written only when the person applies them.
          const onEnd = command === CadreCommands.fixSelection
            ? (status: string) => {
              if (status === 'completed') proposals.show(r.executionId).catch((err: unknown) => void vscode.window.showErrorMessage(`Cadre: ${(err as Error).message}`));
            }
            : undefined;
          progress.follow(r.executionId, title, args, onEnd);
          return r;
        } catch (err) {
          void vscode.window.showErrorMessage(`Cadre: ${title} could not start: ${(err as Error).message}`);
          return undefined;
        }
      }),
    );
  }
  return disposables;
}
