/**
 * The shapes of dba-ai's artifact data (docs/api.md, "dba-ai actions"), checked by the artifact-schema
 * gate. `null` is the data of a step that was not applicable or needed input.
 */
import { z } from 'zod';

const examined = z.object({
  sqlFiles: z.number().int().min(0), codeFiles: z.number().int().min(0), queries: z.number().int().min(0), fromSql: z.number().int().min(0), fromCode: z.number().int().min(0),
  otherStatements: z.number().int().min(0), schemaTables: z.number().int().min(0), schemaIndexes: z.number().int().min(0), schemaFrom: z.string(),
  skipped: z.array(z.object({ file: z.string(), line: z.number().int().min(1), why: z.string() })),
});
const dialect = z.enum(['postgresql', 'mysql']);

export const analyzeQueriesDataSchema = z.object({
  dialect,
  findings: z.array(z.object({
    rule: z.enum(['select-star', 'update-without-where', 'delete-without-where', 'leading-wildcard-like', 'function-on-column', 'implicit-cast', 'n-plus-one']),
    severity: z.enum(['high', 'medium', 'low']), message: z.string().min(1), file: z.string().min(1), line: z.number().int().min(1), query: z.string(),
  })),
  byRule: z.record(z.string(), z.number().int().min(1)),
  examined, files: z.array(z.string()),
}).nullable();

const skipped = z.object({ table: z.string(), columns: z.array(z.string()).min(1), why: z.string(), queries: z.array(z.string()).min(1) });

export const indexesDataSchema = z.object({
  dialect,
  suggestions: z.array(z.object({
    table: z.string().min(1), columns: z.array(z.string()).min(1), ddl: z.string().regex(/^CREATE INDEX /), reason: z.string().min(1),
    queries: z.array(z.string().regex(/:\d+$/)).min(1), extends: z.string().optional(),
  })),
  alreadyServed: z.array(skipped.extend({ by: z.string().min(1) })),
  unknown: z.array(skipped),
  examined,
}).nullable();
