import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { openStore, storeFilePath } from '../../../server/src/store';
import { readArchivedExecutions } from '../../../server/src/store/retention';
import { storeAnchorPort } from '../../../server/src/store/store-health';
import type { Progress } from './store-writer-child';

const CHILD = path.join(__dirname, 'store-writer-child.ts');
const RETENTION_CHILD = path.join(__dirname, 'retention-child.ts');
const ITERATIONS = 12;

interface RunResult {
  acked: string[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs the writer child and returns the acknowledged ids. Without `killAt` the parent SIGKILLs it
 * `delayMs` after its first acknowledged id; with it the child kills itself at that compaction step.
 */
function runAndKill(file: string, runTag: string, delayMs: number, compactMinBytes?: number, killAt?: string, script = CHILD, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const args = script === CHILD
      ? ['--import', 'tsx', CHILD, file, runTag, ...(compactMinBytes ? [String(compactMinBytes)] : []), ...(killAt ? [killAt] : [])]
      : ['--import', 'tsx', script, file, runTag];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (!killAt && !timer && out.includes('\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(watchdog);
      if (timer) clearTimeout(timer);
      // Only complete lines count: a line cut by the kill was never fully acknowledged.
      const lines = out.split('\n');
      lines.pop();
      resolve({ acked: lines, signal, stderr });
    });
  });
}

async function checkAfterRestart(file: string, allAcked: Set<string>, label: string, journaled = false): Promise<number> {
  const store = await openStore({ file });
  try {
    assert.equal(existsSync(`${file}.tmp`), false, `${label}: stale snapshot temp removed`);
    const rows = store.collection('rows');
    const missing = [...allAcked].filter((id) => rows.get(id) === undefined);
    assert.deepEqual(missing, [], `${label}: acknowledged ids missing after restart`);
    // Progress records are updated after each insert (journalled as deltas): each is one whole version,
    // at least as new as the last insert of its writer that was acknowledged.
    const progress = store.collection<Progress>('progress');
    for (const p of progress.list()) {
      const whole = p.nested.count === p.count && p.recent[p.recent.length - 1] === p.count - 1 && rows.get(p.lastId) !== undefined;
      assert.ok(whole, `${label}: progress record ${p.id} mixes versions: ${JSON.stringify(p)}`);
    }
    const ackedPerWriter = new Map<string, number>();
    for (const id of allAcked) {
      const row = rows.get(id) as { run: string; writer?: number; k?: number } | undefined;
      if (row?.writer === undefined || row.k === undefined) continue;
      const key = `${row.run}-w${row.writer}`;
      ackedPerWriter.set(key, Math.max(ackedPerWriter.get(key) ?? 0, row.k + 1));
    }
    for (const [key, n] of ackedPerWriter) {
      assert.ok((progress.get(key)?.count ?? 0) >= n, `${label}: progress ${key} is ${progress.get(key)?.count}, ${n} insert(s) were acknowledged`);
    }
    // Opening the trail drops a torn last line (never acknowledged); the chain must then verify whole.
    const trail = await openAuditTrail({ dir: path.join(path.dirname(file), 'audit'), ...(journaled ? { anchor: storeAnchorPort(store), journal: store.auditJournal!() } : {}) });
    try {
      const audit = await trail.verify();
      assert.ok(audit.ok, `${label}: audit chain broken: ${JSON.stringify(audit.firstBroken)}`);
      assert.ok(audit.checked >= allAcked.size, `${label}: ${audit.checked} audit records for ${allAcked.size} acknowledged inserts`);
      if (journaled) {
        assert.deepEqual(trail.alerts, [], `${label}: no tamper alert`);
        // Each insert and its audit record were one write unit: both on disk, or neither.
        const audited = new Set((await trail.query({ kind: 'row.inserted' })).map((r) => r.data['id'] as string));
        const stored = new Set(rows.list().map((r) => r.id));
        assert.deepEqual([...stored].filter((id) => !audited.has(id)), [], `${label}: rows on disk without their audit record`);
        assert.deepEqual([...audited].filter((id) => !stored.has(id)), [], `${label}: audit records on disk without their row`);
      }
    } finally {
      await trail.close();
    }
    return rows.count();
  } finally {
    await store.close();
  }
}

