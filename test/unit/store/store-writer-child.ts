/**
 * Child process of the crash-safety test:
 *   node --import tsx store-writer-child.ts <file> <runTag> [compactMinBytes] [killAtStep]
 * Inserts records from many concurrent writers, forever (two in three cold: a tiered collection); each insert also appends an audit record.
 * It prints each id on stdout (one line) only after both the put() and the audit append resolved,
 * i.e. after they are durable. The parent SIGKILLs it at a random moment; with `killAtStep`
 * (copied|written|renamed|pruned) it kills itself at that step of its second compaction.
 * With CADRE_JOURNALED_AUDIT=1 the audit trail rides the store's journal (with its anchor) and each
 * insert and its audit record are one write unit, as a RIGOR step's checkpoint and records are.
 */
import { writeSync } from 'node:fs';
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { openStore } from '../../../server/src/store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

interface Row {
  id: string;
  run: string;
  seq: number;
  title: string;
  status: string;
  createdAt: string;
}

async function main(): Promise<void> {
  const [file, runTag = String(process.pid), compact, killAt] = process.argv.slice(2);
  if (!file) throw new Error('usage: store-writer-child.ts <file> <runTag> [compactMinBytes] [killAtStep]');
  let compactions = 0;
  const store = await openStore({
    file,
    ...(compact ? { compactMinBytes: Number(compact) } : {}),
    onCompactionStep: (step) => {
      if (step === 'copied') compactions++;
      if (step === killAt && compactions >= 2) {
        writeSync(2, `killed-at:${step}\n`);
        process.kill(process.pid, 'SIGKILL');
      }
    },
  });
  const journaled = process.env['CADRE_JOURNALED_AUDIT'] === '1';
  const audit = await openAuditTrail({
    dir: path.join(path.dirname(file), 'audit'),
    ...(journaled ? { anchor: storeAnchorPort(store), journal: store.auditJournal!() } : {}),
  });
  // Two rows in three are "done" and tiered cold: their puts take the cold-segment path (segment
  // append + fdatasync, then the journal line pointing at it), so the kills land on it too.
  store.tier?.('rows', { isCold: (r: Row) => r.status === 'done', summary: (r: Row) => ({ id: r.id, status: r.status }) });
  const rows = store.collection<Row>('rows');
  const counter = store.collection<{ id: string; n: number }>('meta');
  let seq = 0;
  const writer = async (): Promise<never> => {
    for (;;) {
      const n = seq++;
      const id = `${runTag}-${n}`;
      const unit = journaled ? store.unit!() : undefined;
      const inserted = rows.put({
        id,
        run: runTag,
        seq: n,
        title: `Task ${n} of run ${runTag}: refactor the payment module and add tests`,
        status: n % 3 === 0 ? 'queued' : 'done',
        createdAt: new Date().toISOString(),
      }, unit ? { unit } : {});
      void counter.put({ id: 'inserted', n: seq }); // an unawaited mutation rides along
      const audited = audit.append({ kind: 'row.inserted', actor: 'engine', data: { id } }, unit ? { unit } : {});
      void unit?.commit();
      await inserted;
      await audited;
      process.stdout.write(`${id}\n`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, writer));
}

main().catch((err: unknown) => {
  process.stderr.write(`store-writer-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
