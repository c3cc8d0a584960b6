/**
 * review-ai's per-file analysis. JS/TS is parsed with the TypeScript compiler's parser
 * (ts.createSourceFile, no type checker): one walk computes per-function cyclomatic complexity and
 * length and runs the pattern checks. Other languages get the language-neutral checks only.
 */
import * as ts from 'typescript';
import { analyzeCode, parseSource, redactSnippet } from '../code-analysis/index';
import { fingerprint, normalizeLine, type Finding, type Fix, type Range } from '../findings/finding';
import { RULE_SEVERITY, type ReviewRuleId } from './rules';

export interface ReviewOptions {
  /** Cyclomatic complexity above which a function is reported (default 10). */
  complexityThreshold: number;
  /** Lines above which a function is reported (default 60). */
  maxFunctionLines: number;
  /** Review vendored, minified and generated files too (default false: they are skipped and listed). */
  includeVendored?: boolean;
}

export const DEFAULT_OPTIONS: ReviewOptions = { complexityThreshold: 10, maxFunctionLines: 60 };

/** Lines a diff changed: `added` (new-side lines) and `deletedAt` (where lines were only removed). */
export interface ChangedLines {
  added: ReadonlySet<number>;
  deletedAt: ReadonlySet<number>;
}

export interface FunctionInfo {
  name: string;
  startLine: number;
  endLine: number;
  complexity: number;
  /** The function holds a changed line (always true for a whole-file review). */
  changed: boolean;
}

export interface FileAnalysis {
  file: string;
  language: string;
  checks: string[];
  /** JS/TS: parsed without syntax errors. Other languages: false. */
  parsed: boolean;
  parseErrors: number;
  functions: FunctionInfo[];
  findings: Finding[];
}

const JS_EXT: Record<string, ts.ScriptKind> = {
  '.ts': ts.ScriptKind.TS, '.mts': ts.ScriptKind.TS, '.cts': ts.ScriptKind.TS, '.tsx': ts.ScriptKind.TSX,
  '.js': ts.ScriptKind.JS, '.mjs': ts.ScriptKind.JS, '.cjs': ts.ScriptKind.JS, '.jsx': ts.ScriptKind.JSX,
};

const OTHER_LANG: Record<string, string> = {
  '.py': 'python', '.go': 'go', '.java': 'java', '.rb': 'ruby', '.rs': 'rust', '.cs': 'csharp', '.php': 'php',
  '.kt': 'kotlin', '.swift': 'swift', '.c': 'c', '.h': 'c', '.cc': 'cpp', '.cpp': 'cpp', '.hpp': 'cpp', '.scala': 'scala',
};

function ext(file: string): string {
  const m = /\.[^./]+$/.exec(file);
  return m ? m[0].toLowerCase() : '';
}

export function languageOf(file: string): string {
  const e = ext(file);
  if (e in JS_EXT) return ['.ts', '.mts', '.cts', '.tsx'].includes(e) ? 'typescript' : 'javascript';
  return OTHER_LANG[e] ?? 'other';
}

export function isJsTs(file: string): boolean {
  return ext(file) in JS_EXT;
}

/** A programming-language source file (eligible for the missing-tests check). */
export function isSourceFile(file: string): boolean {
  return isJsTs(file) || ext(file) in OTHER_LANG;
}

export const JS_CHECKS = ['complexity', 'long-function', 'debug-statement', 'dead-code', 'code-analysis (taint and security patterns)'];

/** Secrets never leave in a snippet. */
export const redact = redactSnippet;

function inScope(changed: ChangedLines | null, startLine: number, endLine: number): boolean {
  if (!changed) return true;
  for (let l = startLine; l <= endLine; l++) if (changed.added.has(l)) return true;
  return false;
}

class FindingSink {
  readonly findings: Finding[] = [];
  constructor(private readonly file: string, private readonly lines: string[], private readonly changed: ChangedLines | null) {}

