/**
 * `cadre store stats` and `cadre store compact`: ask the server that owns the data directory
 * (GET /v1/admin/store, POST /v1/admin/store/compact; an admin key in CADRE_API_KEY or the login). The store is
 * the owner's: the CLI never writes it behind the server's back.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { CliError } from './cli-error';
import { engine } from './engine';
import { dataDirOf, resolveUrl } from './connection';
import { globals } from './context';
import { loginOf } from './credentials';
import { ApiClient } from './http-client';

interface StoreReport {
  file: string;
  schemaVersion: number;
  snapshotBytes: number;
  journalBytes: number;
  lastCompactionAt: string | null;
  lastCompactionMs: number;
  compactions: number;
  quarantined: number;
  coldRecords?: number;
  coldBytes?: number;
  collections: Array<{ name: string; count: number; oldest: string | null }>;
  eventLogBytes: number;
  auditBytes: number;
  archives: number;
  memory?: { rssBytes: number; heapUsedBytes: number };
  audit: { records: number; alerts: string[] };
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

/** The store belongs to the running server: these calls never fall back to the embedded engine. */
async function call(cmd: Command, method: 'GET' | 'POST', pathname: string): Promise<unknown> {
  const g = globals(cmd);
  const url = await resolveUrl(g);
  const env = process.env['CADRE_API_KEY']?.trim();
  const key = env || loginOf(url)?.key || null;
  return new ApiClient(url, key, { keySource: env ? 'CADRE_API_KEY' : `the login saved for ${url}`, timeoutMs: 120_000 }).call(method, pathname);
}

export function formatStoreReport(r: StoreReport): string {
  const lines = [
    `store ${r.file} (schema ${r.schemaVersion})`,
    `  snapshot ${mb(r.snapshotBytes)}, journal ${mb(r.journalBytes)}, last compaction ${r.lastCompactionAt ?? 'never'}` +
      (r.lastCompactionAt ? ` (${r.lastCompactionMs} ms)` : ''),
    ...(r.coldRecords ? [`  ended executions on disk only: ${r.coldRecords} (cold segments ${mb(r.coldBytes ?? 0)})`] : []),
    `  event logs ${mb(r.eventLogBytes)}, audit files ${mb(r.auditBytes)} (${r.audit.records} records), archives ${r.archives}` +
      (r.quarantined > 0 ? `, ${r.quarantined} record(s) quarantined at start` : ''),
    ...(r.memory ? [`  server memory: RSS ${mb(r.memory.rssBytes)}, heap used ${mb(r.memory.heapUsedBytes)}`] : []),
    '  collection            records  oldest',
    ...r.collections.map((c) => `  ${c.name.padEnd(20)} ${String(c.count).padStart(8)}  ${c.oldest ?? '-'}`),
    ...r.audit.alerts.map((a) => `  AUDIT ALERT: ${a}`),
  ];
  return `${lines.join('\n')}\n`;
}

export function registerStoreCommands(program: Command): void {
  const store = program
    .command('store')
    .description('the embedded store of the running server (needs an admin key)')
    .addHelpText('after', '\nExamples:\n  $ cadre store stats\n  $ cadre store compact --url http://127.0.0.1:7450\n');
  store
    .command('stats')
    .description('sizes, records per collection, oldest record, journal size, last compaction, archives (exit 1 on an audit alert)')
    .addHelpText('after', '\nExample:\n  $ cadre store stats --json\n')
    .action(async (_o: unknown, cmd: Command) => {
      const r = (await call(cmd, 'GET', '/v1/admin/store')) as StoreReport;
      process.stdout.write(globals(cmd).json ? `${JSON.stringify(r, null, 2)}\n` : formatStoreReport(r));
      if (r.audit.alerts.length > 0) process.exitCode = 1;
    });
  store
    .command('archived <executionId>')
    .description('print an execution archived by retention (its record and event log) from the data directory')
    .addHelpText('after', '\nExample:\n  $ cadre store archived task_0123456789abcdef01234567 > task.json\n')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      // Read-only and local: archives are immutable files, no server needed.
      const dir = dataDirOf(globals(cmd).dataDir);
      const { readArchivedExecution } = engine();
      const entry = await readArchivedExecution(dir, id);
      if (!entry) throw new CliError(`no archived execution with id "${id}" in ${path.join(dir, 'archive')}`);
      process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    });
  store
    .command('compact')
    .description('fold the journal into a new snapshot now (the server keeps serving meanwhile)')
    .addHelpText('after', '\nExample:\n  $ cadre store compact\n')
    .action(async (_o: unknown, cmd: Command) => {
      const r = (await call(cmd, 'POST', '/v1/admin/store/compact')) as { snapshotBytes: number; ms: number; at: string };
      if (globals(cmd).json) return void process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      process.stdout.write(`store compacted: snapshot ${mb(r.snapshotBytes)} written in ${r.ms} ms at ${r.at}\n`);
    });
}
