/**
 * Child process of the archiving crash test: `node --import tsx retention-child.ts <dataDir> <runTag>`.
 * Forever: writes an execution's event log, puts the terminal execution (printing its id once the put
 * is durable), and every 10 puts runs a retention pass that keeps 15 terminal executions, so the
 * parent's SIGKILL lands in group commits, archive writes, deletions and compactions alike.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { openStore, storeFilePath } from '../../../server/src/store';
import { applyRetention } from '../../../server/src/store/retention';

async function main(): Promise<void> {
  const [dataDir, runTag] = process.argv.slice(2);
  if (!dataDir || !runTag) throw new Error('usage: retention-child.ts <dataDir> <runTag>');
  const store = await openStore({ file: storeFilePath(dataDir), compactMinBytes: 32 * 1024 });
  const executions = store.collection<{ id: string }>('executions');
  await mkdir(path.join(dataDir, 'events'), { recursive: true });
  let t = Date.UTC(2026, 0, 1);
  const clock = { now: () => t };
  for (let n = 0; ; n++) {
    const id = `task_${runTag}${String(n).padStart(12, '0')}`;
    const iso = new Date(t++).toISOString();
    await writeFile(path.join(dataDir, 'events', `${id}.jsonl`), `${JSON.stringify({ seq: 1, execution_id: id, type: 'done' })}\n`);
    await executions.put({
      id, kind: 'task', status: 'completed', agents: [], steps: [], request: { prompt: 'p', capabilities: [], input: {} },
      createdAt: iso, startedAt: iso, completedAt: iso, updatedAt: iso, resumes: 0,
    } as { id: string });
    process.stdout.write(`${id}\n`);
    if (n % 10 === 9) await applyRetention({ store, dataDir, clock, maxExecutions: 15 });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`retention-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
