/**
 * What dba-ai reads in one parsed query: its anti-patterns (findings) and how it uses each table
 * (equality and range predicates, join columns, ORDER BY), which `indexes` turns into suggestions.
 *
 * Rules (each finding with its file and line):
 *  - select-star: `SELECT *` / `t.*` (not inside EXISTS, where it selects nothing).
 *  - update-without-where / delete-without-where: every row of the table.
 *  - leading-wildcard-like: `LIKE '%x'` (or `'%' || x`): no B-tree index can serve it.
 *  - function-on-column: a function or cast around a column in WHERE/ON (`lower(email) = ?`): a plain
 *    index on the column is not used. With a schema: only for indexed columns (the index is lost).
 *  - implicit-cast: a numeric column compared with a string literal (low: the literal is converted, a
 *    non-numeric one fails or compares by its prefix), or a text column with a number (medium: MySQL
 *    converts every row's column, no index; PostgreSQL refuses text = integer). Needs the schema's types.
 */
import { columnName, columnTable, functionName, isColumn, isNumberLiteral, lineOf, stringLiteral, walk, type Ast } from './sql';
import { isIndexed, isNumericType, isTextType, tableKey, type Schema } from './schema';

export type Rule = 'select-star' | 'update-without-where' | 'delete-without-where' | 'leading-wildcard-like' | 'function-on-column' | 'implicit-cast' | 'n-plus-one';
export type Severity = 'high' | 'medium' | 'low';
export const SEVERITY_RANK: Record<Severity, number> = { high: 3, medium: 2, low: 1 };

export interface Finding {
  rule: Rule;
  severity: Severity;
  message: string;
  file: string;
  line: number;
  /** The query (shortened), or the code line for n-plus-one. */
  query: string;
}

/** Where a query came from: a .sql file or a string in code (with the call that runs it). */
export interface QueryOrigin {
  file: string; line: number; via: 'sql-file' | 'code'; call?: string;
  /** The code's template text, `${...}` kept (the parsed text has placeholders instead): what findings show. */
  source?: string;
}

export interface TableUse {
  table: string;
  /** Columns compared for equality with a value (=, IN, IS NULL). */
  eq: string[];
  /** Columns compared with a range (<, >, BETWEEN, LIKE 'x%'). */
  range: string[];
  order: string[];
  /** Columns joined to another table's column, one per join predicate. */
  join: string[];
  limit: boolean;
}

export interface QueryAnalysis {
  kind: string;
  findings: Finding[];
  uses: TableUse[];
  tables: string[];
}

const COMPARE = new Set(['=', '==', '!=', '<>', '<', '>', '<=', '>=', 'IN', 'NOT IN', 'BETWEEN', 'NOT BETWEEN', 'LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE', 'IS', 'IS NOT']);
const EQ = new Set(['=', '==', 'IN', 'IS']);
const RANGE = new Set(['<', '>', '<=', '>=', 'BETWEEN']);
const LIKE = new Set(['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE']);