  add(ruleId: ReviewRuleId, message: string, range: Range, fix?: Fix, key?: string): void {
    if (!inScope(this.changed, range.startLine, range.endLine)) return;
    const line = this.lines[range.startLine - 1] ?? '';
    this.findings.push({
      ruleId, severity: RULE_SEVERITY[ruleId], message, file: this.file, range,
      snippet: redact(line.trim()),
      ...(fix ? { fix } : {}),
      fingerprint: fingerprint(ruleId, this.file, key ?? normalizeLine(line)),
    });
  }
}

const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.FunctionExpression, ts.SyntaxKind.ArrowFunction, ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor, ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor,
]);

const DECISION_KINDS = new Set([
  ts.SyntaxKind.IfStatement, ts.SyntaxKind.ForStatement, ts.SyntaxKind.ForInStatement, ts.SyntaxKind.ForOfStatement,
  ts.SyntaxKind.WhileStatement, ts.SyntaxKind.DoStatement, ts.SyntaxKind.CaseClause, ts.SyntaxKind.CatchClause,
  ts.SyntaxKind.ConditionalExpression,
]);

const LOGICAL_OPS = new Set([ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken]);

const TERMINATORS = new Set([ts.SyntaxKind.ReturnStatement, ts.SyntaxKind.ThrowStatement, ts.SyntaxKind.BreakStatement, ts.SyntaxKind.ContinueStatement]);

/** Declarations that are hoisted or erased, hence not dead after a return. */
const HOISTED = new Set([ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.InterfaceDeclaration, ts.SyntaxKind.TypeAliasDeclaration, ts.SyntaxKind.EmptyStatement]);


interface FnRec extends FunctionInfo { node: ts.Node }

function functionName(node: ts.Node, parent: ts.Node | undefined, sf: ts.SourceFile): string {
  const own = (node as { name?: ts.Node }).name;
  let name = own && (ts.isIdentifier(own) || ts.isPrivateIdentifier(own) || ts.isStringLiteral(own)) ? own.text : own ? own.getText(sf) : undefined;
  if (node.kind === ts.SyntaxKind.Constructor) name = 'constructor';
  if (!name && parent) {
    if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) name = parent.name.getText(sf);
    else if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) name = parent.left.getText(sf);
    else if (ts.isCallExpression(parent)) name = `<callback of ${parent.expression.getText(sf).slice(0, 40)}>`;
    else if (ts.isExportAssignment(parent)) name = 'default';
  }
  if (parent && (ts.isClassDeclaration(parent) || ts.isClassExpression(parent)) && parent.name) name = `${parent.name.text}.${name ?? '<anonymous>'}`;
  return name ?? '<anonymous>';
}

