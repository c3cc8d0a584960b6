/**
 * A schema from DDL: the tables with their columns and types, and every index the schema already
 * has (primary keys, unique constraints and columns, MySQL inline KEY/INDEX, CREATE [UNIQUE] INDEX,
 * ALTER TABLE ... ADD PRIMARY KEY/UNIQUE/INDEX). Only CREATE TABLE, CREATE INDEX and ALTER TABLE
 * statements are parsed; the rest of a dump (SET, COMMENT, GRANT, ...) is counted and left.
 */
import { columnName, parseStatement, splitStatements, type Ast, type Dialect } from './sql';

export interface SchemaColumn { name: string; type: string; line: number }
export interface SchemaIndex {
  table: string;
  /** Column names in index order; an expression part is `(expr)`. */
  columns: string[];
  name: string;
  kind: 'primary key' | 'unique' | 'index';
  file: string;
  line: number;
}
export interface SchemaTable { name: string; columns: Map<string, SchemaColumn>; file: string; line: number }

export interface Schema {
  tables: Map<string, SchemaTable>;
  indexes: SchemaIndex[];
  files: string[];
  /** Statements other than CREATE TABLE / CREATE INDEX / ALTER TABLE, not read. */
  otherStatements: number;
}

export type SchemaParse = { ok: true; schema: Schema } | { ok: false; message: string; file: string; line: number };

