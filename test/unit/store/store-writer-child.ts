/**
 * Child process of the crash-safety test: `node --import tsx store-writer-child.ts <file> <runTag>`.
 * Inserts records from many concurrent writers, forever, and prints each id on stdout (one line)
 * only after the put() promise resolved, i.e. after the write holding it is durable. The parent
 * SIGKILLs it at a random moment.
 */
import { openStore } from '../../../server/src/store';

interface Row {
  id: string;
  run: string;
  seq: number;
  title: string;
  status: string;
  createdAt: string;
}

async function main(): Promise<void> {
  const [file, runTag = String(process.pid)] = process.argv.slice(2);
  if (!file) throw new Error('usage: store-writer-child.ts <file> <runTag>');
  const store = await openStore({ file });
  const rows = store.collection<Row>('rows');
  const counter = store.collection<{ id: string; n: number }>('meta');
  let seq = 0;
  const writer = async (): Promise<never> => {
    for (;;) {
      const n = seq++;
      const id = `${runTag}-${n}`;
      const inserted = rows.put({
        id,
        run: runTag,
        seq: n,
        title: `Task ${n} of run ${runTag}: refactor the payment module and add tests`,
        status: n % 3 === 0 ? 'queued' : 'running',
        createdAt: new Date().toISOString(),
      });
      void counter.put({ id: 'inserted', n: seq }); // an unawaited mutation rides along
      await inserted;
      process.stdout.write(`${id}\n`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, writer));
}

main().catch((err: unknown) => {
  process.stderr.write(`store-writer-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
