/**
 * Index suggestions from how the queries use each table, against the schema's DDL.
 *
 * Per query and table: the equality columns of the WHERE (any order, sorted by name), then one range
 * column, or else the ORDER BY columns (an index that hands rows in order saves the sort); a join
 * column alone (the lookup side of a join); ORDER BY alone when the query has a LIMIT. A candidate is
 * dropped when an existing index (primary key, unique, index) already serves it: its leading columns
 * are the candidate's (the equality part in any order, the rest in order), so `(a)` is served by an
 * index on `(a, b)`. Candidates that are a prefix of another suggestion merge into it. Columns the
 * schema does not have, and tables it does not describe, are reported and never suggested.
 */
import type { QueryOrigin, TableUse } from './checks';
import { coveringIndex, tableKey, type Schema, type SchemaIndex } from './schema';

export interface IndexSuggestion {
  table: string;
  columns: string[];
  ddl: string;
  reason: string;
  /** Where the queries that want it are (file:line). */
  queries: string[];
  /** An existing index this one extends (its columns are a prefix of the suggestion), if any. */
  extends?: string;
}

export interface Skipped { table: string; columns: string[]; why: string; queries: string[] }

interface Candidate { table: string; columns: string[]; eqCount: number; reason: string; at: string }

function candidatesOf(u: TableUse, at: string): Candidate[] {
  const out: Candidate[] = [];
  const eq = [...u.eq].sort();
  if (eq.length || u.range.length) {
    const tail = u.range.length ? [u.range[0]!] : u.order.filter((c) => !eq.includes(c));
    const cols = [...eq, ...tail];
    const why = [eq.length ? `equality on ${eq.join(', ')}` : '', u.range.length ? `range on ${u.range[0]}` : tail.length ? `ORDER BY ${tail.join(', ')}` : ''].filter(Boolean).join(', then ');
    out.push({ table: u.table, columns: cols, eqCount: eq.length, reason: `WHERE ${why}`, at });
  } else if (u.order.length && u.limit) {
    out.push({ table: u.table, columns: [...u.order], eqCount: 0, reason: `ORDER BY ${u.order.join(', ')} with LIMIT`, at });
  }
  for (const j of u.join) out.push({ table: u.table, columns: [j], eqCount: 1, reason: `join on ${j}`, at });
  return out;
}

function ddlOf(table: string, columns: string[], dialect: 'postgresql' | 'mysql'): string {
  const name = `idx_${table}_${columns.join('_')}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 63);
  return dialect === 'mysql' ? `CREATE INDEX ${name} ON ${table} (${columns.join(', ')});` : `CREATE INDEX CONCURRENTLY ${name} ON ${table} (${columns.join(', ')});`;
}

/** Suggestions and what was left out (served already, unknown table or column). */
export function suggestIndexes(uses: Array<{ use: TableUse; origin: QueryOrigin; line: number }>, schema: Schema, dialect: 'postgresql' | 'mysql'): { suggestions: IndexSuggestion[]; served: Array<Skipped & { by: string }>; unknown: Skipped[] } {
  const cands: Candidate[] = [];
  for (const { use, origin, line } of uses) cands.push(...candidatesOf(use, `${origin.file}:${line}`));
  const served = new Map<string, Skipped & { by: string }>();
  const unknown = new Map<string, Skipped>();
  const wanted = new Map<string, Candidate & { reasons: Set<string>; ats: Set<string> }>();
  const note = <T extends Skipped>(m: Map<string, T>, c: Candidate, v: Omit<T, 'queries'>) => {
    const k = `${c.table}(${c.columns.join(',')})`;
    const had = m.get(k);
    if (had) { if (!had.queries.includes(c.at)) had.queries.push(c.at); } else m.set(k, { ...v, queries: [c.at] } as T);
  };
  for (const c of cands) {
    const t = schema.tables.get(tableKey(c.table));
    if (!t) { note(unknown, c, { table: c.table, columns: c.columns, why: 'table not in the schema' }); continue; }
    const missing = c.columns.filter((col) => !t.columns.has(col));
    if (missing.length) { note(unknown, c, { table: c.table, columns: c.columns, why: `column(s) ${missing.join(', ')} not in ${t.name}` }); continue; }
    const by = coveringIndex(schema, c.table, c.columns, c.eqCount);
    if (by) { note(served, c, { table: c.table, columns: c.columns, why: c.reason, by: `${by.name} (${by.columns.join(', ')}) at ${by.file}:${by.line}` }); continue; }
    const k = `${c.table}(${c.columns.join(',')})`;
    const w = wanted.get(k) ?? { ...c, reasons: new Set<string>(), ats: new Set<string>() };
    w.reasons.add(c.reason); w.ats.add(c.at);
    wanted.set(k, w);
  }
  // A wanted index that is a leading part of another wanted index on the same table is served by that one.
  const list = [...wanted.values()];
  const kept = list.filter((a) => !list.some((b) => b !== a && b.table === a.table && b.columns.length > a.columns.length && a.columns.every((c, i) => b.columns[i] === c)));
  for (const a of list) {
    if (kept.includes(a)) continue;
    const into = kept.find((b) => b.table === a.table && a.columns.every((c, i) => b.columns[i] === c))!;
    a.reasons.forEach((r) => into.reasons.add(r)); a.ats.forEach((x) => into.ats.add(x));
  }
  const extendsOf = (table: string, cols: string[]): SchemaIndex | undefined =>
    schema.indexes.find((ix) => ix.table === table && ix.columns.length < cols.length && ix.columns.every((c, i) => cols[i] === c));
  const suggestions = kept.map((w): IndexSuggestion => {
    const ext = extendsOf(w.table, w.columns);
    return {
      table: w.table, columns: w.columns, ddl: ddlOf(w.table, w.columns, dialect), reason: [...w.reasons].join('; '), queries: [...w.ats],
      ...(ext ? { extends: `${ext.name} (${ext.columns.join(', ')})` } : {}),
    };
  }).sort((a, b) => b.queries.length - a.queries.length || a.table.localeCompare(b.table) || a.columns.join().localeCompare(b.columns.join()));
  return { suggestions, served: [...served.values()], unknown: [...unknown.values()] };
}