describe('store: crash safety under SIGKILL', function () {
  this.timeout(180_000);
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-store-kill-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged insert across ${ITERATIONS} random SIGKILLs during group commits and compactions`, async () => {
    const file = storeFilePath(dir);
    const allAcked = new Set<string>();
    let previousCount = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const delayMs = 50 + Math.floor(Math.random() * 351);
      // A small compaction threshold: a compaction starts every few dozen group commits.
      const run = await runAndKill(file, `r${i}`, delayMs, 64 * 1024);
      assert.equal(run.signal, 'SIGKILL', `run ${i} should have been killed (stderr: ${run.stderr})`);
      assert.ok(run.acked.length > 0, `run ${i} acknowledged nothing (stderr: ${run.stderr})`);
      for (const id of run.acked) allAcked.add(id);
      const count = await checkAfterRestart(file, allAcked, `run ${i} (killed ${delayMs} ms after first ack)`);
      assert.ok(count >= previousCount, 'the store only grows');
      previousCount = count;
    }
  });

  for (const step of ['copied', 'written', 'renamed', 'pruned']) {
    it(`keeps every acknowledged insert when killed at compaction step "${step}"`, async () => {
      const file = storeFilePath(dir);
      const allAcked = new Set<string>();
      for (let i = 0; i < 2; i++) {
        const run = await runAndKill(file, `${step}${i}`, 0, 32 * 1024, step);
        assert.equal(run.signal, 'SIGKILL', `stderr: ${run.stderr}`);
        assert.ok(run.stderr.includes(`killed-at:${step}`), `the child did not reach compaction step ${step} (stderr: ${run.stderr})`);
        assert.ok(run.acked.length > 0, `acknowledged nothing (stderr: ${run.stderr})`);
        for (const id of run.acked) allAcked.add(id);
        await checkAfterRestart(file, allAcked, `killed at ${step}, run ${i}`);
      }
    });
  }

  it('audit trail riding the journal: each insert and its audit record (one unit) are both on disk or neither, across 8 random SIGKILLs and a kill at each compaction step', async () => {
    const file = storeFilePath(dir);
    const allAcked = new Set<string>();
    const env = { CADRE_JOURNALED_AUDIT: '1' };
    for (let i = 0; i < 8; i++) {
      const delayMs = 50 + Math.floor(Math.random() * 351);
      const run = await runAndKill(file, `j${i}`, delayMs, 64 * 1024, undefined, CHILD, env);
      assert.equal(run.signal, 'SIGKILL', `run ${i} should have been killed (stderr: ${run.stderr})`);
      assert.ok(run.acked.length > 0, `run ${i} acknowledged nothing (stderr: ${run.stderr})`);
      for (const id of run.acked) allAcked.add(id);
      await checkAfterRestart(file, allAcked, `journaled run ${i} (killed ${delayMs} ms after first ack)`, true);
    }
    for (const step of ['copied', 'written', 'renamed', 'pruned']) {
      const run = await runAndKill(file, `j${step}`, 0, 32 * 1024, step, CHILD, env);
      assert.ok(run.stderr.includes(`killed-at:${step}`), `the child did not reach compaction step ${step} (stderr: ${run.stderr})`);
      for (const id of run.acked) allAcked.add(id);
      await checkAfterRestart(file, allAcked, `journaled, killed at ${step}`, true);
    }
  });

  it('keeps every acknowledged execution, live or archived, across SIGKILLs during retention passes', async () => {
    const acked: string[] = [];
    for (let i = 0; i < 6; i++) {
      const delayMs = 100 + Math.floor(Math.random() * 400);
      const run = await runAndKill(dir, `${i}a`, delayMs, undefined, undefined, RETENTION_CHILD);
      assert.equal(run.signal, 'SIGKILL', `run ${i} (stderr: ${run.stderr})`);
      assert.ok(run.acked.length > 0, `run ${i} acknowledged nothing (stderr: ${run.stderr})`);
      acked.push(...run.acked);
      const store = await openStore({ file: storeFilePath(dir) });
      try {
        const live = store.collection('executions');
        const lost: string[] = [];
        let archived = 0;
        const archive = await readArchivedExecutions(dir);
        for (const id of acked) {
          if (live.get(id)) continue;
          const entry = archive.get(id);
          if (!entry) lost.push(id);
          else {
            archived++;
            assert.equal(entry.events.length, 1, `${id}: its event log was archived with it`);
          }
        }
        assert.deepEqual(lost, [], `run ${i}: acknowledged executions neither live nor archived`);
        if (i === 5) assert.ok(archived > 0, 'retention archived some executions');
      } finally {
        await store.close();
      }
    }
  });
});
