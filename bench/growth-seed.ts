/**
 * Fills a stopped server's data directory up to N stored executions, through the store's own API
 * (openStore: the same journal and snapshot the server reads), by copying executions the real server
 * stored (and their tasks) under fresh ids. Run as a child process by bench/growth.ts, so the bench
 * process never holds the records itself:
 *   node --import tsx bench/growth-seed.ts <dataDir> <targetExecutions>
 * Prints one JSON line: { before, after, ms }.
 */
import { randomBytes } from 'node:crypto';
import { COLLECTIONS, type Identified } from '../server/src/engine/ports';
import { EXECUTION_TIERING } from '../server/src/engine/executions/records';
import { openStore, storeFilePath } from '../server/src/store/lowdb-store';

const BATCH = 2000;

async function main(): Promise<void> {
  const [dataDir, targetText] = process.argv.slice(2);
  const target = Number(targetText);
  if (!dataDir || !Number.isInteger(target) || target < 0) throw new Error('usage: growth-seed.ts <dataDir> <targetExecutions>');
  const t0 = Date.now();
  const store = await openStore({ file: storeFilePath(dataDir), log: () => {} });
  // As the server does: ended executions go to the cold segments, not into the snapshot.
  store.tier!(COLLECTIONS.executions, EXECUTION_TIERING);
  const executions = store.collection<Identified & Record<string, unknown>>(COLLECTIONS.executions);
  const tasks = store.collection<Identified & Record<string, unknown>>(COLLECTIONS.tasks);
  const before = executions.count();
  const templates = executions.summaries!((r) => ({ id: r.id, status: r['status'] }))
    .filter((r) => r['status'] === 'completed' || r['status'] === 'failed').slice(0, 8).map((r) => executions.get(r.id)!);
  if (templates.length === 0) throw new Error(`no finished execution to copy in ${dataDir}`);
  const tag = randomBytes(4).toString('hex');
  let made = 0;
  while (executions.count() < target) {
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < BATCH && executions.count() < target; i++, made++) {
      const tpl = templates[made % templates.length]!;
      const newId = `${tpl.id.split('_')[0]}_seed${tag}${made.toString(36)}`;
      // Every reference to the template's id (its task, its steps) follows the copy.
      const copy = JSON.parse(JSON.stringify(tpl).split(tpl.id).join(newId)) as Identified & Record<string, unknown>;
      writes.push(executions.put(copy));
      const task = tasks.get(tpl.id) ?? tasks.list((t) => t['executionId'] === tpl.id)[0];
      if (task) writes.push(tasks.put(JSON.parse(JSON.stringify(task).split(tpl.id).join(newId)) as Identified & Record<string, unknown>));
    }
    await Promise.all(writes);
  }
  const after = executions.count();
  await store.close();
  process.stdout.write(`${JSON.stringify({ before, after, ms: Date.now() - t0 })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`growth-seed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
