/**
 * Store operations over HTTP (admin role): `GET /v1/admin/store` (sizes, counts per collection,
 * oldest record, journal size, last compaction, archives, audit anchor state) and
 * `POST /v1/admin/store/compact` (fold the journal into a new snapshot now). The CLI's
 * `cadre store stats|compact` calls these: only the owner process may touch its store.
 */
import { z } from 'zod';
import { EngineError } from '../../engine/errors';
import type { Store } from '../../store/store-shape';
import { storeReport } from '../../store/store-health';
import { defineRoute, type RouteDef } from '../route';

const CollectionStatsSchema = z.object({
  name: z.string(),
  count: z.number().int(),
  oldest: z.string().nullable().describe('Oldest createdAt (or at) among its records, ISO 8601'),
});

export const StoreReportSchema = z.object({
  file: z.string(),
  schemaVersion: z.number().int(),
  durability: z.string(),
  snapshotBytes: z.number().int(),
  journalBytes: z.number().int(),
  lastCompactionAt: z.string().nullable(),
  lastCompactionMs: z.number().int(),
  compactions: z.number().int().describe('Compactions since the server started'),
  writes: z.number().int(),
  failedWrites: z.number().int(),
  quarantined: z.number().int().describe('Malformed records moved to quarantine/ at start'),
  coldRecords: z.number().int().describe('Ended executions kept on disk only (cold segments): their summary stays in memory'),
  coldBytes: z.number().int().describe('Bytes of the cold segment files (live records and garbage)'),
  collections: z.array(CollectionStatsSchema),
  eventLogBytes: z.number().int(),
  auditBytes: z.number().int(),
  archives: z.number().int(),
  memory: z.object({ rssBytes: z.number().int(), heapUsedBytes: z.number().int() }).describe('The server process, when the report was made'),
  audit: z.object({ records: z.number().int(), alerts: z.array(z.string()) }),
}).meta({ id: 'StoreReport' });

export const CompactionSchema = z.object({
  journalSeq: z.number().int(),
  snapshotBytes: z.number().int(),
  ms: z.number().int(),
  at: z.string(),
}).meta({ id: 'StoreCompaction' });

export function adminStoreRoutes(deps: { store: Store; dataDir: string; audit: { lastSeq: number; alerts: readonly string[] } }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/admin/store',
      auth: 'key', tenancy: 'install',
      role: 'admin',
      summary: 'Store statistics: sizes, counts per collection, oldest record, journal, last compaction',
      tags: ['store'],
      responses: { 200: { description: 'The store report', schema: StoreReportSchema } },
      handler: () => ({
        status: 200,
        body: { ...storeReport(deps.store, deps.dataDir), audit: { records: deps.audit.lastSeq, alerts: deps.audit.alerts.slice() } },
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/store/compact',
      auth: 'key', tenancy: 'install',
      role: 'admin',
      summary: 'Fold the store journal into a new snapshot now',
      description: 'Answers when the new snapshot is durable. Mutations go on meanwhile (they are journaled).',
      tags: ['store'],
      responses: { 200: { description: 'The compaction', schema: CompactionSchema } },
      handler: async () => {
        if (!deps.store.compact) throw new EngineError('ERR_CONFLICT', `the store (${deps.store.durability}) has no journal to compact`);
        const r = await deps.store.compact();
        return { status: 200, body: { ...r, ms: Math.round(r.ms) } };
      },
    }),
  ];
}
