/**
 * One durable batch per RIGOR step, under SIGKILL: a child runs the real engine (journal store, audit
 * trail riding the store's journal, ACMF) on concurrent full-sdlc workflows and is killed at random
 * moments. After each kill, read back without the engine running: every step the child reported
 * durable is there, and for every step its audit records (the five phases' records) and its checkpoint
 * (the step's status in the execution record) are present together, never one without the other; the
 * agents' ACMF counters cover every checkpointed step; the audit chain verifies against its anchor.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import type { AuditRecord } from '../../../server/src/engine/ports';
import { openStore, storeFilePath } from '../../../server/src/store';
import { storeAnchorPort } from '../../../server/src/store/store-health';

const CHILD = path.join(__dirname, 'step-batch-child.ts');
const KILLS = 4;

function runAndKill(dataDir: string, afterSteps: number, delayMs: number): Promise<{ acked: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, '16'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (!timer && out.split('\n').length > afterSteps) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(watchdog);
      if (timer) clearTimeout(timer);
      const lines = out.split('\n');
      lines.pop(); // a line cut by the kill was never fully reported
      resolve({ acked: lines.map((l) => l.replace(/^step /, '').replace(' ', '#')), stderr });
    });
  });
}

interface StepRec { step: number; status: string; agentId: string }
interface ExecRec { id: string; steps: StepRec[] }

describe('one durable batch per step: SIGKILL during concurrent steps', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-step-batch-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`after each of ${KILLS} kills, every step's audit records and checkpoint are both on disk or both absent`, async () => {
    const acked = new Set<string>();
    for (let k = 0; k < KILLS; k++) {
      const r = await runAndKill(dir, 20 + k * 15, Math.floor(Math.random() * 150));
      assert.ok(r.acked.length > 0, `kill ${k}: the child reported no step (stderr: ${r.stderr.slice(0, 500)})`);
      for (const a of r.acked) acked.add(a);

      const store = await openStore({ file: storeFilePath(dir) });
      const warnings: string[] = [];
      const trail = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), journal: store.auditJournal!(), onWarning: (w) => warnings.push(w.message) });
      try {
        assert.deepEqual(trail.alerts, [], `kill ${k}: no tamper alert`);
        const v = await trail.verify();
        assert.ok(v.ok, `kill ${k}: audit chain broken: ${JSON.stringify(v.firstBroken)}`);
        const records: AuditRecord[] = await trail.query({ kind: 'phase.completed' });
        // Steps whose Review record (the last of a step's five) is in the trail, and how many phase records each has.
        const phases = new Map<string, number>();
        const reviewed = new Set<string>();
        for (const rec of records) {
          const key = `${rec.executionId}#${rec.data['step'] as number}`;
          phases.set(key, (phases.get(key) ?? 0) + 1);
          if (rec.data['phase'] === 'Review') reviewed.add(key);
        }
        const checkpointed = new Set<string>();
        for (const e of store.collection<ExecRec>('executions').list()) {
          for (const s of e.steps) if (s.status === 'completed' || s.status === 'failed') checkpointed.add(`${e.id}#${s.step}`);
        }
        assert.ok(checkpointed.size > 0, `kill ${k}: no checkpointed step`);
        const auditWithoutCheckpoint = [...reviewed].filter((key) => !checkpointed.has(key));
        const checkpointWithoutAudit = [...checkpointed].filter((key) => !reviewed.has(key));
        assert.deepEqual(auditWithoutCheckpoint, [], `kill ${k}: steps whose audit records are on disk without their checkpoint`);
        assert.deepEqual(checkpointWithoutAudit, [], `kill ${k}: steps checkpointed without their audit records`);
        for (const key of reviewed) assert.equal(phases.get(key), 5, `kill ${k}: step ${key} has ${phases.get(key)} phase records, not 5`);
        const missing = [...acked].filter((a) => !checkpointed.has(a));
        assert.deepEqual(missing, [], `kill ${k}: steps reported durable are missing`);
        // Counters of an agent are one record shared by its steps: they cover at least every checkpointed step.
        const tasks = store.collection<{ id: string; tasks?: number }>('agents').list().reduce((n, a) => n + (a.tasks ?? 0), 0);
        assert.ok(tasks >= checkpointed.size, `kill ${k}: ACMF counters count ${tasks} reviewed tasks for ${checkpointed.size} checkpointed steps`);
      } finally {
        await trail.close();
        await store.close();
      }
    }
  });
});
