/**
 * The five agent commands (`cadre.scanFile` … `cadre.generateTests`). The server declares them
 * (executeCommandProvider) and vscode-languageclient registers them and the server's code actions
 * (quick fixes that apply a finding's edits, agent source actions); this middleware adds what the
 * editor does around them: the selection as argument when none is given, the file saved first
 * (agents read it from disk), then the execution followed inline, and coder-ai's edit shown as a diff.
 */
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { CadreCommands, type CadreCommandArgs, type CadreCommandResult } from '../../protocol/lsp';
import type { InlineProgress } from './inline-progress';
import type { ProposalReviewer } from './proposals';

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

function isCommandArgs(a: unknown): a is CadreCommandArgs {
  return typeof a === 'object' && a !== null && typeof (a as CadreCommandArgs).uri === 'string';
}

/** workspace/executeCommand middleware for the agent commands; other commands pass through. */
export function agentCommandMiddleware(progress: InlineProgress, proposals: ProposalReviewer): Middleware {
  return {
    executeCommand: async (command, args, next) => {
      const title = TITLES[command];
      if (!title) return next(command, args);
      // From a menu the first argument is the file's Uri (or nothing): the active editor's selection instead.
      const a = isCommandArgs(args[0]) ? args[0] : selectionArgs(vscode.window.activeTextEditor);
      if (!a) return void vscode.window.showWarningMessage(`Cadre: open a file to run ${title}`);
      try {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === a.uri);
        if (doc?.isDirty) await doc.save();
        const r = (await next(command, [a])) as CadreCommandResult;
        // coder-ai's edits are shown as a diff and written only when the person applies them.
        const onEnd = command === CadreCommands.fixSelection
          ? (status: string) => {
            if (status === 'completed') proposals.show(r.executionId).catch((err: unknown) => void vscode.window.showErrorMessage(`Cadre: ${(err as Error).message}`));
          }
          : undefined;
        progress.follow(r.executionId, title, a, onEnd);
        return r;
      } catch (err) {
        void vscode.window.showErrorMessage(`Cadre: ${title} could not start: ${(err as Error).message}`);
        return undefined;
      }
    },
  };
}
