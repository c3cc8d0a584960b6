/**
 * `cadre store stats` and `cadre store compact`: ask the server that owns the data directory
 * (GET /v1/admin/store, POST /v1/admin/store/compact; admin key in CADRE_API_KEY). The store is
 * the owner's: the CLI never writes it behind the server's back.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { DEFAULT_PORT } from '../../server/src/host/options';
import { readLock } from '../../server/src/host/owner-lock';
import { readArchivedExecution } from '../../server/src/store/retention';
import { CliError } from './cli-error';

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

async function call(url: string, method: 'GET' | 'POST', pathname: string): Promise<unknown> {
  const key = process.env['CADRE_API_KEY']?.trim();
  if (!key) throw new CliError('set CADRE_API_KEY to an admin key of the running server (cadre keys create --role admin)');
  let res: Response;
  try {
    res = await fetch(`${url}${pathname}`, { method, headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(120_000) });
  } catch {
    throw new CliError(`no Cadre server answers at ${url} (the store belongs to a running server; start one with: cadre serve)`);
  }
  const body = (await res.json().catch(() => null)) as { detail?: string; title?: string } | null;
  if (!res.ok) throw new CliError(`${method} ${pathname}: ${res.status} ${body?.detail ?? body?.title ?? res.statusText}`);
  return body;
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

export function registerStoreCommands(program: Command, dataDirOf: (opt: string | undefined) => string): void {
  const serverUrl = (explicit: string | undefined, dataDir: string | undefined): string => {
    if (explicit) return explicit.replace(/\/+$/, '');
    const lock = readLock(path.join(dataDirOf(dataDir), 'cadre.lock'));
    return `http://127.0.0.1:${lock?.port ?? DEFAULT_PORT}`;
  };
  const store = program
    .command('store')
    .description('the embedded store of the running server (needs an admin key in CADRE_API_KEY)')
    .addHelpText('after', '\nExamples:\n  CADRE_API_KEY=cadre_... cadre store stats\n  CADRE_API_KEY=cadre_... cadre store compact --url http://127.0.0.1:7450\n');
  store
    .command('stats')
    .description('sizes, records per collection, oldest record, journal size, last compaction, archives')
    .option('-u, --url <url>', 'server URL (default: the owner of the data directory, else port 7450)')
    .option('-d, --data-dir <dir>', 'data directory')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', '\nExample:\n  CADRE_API_KEY=cadre_... cadre store stats --json\n')
    .action(async (o: { url?: string; dataDir?: string; json?: boolean }) => {
      const r = (await call(serverUrl(o.url, o.dataDir), 'GET', '/v1/admin/store')) as StoreReport;
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : formatStoreReport(r));
      if (r.audit.alerts.length > 0) process.exitCode = 1;
    });
  store
    .command('archived <executionId>')
    .description('print an execution archived by retention (its record and event log) from the data directory')
    .option('-d, --data-dir <dir>', 'data directory')
    .addHelpText('after', '\nExample:\n  cadre store archived task_0123456789abcdef01234567 > task.json\n')
    .action(async (id: string, o: { dataDir?: string }) => {
      // Read-only and local: archives are immutable files, no server needed.
      const entry = await readArchivedExecution(dataDirOf(o.dataDir), id);
      if (!entry) throw new CliError(`no archived execution with id "${id}" in ${path.join(dataDirOf(o.dataDir), 'archive')}`);
      process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    });
  store
    .command('compact')
    .description('fold the journal into a new snapshot now (the server keeps serving meanwhile)')
    .option('-u, --url <url>', 'server URL (default: the owner of the data directory, else port 7450)')
    .option('-d, --data-dir <dir>', 'data directory')
    .addHelpText('after', '\nExample:\n  CADRE_API_KEY=cadre_... cadre store compact\n')
    .action(async (o: { url?: string; dataDir?: string }) => {
      const r = (await call(serverUrl(o.url, o.dataDir), 'POST', '/v1/admin/store/compact')) as { snapshotBytes: number; ms: number; at: string };
      process.stdout.write(`store compacted: snapshot ${mb(r.snapshotBytes)} written in ${r.ms} ms at ${r.at}\n`);
    });
}
