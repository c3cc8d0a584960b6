/**
 * Syntax checks of generated code (a model's output) before it may become an artifact: JS/TS with
 * the TypeScript compiler's parser (`ts.createSourceFile`, as review-ai uses it, no type checker),
 * JSON with JSON.parse. Other languages: null (no parser here; the Review gate decides).
 */
import type * as TS from 'typescript';

type KindName = 'TS' | 'TSX' | 'JS' | 'JSX';
const KIND: Record<string, KindName> = {
  '.ts': 'TS', '.mts': 'TS', '.cts': 'TS', '.tsx': 'TSX', '.js': 'JS', '.mjs': 'JS', '.cjs': 'JS', '.jsx': 'JSX',
};

/** The compiler is 3.5 MB of the server bundle: required on the first check, not at every server start. */
function typescript(): typeof TS {
  return require('typescript') as typeof TS;
}

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
  const name = KIND[e];
  if (name === undefined) return null;
  const ts = typescript();
  const kind = ts.ScriptKind[name];
  const sf = ts.createSourceFile(file, content, ts.ScriptTarget.Latest, true, kind);
  const diags = (sf as unknown as { parseDiagnostics?: TS.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
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