/** Analyzes one JS/TS file; `changed` null = the whole file. */
export function analyzeJsTs(file: string, text: string, changed: ChangedLines | null, options: ReviewOptions = DEFAULT_OPTIONS): FileAnalysis {
  // Parent links on: code analysis reads a node's context (the handler a callback is registered with).
  const sf = parseSource(file, text);
  const parseErrors = (sf as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics?.length ?? 0;
  const lines = text.split(/\r?\n/);
  const sink = new FindingSink(file, lines, changed);
  const lineStarts = sf.getLineStarts();
  const lc = (pos: number) => sf.getLineAndCharacterOfPosition(pos);
  const rangeOf = (node: ts.Node): Range => {
    const s = lc(node.getStart(sf));
    const e = lc(node.end);
    return { startLine: s.line + 1, startColumn: s.character + 1, endLine: e.line + 1, endColumn: e.character + 1 };
  };
  const headRange = (node: ts.Node): Range => {
    const s = lc(node.getStart(sf));
    const lineLen = (lines[s.line] ?? '').length;
    return { startLine: s.line + 1, startColumn: s.character + 1, endLine: s.line + 1, endColumn: lineLen + 1 };
  };

  const functions: FnRec[] = [];
  const stack: FnRec[] = [];

  const deleteStatementFix = (node: ts.Node, what: string): Fix => {
    const start = node.getStart(sf);
    const s = lc(start);
    const e = lc(node.end);
    const before = text.slice(lineStarts[s.line]!, start);
    const lineEnd = e.line + 1 < lineStarts.length ? lineStarts[e.line + 1]! : text.length;
    const after = text.slice(node.end, lineEnd);
    let range: Range;
    if (/^\s*$/.test(before) && /^\s*$/.test(after)) {
      range = e.line + 1 < lineStarts.length
        ? { startLine: s.line + 1, startColumn: 1, endLine: e.line + 2, endColumn: 1 }
        : { startLine: s.line + 1, startColumn: 1, endLine: e.line + 1, endColumn: (lines[e.line] ?? '').length + 1 };
    } else {
      range = { startLine: s.line + 1, startColumn: s.character + 1, endLine: e.line + 1, endColumn: e.character + 1 };
    }
    return { description: `delete the ${what}`, edits: [{ file, range, newText: '' }] };
  };

  const checkStatements = (statements: ts.NodeArray<ts.Statement>): void => {
    const i = statements.findIndex((s) => TERMINATORS.has(s.kind));
    if (i < 0) return;
    const dead = statements.slice(i + 1).filter((s) => !HOISTED.has(s.kind));
    if (dead.length === 0) return;
    const first = rangeOf(dead[0]!);
    const last = rangeOf(dead[dead.length - 1]!);
    const kw = ts.tokenToString(statements[i]!.getFirstToken(sf)?.kind ?? ts.SyntaxKind.ReturnKeyword) ?? 'return';
    sink.add('review/dead-code', `unreachable code after \`${kw}\` (${dead.length} statement(s))`,
      { startLine: first.startLine, startColumn: first.startColumn, endLine: last.endLine, endColumn: last.endColumn });
  };

  const visit = (node: ts.Node, parent: ts.Node | undefined): void => {
    const kind = node.kind;
    let pushed = false;
    if (FUNCTION_KINDS.has(kind)) {
      if ((node as ts.FunctionLikeDeclaration).body) {
        const r = rangeOf(node);
        const rec: FnRec = { name: functionName(node, parent, sf), startLine: r.startLine, endLine: r.endLine, complexity: 1, changed: !changed, node };
        functions.push(rec);
        stack.push(rec);
        pushed = true;
      }
    } else if (stack.length && (DECISION_KINDS.has(kind)
      || (kind === ts.SyntaxKind.BinaryExpression && LOGICAL_OPS.has((node as ts.BinaryExpression).operatorToken.kind)))) {
      stack[stack.length - 1]!.complexity++;
    }

    switch (kind) {
      case ts.SyntaxKind.Block: case ts.SyntaxKind.ModuleBlock: case ts.SyntaxKind.CaseClause: case ts.SyntaxKind.DefaultClause:
        checkStatements((node as ts.Block).statements);
        break;
      case ts.SyntaxKind.SourceFile:
        checkStatements((node as ts.SourceFile).statements);
        break;
      case ts.SyntaxKind.IfStatement: {
        const n = node as ts.IfStatement;
        if (n.expression.kind === ts.SyntaxKind.FalseKeyword) {
          const r = rangeOf(n.thenStatement);
          const h = rangeOf(n);
          sink.add('review/dead-code', '`if (false)` branch never runs', { startLine: h.startLine, startColumn: h.startColumn, endLine: r.endLine, endColumn: r.endColumn });
        }
        break;
      }
      case ts.SyntaxKind.DebuggerStatement:
        sink.add('review/debug-statement', 'leftover `debugger` statement', rangeOf(node), deleteStatementFix(node, '`debugger` statement'));
        break;
      case ts.SyntaxKind.ExpressionStatement: {
        const e = (node as ts.ExpressionStatement).expression;
        if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && ts.isIdentifier(e.expression.expression)
          && e.expression.expression.text === 'console' && (e.expression.name.text === 'log' || e.expression.name.text === 'debug')) {
          sink.add('review/debug-statement', `leftover \`console.${e.expression.name.text}\` call`, rangeOf(node), deleteStatementFix(node, `console.${e.expression.name.text} statement`));
        }
        break;
      }
      default:
        break;
    }
    ts.forEachChild(node, (c) => visit(c, node));
    if (pushed) stack.pop();
  };
  visit(sf, undefined);

  // Security rules (taint from request inputs and dangerous patterns) on the same tree, scoped to the change like the rest.
  for (const f of analyzeCode(file, text, sf).findings) if (inScope(changed, f.range.startLine, f.range.endLine)) sink.findings.push(f);
  sink.findings.sort((x, y) => x.range.startLine - y.range.startLine || x.range.startColumn - y.range.startColumn);

  // Which functions the change touched: the innermost function around each changed line.
  if (changed) {
    const touched = [...changed.added, ...changed.deletedAt];
    for (const line of touched) {
      let best: FnRec | undefined;
      for (const f of functions) {
        if (f.startLine <= line && line <= f.endLine && (!best || f.endLine - f.startLine < best.endLine - best.startLine)) best = f;
      }
      if (best) best.changed = true;
    }
  }
  const fnFindings: Finding[] = [];
  for (const f of functions) {
    if (!f.changed) continue;
    const head = headRange(f.node);
    const key = normalizeLine(lines[head.startLine - 1] ?? f.name);
    const mk = (ruleId: ReviewRuleId, message: string): Finding => ({
      ruleId, severity: RULE_SEVERITY[ruleId], message, file, range: head, snippet: redact((lines[head.startLine - 1] ?? '').trim()),
      fingerprint: fingerprint(ruleId, file, key),
    });
    if (f.complexity > options.complexityThreshold) {
      fnFindings.push(mk('review/complexity', `\`${f.name}\` has cyclomatic complexity ${f.complexity} (threshold ${options.complexityThreshold}): split it into smaller functions`));
    }
    const length = f.endLine - f.startLine + 1;
    if (length > options.maxFunctionLines) {
      fnFindings.push(mk('review/long-function', `\`${f.name}\` is ${length} lines long (limit ${options.maxFunctionLines})`));
    }
  }
  return {
    file,
    language: languageOf(file),
    checks: [...JS_CHECKS],
    parsed: parseErrors === 0,
    parseErrors,
    functions: functions.map((f) => ({ name: f.name, startLine: f.startLine, endLine: f.endLine, complexity: f.complexity, changed: f.changed })),
    findings: [...sink.findings, ...fnFindings],
  };
}

