/**
 * Cadre's engine wired as the server wires it (host/runtime.ts) for the benches that run it in their
 * own process: the journal store, the audit trail riding its journal (one fsync per group commit for
 * audit records, counters and checkpoints) with its anchor in the store, the event log on disk,
 * AUTONOMOUS agents; and the benches' stand-in skill (a report, `work` as its own cost). Used by
 * bench/langgraph.ts and bench/step-anatomy.ts (bench/engine-cpu.ts loads other checkouts by path, so
 * it keeps its own dynamic wiring).
 */
import * as path from 'node:path';
import { openAuditTrail, type JsonlAuditTrail } from '../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../server/src/config/load';
import { createEngine, type Engine } from '../server/src/engine/index';
import type { Skill } from '../server/src/engine/rigor/skill';
import { reviewChecks } from '../server/src/skills/review-checks';
import { JsonlEventLog } from '../server/src/store/jsonl-event-log';
import { openStore, storeFilePath } from '../server/src/store/lowdb-store';
import type { Store } from '../server/src/store/store-shape';
import { storeAnchorPort } from '../server/src/store/store-health';

export interface BenchEngine {
  engine: Engine;
  store: Store;
  audit: JsonlAuditTrail;
  eventLog: JsonlEventLog;
  /** Everything written so far on disk: the store's journal, the event files, the audit day files. */
  flush(): Promise<void>;
  /** Stops the executions, then flushes and closes the event log, the trail and the store. */
  close(): Promise<void>;
}

export async function openBenchEngine(dir: string, opts: { compactMinBytes?: number } = {}): Promise<BenchEngine> {
  const store = await openStore({ file: storeFilePath(dir), ...(opts.compactMinBytes ? { compactMinBytes: opts.compactMinBytes } : {}) });
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), ...(store.auditJournal ? { journal: store.auditJournal() } : {}) });
  const eventLog = await JsonlEventLog.open(path.join(dir, 'events'));
  const config = parseConfig('defaults:\n  acmf_mode: AUTONOMOUS\n', 'bench.yaml', {});
  const engine = createEngine({ store, audit, eventLog, config, checks: reviewChecks, skills: [], log: () => {} });
  return {
    engine, store, audit, eventLog,
    async flush() {
      await store.flush();
      await eventLog.flush();
      await audit.flush();
    },
    async close() {
      await engine.executions.close();
      await eventLog.flush();
      await audit.close();
      await store.close();
    },
  };
}

/** The stand-in skill of an agent action: research finds the goal, generate does `work` and reports. */
export function benchSkill(agentId: string, action: string, work: () => void = () => {}): Skill {
  return {
    agentId, action,
    async research() {
      return { items: [{ source: 'bench', detail: 'goal', weight: 2 }], constraints: [], pathsRead: [] };
    },
    propose: () => [],
    async generate(ctx) {
      work();
      return { kind: 'report', summary: `${agentId} done`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId } };
    },
  };
}
