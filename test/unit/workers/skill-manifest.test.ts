/**
 * The build-time skill listing (skills.manifest.json): used instead of a listing worker only while
 * it names the module's exact content.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AgentWorkers } from '../../../server/src/workers/agent-workers';
import { listSkills, manifestPathOf, moduleSha256, readSkillManifest, type SkillManifest } from '../../../server/src/workers/skill-manifest';

const ROOT = path.resolve(__dirname, '../../..');

describe('skill manifest', () => {
  let dir = '';
  let mod = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cadre-manifest-'));
    mod = path.join(dir, 'skills.js');
    writeFileSync(mod, "exports.skills = [{ agentId: 'req-ai', action: 'analyze', research() {}, propose() { return []; }, generate() {} }];\n");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (skills: SkillManifest['skills'], sha = moduleSha256(mod)) =>
    writeFileSync(manifestPathOf(mod), JSON.stringify({ module: 'skills.js', sha256: sha, skills } satisfies SkillManifest));

  it('lists skills as a worker does: a later skill of the same agent action replaces an earlier one', () => {
    const a = { agentId: 'x-ai', action: 'go', research: async () => ({ items: [], constraints: [], pathsRead: [] }), propose: () => [], generate: async () => ({}) };
    const listing = listSkills([a, { ...a, optimize: async () => ({}) }, { ...a, action: 'other', requiresModel: true }] as never);
    assert.deepEqual(listing, [
      { agentId: 'x-ai', action: 'go', optimize: true, outputSchema: false },
      { agentId: 'x-ai', action: 'other', optimize: false, outputSchema: false, requiresModel: true },
    ]);
  });

  it('is read only while its SHA-256 matches the module', () => {
    assert.equal(readSkillManifest(mod), null, 'no manifest');
    write([{ agentId: 'req-ai', action: 'analyze', optimize: false, outputSchema: false }]);
    assert.equal(readSkillManifest(mod)?.length, 1);
    appendFileSync(mod, '// edited\n');
    assert.equal(readSkillManifest(mod), null, 'the module changed after the manifest was written');
    writeFileSync(manifestPathOf(mod), '{ not json');
    assert.equal(readSkillManifest(mod), null, 'a broken manifest is ignored');
  });

  it('AgentWorkers answers discover() from a matching manifest without a listing worker', async () => {
    // The manifest says something the module does not define: seeing it proves no worker listed the module.
    write([{ agentId: 'req-ai', action: 'analyze', optimize: false, outputSchema: false }, { agentId: 'planner-ai', action: 'plan', optimize: false, outputSchema: false }]);
    const logs: string[] = [];
    const workers = new AgentWorkers({ workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'), modules: [mod], execArgv: ['--require', require.resolve('tsx/cjs')], log: (l) => void logs.push(l) });
    try {
      const listing = await workers.discover();
      assert.deepEqual(listing.map((l) => `${l.agentId}/${l.action}`), ['req-ai/analyze', 'planner-ai/plan']);
      assert.ok(!logs.some((l) => /listed in/.test(l)), logs.join('\n'));
    } finally {
      await workers.close();
    }
  });

  it('AgentWorkers lists with a worker when the manifest is stale', async () => {
    write([{ agentId: 'planner-ai', action: 'plan', optimize: false, outputSchema: false }], 'f'.repeat(64));
    const workers = new AgentWorkers({ workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'), modules: [mod], execArgv: ['--require', require.resolve('tsx/cjs')] });
    try {
      assert.deepEqual((await workers.discover()).map((l) => `${l.agentId}/${l.action}`), ['req-ai/analyze']);
    } finally {
      await workers.close();
    }
  });
});
