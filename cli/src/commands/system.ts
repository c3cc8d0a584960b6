/**
 * The server itself: `serve`, `health`, `logs` (the server's log file and an execution's events),
 * and `audit verify`.
 */
import type { Command } from 'commander';
import { createReadStream, existsSync, statSync, watch as watchFile } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_PORT, parseServerArgs } from '../../../server/src/host/options';
import { engine } from '../engine';
import { CliError, usage } from '../cli-error';
import { dataDirOf, resolveUrl } from '../connection';
import { EXIT } from '../exit-codes';
import { ApiClient, type Json } from '../http-client';
import { examples, globals, isRichTerminal, printData, withTarget, write } from '../context';
import { jsonRenderer, textRenderer } from '../watch';

/**
 * The server's log file in its data directory: the name server/src/host/standalone.ts writes
 * (`SERVER_LOG`; test/unit/cli/program.test.ts keeps the two equal). Not imported from there: that
 * module pulls in the whole engine, which `cadre logs` does not need.
 */
export const SERVER_LOG = 'server.log';

/** Prints a file from `offset`, then (with follow) what is appended, until Ctrl+C. */
async function tail(file: string, lines: number, followIt: boolean): Promise<void> {
  const size = statSync(file).size;
  // The last `lines` lines: read the tail end only (a log can be large).
  const start = Math.max(0, size - 256 * 1024);
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    createReadStream(file, { start, end: Math.max(start, size - 1) }).on('data', (c) => chunks.push(c as Buffer)).on('end', () => resolve(size === 0 ? '' : Buffer.concat(chunks).toString('utf8'))).on('error', reject);
  });
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  for (const l of all.slice(-lines)) write(`${l}\n`);
  if (!followIt) return;
  let pos = size;
  await new Promise<void>(() => {
    const read = () => {
      const now = statSync(file).size;
      if (now < pos) pos = 0; // rotated: start over in the new file
      if (now === pos) return;
      createReadStream(file, { start: pos, end: now - 1 }).on('data', (c) => write((c as Buffer).toString('utf8')));
      pos = now;
    };
    watchFile(file, read);
    setInterval(read, 1000);
  });
}

export function registerSystemCommands(program: Command): void {
  const serve = program.command('serve')
    .description('run the engine and serve the REST + SSE API on 127.0.0.1 until Ctrl+C')
    .option('-p, --port <port>', 'port (0 = any free port)', String(DEFAULT_PORT))
    .option('-w, --workspace <dir>', 'folder whose .cadre.yaml is read first and that requests without source work on', process.cwd())
    .option('--skill-module <file>', 'load agent skills from a CommonJS module (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .action(async (o: { port: string; workspace: string; skillModule: string[] }, cmd: Command) => {
      const g = globals(cmd);
      const args = ['--standalone', '--port', o.port, '--workspace', o.workspace, ...(g.dataDir ? ['--data-dir', g.dataDir] : []), ...o.skillModule.flatMap((m) => ['--skill-module', m])];
      let opts;
      try {
        opts = parseServerArgs(args, process.env);
      } catch (err) {
        throw usage((err as Error).message);
      }
      const { runStandalone } = engine();
      await runStandalone(opts, process.env);
    });
  examples(serve, 'cadre serve', 'cadre serve --port 0 --data-dir ./.cadre-data');

  const health = program.command('health')
    .description('ask a server for its health (no key needed); exit 1 when degraded, 3 when none answers')
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const api = new ApiClient(await resolveUrl(g), null, { timeoutMs: 5000 });
      const r = await api.call<Json>('GET', '/v1/health', undefined, { auth: false, okStatuses: [503] });
      printData(g, r, () => `${api.base}: ${r['status']} (Cadre ${r['version']}, pid ${r['pid']})`);
      if (r['status'] !== 'ok') process.exitCode = EXIT.FAILED;
    });
  examples(health, 'cadre health', 'cadre health --url http://127.0.0.1:7450 --json');

  const logs = program.command('logs [executionId]')
    .description(`without an id: the server's log (${SERVER_LOG} in its data directory); with one: the execution's events so far`)
    .option('-f, --follow', 'keep printing what comes (the log until Ctrl+C; the events until the execution ends)')
    .option('-n, --lines <n>', 'how many last lines of the server log', '50')
    .action(async (id: string | undefined, o: { follow?: boolean; lines: string }, cmd: Command) => {
      const g = globals(cmd);
      if (!/^\d+$/.test(o.lines)) throw usage(`--lines must be a number (got "${o.lines}")`);
      if (!id) {
        if (g.url) throw new CliError(`the server log is a file in the server's data directory; on the machine that runs it: cadre logs --data-dir <dir> (or ${SERVER_LOG} there)`, EXIT.USAGE);
        const file = path.join(dataDirOf(g.dataDir), SERVER_LOG);
        if (!existsSync(file)) throw new CliError(`no server log at ${file} (a server started with cadre serve writes it; --data-dir names another directory)`);
        return tail(file, Number(o.lines), o.follow === true);
      }
      await withTarget(cmd, async (t) => {
        const r = g.json ? jsonRenderer(write) : textRenderer(write, { tty: isRichTerminal(g) && o.follow === true, executionId: id });
        for await (const e of t.api.events(id, { follow: o.follow === true, onReconnect: (last) => r.reconnect(last) })) r.event(e);
        r.finish();
      });
    });
  examples(logs, 'cadre logs -f', 'cadre logs task_0123456789abcdef01234567 --follow', 'cadre logs wf_0123456789abcdef01234567 --json > events.jsonl');

  const audit = program.command('audit').description('the hash-chained audit trail');
  const verify = audit.command('verify')
    .description('verify every link of the audit trail in the data directory (read-only); exit 1 at the first broken one')
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const dataDir = dataDirOf(g.dataDir);
      const dir = path.join(dataDir, 'audit');
      if (!existsSync(dir)) throw new CliError(`no audit trail in ${dataDir} (--data-dir names the server's data directory)`);
      // Loaded here only: most commands never read the store or the trail.
      const { verifyAuditDir, asAnchor, AUDIT_ANCHOR_COLLECTION, AUDIT_ANCHOR_ID, readStoreReadOnly, storeFilePath } = engine();
      // The store's anchor of the chain's head reveals records dropped from the end and deleted files.
      // The journal's audit records too: after a crash some may not have reached the day files yet.
      const journal: unknown[] = [];
      const collections = await readStoreReadOnly(storeFilePath(dataDir), journal);
      const anchor = asAnchor(collections?.[AUDIT_ANCHOR_COLLECTION]?.[AUDIT_ANCHOR_ID]);
      const v = await verifyAuditDir(dir, { anchor, journal });
      if (g.json) {
        write(`${JSON.stringify({ ok: v.ok, checked: v.checked, dir, firstBroken: v.firstBroken ?? null }, null, 2)}\n`);
        if (!v.ok) process.exitCode = EXIT.FAILED;
        return;
      }
      if (!v.ok) {
        const b = v.firstBroken!;
        throw new CliError(`audit trail broken at ${b.file}:${b.line} (seq ${b.seq ?? '?'}): ${b.reason}`);
      }
      write(`audit trail intact: ${v.checked} records verified in ${dir}\n`);
    });
  examples(verify, 'cadre audit verify', 'cadre audit verify --data-dir /srv/cadre --json');
}