export function shorten(sql: string, max = 160): string {
  const one = sql.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

/** The from-list entries of every SELECT/UPDATE/DELETE in the tree: alias -> table. */
function aliasesOf(ast: Ast): { alias: Map<string, string>; tables: string[] } {
  const alias = new Map<string, string>();
  const tables: string[] = [];
  walk(ast, (n) => {
    for (const key of ['from', 'table']) {
      const list = n[key];
      if (!Array.isArray(list) || !(n['type'] === 'select' || n['type'] === 'update' || n['type'] === 'delete')) continue;
      for (const f of list as Ast[]) {
        const t = f?.['table'];
        if (typeof t !== 'string') continue;
        if (!tables.includes(t)) tables.push(t);
        alias.set(t.toLowerCase(), t);
        if (typeof f['as'] === 'string') alias.set((f['as'] as string).toLowerCase(), t);
      }
    }
  });
  return { alias, tables };
}

/** A leading-wildcard pattern: `'%x'`, `'_x'`, or a concatenation that starts with one. */
function leadingWildcard(n: unknown): string | undefined {
  const s = stringLiteral(n);
  if (s !== undefined) return /^[%_]/.test(s) ? s : undefined;
  if (n && typeof n === 'object') {
    const o = n as Ast;
    if (o['type'] === 'binary_expr' && o['operator'] === '||') return leadingWildcard(o['left']);
    if (o['type'] === 'function' && functionName(o) === 'concat') return leadingWildcard(((o['args'] as Ast | undefined)?.['value'] as unknown[] | undefined)?.[0]);
  }
  return undefined;
}

/** The column a function or cast wraps directly (`lower(email)`, `CAST(id AS text)`, `date(created_at)`). */
function wrappedColumn(n: unknown): { col: Ast; fn: string } | undefined {
  if (!n || typeof n !== 'object') return undefined;
  const o = n as Ast;
  if (o['type'] === 'function' || o['type'] === 'aggr_func') {
    const args = ((o['args'] as Ast | undefined)?.['value'] ?? (o['args'] as Ast | undefined)?.['expr']) as unknown;
    const list = Array.isArray(args) ? args : [args];
    const col = list.find(isColumn);
    return col ? { col: col as Ast, fn: functionName(o) } : undefined;
  }
  if (o['type'] === 'cast' && isColumn(o['expr'])) return { col: o['expr'] as Ast, fn: 'cast' };
  return undefined;
}

/** AND-connected parts of a predicate (an OR is one part: no single index serves it). */
function conjuncts(n: unknown, out: Ast[] = []): Ast[] {
  if (!n || typeof n !== 'object') return out;
  const o = n as Ast;
  if (o['type'] === 'binary_expr' && String(o['operator']).toUpperCase() === 'AND') { conjuncts(o['left'], out); conjuncts(o['right'], out); }
  else if (o['parentheses'] === true && o['type'] === 'binary_expr' && String(o['operator']).toUpperCase() === 'AND') conjuncts({ ...o, parentheses: false }, out);
  else out.push(o);
  return out;
}

/** A value side of a comparison: a literal, a parameter or an expression of them (`now() - interval '7 days'`), no column in it. */
function isValue(n: unknown): boolean {
  if (!n || typeof n !== 'object') return false;
  let col = false;
  walk(n, (x) => { if (x['type'] === 'column_ref' || x['type'] === 'select') col = true; });
  return !col;
}

/** Analyzes one statement (already parsed). `schema` may be empty: the type and index rules then say less. */
export function analyzeQuery(ast: Ast, sql: string, origin: QueryOrigin, schema: Schema, stmtLine: number): QueryAnalysis {
  const findings: Finding[] = [];
  const { alias, tables } = aliasesOf(ast);
  const hasSchema = schema.tables.size > 0;
  const at = (n: unknown) => (origin.via === 'code' ? origin.line + ((lineOf(n) ?? 1) - 1) : stmtLine + ((lineOf(n) ?? 1) - 1));
  const q = shorten(origin.source ?? sql);
  /** A pattern as the code wrote it: the placeholders of a template stand for its `${...}` parts. */
  const shown = (pat: string) => (origin.source ? pat.replace(/\$\d+|\?/g, '${...}') : pat);
  const add = (rule: Rule, severity: Severity, message: string, node: unknown) => {
    const line = at(node);
    if (!findings.some((f) => f.rule === rule && f.line === line && f.message === message)) findings.push({ rule, severity, message, file: origin.file, line, query: q });
  };
  /** The table a column reference belongs to: its qualifier, the only table, or the one table of the schema that has it. */
  const tableOf = (ref: Ast): string | undefined => {
    const t = columnTable(ref);
    if (t) return alias.get(t.toLowerCase()) ?? t;
    if (tables.length === 1) return tables[0];
    const name = columnName(ref)!.toLowerCase();
    const having = tables.filter((tb) => schema.tables.get(tableKey(tb))?.columns.has(name));
    return having.length === 1 ? having[0] : undefined;
  };
  const typeOf = (ref: Ast): string | undefined => {
    const t = tableOf(ref);
    return t ? schema.tables.get(tableKey(t))?.columns.get(columnName(ref)!.toLowerCase())?.type : undefined;
  };

  const uses = new Map<string, TableUse>();
  const use = (table: string): TableUse => {
    const k = tableKey(table);
    let u = uses.get(k);
    if (!u) { u = { table: k, eq: [], range: [], order: [], join: [], limit: false }; uses.set(k, u); }
    return u;
  };
  const push = (list: string[], c: string) => { if (!list.includes(c)) list.push(c); };

  /** Predicate checks on one WHERE / ON tree, and the table uses it gives. */
  const predicates = (tree: unknown) => {
    walk(tree, (n) => {
      if (n['type'] !== 'binary_expr') return;
      const op = String(n['operator']).toUpperCase();
      if (!COMPARE.has(op)) return;
      const sides = [n['left'], n['right']];
      if (LIKE.has(op) && !op.startsWith('NOT')) {
        const pat = leadingWildcard(n['right']);
        if (pat !== undefined) add('leading-wildcard-like', 'medium', `${op} '${shown(pat)}' starts with a wildcard: no B-tree index can serve it (a trigram or full-text index can)`, n);
      }
      for (const side of sides) {
        const w = wrappedColumn(side);
        if (!w) continue;
        const table = tableOf(w.col);
        const name = columnName(w.col)!;
        const ix = table && hasSchema ? isIndexed(schema, table, name) : undefined;
        if (hasSchema && !ix) continue;
        add('function-on-column', ix ? 'medium' : 'low',
          ix ? `${w.fn}(${name}) in a predicate: the index ${ix.name} on ${table}(${ix.columns.join(', ')}) cannot be used; compare the bare column or index the expression`
            : `${w.fn}(${name}) in a predicate: an index on ${name} cannot be used (no schema given: whether it is indexed is unknown)`, n);
      }
      if (hasSchema) {
        for (const [a, b] of [[n['left'], n['right']], [n['right'], n['left']]] as const) {
          if (!isColumn(a)) continue;
          const type = typeOf(a);
          if (!type) continue;
          const values = b && typeof b === 'object' && (b as Ast)['type'] === 'expr_list' ? ((b as Ast)['value'] as unknown[]) : [b];
          const str = values.map(stringLiteral).find((s) => s !== undefined);
          // The literal is what gets converted here (the index stays usable); the risk is the mismatch itself:
          // '42abc' fails in PostgreSQL and silently compares as 42 in MySQL.
          if (isNumericType(type) && str !== undefined) add('implicit-cast', 'low', `${columnName(a)} is ${type} but is compared with the string '${str}': the string is converted to a number (a non-numeric one fails in PostgreSQL, compares by its numeric prefix in MySQL); pass a number`, n);
          else if (isTextType(type) && values.some(isNumberLiteral)) add('implicit-cast', 'medium', `${columnName(a)} is ${type} but is compared with a number: MySQL converts every row's ${columnName(a)} to a number (no index), PostgreSQL refuses text = integer; quote the value`, n);
        }
      }
    });
    for (const c of conjuncts(tree)) {
      if (c['type'] !== 'binary_expr') continue;
      const op = String(c['operator']).toUpperCase();
      const l = c['left']; const r = c['right'];
      if (isColumn(l) && isColumn(r)) {
        const tl = tableOf(l as Ast); const tr = tableOf(r as Ast);
        if (tl && tr && tableKey(tl) !== tableKey(tr) && op === '=') { push(use(tl).join, columnName(l)!.toLowerCase()); push(use(tr).join, columnName(r)!.toLowerCase()); }
        continue;
      }
      const [col, val] = isColumn(l) && isValue(r) ? [l as Ast, r] : isColumn(r) && isValue(l) && !LIKE.has(op) ? [r as Ast, l] : [undefined, undefined];
      if (!col) continue;
      const table = tableOf(col);
      if (!table) continue;
      const name = columnName(col)!.toLowerCase();
      if (EQ.has(op)) push(use(table).eq, name);
      else if (RANGE.has(op)) push(use(table).range, name);
      else if (LIKE.has(op) && !op.startsWith('NOT')) {
        const s = stringLiteral(val);
        if (s !== undefined && !/^[%_]/.test(s)) push(use(table).range, name);
      }
    }
  };

  walk(ast, (n, parents) => {
    const type = n['type'];
    if (type === 'select') {
      const cols = n['columns'];
      const star = cols === '*' || (Array.isArray(cols) && (cols as Ast[]).some((c) => (c['expr'] as Ast | undefined)?.['type'] === 'column_ref' && columnName(c['expr']) === '*'));
      const inExists = parents.some((p) => (p['type'] === 'unary_expr' && String(p['operator']).toUpperCase().includes('EXISTS')) || (p['type'] === 'function' && functionName(p) === 'exists'));
      if (star && !inExists) add('select-star', 'low', 'SELECT * reads every column: it defeats covering indexes and breaks when columns change; name the columns', n['columns'] ?? n);
      for (const o of (n['orderby'] as Ast[] | null) ?? []) {
        if (!isColumn(o['expr'])) continue;
        const t = tableOf(o['expr'] as Ast);
        if (t) push(use(t).order, columnName(o['expr'])!.toLowerCase());
      }
      if (n['limit'] && ((n['limit'] as Ast)['value'] as unknown[] | undefined)?.length) for (const t of tables) use(t).limit = true;
    }
    if ((type === 'update' || type === 'delete') && !n['where']) {
      const table = tables[0] ?? '?';
      add(type === 'update' ? 'update-without-where' : 'delete-without-where', 'high', `${String(type).toUpperCase()} of ${table} without WHERE changes every row`, n);
    }
    if (type === 'select' || type === 'update' || type === 'delete') {
      if (n['where']) predicates(n['where']);
      for (const f of (Array.isArray(n['from']) ? n['from'] : []) as Ast[]) if (f?.['on']) predicates(f['on']);
    }
  });
  return { kind: String(ast['type'] ?? ''), findings, uses: [...uses.values()], tables: tables.map(tableKey) };
}
