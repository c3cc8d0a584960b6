/**
 * The `cadre` command-line client. `serve` runs the engine in this process; the other commands talk
 * to a running server's API or read the data directory.
 */
import { Command, CommanderError } from 'commander';
import * as path from 'node:path';
import { verifyAuditDir } from '../../server/src/audit/jsonl-audit-trail';
import { DEFAULT_PORT, parseServerArgs } from '../../server/src/host/options';
import { readLock } from '../../server/src/host/owner-lock';
import { runStandalone } from '../../server/src/host/standalone';
import { CliError } from './cli-error';
import { registerEngineCommands } from './engine-commands';
import { registerKeysCommands } from './keys';
import { registerStoreCommands } from './store-commands';
import { asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID } from '../../server/src/audit/audit-anchor';
import { readStoreReadOnly } from '../../server/src/store/journal-store';
import { storeFilePath } from '../../server/src/store/lowdb-store';

function dataDirOf(opt: string | undefined): string {
  return parseServerArgs(opt ? ['--data-dir', opt] : [], process.env).dataDir;
}

/** The URL of the server owning the data directory, else the default port. */
function serverUrl(explicit: string | undefined, dataDir: string): string {
  if (explicit) return explicit.replace(/\/+$/, '');
  const lock = readLock(path.join(dataDir, 'cadre.lock'));
  return `http://127.0.0.1:${lock?.port ?? DEFAULT_PORT}`;
}

export function buildCli(): Command {
  const program = new Command('cadre')
    .description('Cadre: 25 AI agents under RIGOR and ACMF, from the command line')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('run the engine and serve the REST + SSE API on 127.0.0.1 until Ctrl+C')
    .option('-p, --port <port>', `port (0 = any free port)`, String(DEFAULT_PORT))
    .option('-d, --data-dir <dir>', 'data directory (default $CADRE_HOME, else ~/.cadre)')
    .option('-w, --workspace <dir>', 'folder whose .cadre.yaml is read first', process.cwd())
    .option('--skill-module <file>', 'load agent skills from a CommonJS module (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .action(async (o: { port: string; dataDir?: string; workspace: string; skillModule: string[] }) => {
      const args = ['--standalone', '--port', o.port, '--workspace', o.workspace, ...(o.dataDir ? ['--data-dir', o.dataDir] : []), ...o.skillModule.flatMap((m) => ['--skill-module', m])];
      await runStandalone(parseServerArgs(args, process.env), process.env);
    });

  program
    .command('health')
    .description('ask a running server for its health')
    .option('-u, --url <url>', 'server URL (default: the owner of the data directory, else port 7450)')
    .option('-d, --data-dir <dir>', 'data directory')
    .action(async (o: { url?: string; dataDir?: string }) => {
      const url = serverUrl(o.url, dataDirOf(o.dataDir));
      let res: Response;
      try {
        res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(5000) });
      } catch {
        throw new CliError(`no Cadre server answers at ${url} (start one with: cadre serve)`);
      }
      const body = (await res.json()) as { status: string; version: string; pid: number };
      process.stdout.write(`${url}: ${body.status} (Cadre ${body.version}, pid ${body.pid})\n`);
      if (body.status !== 'ok') process.exitCode = 1;
    });

  const audit = program.command('audit').description('the hash-chained audit trail');
  audit
    .command('verify')
    .description('verify every link of the audit trail; exit 1 at the first broken one')
    .option('-d, --data-dir <dir>', 'data directory')
    .action(async (o: { dataDir?: string }) => {
      // Read-only: a running owner may be appending; nothing here repairs or writes.
      const dir = path.join(dataDirOf(o.dataDir), 'audit');
      // The store's anchor of the chain's head reveals records dropped from the end and deleted files.
      const collections = await readStoreReadOnly(storeFilePath(dataDirOf(o.dataDir)));
      const anchor = asAnchor(collections?.[AUDIT_ANCHOR_COLLECTION]?.[AUDIT_ANCHOR_ID]);
      const v = await verifyAuditDir(dir, { anchor });
      if (!v.ok) {
        const b = v.firstBroken!;
        throw new CliError(`audit trail broken at ${b.file}:${b.line} (seq ${b.seq ?? '?'}): ${b.reason}`);
      }
      process.stdout.write(`audit trail intact: ${v.checked} records verified in ${dir}\n`);
    });

  registerKeysCommands(program, dataDirOf);
  registerStoreCommands(program, dataDirOf);
  registerEngineCommands(program, dataDirOf);
  return program;
}

async function main(): Promise<void> {
  try {
    await buildCli().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    process.stderr.write(`cadre: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

void main();
