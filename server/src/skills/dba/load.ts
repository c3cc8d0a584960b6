/**
 * What dba-ai reads: the .sql files and the JS/TS sources (named by `input.files`, or found in the
 * workspace), every file through WorkspaceFiles, and the schema (`input.schema`: DDL files; without
 * it, the CREATE TABLE / CREATE INDEX statements of the workspace's own .sql files, e.g. migrations).
 * Each query is parsed and analyzed here, once, for both actions.
 */
import { analyzeQuery, shorten, type Finding, type QueryAnalysis, type QueryOrigin } from './checks';
import { mayQuery, scanCode, type LoopCall } from './code';
import { addDdl, emptySchema, type Schema } from './schema';
import { guessDialect, parseStatement, splitStatements, type Dialect } from './sql';
import { walkFiles, WorkspaceFiles } from '../workspace/files';

export const LOOKED_AT = 'input.files, *.sql and JS/TS sources in the workspace (not node_modules, .git, dist, build)';
const SKIP = new Set(['node_modules', '.git', 'dist', 'build', 'out', 'coverage', '.cadre', 'vendor', '.next']);
const CODE = /\.(?:[cm]?[jt]s|[jt]sx)$/i;
const DML = new Set(['SELECT', 'WITH', 'UPDATE', 'DELETE', 'INSERT', 'REPLACE']);
const MAX_SQL = 8 * 1024 * 1024;
const MAX_CODE = 1024 * 1024;
const MAX_FILES = 5000;

export interface AnalyzedQuery { origin: QueryOrigin; line: number; sql: string; analysis: QueryAnalysis }

export interface Loaded {
  dialect: Dialect;
  queries: AnalyzedQuery[];
  loops: LoopCall[];
  schema: Schema;
  /** `input.schema`, `workspace .sql DDL`, or `none`. */
  schemaFrom: string;
  sqlFiles: string[];
  codeFiles: string[];
  /** Statements of .sql files that are not queries (DDL, SET...). */
  otherStatements: number;
  /** Code queries the grammar could not read (dynamic SQL): named, not analyzed. */
  skipped: Array<{ file: string; line: number; why: string }>;
  problem?: { field: string; message: string };
}

function listOf(raw: unknown, field: string): string[] | { field: string; message: string } | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'string') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) return raw as string[];
  return { field, message: `input.${field} must be a path or a list of paths` };
}

export function dialectOf(raw: unknown): Dialect | undefined | { message: string } {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const v = String(raw).toLowerCase();
  if (['postgresql', 'postgres', 'pg', 'pgsql'].includes(v)) return 'postgresql';
  if (['mysql', 'mariadb'].includes(v)) return 'mysql';
  return { message: `input.dialect must be postgresql or mysql (got "${String(raw).slice(0, 30)}")` };
}

