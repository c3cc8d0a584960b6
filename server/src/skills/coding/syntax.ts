/**
 * Syntax checks of generated code (a model's output) before it may become an artifact: JS/TS with
 * the TypeScript compiler's parser (`ts.createSourceFile`, as review-ai uses it, no type checker),
 * JSON with JSON.parse. Other languages: null (no parser here; the Review gate decides).
 */
import * as ts from 'typescript';

const KIND: Record<string, ts.ScriptKind> = {
  '.ts': ts.ScriptKind.TS, '.mts': ts.ScriptKind.TS, '.cts': ts.ScriptKind.TS, '.tsx': ts.ScriptKind.TSX,
  '.js': ts.ScriptKind.JS, '.mjs': ts.ScriptKind.JS, '.cjs': ts.ScriptKind.JS, '.jsx': ts.ScriptKind.JSX,
};

function ext(file: string): string {
  const m = /\.[^./\\]+$/.exec(file);
  return m ? m[0].toLowerCase() : '';
}

/** True when `checkCode` has a parser for the file. */
export function canParse(file: string): boolean {
  const e = ext(file);
  return e in KIND || e === '.json';
}

/** `{ ok }` with the first syntax error as the reason, or null when there is no parser for the file. */
export function checkCode(file: string, content: string): { ok: boolean; reason: string } | null {
  const e = ext(file);
  if (e === '.json') {
    try {
      JSON.parse(content);
      return { ok: true, reason: 'valid JSON' };
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
  }
  const kind = KIND[e];
  if (kind === undefined) return null;
  const sf = ts.createSourceFile(file, content, ts.ScriptTarget.Latest, true, kind);
  const diags = (sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
  if (diags.length === 0) return { ok: true, reason: `valid ${kind === ts.ScriptKind.TS || kind === ts.ScriptKind.TSX ? 'TypeScript' : 'JavaScript'}` };
  const d = diags[0]!;
  const { line, character } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
  return { ok: false, reason: `${file}:${line + 1}:${character + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')} (${diags.length} syntax error${diags.length === 1 ? '' : 's'})` };
}

/**
 * Review checks whose syntax check also parses JS/TS (and JSON) with the TypeScript parser where the
 * given checks have no parser, so that generated code can pass the syntax-valid gate on its merits
 * instead of failing with "cannot verify". The host wires this in (server/src/host/runtime.ts).
 */
export function withCodeSyntax<T extends { syntax(file: string, content: string): { ok: boolean; reason: string } | null }>(checks: T): T {
  return { ...checks, syntax: (file: string, content: string) => checks.syntax(file, content) ?? checkCode(file, content) };
}
