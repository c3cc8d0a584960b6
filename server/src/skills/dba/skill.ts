/**
 * dba-ai's embedded skills [PRO], read-only and deterministic (no model, no database connection):
 *
 *  - `analyze-queries` (the default action): the anti-patterns of checks.ts in every query of the .sql
 *    files and of the JS/TS code, and the N+1 shape (a database call in a loop) in the code.
 *  - `indexes`: index suggestions (indexes.ts) from the queries' predicates, joins and ORDER BY against
 *    the schema's DDL (`input.schema`, or the workspace's own CREATE TABLE statements), never one the
 *    schema already has.
 *
 * Nothing to read is not applicable (with where it looked); an unparseable statement, an unknown file
 * type or a path outside the workspace is needs input naming the field, the file and the line.
 */
import { existsSync } from 'node:fs';
import type { Artifact, Evidence, Skill } from '../../engine/rigor/skill';
import type { ProposedAction } from '../../engine/acmf/records';
import { SEVERITY_RANK, type Finding, type Rule } from './checks';
import { suggestIndexes, type IndexSuggestion, type Skipped } from './indexes';
import { loadDba, loopFindings, LOOKED_AT, type Loaded } from './load';
import type { Dialect } from './sql';
import { analyzeQueriesDataSchema, indexesDataSchema } from './schemas';
import { dbaInputSchema } from '../operate-inputs';

export interface Examined {
  sqlFiles: number;
  codeFiles: number;
  queries: number;
  fromSql: number;
  fromCode: number;
  otherStatements: number;
  schemaTables: number;
  schemaIndexes: number;
  schemaFrom: string;
  skipped: Loaded['skipped'];
}

export interface AnalyzeQueriesData {
  dialect: Dialect;
  findings: Finding[];
  byRule: Partial<Record<Rule, number>>;
  examined: Examined;
  files: string[];
}

export interface IndexesData {
  dialect: Dialect;
  suggestions: IndexSuggestion[];
  /** Candidates an existing index already serves (with which). */
  alreadyServed: Array<Skipped & { by: string }>;
  /** Candidates on tables or columns the schema does not describe. */
  unknown: Skipped[];
  examined: Examined;
}

function examinedOf(d: Loaded): Examined {
  return {
    sqlFiles: d.sqlFiles.length, codeFiles: d.codeFiles.length, queries: d.queries.length,
    fromSql: d.queries.filter((q) => q.origin.via === 'sql-file').length, fromCode: d.queries.filter((q) => q.origin.via === 'code').length,
    otherStatements: d.otherStatements, schemaTables: d.schema.tables.size, schemaIndexes: d.schema.indexes.length, schemaFrom: d.schemaFrom, skipped: d.skipped,
  };
}

function examinedLine(e: Examined): string {
  return `${e.queries} quer${e.queries === 1 ? 'y' : 'ies'} (${e.fromSql} from ${e.sqlFiles} .sql file(s), ${e.fromCode} from ${e.codeFiles} JS/TS file(s))` +
    `${e.schemaTables ? `, schema of ${e.schemaTables} table(s) and ${e.schemaIndexes} index(es) from ${e.schemaFrom}` : ', no schema'}` +
    `${e.skipped.length ? `; ${e.skipped.length} skipped` : ''}`;
}

/** Deterministic on what was parsed: 0.9 when every query was read, lower with skipped ones; without a schema the type and index rules are off (0.8). */
function confidenceOf(d: Loaded, needsSchema: boolean): number {
  const total = d.queries.length + d.skipped.length;
  const parsed = total ? d.queries.length / total : 1;
  const base = d.schema.tables.size || !needsSchema ? 0.9 : 0.8;
  return Math.round(base * (0.5 + 0.5 * parsed) * 100) / 100;
}

export function renderFindings(d: AnalyzeQueriesData): string {
  const out = ['# dba-ai query analysis', '', `Examined ${examinedLine(d.examined)}; dialect ${d.dialect}.`, ''];
  if (!d.findings.length) out.push('No anti-pattern found.', '');
  else {
    out.push('| severity | rule | where | finding | query |', '|---|---|---|---|---|');
    for (const f of d.findings) out.push(`| ${f.severity} | ${f.rule} | ${f.file}:${f.line} | ${f.message.replace(/\|/g, '\\|')} | \`${f.query.replace(/\|/g, '\\|').replace(/`/g, "'")}\` |`);
    out.push('');
  }
  if (d.examined.skipped.length) out.push('## Not analyzed', '', ...d.examined.skipped.map((s) => `- ${s.file}:${s.line}: ${s.why}`), '');
  return out.join('\n');
}

export function renderIndexes(d: IndexesData): string {
  const out = ['# dba-ai index suggestions', '', `Examined ${examinedLine(d.examined)}; dialect ${d.dialect}.`, ''];
  if (!d.suggestions.length) out.push('No index to add: every predicate, join and ORDER BY examined is served by an existing index or uses no column.', '');
  for (const s of d.suggestions) out.push(`- \`${s.ddl}\`: ${s.reason}${s.extends ? `; extends ${s.extends}` : ''} (queries at ${s.queries.join(', ')})`);
  if (d.alreadyServed.length) out.push('', '## Already served', '', ...d.alreadyServed.map((s) => `- ${s.table}(${s.columns.join(', ')}): ${s.why}, by ${s.by}`));
  if (d.unknown.length) out.push('', '## Not suggested', '', ...d.unknown.map((s) => `- ${s.table}(${s.columns.join(', ')}): ${s.why} (queries at ${s.queries.join(', ')})`));
  return out.join('\n');
}

