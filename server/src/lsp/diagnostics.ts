/**
 * Findings → LSP diagnostics, and Cadre diagnostics' fixes → workspace edits. Pure functions: no
 * connection, no file system. Finding positions are 1-based with an exclusive `endColumn`; LSP
 * positions are 0-based with an exclusive end character.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type Diagnostic, type Range as LspRange, type TextEdit as LspTextEdit, type WorkspaceEdit } from 'vscode-languageserver/node';
import type { CadreDiagnosticData } from '../../../protocol/lsp';
import type { Finding, Fix, Range, Severity } from '../skills/findings/finding';
import { redactSecretsIn } from '../skills/findings/redact';
import { helpUriFor } from '../skills/security/rule-help';

export const DIAGNOSTIC_SOURCE = 'Cadre';

/** critical/high → Error, medium → Warning, low → Information, info → Hint. */
export function toLspSeverity(s: Severity): DiagnosticSeverity {
  switch (s) {
    case 'critical':
    case 'high':
      return DiagnosticSeverity.Error;
    case 'medium':
      return DiagnosticSeverity.Warning;
    case 'low':
      return DiagnosticSeverity.Information;
    default:
      return DiagnosticSeverity.Hint;
  }
}

export function toLspRange(r: Range): LspRange {
  return {
    start: { line: Math.max(0, r.startLine - 1), character: Math.max(0, r.startColumn - 1) },
    end: { line: Math.max(0, r.endLine - 1), character: Math.max(0, r.endColumn - 1) },
  };
}

export function toDiagnostic(f: Finding): Diagnostic {
  const data: CadreDiagnosticData = { fingerprint: f.fingerprint, ...(f.fix ? { fix: f.fix } : {}) };
  return {
    range: toLspRange(f.range),
    severity: toLspSeverity(f.severity),
    source: DIAGNOSTIC_SOURCE,
    code: f.ruleId,
    // A link only for a rule documented in docs/skills.md; the message is swept for secrets once more.
    ...(helpUriFor(f.ruleId) ? { codeDescription: { href: helpUriFor(f.ruleId)! } } : {}),
    message: redactSecretsIn(f.message),
    data,
  };
}

/** The data of a diagnostic this server published, or null for anyone else's. */
export function cadreData(d: Diagnostic): CadreDiagnosticData | null {
  if (d.source !== DIAGNOSTIC_SOURCE) return null;
  const data = d.data as Partial<CadreDiagnosticData> | undefined;
  return data && typeof data.fingerprint === 'string' ? (data as CadreDiagnosticData) : null;
}

/**
 * A fix's edits as a WorkspaceEdit. An edit whose file is the document's own (`docFile`) goes to
 * `docUri`; any other workspace-relative file is resolved against `workspaceDir` (skipped without one).
 */
export function fixToWorkspaceEdit(fix: Fix, docUri: string, docFile: string, workspaceDir: string | undefined): WorkspaceEdit {
  const changes: Record<string, LspTextEdit[]> = {};
  for (const e of fix.edits) {
    let uri: string | null = null;
    if (e.file === docFile) uri = docUri;
    else if (workspaceDir) uri = pathToFileURL(path.resolve(workspaceDir, e.file)).href;
    if (!uri) continue;
    (changes[uri] ??= []).push({ range: toLspRange(e.range), newText: e.newText });
  }
  return { changes };
}

/** True when two LSP ranges overlap or touch (a cursor at a diagnostic's edge counts). */
export function rangesIntersect(a: LspRange, b: LspRange): boolean {
  const before = (p: LspRange['start'], q: LspRange['start']) => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}