const PY_DEBUG: Array<{ re: RegExp; what: string }> = [
  { re: /^\s*print\(/, what: '`print(` call' },
  { re: /^\s*(?:import\s+pdb\b|from\s+pdb\s+import\b)/, what: '`pdb` import' },
  { re: /\bpdb\.set_trace\(|^\s*breakpoint\(\)/, what: 'debugger breakpoint' },
];

/** Languages without a parser: debug leftovers by regex (Python only). */
export function analyzeOther(file: string, text: string, changed: ChangedLines | null): FileAnalysis {
  const language = languageOf(file);
  const lines = text.split(/\r?\n/);
  const sink = new FindingSink(file, lines, changed);
  const checks: string[] = [];
  if (language === 'python') {
    checks.push('debug-statement (regex)');
    lines.forEach((line, i) => {
      const hit = PY_DEBUG.find((p) => p.re.test(line));
      if (!hit) return;
      const n = i + 1;
      const range: Range = { startLine: n, startColumn: line.search(/\S/) + 1, endLine: n, endColumn: line.length + 1 };
      const del: Range = n < lines.length ? { startLine: n, startColumn: 1, endLine: n + 1, endColumn: 1 } : { startLine: n, startColumn: 1, endLine: n, endColumn: line.length + 1 };
      sink.add('review/debug-statement', `leftover ${hit.what}`, range, { description: `delete the ${hit.what}`, edits: [{ file, range: del, newText: '' }] });
    });
  }
  return { file, language, checks, parsed: false, parseErrors: 0, functions: [], findings: sink.findings };
}

export function analyzeFile(file: string, text: string, changed: ChangedLines | null, options: ReviewOptions = DEFAULT_OPTIONS): FileAnalysis {
  return isJsTs(file) ? analyzeJsTs(file, text, changed, options) : analyzeOther(file, text, changed);
}
