/**
 * review-ai's per-file analysis. JS/TS is parsed with the TypeScript compiler's parser
 * (ts.createSourceFile, no type checker): one walk computes per-function cyclomatic complexity and
 * length and runs the pattern checks. Other languages get the language-neutral checks only.
 */
import * as ts from 'typescript';
import { SECRET_RULES } from '../secret-rules';
import { fingerprint, normalizeLine, type Finding, type Fix, type Range } from '../findings/finding';
import { RULE_SEVERITY, type ReviewRuleId } from './rules';

export interface ReviewOptions {
  /** Cyclomatic complexity above which a function is reported (default 10). */
  complexityThreshold: number;
  /** Lines above which a function is reported (default 60). */
  maxFunctionLines: number;
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

export const JS_CHECKS = ['complexity', 'long-function', 'debug-statement', 'dead-code', 'eval', 'shell-injection', 'sql-concatenation', 'tls-disabled'];

/** Secrets never leave in a snippet. */
export function redact(line: string): string {
  let out = line;
  for (const r of SECRET_RULES) out = out.replace(new RegExp(r.pattern.source, 'g'), '[REDACTED]');
  return out.length > 200 ? `${out.slice(0, 200)}…` : out;
}

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

const SQL_CALLS = new Set(['query', 'execute', 'executeQuery', 'raw', 'prepare', '$queryRawUnsafe', '$executeRawUnsafe']);
const SQL_TEXT = /\b(?:select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset|delete\s+from)\b/i;
const SHELL_FNS = new Set(['exec', 'execSync']);

interface FnRec extends FunctionInfo { node: ts.Node }

function unwrap(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
  return e;
}

function isStringLit(e: ts.Expression): boolean {
  return ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e);
}

/** A string built at run time: template with substitutions, or `+` with a non-literal operand. Returns its literal text. */
function dynamicString(e: ts.Expression): string | undefined {
  e = unwrap(e);
  if (ts.isTemplateExpression(e)) return e.head.text + e.templateSpans.map((s) => ` ${s.literal.text}`).join('');
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const parts: ts.Expression[] = [];
    const flat = (x: ts.Expression): void => {
      x = unwrap(x);
      if (ts.isBinaryExpression(x) && x.operatorToken.kind === ts.SyntaxKind.PlusToken) { flat(x.left); flat(x.right); } else parts.push(x);
    };
    flat(e);
    const lits = parts.filter(isStringLit) as Array<ts.StringLiteral | ts.NoSubstitutionTemplateLiteral>;
    if (lits.length === 0 || lits.length === parts.length) return undefined;
    return lits.map((l) => l.text).join(' ') + parts.filter((p) => ts.isTemplateExpression(p)).map((p) => dynamicString(p) ?? '').join(' ');
  }
  return undefined;
}

function isChildProcessModule(e: ts.Expression | undefined): boolean {
  return !!e && ts.isStringLiteral(e) && (e.text === 'child_process' || e.text === 'node:child_process');
}

