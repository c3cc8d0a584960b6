/**
 * Child process of step-batch-crash.test.ts:
 *   node --import tsx step-batch-child.ts <dataDir> <concurrency>
 * Runs the real engine (journal store, journaled audit trail with its anchor, ACMF, the RIGOR pipeline
 * with its 21 gates, attachment files for large outputs) on full-sdlc workflows whose steps do a little work each, `concurrency` at a time,
 * forever. Prints `step <executionId> <index>` when a step's `step_completed` event is emitted (the
 * pipeline emits it only once the step's writes are durable). The parent SIGKILLs it at a random moment.
 */
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../../../server/src/config/load';
import { createEngine } from '../../../server/src/engine/index';
import type { Skill } from '../../../server/src/engine/rigor/skill';
import { standInForEveryAction } from '../../../bench/workflow-submit';
import { reviewChecks } from '../../../server/src/skills/review-checks';
import { openStore, storeFilePath } from '../../../server/src/store';
import { FileAttachmentStore } from '../../../server/src/store/file-attachment-store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

function spin(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // the step's own work
  }
}

async function main(): Promise<void> {
  const [dataDir, conc = '16'] = process.argv.slice(2);
  if (!dataDir) throw new Error('usage: step-batch-child.ts <dataDir> <concurrency>');
  const store = await openStore({ file: storeFilePath(dataDir) });
  const audit = await openAuditTrail({ dir: path.join(dataDir, 'audit'), anchor: storeAnchorPort(store), ...(store.auditJournal ? { journal: store.auditJournal() } : {}) });
  const config = parseConfig('defaults:\n  acmf_mode: AUTONOMOUS\n', 'child.yaml', {});
  // Attachments as the server has them: a large output is written to its file (real I/O, several ms)
  // after the step's audit records are handed over and before its checkpoint, a window a kill can hit.
  const attachments = new FileAttachmentStore(path.join(dataDir, 'attachments'));
  const engine = createEngine({ store, audit, attachments, config, checks: reviewChecks, skills: [], log: () => {} });
  const skill = (agentId: string, action: string): Skill => ({
    agentId, action,
    async research() {
      // A step's phases cross event-loop turns (as a real skill's I/O does), so steps interleave.
      await new Promise((r) => setImmediate(r));
      return { items: [{ source: 'child', detail: 'goal', weight: 2 }], constraints: [], pathsRead: [] };
    },
    propose: () => [],
    async generate(ctx) {
      spin(1);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 3)));
      // One step in three has an output over the 64 KB kept inline in the execution record.
      const big = ctx.request.step % 3 === 1 ? { listing: 'x'.repeat(70_000) } : {};
      return { kind: 'report', summary: `${agentId} done`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId, ...big } };
    },
  });
  standInForEveryAction(engine.skills, skill);
  engine.bus.subscribe('engine.event', (e) => {
    if (e.type === 'step_completed') process.stdout.write(`step ${e.execution_id} ${e.step}\n`);
  });
  const done = new Map<string, () => void>();
  engine.bus.subscribe('engine.event', (e) => {
    if (e.type === 'execution_completed' || e.type === 'execution_failed') done.get(e.execution_id)?.();
  });
  const lane = async (): Promise<never> => {
    for (;;) {
      let rec;
      try {
        rec = await engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'crash test' } }, { keyId: null, callbackSecret: null });
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_OVERLOADED') throw err;
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      await new Promise<void>((resolve) => {
        done.set(rec.id, resolve);
        const now = engine.executions.get(rec.id);
        if (now.status === 'completed' || now.status === 'failed') resolve();
      });
      done.delete(rec.id);
    }
  };
  await Promise.all(Array.from({ length: Number(conc) }, lane));
}

main().catch((err: unknown) => {
  process.stderr.write(`step-batch-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
