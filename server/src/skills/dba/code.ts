/**
 * Queries in JS/TS code, read with the TypeScript compiler's parser (the one review-ai uses; the
 * bundle loads it once, on first use): the SQL passed as a string or template literal to a query call
 * (`query`, `execute`, ... : the text, with each `${...}` made a placeholder), and the N+1 shape, a
 * database call inside a loop body or an iteration callback (`for`, `while`, `for...of`, `.forEach`,
 * `.map`...), which runs one query per item instead of one for all.
 */
import * as ts from 'typescript';

/** Calls whose first argument is SQL text. */
export const SQL_CALLS = new Set(['query', 'execute', 'executeQuery', 'raw', 'prepare', 'all', 'get', 'run', '$queryRawUnsafe', '$executeRawUnsafe', 'unsafe']);
/** Calls that reach the database (SQL or an ORM finder): inside a loop they are an N+1. */
const DB_CALLS = new Set(['query', 'execute', 'executeQuery', 'raw', '$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe',
  'findOne', 'findUnique', 'findFirst', 'findByPk', 'findById', 'findOneBy', 'findAll', 'findMany', 'count', 'aggregate']);
const ITERATORS = new Set(['forEach', 'map', 'flatMap', 'filter', 'reduce', 'some', 'every', 'find', 'for', 'each']);
/**
 * Cheap gate before a file is parsed (and TypeScript loaded): SQL text in it, or a call named like a
 * database call. `get(` / `run(` / `all(` alone (every Express router has them) do not open a file.
 */
const SQL_WORDS = /\b(?:select\b[\s\S]{0,400}?\bfrom|insert\s+into|update\s+[\w."`]+\s+set|delete\s+from)\b/i;
const DB_CALL_WORDS = /\.\s*(?:query|execute|executeQuery|raw|\$queryRaw\w*|\$executeRaw\w*|find(?:One|Unique|First|ByPk|ById|OneBy|All|Many)|aggregate)\s*[(`<]/;
export function mayQuery(text: string): boolean {
  return DB_CALL_WORDS.test(text) || SQL_WORDS.test(text);
}
const SQL_TEXT = /^\s*(?:\(\s*)?(?:select\b[\s\S]*\bfrom\b|with\s+\w+\s+as\s*\(|insert\s+into\b|update\s+[\w."`]+\s+set\b|delete\s+from\b)/i;

export interface CodeQuery {
  file: string;
  /** 1-based line of the literal's first character. */
  line: number;
  call: string;
  sql: string;
  /** The text had `${...}` parts (replaced by placeholders). */
  dynamic: boolean;
  /** A template's text as written, `${...}` kept. */
  source?: string;
}

export interface LoopCall {
  file: string;
  line: number;
  call: string;
  /** The loop it is in: `for...of at line 12`, `.map callback at line 20`. */
  loop: string;
  loopLine: number;
  /** The code line, shortened. */
  code: string;
  sql?: string;
}

function calleeName(e: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isIdentifier(e)) return e.text;
  return undefined;
}

function scriptKind(file: string): ts.ScriptKind {
  if (/\.tsx$/i.test(file)) return ts.ScriptKind.TSX;
  if (/\.jsx$/i.test(file)) return ts.ScriptKind.JSX;
  if (/\.[mc]?ts$/i.test(file)) return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}

/** SQL text of a literal argument; `${...}` become `$n` (PostgreSQL) or `?` (MySQL) placeholders. */
function sqlOf(arg: ts.Expression, placeholder: (n: number) => string): { text: string; dynamic: boolean } | undefined {
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return { text: arg.text, dynamic: false };
  if (ts.isTemplateExpression(arg)) {
    let text = arg.head.text;
    arg.templateSpans.forEach((s, i) => { text += placeholder(i + 1) + s.literal.text; });
    return { text, dynamic: true };
  }
  return undefined;
}

/** The loop whose body holds `node`, looking out to the nearest function that is not an iteration callback. */
function enclosingLoop(node: ts.Node, sf: ts.SourceFile): { what: string; line: number } | undefined {
  let child: ts.Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    const line = () => sf.getLineAndCharacterOfPosition(p.getStart(sf)).line + 1;
    if ((ts.isForStatement(p) || ts.isWhileStatement(p) || ts.isDoStatement(p)) && child === p.statement) return { what: `${ts.isForStatement(p) ? 'for' : ts.isWhileStatement(p) ? 'while' : 'do...while'} loop`, line: line() };
    if ((ts.isForOfStatement(p) || ts.isForInStatement(p)) && child === p.statement) return { what: ts.isForOfStatement(p) ? 'for...of loop' : 'for...in loop', line: line() };
    if (ts.isFunctionLike(p)) {
      const call = p.parent;
      if (call && ts.isCallExpression(call) && call.arguments.includes(p as unknown as ts.Expression)) {
        const name = calleeName(call.expression);
        if (name && ITERATORS.has(name) && ts.isPropertyAccessExpression(call.expression)) {
          return { what: `.${name} callback`, line: sf.getLineAndCharacterOfPosition(call.getStart(sf)).line + 1 };
        }
      }
      return undefined;
    }
  }
  return undefined;
}

/** Queries and loop calls of one JS/TS file. */
export function scanCode(file: string, text: string, dialect: 'postgresql' | 'mysql'): { queries: CodeQuery[]; loops: LoopCall[] } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const queries: CodeQuery[] = [];
  const loops: LoopCall[] = [];
  const lines = text.split('\n');
  const placeholder = dialect === 'mysql' ? () => '?' : (n: number) => `$${n}`;
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) || ts.isTaggedTemplateExpression(n)) {
      const callee = ts.isCallExpression(n) ? n.expression : n.tag;
      const name = calleeName(callee);
      const arg = ts.isCallExpression(n) ? n.arguments[0] : n.template;
      let sql: { text: string; dynamic: boolean } | undefined;
      if (name && arg && (SQL_CALLS.has(name) || (ts.isTaggedTemplateExpression(n) && /^(sql|\$queryRaw|\$executeRaw)$/.test(name)))) {
        sql = sqlOf(arg, placeholder);
        if (sql && SQL_TEXT.test(sql.text)) {
          const line = sf.getLineAndCharacterOfPosition(arg.getStart(sf)).line + 1;
          queries.push({ file, line, call: name, sql: sql.text, dynamic: sql.dynamic, ...(sql.dynamic ? { source: arg.getText(sf).slice(1, -1) } : {}) });
        } else sql = undefined;
      }
      // A database call is one whose name says so and that has a receiver (`db.query`, `prisma.user.findMany`).
      if (name && DB_CALLS.has(name) && ts.isPropertyAccessExpression(callee) && (sql || name !== 'count')) {
        const loop = enclosingLoop(n, sf);
        if (loop) {
          const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
          loops.push({ file, line, call: callee.getText(sf).replace(/\s+/g, ''), loop: loop.what, loopLine: loop.line, code: (lines[line - 1] ?? '').trim().slice(0, 160), ...(sql ? { sql: sql.text } : {}) });
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { queries, loops };
}
