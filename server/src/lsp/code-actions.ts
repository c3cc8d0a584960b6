/**
 * textDocument/codeAction: a preferred quick fix for every Cadre diagnostic in the range that carries
 * a fix, then the agent source actions (commands the server runs through workspace/executeCommand).
 */
import { CodeActionKind, type CodeAction, type CodeActionParams } from 'vscode-languageserver/node';
import { CadreCommands, type CadreCommandArgs } from '../../../protocol/lsp';
import { cadreData, fixToWorkspaceEdit, rangesIntersect } from './diagnostics';

export const SOURCE_ACTIONS: ReadonlyArray<{ title: string; command: string }> = [
  { title: 'Scan with security-ai', command: CadreCommands.scanFile },
  { title: 'Review with review-ai', command: CadreCommands.reviewSelection },
  { title: 'Fix with coder-ai', command: CadreCommands.fixSelection },
  { title: 'Explain with debug-ai', command: CadreCommands.explainSelection },
  { title: 'Generate tests with tester-ai', command: CadreCommands.generateTests },
];

function wanted(only: string[] | undefined, kind: string): boolean {
  return !only || only.length === 0 || only.some((o) => kind === o || kind.startsWith(`${o}.`));
}

export function codeActions(params: CodeActionParams, docFile: string, workspaceDir: string | undefined): CodeAction[] {
  const out: CodeAction[] = [];
  const only = params.context.only;
  if (wanted(only, CodeActionKind.QuickFix)) {
    for (const d of params.context.diagnostics) {
      const data = cadreData(d);
      if (!data?.fix || !rangesIntersect(d.range, params.range)) continue;
      const edit = fixToWorkspaceEdit(data.fix, params.textDocument.uri, docFile, workspaceDir);
      if (Object.keys(edit.changes ?? {}).length === 0) continue;
      out.push({ title: data.fix.description, kind: CodeActionKind.QuickFix, diagnostics: [d], edit, isPreferred: true });
    }
  }
  if (wanted(only, CodeActionKind.Source)) {
    const args: CadreCommandArgs = { uri: params.textDocument.uri, range: params.range };
    for (const a of SOURCE_ACTIONS) {
      out.push({ title: a.title, kind: `${CodeActionKind.Source}.cadre`, command: { title: a.title, command: a.command, arguments: [args] } });
    }
  }
  return out;
}
