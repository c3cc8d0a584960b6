/**
 * LSP ↔ VS Code value conversions for the few shapes Cadre's server sends: ranges, diagnostics,
 * workspace edits and code actions. Kept apart so the rest of the client never sees protocol types.
 */
import * as vscode from 'vscode';
import type * as lsp from 'vscode-languageserver-protocol';

export function toRange(r: lsp.Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export function fromRange(r: vscode.Range): lsp.Range {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

const SEVERITY: Record<number, vscode.DiagnosticSeverity> = {
  1: vscode.DiagnosticSeverity.Error,
  2: vscode.DiagnosticSeverity.Warning,
  3: vscode.DiagnosticSeverity.Information,
  4: vscode.DiagnosticSeverity.Hint,
};

/**
 * The server's original diagnostics by document, kept so code-action requests send back exactly
 * what it published (with `data`). The diagnostics VS Code hands to a code-action provider are
 * copies rebuilt from its markers, so they are matched by range, message and code, not identity.
 */
const originals = new Map<string, Array<{ shown: vscode.Diagnostic; original: lsp.Diagnostic }>>();

export function rememberDiagnostics(uri: string, pairs: Array<{ shown: vscode.Diagnostic; original: lsp.Diagnostic }>): void {
  if (pairs.length === 0) originals.delete(uri);
  else originals.set(uri, pairs);
}

export function forgetAllDiagnostics(): void {
  originals.clear();
}

function codeValue(code: vscode.Diagnostic['code']): string | number | undefined {
  return typeof code === 'object' ? code.value : code;
}

export function toDiagnostic(d: lsp.Diagnostic): vscode.Diagnostic {
  const out = new vscode.Diagnostic(toRange(d.range), typeof d.message === 'string' ? d.message : d.message.value, SEVERITY[d.severity ?? 1] ?? vscode.DiagnosticSeverity.Error);
  if (d.source) out.source = d.source;
  if (d.code !== undefined) {
    const href = d.codeDescription?.href;
    out.code = href ? { value: d.code, target: vscode.Uri.parse(href) } : d.code;
  }
  if (d.tags) out.tags = d.tags.filter((t) => t === 1 || t === 2).map((t) => (t === 1 ? vscode.DiagnosticTag.Unnecessary : vscode.DiagnosticTag.Deprecated));
  return out;
}

export function fromDiagnostic(uri: string, d: vscode.Diagnostic): lsp.Diagnostic | undefined {
  return originals.get(uri)?.find((p) => p.shown.range.isEqual(d.range) && p.shown.message === d.message && codeValue(p.shown.code) === codeValue(d.code))?.original;
}

export function toWorkspaceEdit(e: lsp.WorkspaceEdit): vscode.WorkspaceEdit {
  const out = new vscode.WorkspaceEdit();
  for (const [uri, edits] of Object.entries(e.changes ?? {})) {
    for (const te of edits) out.replace(vscode.Uri.parse(uri), toRange(te.range), te.newText);
  }
  for (const dc of e.documentChanges ?? []) {
    if ('textDocument' in dc) for (const te of dc.edits) out.replace(vscode.Uri.parse(dc.textDocument.uri), toRange(te.range), 'newText' in te ? te.newText : '');
  }
  return out;
}

export function toCodeAction(a: lsp.CodeAction | lsp.Command): vscode.CodeAction {
  if (typeof (a as lsp.Command).command === 'string') {
    const c = a as lsp.Command;
    const action = new vscode.CodeAction(c.title);
    action.command = { title: c.title, command: c.command, ...(c.arguments ? { arguments: c.arguments } : {}) };
    return action;
  }
  const ca = a as lsp.CodeAction;
  const action = new vscode.CodeAction(ca.title, ca.kind ? vscode.CodeActionKind.Empty.append(ca.kind) : undefined);
  if (ca.edit) action.edit = toWorkspaceEdit(ca.edit);
  if (ca.command) action.command = { title: ca.command.title, command: ca.command.command, ...(ca.command.arguments ? { arguments: ca.command.arguments } : {}) };
  if (ca.isPreferred !== undefined) action.isPreferred = ca.isPreferred;
  if (ca.diagnostics) {
    // VS Code matches quick fixes to markers by the diagnostics it knows, so give back equal ranges/messages.
    action.diagnostics = ca.diagnostics.map((d) => toDiagnostic(d));
  }
  return action;
}
