/** A skill in a worker thread gets back the evidence object its research returned, not the main thread's copy. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AgentWorkers } from '../../../server/src/workers/agent-workers';

const ROOT = path.resolve(__dirname, '../../..');

describe('evidence identity across the worker boundary', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('propose and generate get the very evidence object research returned in the worker (what skills keep in WeakMaps)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cadre-evidence-'));
    const mod = path.join(dir, 'skills.js');
    writeFileSync(mod, [
      'const kept = new WeakMap();',
      "exports.skills = [{ agentId: 'keep-ai', action: 'go',",
      "  async research() { const e = { items: [], constraints: [], pathsRead: [] }; kept.set(e, 'prepared in research'); return e; },",
      '  propose(ctx, e) { return kept.has(e) ? [] : [{ kind: "read", description: "lost" }]; },',
      "  async generate(ctx, e) { return { kind: 'x', summary: String(kept.get(e)), goalRef: 'g', confidence: 1, data: null, tokens: 0 }; } }];",
    ].join('\n'));
    const workers = new AgentWorkers({ workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'), modules: [mod], execArgv: ['--require', require.resolve('tsx/cjs')] });
    try {
      const [skill] = await workers.allSkills();
      const signal = new AbortController().signal;
      const ctx = {
        request: { executionId: 'exec_1', step: 0, agentId: 'keep-ai', action: 'go', goal: { id: 'g', prompt: 'p' }, input: {}, scope: 'mvp', tier: 'core', previous: [], signal },
        signal, progress: () => {}, allowed: () => true, once: <T>(_k: string, f: () => Promise<T>) => f(),
      } as never;
      const evidence = await skill!.research(ctx);
      assert.deepEqual(await skill!.propose(ctx, evidence), []);
      assert.equal((await skill!.generate(ctx, evidence)).summary, 'prepared in research');
      // A copy (e.g. evidence read back from a checkpoint) is not the same object: the skill sees the difference.
      assert.equal((await skill!.generate(ctx, structuredClone(evidence))).summary, 'undefined');
    } finally {
      await workers.close();
    }
  });
});