export function loadDba(ws: string, input: Record<string, unknown>): Loaded {
  const files = new WorkspaceFiles(ws);
  const out: Loaded = { dialect: 'postgresql', queries: [], loops: [], schema: emptySchema(), schemaFrom: 'none', sqlFiles: [], codeFiles: [], otherStatements: 0, skipped: [] };
  const fail = (field: string, message: string): Loaded => ({ ...out, problem: { field, message } });
  const d = dialectOf(input['dialect']);
  if (d && typeof d === 'object') return fail('dialect', d.message);

  const named = listOf(input['files'], 'files');
  if (named && !Array.isArray(named)) return fail(named.field, named.message);
  const schemaNamed = listOf(input['schema'], 'schema');
  if (schemaNamed && !Array.isArray(schemaNamed)) return fail(schemaNamed.field, schemaNamed.message);

  let paths: string[];
  if (named) {
    for (const p of named) if (!/\.sql$/i.test(p) && !CODE.test(p)) return fail('files', `input.files: ${p} is neither a .sql file nor a JS/TS source; not read`);
    paths = named;
  } else {
    paths = walkFiles(files.root, { skipDirs: SKIP, limit: MAX_FILES }).filter((f) => (/\.sql$/i.test(f) || (CODE.test(f) && !/\.d\.[cm]?ts$/i.test(f))) && !(schemaNamed ?? []).includes(f)).sort();
  }
  const read = (p: string, field: string, max: number) => {
    const r = files.readText(p, max);
    if (!r.ok) return { error: `input.${field}: ${p} ${r.reason === 'not found' ? 'does not exist in the workspace' : `is ${r.reason}`}; not read` };
    return { text: r.text, rel: r.rel || p };
  };

  const sqlTexts: Array<{ rel: string; text: string }> = [];
  const codeTexts: Array<{ rel: string; text: string }> = [];
  for (const p of paths) {
    const isSql = /\.sql$/i.test(p);
    const r = read(p, 'files', isSql ? MAX_SQL : MAX_CODE);
    if ('error' in r) {
      if (named) return fail('files', r.error!);
      continue; // found by the walk but unreadable (too large): skipped, named below
    }
    if (isSql) sqlTexts.push(r); else if (mayQuery(r.text)) codeTexts.push(r); else out.codeFiles.push(r.rel);
  }
  const schemaTexts: Array<{ rel: string; text: string }> = [];
  for (const p of schemaNamed ?? []) {
    const r = read(p, 'schema', MAX_SQL);
    if ('error' in r) return fail('schema', r.error!);
    schemaTexts.push(r);
  }
  out.dialect = (d as Dialect | undefined) ?? guessDialect([...schemaTexts, ...sqlTexts].map((t) => t.text).join('\n').slice(0, 200_000));

  // The schema first: the type and index rules need it.
  if (schemaTexts.length) {
    out.schemaFrom = 'input.schema';
    for (const s of schemaTexts) {
      const r = addDdl(out.schema, s.rel, s.text, out.dialect);
      if (!r.ok) return fail('schema', `${s.rel}:${r.line}: ${r.message}`);
    }
  } else {
    // No input.schema: the DDL of the workspace's .sql files, also those input.files did not name (migrations).
    const ddl = [...sqlTexts];
    if (named) {
      for (const p of walkFiles(files.root, { skipDirs: SKIP, limit: MAX_FILES }).filter((f) => /\.sql$/i.test(f)).sort()) {
        if (ddl.some((t) => t.rel === p)) continue;
        const r = files.readText(p, MAX_SQL);
        if (r.ok && /\bCREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\b/i.test(r.text)) ddl.push({ rel: r.rel, text: r.text });
      }
    }
    for (const s of ddl) {
      if (!/\bCREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\b/i.test(s.text)) continue;
      const r = addDdl(out.schema, s.rel, s.text, out.dialect);
      if (!r.ok) out.skipped.push({ file: s.rel, line: r.line, why: `DDL not read: ${r.message}` });
    }
    if (out.schema.tables.size) out.schemaFrom = `workspace .sql DDL (${out.schema.files.join(', ')})`;
  }

  for (const s of sqlTexts) {
    out.sqlFiles.push(s.rel);
    for (const st of splitStatements(s.text)) {
      if (!DML.has(st.keyword)) { out.otherStatements++; continue; }
      const p = parseStatement(st.sql, out.dialect, st.line);
      if (!p.ok) return fail('files', `${s.rel}:${p.line}: ${p.message}`);
      const origin: QueryOrigin = { file: s.rel, line: st.line, via: 'sql-file' };
      out.queries.push({ origin, line: st.line, sql: st.sql, analysis: analyzeQuery(p.ast, st.sql, origin, out.schema, st.line) });
    }
  }
  for (const c of codeTexts) {
    out.codeFiles.push(c.rel);
    const scan = scanCode(c.rel, c.text, out.dialect);
    out.loops.push(...scan.loops);
    for (const q of scan.queries) {
      const p = parseStatement(q.sql, out.dialect, q.line);
      if (!p.ok) { out.skipped.push({ file: c.rel, line: q.line, why: `${q.dynamic ? 'dynamic SQL' : 'SQL'} in ${q.call}() not parsed: ${p.message.slice(0, 120)}` }); continue; }
      const origin: QueryOrigin = { file: c.rel, line: q.line, via: 'code', call: q.call, ...(q.source ? { source: q.source } : {}) };
      out.queries.push({ origin, line: q.line, sql: q.sql, analysis: analyzeQuery(p.ast, q.sql, origin, out.schema, q.line) });
    }
  }
  return out;
}

/** The N+1 findings: one per database call in a loop. */
export function loopFindings(loops: LoopCall[]): Finding[] {
  return loops.map((l) => ({
    rule: 'n-plus-one' as const, severity: 'medium' as const, file: l.file, line: l.line, query: l.sql ? shorten(l.sql) : l.code,
    message: `${l.call}() inside a ${l.loop} (line ${l.loopLine}): one query per item; fetch them in one query (WHERE id = ANY($1) / IN (...), or a JOIN)`,
  }));
}
