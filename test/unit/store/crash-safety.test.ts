import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openStore, storeFilePath, type StoreData } from '../../../server/src/store';

const CHILD = path.join(__dirname, 'store-writer-child.ts');
const ITERATIONS = 15;

interface RunResult {
  acked: string[];
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the writer child, SIGKILLs it `delayMs` after its first acknowledged id, returns the acknowledged ids. */
function runAndKill(file: string, runTag: string, delayMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, runTag], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (!timer && out.includes('\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
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

describe('store: crash safety under SIGKILL', function () {
  this.timeout(90_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-store-kill-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged insert across ${ITERATIONS} random SIGKILLs of a writer`, async () => {
    const file = storeFilePath(dir);
    const allAcked = new Set<string>();
    let previousCount = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const delayMs = 50 + Math.floor(Math.random() * 351);
      const run = await runAndKill(file, `r${i}`, delayMs);
      assert.equal(run.signal, 'SIGKILL', `run ${i} should have been killed (stderr: ${run.stderr})`);
      assert.ok(run.acked.length > 0, `run ${i} acknowledged nothing (stderr: ${run.stderr})`);
      for (const id of run.acked) allAcked.add(id);

      let data: StoreData;
      const text = readFileSync(file, 'utf8');
      try {
        data = JSON.parse(text) as StoreData;
      } catch (err) {
        assert.fail(`run ${i} (killed ${delayMs} ms after first ack): store file does not parse: ${String(err)}`);
      }
      assert.equal(data.schemaVersion, 1);
      const rows = data.collections.rows ?? {};
      const missing = [...allAcked].filter((id) => !(id in rows));
      assert.deepEqual(missing, [], `run ${i}: acknowledged ids missing from the file`);
      const count = Object.keys(rows).length;
      assert.ok(count >= previousCount, 'the file only grows');
      previousCount = count;
    }
    // The last state opens through the store (a stale temp file, if any, is cleaned up).
    const store = await openStore({ file });
    try {
      assert.equal(existsSync(`${file}.tmp`), false);
      assert.ok(store.collection('rows').count() >= allAcked.size);
    } finally {
      await store.close();
    }
  });
});