function isRequireOfChildProcess(e: ts.Expression | undefined): boolean {
  if (!e) return false;
  e = unwrap(e);
  return ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'require' && isChildProcessModule(e.arguments[0]);
}

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
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, JS_EXT[ext(file)] ?? ts.ScriptKind.TS);
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
  const cpNamespaces = new Set<string>();
  const cpFunctions = new Set<string>();
  const shellCandidates: Array<{ call: ts.CallExpression; arg: ts.Expression }> = [];
  const sqlCandidates: Array<{ call: ts.CallExpression; arg: ts.Expression; fn: string }> = [];
  const initializers = new Map<string, Array<{ pos: number; init: ts.Expression }>>();

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
      case ts.SyntaxKind.CallExpression: {
        const n = node as ts.CallExpression;
        const callee = unwrap(n.expression);
        if ((ts.isIdentifier(callee) && callee.text === 'eval')
          || (ts.isPropertyAccessExpression(callee) && callee.name.text === 'eval' && ts.isIdentifier(callee.expression) && ['globalThis', 'window', 'global', 'self'].includes(callee.expression.text))) {
          sink.add('review/eval', '`eval()` runs code built from a string; parse data (JSON.parse) or use a lookup instead', rangeOf(n));
        } else if (ts.isIdentifier(callee) && callee.text === 'Function') {
          sink.add('review/eval', '`Function()` compiles code from a string, like eval', rangeOf(n));
        }
        const arg = n.arguments[0];
        if (arg) {
          const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
          if (name && SHELL_FNS.has(name)) shellCandidates.push({ call: n, arg });
          if (name && SQL_CALLS.has(name)) sqlCandidates.push({ call: n, arg, fn: name });
        }
        break;
      }
      case ts.SyntaxKind.NewExpression: {
        const n = node as ts.NewExpression;
        if (ts.isIdentifier(n.expression) && n.expression.text === 'Function') sink.add('review/eval', '`new Function()` compiles code from a string, like eval', rangeOf(n));
        break;
      }
      case ts.SyntaxKind.ImportDeclaration: {
        const n = node as ts.ImportDeclaration;
        if (isChildProcessModule(n.moduleSpecifier) && n.importClause) {
          const c = n.importClause;
          if (c.name) cpNamespaces.add(c.name.text);
          if (c.namedBindings && ts.isNamespaceImport(c.namedBindings)) cpNamespaces.add(c.namedBindings.name.text);
          if (c.namedBindings && ts.isNamedImports(c.namedBindings)) {
            for (const el of c.namedBindings.elements) if (SHELL_FNS.has((el.propertyName ?? el.name).text)) cpFunctions.add(el.name.text);
          }
        }
        break;
      }
      case ts.SyntaxKind.VariableDeclaration: {
        const n = node as ts.VariableDeclaration;
        if (n.initializer && isRequireOfChildProcess(n.initializer)) {
          if (ts.isIdentifier(n.name)) cpNamespaces.add(n.name.text);
          else if (ts.isObjectBindingPattern(n.name)) {
            for (const el of n.name.elements) {
              const prop = el.propertyName && ts.isIdentifier(el.propertyName) ? el.propertyName.text : ts.isIdentifier(el.name) ? el.name.text : '';
              if (SHELL_FNS.has(prop) && ts.isIdentifier(el.name)) cpFunctions.add(el.name.text);
            }
          }
        } else if (n.initializer && ts.isIdentifier(n.name)) {
          const list = initializers.get(n.name.text) ?? [];
          list.push({ pos: n.pos, init: n.initializer });
          initializers.set(n.name.text, list);
        }
        break;
      }
      case ts.SyntaxKind.PropertyAssignment: {
        const n = node as ts.PropertyAssignment;
        const key = ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) ? n.name.text : '';
        const v = unwrap(n.initializer);
        if (key === 'rejectUnauthorized' && (v.kind === ts.SyntaxKind.FalseKeyword || (ts.isNumericLiteral(v) && v.text === '0'))) {
          sink.add('review/tls-disabled', '`rejectUnauthorized: false` turns off TLS certificate verification', rangeOf(n));
        }
        break;
      }
      case ts.SyntaxKind.BinaryExpression: {
        const n = node as ts.BinaryExpression;
        if (n.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
          const l = unwrap(n.left);
          const key = ts.isPropertyAccessExpression(l) ? l.name.text
            : ts.isElementAccessExpression(l) && ts.isStringLiteral(l.argumentExpression) ? l.argumentExpression.text : '';
          const r = unwrap(n.right);
          if (key === 'NODE_TLS_REJECT_UNAUTHORIZED' && ((ts.isStringLiteral(r) && r.text === '0') || (ts.isNumericLiteral(r) && r.text === '0'))) {
            sink.add('review/tls-disabled', '`NODE_TLS_REJECT_UNAUTHORIZED = 0` turns off TLS certificate verification for the whole process', rangeOf(n));
          }
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

  /** The argument's built string: itself, or the nearest earlier initializer of the identifier it names. */
  const built = (arg: ts.Expression): string | undefined => {
    const a = unwrap(arg);
    const direct = dynamicString(a);
    if (direct !== undefined || !ts.isIdentifier(a)) return direct;
    const decl = (initializers.get(a.text) ?? []).filter((d) => d.pos < a.pos).pop();
    return decl ? dynamicString(decl.init) : undefined;
  };

  for (const { call, arg } of shellCandidates) {
    const callee = unwrap(call.expression);
    const isCp = ts.isIdentifier(callee) ? cpFunctions.has(callee.text)
      : ts.isPropertyAccessExpression(callee) && ((ts.isIdentifier(callee.expression) && cpNamespaces.has(callee.expression.text)) || isRequireOfChildProcess(callee.expression));
    if (isCp && built(arg) !== undefined) {
      sink.add('review/shell-injection', 'shell command built from a template literal or concatenation: use execFile/spawn with an argument array', rangeOf(call));
    }
  }
  for (const { call, arg, fn } of sqlCandidates) {
    const s = built(arg);
    if (s !== undefined && SQL_TEXT.test(s)) {
      sink.add('review/sql-concatenation', `SQL built by string concatenation/template passed to \`${fn}()\`: use a parameterized query`, rangeOf(call));
    }
  }

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
