/**
 * Child process of the crash-safety test:
 *   node --import tsx store-writer-child.ts <file> <runTag> [compactMinBytes] [killAtStep]
 * Inserts records from many concurrent writers, forever (two in three cold: a tiered collection); each insert also appends an audit record
 * and updates its writer's progress record (journalled as deltas: what changed since its previous line).
 * It prints each id on stdout (one line) only after both the put() and the audit append resolved,
 * i.e. after they and the progress update are durable. The parent SIGKILLs it at a random moment; with `killAtStep`
 * (copied|written|renamed|pruned) it kills itself at that step of its second compaction.
 * With CADRE_JOURNALED_AUDIT=1 the audit trail rides the store's journal (with its anchor) and each
 * insert and its audit record are one write unit, as a RIGOR step's checkpoint and records are.
 */
import { writeSync } from 'node:fs';
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { openStore } from '../../../server/src/store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

/** What one writer has inserted so far (updated after each insert). */
export interface Progress {
  id: string;
  count: number;
  lastId: string;
  nested: { count: number };
  recent: number[];
}

interface Row {
  id: string;
  run: string;
  seq: number;
  writer: number;
  /** This row is the writer's k-th insert (from 0). */
  k: number;
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
  const progress = store.collection<Progress>('progress');
  let seq = 0;
  const writer = async (w: number): Promise<never> => {
    const pid = `${runTag}-w${w}`;
    for (let k = 0; ; k++) {
      const n = seq++;
      const id = `${runTag}-${n}`;
      const unit = journaled ? store.unit!() : undefined;
      const inserted = rows.put({
        id,
        run: runTag,
        seq: n,
        writer: w,
        k,
        title: `Task ${n} of run ${runTag}: refactor the payment module and add tests`,
        status: n % 3 === 0 ? 'queued' : 'done',
        createdAt: new Date().toISOString(),
      }, unit ? { unit } : {});
      void counter.put({ id: 'inserted', n: seq }); // an unawaited mutation rides along
      // Every field says how many inserts this writer made: a replay mixing two versions would show.
      const cur = progress.get(pid);
      const next: Progress = { id: pid, count: k + 1, lastId: id, nested: { count: k + 1 }, recent: [...(cur?.recent ?? []).slice(-3), k] };
      const progressed = cur ? progress.update(pid, next, unit ? { unit } : {}) : progress.put(next, unit ? { unit } : {});
      const audited = audit.append({ kind: 'row.inserted', actor: 'engine', data: { id } }, unit ? { unit } : {});
      void unit?.commit();
      await inserted;
      await audited;
      await progressed;
      process.stdout.write(`${id}\n`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, (_, w) => writer(w)));
}

main().catch((err: unknown) => {
  process.stderr.write(`store-writer-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
