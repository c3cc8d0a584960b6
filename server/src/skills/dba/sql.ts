/**
 * SQL text to syntax trees with node-sql-parser (its PostgreSQL and MySQL grammars only: each is a
 * 300 KB generated parser, loaded on first use), and the small helpers the checks share: splitting a
 * file into statements with their lines, reading column and table names from the trees, walking them.
 *
 * Statements are split here, not by the parser, so that each keeps its own line in the file and one
 * statement the grammar does not know is named (file:line) without losing the others.
 */
import type { Parser as SqlParser } from 'node-sql-parser';

export type Dialect = 'postgresql' | 'mysql';

const DATABASE: Record<Dialect, string> = { postgresql: 'PostgreSQL', mysql: 'MySQL' };
const parsers = new Map<Dialect, SqlParser>();

function parserFor(d: Dialect): SqlParser {
  let p = parsers.get(d);
  if (!p) {
    // One grammar per dialect (the package's index holds all of its 15): required on first use.
    const mod = (d === 'mysql' ? require('node-sql-parser/build/mysql') : require('node-sql-parser/build/postgresql')) as { Parser: new () => SqlParser };
    p = new mod.Parser();
    parsers.set(d, p);
  }
  return p;
}

export interface Statement {
  /** The statement's text (no trailing `;`). */
  sql: string;
  /** 1-based line of its first character in the file. */
  line: number;
  /** First keyword, upper case (SELECT, WITH, UPDATE, CREATE...). */
  keyword: string;
}

/** Splits SQL text on `;` outside strings, quoted names, comments and dollar-quoted bodies. */
export function splitStatements(text: string): Statement[] {
  const out: Statement[] = [];
  let start = 0; let line = 1; let startLine = 1;
  let i = 0;
  const push = (end: number) => {
    const raw = text.slice(start, end);
    // Leading blanks and comments move the statement's line to its first keyword.
    const lead = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/.exec(raw)![0];
    const body = raw.slice(lead.length).trimEnd();
    if (body) {
      const kw = /^[A-Za-z]+/.exec(body)?.[0]?.toUpperCase() ?? '';
      out.push({ sql: body, line: startLine + (lead.match(/\n/g)?.length ?? 0), keyword: kw });
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') { line++; i++; continue; }
    if (c === '-' && text[i + 1] === '-') { while (i < text.length && text[i] !== '\n') i++; continue; }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      line += (text.slice(i, stop).match(/\n/g)?.length ?? 0); i = stop; continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === '\\' && c === "'" ) { j += 2; continue; }
        if (text[j] === c) { if (text[j + 1] === c) { j += 2; continue; } break; }
        j++;
      }
      line += (text.slice(i, j + 1).match(/\n/g)?.length ?? 0); i = j + 1; continue;
    }
    if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i, i + 40));
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        const stop = end < 0 ? text.length : end + tag[0].length;
        line += (text.slice(i, stop).match(/\n/g)?.length ?? 0); i = stop; continue;
      }
    }
    if (c === ';') { push(i); i++; start = i; startLine = line; continue; }
    i++;
  }
  push(text.length);
  return out;
}

/** MySQL when the text says so (backquoted names, AUTO_INCREMENT, ENGINE=, `?` placeholders); PostgreSQL otherwise. */
export function guessDialect(text: string): Dialect {
  return /`[A-Za-z_][\w$]*`|\bAUTO_INCREMENT\b|\bENGINE\s*=|\bUNSIGNED\b/i.test(text) ? 'mysql' : 'postgresql';
}

export type Ast = Record<string, unknown>;
export type ParseResult = { ok: true; ast: Ast } | { ok: false; message: string; line: number };

/** Parses one statement; a syntax error names its line in the file (`offsetLine`: the statement's first line). */
export function parseStatement(sql: string, dialect: Dialect, offsetLine = 1): ParseResult {
  try {
    const ast = parserFor(dialect).astify(sql, { database: DATABASE[dialect], parseOptions: { includeLocations: true } } as Parameters<SqlParser['astify']>[1]) as unknown;
    const one = Array.isArray(ast) ? ast[0] : ast;
    if (!one || typeof one !== 'object') return { ok: false, message: 'empty statement', line: offsetLine };
    return { ok: true, ast: one as Ast };
  } catch (e) {
    const loc = (e as { location?: { start?: { line?: number } } }).location?.start?.line;
    const msg = String((e as Error).message ?? e).replace(/\s+/g, ' ').slice(0, 200);
    return { ok: false, message: `${DATABASE[dialect]} syntax error: ${msg}`, line: offsetLine + (loc ? loc - 1 : 0) };
  }
}

/** A column reference's name (`{expr: {value}}` in PostgreSQL trees, a string in MySQL ones). */
export function columnName(ref: unknown): string | undefined {
  if (!ref || typeof ref !== 'object') return undefined;
  const c = (ref as Ast)['column'];
  if (typeof c === 'string') return c;
  const v = (c as { expr?: { value?: unknown } } | undefined)?.expr?.value;
  return typeof v === 'string' ? v : undefined;
}

/** The qualifier of a column reference (`o` in `o.user_id`), or null. */
export function columnTable(ref: unknown): string | null {
  const t = (ref as Ast | undefined)?.['table'];
  if (typeof t === 'string') return t;
  const v = (t as { value?: unknown } | null | undefined)?.value;
  return typeof v === 'string' ? v : null;
}

export function isColumn(n: unknown): n is Ast {
  return !!n && typeof n === 'object' && (n as Ast)['type'] === 'column_ref' && columnName(n) !== undefined && columnName(n) !== '*';
}

/** A function node's name, lower case (`lower`, `date`, `coalesce`). */
export function functionName(n: Ast): string {
  const name = n['name'];
  if (typeof name === 'string') return name.toLowerCase();
  const parts = (name as { name?: Array<{ value?: string }> } | undefined)?.name;
  return (parts?.map((p) => p.value ?? '').join('.') ?? '').toLowerCase();
}

/** The first line a subtree carries (`loc.start.line`), or undefined. */
export function lineOf(n: unknown, depth = 0): number | undefined {
  if (!n || typeof n !== 'object' || depth > 6) return undefined;
  const loc = (n as Ast)['loc'] as { start?: { line?: number } } | undefined;
  if (loc?.start?.line) return loc.start.line;
  for (const v of Object.values(n as Ast)) {
    const l = lineOf(v, depth + 1);
    if (l) return l;
  }
  return undefined;
}

/** Depth-first walk over a tree's objects, with the chain of parents (nearest last). */
export function walk(n: unknown, visit: (node: Ast, parents: Ast[]) => void, parents: Ast[] = []): void {
  if (!n || typeof n !== 'object') return;
  if (Array.isArray(n)) { for (const x of n) walk(x, visit, parents); return; }
  const node = n as Ast;
  visit(node, parents);
  parents.push(node);
  for (const [k, v] of Object.entries(node)) if (k !== 'loc' && v && typeof v === 'object') walk(v, visit, parents);
  parents.pop();
}

/** The string value of a literal node, or undefined. */
export function stringLiteral(n: unknown): string | undefined {
  if (!n || typeof n !== 'object') return undefined;
  const o = n as Ast;
  return (o['type'] === 'single_quote_string' || o['type'] === 'string' || o['type'] === 'double_quote_string' || o['type'] === 'natural_string') && typeof o['value'] === 'string' ? o['value'] : undefined;
}

export function isNumberLiteral(n: unknown): boolean {
  return !!n && typeof n === 'object' && (n as Ast)['type'] === 'number';
}