/** Table names compare without schema qualifier and case (`public.Users` = `users`). */
export function tableKey(name: string): string {
  return name.replace(/^.*\./, '').replace(/[`"]/g, '').toLowerCase();
}

const NUMERIC = /^(SMALLINT|INT|INTEGER|BIGINT|TINYINT|MEDIUMINT|SERIAL|BIGSERIAL|SMALLSERIAL|DECIMAL|NUMERIC|REAL|FLOAT|DOUBLE|DOUBLE PRECISION|INT2|INT4|INT8|FLOAT4|FLOAT8|BIT|YEAR)\b/i;
const TEXT = /^(CHAR|VARCHAR|CHARACTER|CHARACTER VARYING|TEXT|TINYTEXT|MEDIUMTEXT|LONGTEXT|CITEXT|NCHAR|NVARCHAR|ENUM)\b/i;

export function isNumericType(t: string): boolean { return NUMERIC.test(t.trim()); }
export function isTextType(t: string): boolean { return TEXT.test(t.trim()); }

function tableNameOf(t: unknown): string | undefined {
  const one = Array.isArray(t) ? t[0] : t;
  const name = (one as Ast | undefined)?.['table'];
  return typeof name === 'string' ? name : undefined;
}

function partsOf(defs: unknown): string[] {
  if (!Array.isArray(defs)) return [];
  return defs.map((d) => columnName(d) ?? (typeof d === 'string' ? d : '(expr)'));
}

function kindOf(constraintType: unknown): SchemaIndex['kind'] | undefined {
  const t = String(constraintType ?? '').toLowerCase();
  if (t.startsWith('primary')) return 'primary key';
  if (t.startsWith('unique')) return 'unique';
  return undefined;
}

export function emptySchema(): Schema {
  return { tables: new Map(), indexes: [], files: [], otherStatements: 0 };
}

/** Adds one DDL file to `schema`; a CREATE TABLE or CREATE INDEX the grammar cannot read names its line. */
export function addDdl(schema: Schema, file: string, text: string, dialect: Dialect): { ok: true } | { ok: false; message: string; line: number } {
  schema.files.push(file);
  for (const st of splitStatements(text)) {
    const isCreate = st.keyword === 'CREATE' && /^CREATE\s+(?:(?:GLOBAL\s+|LOCAL\s+)?(?:TEMP|TEMPORARY|UNLOGGED)\s+)?(?:TABLE|(?:UNIQUE\s+)?INDEX)\b/i.test(st.sql);
    const isAlter = st.keyword === 'ALTER' && /^ALTER\s+TABLE\b/i.test(st.sql) && /\bADD\b/i.test(st.sql) && /\b(PRIMARY|UNIQUE|INDEX|KEY)\b/i.test(st.sql);
    if (!isCreate && !isAlter) { schema.otherStatements++; continue; }
    const p = parseStatement(st.sql, dialect, st.line);
    if (!p.ok) {
      // An ALTER TABLE the grammar does not know is left (dumps hold many kinds); a CREATE must be read.
      if (isAlter) { schema.otherStatements++; continue; }
      return { ok: false, message: p.message, line: p.line };
    }
    const ast = p.ast;
    const add = (table: string, columns: string[], kind: SchemaIndex['kind'], name: string) => {
      if (columns.length) schema.indexes.push({ table: tableKey(table), columns: columns.map((c) => c.toLowerCase()), kind, name, file, line: st.line });
    };
    if (ast['type'] === 'create' && ast['keyword'] === 'table') {
      const table = tableNameOf(ast['table']);
      if (!table) continue;
      const t: SchemaTable = { name: table, columns: new Map(), file, line: st.line };
      schema.tables.set(tableKey(table), t);
      for (const d of (ast['create_definitions'] as Ast[] | null) ?? []) {
        if (d['resource'] === 'column') {
          const name = columnName(d['column']);
          if (!name) continue;
          const def = (d['definition'] ?? {}) as Ast;
          t.columns.set(name.toLowerCase(), { name, type: String(def['dataType'] ?? ''), line: st.line });
          if (d['primary_key']) add(table, [name], 'primary key', `${table}_pkey`);
          else if (d['unique'] || d['unique_or_primary']) add(table, [name], 'unique', `${table}_${name}_key`);
        } else if (d['resource'] === 'constraint') {
          const kind = kindOf(d['constraint_type']);
          if (kind) add(table, partsOf(d['definition']), kind, String(d['constraint'] ?? d['index'] ?? `${table}_${kind.replace(' ', '_')}`));
        } else if (d['resource'] === 'index') {
          add(table, partsOf(d['definition']), 'index', String(d['index'] ?? `${table}_idx`));
        }
      }
    } else if (ast['type'] === 'create' && ast['keyword'] === 'index') {
      const table = tableNameOf(ast['table']);
      const cols = (ast['index_columns'] as unknown[] | null) ?? [];
      const unique = /^\s*CREATE\s+UNIQUE/i.test(st.sql);
      if (table) add(table, partsOf(cols), unique ? 'unique' : 'index', String(ast['index'] ?? `${table}_idx`));
    } else if (ast['type'] === 'alter') {
      const table = tableNameOf(ast['table']);
      for (const e of (ast['expr'] as Ast[] | null) ?? []) {
        // ADD CONSTRAINT ... nests its definition; ADD INDEX does not.
        const def = (e['create_definitions'] && typeof e['create_definitions'] === 'object' ? e['create_definitions'] : e) as Ast;
        const kind = kindOf(def['constraint_type']) ?? (def['resource'] === 'index' ? 'index' : undefined);
        if (table && kind) add(table, partsOf(def['definition']), kind, String(def['constraint'] ?? def['index'] ?? `${table}_idx`));
      }
    }
  }
  return { ok: true };
}

/** True when an existing index's leading columns are exactly `columns` in order (so it serves them). */
export function indexCovers(existing: readonly string[], columns: readonly string[], eqCount = 0): boolean {
  if (existing.length < columns.length) return false;
  // The equality part may come in any order: the index serves it when its first eqCount columns are the same set.
  const head = new Set(existing.slice(0, eqCount));
  for (const c of columns.slice(0, eqCount)) if (!head.has(c)) return false;
  for (let i = eqCount; i < columns.length; i++) if (existing[i] !== columns[i]) return false;
  return true;
}

/** The schema's index that already serves `columns` on `table`, if any. */
export function coveringIndex(schema: Schema, table: string, columns: readonly string[], eqCount = 0): SchemaIndex | undefined {
  return schema.indexes.find((ix) => ix.table === tableKey(table) && indexCovers(ix.columns, columns, eqCount));
}

/** True when `column` of `table` leads or is part of some index. */
export function isIndexed(schema: Schema, table: string, column: string): SchemaIndex | undefined {
  const c = column.toLowerCase();
  return schema.indexes.find((ix) => ix.table === tableKey(table) && ix.columns.includes(c));
}