function proposeDba(d: Loaded | undefined): ProposedAction[] {
  if (!d) return [];
  const paths = [...d.sqlFiles, ...d.codeFiles, ...d.schema.files.filter((f) => !d.sqlFiles.includes(f))];
  return paths.length ? [{ kind: 'read', description: 'read the SQL files, the JS/TS sources and the schema', paths }, { kind: 'analyze', description: 'parse the queries and check them' }] : [];
}

function makeDbaSkill(action: 'analyze-queries' | 'indexes'): Skill {
  const prepared = new WeakMap<Evidence, Loaded>();
  const kind = action === 'analyze-queries' ? 'dba-query-analysis' : 'dba-index-suggestions';
  return {
    agentId: 'dba-ai',
    action,
    inputSchema: dbaInputSchema,
    needs: ['workspace'],
    outputSchema: action === 'analyze-queries' ? analyzeQueriesDataSchema : indexesDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to read queries from'); return evidence; }
      const d = loadDba(ws, ctx.request.input);
      prepared.set(evidence, d);
      for (const f of d.sqlFiles) evidence.items.push({ source: f, detail: `SQL file: ${d.queries.filter((q) => q.origin.file === f).length} quer(ies)`, weight: 0.8 });
      for (const f of d.codeFiles) evidence.items.push({ source: f, detail: `code: ${d.queries.filter((q) => q.origin.file === f).length} quer(ies), ${d.loops.filter((l) => l.file === f).length} call(s) in loops`, weight: 0.6 });
      evidence.pathsRead.push(...new Set([...d.sqlFiles, ...d.codeFiles, ...d.schema.files]));
      if (d.problem) evidence.constraints.push(d.problem.message);
      ctx.progress(50, d.queries.length ? 0.6 : 0.3);
      return evidence;
    },
    propose(_ctx, evidence) {
      return proposeDba(prepared.get(evidence));
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const ws = ctx.request.workspace;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `dba-ai ${action}: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      if (!ws || !existsSync(ws)) return unable('no workspace was given to read queries from');
      const d = prepared.get(evidence) ?? loadDba(ws, ctx.request.input);
      if (d.problem) return unable(d.problem.message, d.problem.field);
      const examined = examinedOf(d);
      if (action === 'analyze-queries') {
        if (!d.queries.length && !d.loops.length) {
          const why = `no SQL query to analyze: looked for ${LOOKED_AT}${d.sqlFiles.length || d.codeFiles.length ? ` (read ${d.sqlFiles.length} .sql and ${d.codeFiles.length} JS/TS file(s): no query in them)` : ''}`;
          return { kind, summary: `dba-ai analyze-queries: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
        }
        const findings = [...d.queries.flatMap((q) => q.analysis.findings), ...loopFindings(d.loops)]
          .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.file.localeCompare(b.file) || a.line - b.line);
        const byRule: AnalyzeQueriesData['byRule'] = {};
        for (const f of findings) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
        const data: AnalyzeQueriesData = { dialect: d.dialect, findings, byRule, examined, files: [...d.sqlFiles, ...d.codeFiles] };
        const confidence = confidenceOf(d, true);
        ctx.progress(100, confidence);
        const summary = findings.length
          ? `${findings.length} finding(s): ${findings.slice(0, 4).map((f) => `${f.rule} at ${f.file}:${f.line}`).join('; ')}${findings.length > 4 ? `; and ${findings.length - 4} more` : ''} (examined ${examinedLine(examined)})`
          : `nothing found: examined ${examinedLine(examined)}`;
        return {
          kind, summary, goalRef, confidence, data, text: renderFindings(data), tokens: 0,
          findingsAfter: { count: findings.length, maxSeverity: findings.reduce((m, f) => Math.max(m, SEVERITY_RANK[f.severity]), 0) },
        };
      }
      if (!d.schema.tables.size) return unable(`no schema to judge indexes against: give input.schema (DDL files with CREATE TABLE / CREATE INDEX)${d.sqlFiles.length ? `; the workspace's .sql files (${d.sqlFiles.slice(0, 3).join(', ')}) hold no CREATE TABLE` : ''}`, 'schema');
      if (!d.queries.length) {
        const why = `no SQL query to take predicates from: looked for ${LOOKED_AT}`;
        return { kind, summary: `dba-ai indexes: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const uses = d.queries.flatMap((q) => q.analysis.uses.map((use) => ({ use, origin: q.origin, line: q.line })));
      const s = suggestIndexes(uses, d.schema, d.dialect);
      const data: IndexesData = { dialect: d.dialect, suggestions: s.suggestions, alreadyServed: s.served, unknown: s.unknown, examined };
      const confidence = confidenceOf(d, true);
      ctx.progress(100, confidence);
      const n = s.suggestions.length;
      const summary = n
        ? `${n} index(es) to add: ${s.suggestions.slice(0, 3).map((x) => `${x.table}(${x.columns.join(', ')}) for ${x.queries.slice(0, 2).join(', ')}`).join('; ')}${n > 3 ? `; and ${n - 3} more` : ''}; ${s.served.length} already served (examined ${examinedLine(examined)})`
        : `nothing to add: ${s.served.length} candidate(s) already served by the schema's indexes${s.unknown.length ? `, ${s.unknown.length} on tables or columns the schema lacks` : ''}; examined ${examinedLine(examined)}`;
      return {
        kind, summary, goalRef, confidence, data, text: renderIndexes(data), tokens: 0,
        findingsAfter: { count: n, maxSeverity: n ? 2 : 0 },
      };
    },
  };
}

export const analyzeQueriesSkill: Skill = makeDbaSkill('analyze-queries');
export const indexesSkill: Skill = makeDbaSkill('indexes');
