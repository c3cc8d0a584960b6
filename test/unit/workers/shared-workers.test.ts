/**
 * Agents sharing worker threads (AgentWorkersOptions.sharedWorkers): one copy of the skill modules
 * per worker, crash isolation by blame (the crashing agent's calls fail and it moves to a worker of
 * its own; the other agents' in-flight calls finish on a new worker), a stuck skill replaced after
 * its abort, and TypeScript evaluated only in a worker that parsed JS/TS (bundled dist/ only).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineError } from '../../../server/src/engine/errors';
import type { Evidence, Skill, SkillContext, StepRequest } from '../../../server/src/engine/rigor/skill';
import { AgentWorkers, sharedWorkersFromEnv, type AgentWorkersOptions } from '../../../server/src/workers/agent-workers';

const ROOT = path.resolve(__dirname, '../../..');
const TS_WORKER: Pick<AgentWorkersOptions, 'workerFile' | 'execArgv'> = {
  workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'),
  execArgv: ['--require', require.resolve('tsx/cjs')],
};
const EVIDENCE: Evidence = { items: [], constraints: [], pathsRead: [] };

/**
 * crash-ai `crash`: brings its thread down after input.ms (mode 'throw': an uncaught error in a timer;
 * 'exit': process.exit(9); 'reject': an unhandled rejection). calm-ai `slow`: answers after input.ms
 * with its thread id; `effect`: a ctx.once effect, then waits input.ms. spin-ai `spin`: burns the CPU
 * for input.ms, ignoring its signal.
 */
const MODULE = `
const { threadId } = require('node:worker_threads');
const base = (agentId, action, generate) => ({ agentId, action,
  async research() { return { items: [], constraints: [], pathsRead: [] }; }, propose() { return []; }, generate });
const art = (ctx, data) => ({ kind: 'report', summary: ctx.request.agentId, goalRef: 'g', confidence: 0.9, data });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
exports.skills = [
  base('crash-ai', 'crash', async (ctx) => {
    await sleep(ctx.request.input.ms ?? 50);
    const mode = ctx.request.input.mode;
    if (mode === 'exit') process.exit(9);
    if (mode === 'reject') Promise.reject(new Error('rejected in crash-ai'));
    else setTimeout(() => { throw new Error('thrown in crash-ai'); }, 1);
    return new Promise(() => {});
  }),
  base('crash-ai', 'echo', async (ctx) => art(ctx, { threadId })),
  base('calm-ai', 'slow', async (ctx) => { await sleep(ctx.request.input.ms ?? 300); return art(ctx, { threadId, done: true }); }),
  base('calm-ai', 'effect', async (ctx) => {
    const r = await ctx.once('write', async () => ({ wrote: true }));
    await sleep(ctx.request.input.ms ?? 300);
    return art(ctx, { threadId, r });
  }),
  base('spin-ai', 'spin', async (ctx) => { const end = Date.now() + (ctx.request.input.ms ?? 3000); while (Date.now() < end); return art(ctx, { threadId }); }),
];
`;

function context(agentId: string, action: string, input: Record<string, unknown> = {}, signal = new AbortController().signal): SkillContext {
  const request: StepRequest = { executionId: `exec_${agentId}`, step: 0, agentId, action, goal: { id: 'g', prompt: 'p' }, input, scope: 'mvp', tier: 'core', previous: [], signal };
  return { request, signal, progress: () => {}, allowed: () => false, once: (_key, effect) => effect() };
}

describe('agent workers shared by the agents', function () {
  this.timeout(30_000);
  let dir = '';
  let workers: AgentWorkers;
  let logs: string[];
  const make = (more: Partial<AgentWorkersOptions> = {}) => {
    const mod = path.join(dir, 'skills.cjs');
    writeFileSync(mod, MODULE);
    return (workers = new AgentWorkers({ ...TS_WORKER, modules: [mod], log: (l) => void logs.push(l), ...more }));
  };
  const skill = async (agentId: string, action: string): Promise<Skill> => (await workers.skillsFor(agentId)).find((s) => s.action === action)!;
  const threadOf = (a: { data: unknown }) => (a.data as { threadId: number }).threadId;
  beforeEach(() => {
    logs = [];
    dir = mkdtempSync(path.join(tmpdir(), 'cadre-shared-'));
  });
  afterEach(async () => {
    await workers?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('places agents on at most sharedWorkers threads, the least loaded first', async () => {
    make({ sharedWorkers: 2 });
    for (const a of ['crash-ai', 'calm-ai', 'spin-ai']) await workers.ensureWarm(a);
    assert.equal(workers.workerCount(), 2);
    const threads = ['crash-ai', 'calm-ai', 'spin-ai'].map((a) => workers.status(a).threadId);
    assert.equal(new Set(threads).size, 2);
    assert.notEqual(threads[0], threads[1], 'the second agent gets the second worker');
    // An agent warming on a worker that has loaded the modules is warm at once.
    await workers.coolDown('spin-ai');
    const p = workers.ensureWarm('spin-ai');
    assert.equal(workers.status('spin-ai').state, 'warm');
    await p;
    // The last agent to leave a worker stops it.
    await workers.coolDown('crash-ai');
    await workers.coolDown('spin-ai');
    await workers.coolDown('calm-ai');
    assert.equal(workers.workerCount(), 0);
  });

  for (const mode of ['throw', 'exit', 'reject'] as const) {
    it(`a crash of one agent's skill (${mode}) does not affect another agent's in-flight step on the same worker`, async () => {
      make({ sharedWorkers: 1 });
      const [crash, slow, echo] = await Promise.all([skill('crash-ai', 'crash'), skill('calm-ai', 'slow'), skill('crash-ai', 'echo')]);
      await Promise.all([workers.ensureWarm('crash-ai'), workers.ensureWarm('calm-ai')]);
      const shared = workers.status('calm-ai').threadId;
      assert.equal(workers.status('crash-ai').threadId, shared, 'both agents on one worker');

      const inFlight = slow.generate(context('calm-ai', 'slow', { ms: 400 }), EVIDENCE);
      const crashing = crash.generate(context('crash-ai', 'crash', { mode, ms: 50 }), EVIDENCE);
      await assert.rejects(crashing, (err: EngineError) => err.code === 'ERR_SKILL_FAILED' && err.retryable === true && /crash-ai's worker crashed/.test(err.message));
      const out = await inFlight;
      assert.deepEqual([(out.data as { done: boolean }).done, out.summary], [true, 'calm-ai'], "the other agent's step completed");
      assert.notEqual(threadOf(out), shared, 'it finished on a new worker');

      // The crashing agent now has a worker of its own; the other agent was warmed again.
      assert.deepEqual(workers.quarantinedAgents(), ['crash-ai']);
      const again = await echo.generate(context('crash-ai', 'echo'), EVIDENCE);
      assert.notEqual(threadOf(again), threadOf(out));
      assert.equal(workers.status('calm-ai').state, 'warm');
      assert.ok(logs.some((l) => /caused by crash-ai/.test(l)), logs.join('\n'));
      // Its next crash touches nobody else.
      const calm2 = slow.generate(context('calm-ai', 'slow', { ms: 300 }), EVIDENCE);
      await assert.rejects(crash.generate(context('crash-ai', 'crash', { mode, ms: 20 }), EVIDENCE), (err: EngineError) => err.code === 'ERR_SKILL_FAILED');
      assert.equal(threadOf(await calm2), threadOf(out));
    });
  }

  it("an innocent call that already started a side effect is failed (retryable), never run twice", async () => {
    make({ sharedWorkers: 1 });
    const [crash, effect] = await Promise.all([skill('crash-ai', 'crash'), skill('calm-ai', 'effect')]);
    let effects = 0;
    const ctx = context('calm-ai', 'effect', { ms: 400 });
    ctx.once = async (_key, fn) => {
      effects++;
      return fn();
    };
    const withEffect = effect.generate(ctx, EVIDENCE);
    await assert.rejects(crash.generate(context('crash-ai', 'crash', { mode: 'throw', ms: 100 }), EVIDENCE));
    await assert.rejects(withEffect, (err: EngineError) => err.code === 'ERR_SKILL_FAILED' && err.retryable === true && (err.details as { crashedBy?: string }).crashedBy === 'crash-ai');
    assert.equal(effects, 1);
  });

  it('a skill that keeps its worker busy after its abort gets the worker replaced; the agent waiting behind it goes on', async () => {
    make({ sharedWorkers: 1, stuckAfterMs: 300 });
    const [spin, slow] = await Promise.all([skill('spin-ai', 'spin'), skill('calm-ai', 'slow')]);
    await Promise.all([workers.ensureWarm('spin-ai'), workers.ensureWarm('calm-ai')]);
    const stuckThread = workers.status('spin-ai').threadId;
    const ac = new AbortController();
    const spinning = spin.generate(context('spin-ai', 'spin', { ms: 20_000 }, ac.signal), EVIDENCE);
    await new Promise((r) => setTimeout(r, 100));
    const waiting = slow.generate(context('calm-ai', 'slow', { ms: 10 }), EVIDENCE); // queued behind the spin
    ac.abort(new Error('step timed out'));
    await assert.rejects(spinning, /step timed out/);
    const out = await waiting;
    assert.notEqual(threadOf(out), stuckThread);
    assert.deepEqual(workers.quarantinedAgents(), ['spin-ai']);
    assert.ok(logs.some((l) => /kept its worker busy 300 ms after its abort/.test(l)));
  });

  it('CADRE_SHARED_WORKERS sets the default (0: one worker per agent); anything else is 2', () => {
    assert.equal(sharedWorkersFromEnv({ CADRE_SHARED_WORKERS: '0' }), 0);
    assert.equal(sharedWorkersFromEnv({ CADRE_SHARED_WORKERS: '3' }), 3);
    assert.equal(sharedWorkersFromEnv({ CADRE_SHARED_WORKERS: 'many' }), 2);
    assert.equal(sharedWorkersFromEnv({}), 2);
  });

  const DIST_WORKER = path.join(ROOT, 'dist/worker.js');
  const DIST_SKILLS = path.join(ROOT, 'dist/skills.js');
  (existsSync(DIST_WORKER) && existsSync(DIST_SKILLS) && existsSync(path.join(ROOT, 'dist/typescript.js')) ? it : it.skip)(
    'bundled: TypeScript is evaluated only in a worker that parsed JS/TS (dist/typescript.js behind a stand-in)',
    async () => {
      workers = new AgentWorkers({ workerFile: DIST_WORKER, modules: [DIST_SKILLS], execArgv: [], sharedWorkers: 0, log: (l) => void logs.push(l) });
      const [before, other] = await Promise.all([workers.probe('review-ai'), workers.probe('deploy-ai')]);
      assert.notEqual(before.threadId, other.threadId);
      assert.equal(before.typescript, false, "review-ai's worker loaded the skills (whose analyzer imports typescript) without evaluating the compiler");
      assert.equal(other.typescript, false);
      // review-ai reviews a TypeScript file: its worker now holds the compiler, deploy-ai's still does not.
      const review = (await workers.skillsFor('review-ai')).find((s) => s.action === 'review')!;
      const ctx = context('review-ai', 'review', { files: ['complexity.ts'] });
      ctx.request.workspace = path.join(ROOT, 'test/fixtures/review');
      const found = await review.generate(ctx, await review.research(ctx));
      assert.match(found.summary, /1 file\(s\) reviewed/);
      const [after, still] = await Promise.all([workers.probe('review-ai'), workers.probe('deploy-ai')]);
      assert.equal(after.typescript, true, 'the control: parsing TypeScript did load it');
      assert.equal(still.typescript, false);
      console.log(`      worker heap: review-ai ${(before.heapUsed / 1e6).toFixed(1)} -> ${(after.heapUsed / 1e6).toFixed(1)} MB after parsing TS; deploy-ai ${(still.heapUsed / 1e6).toFixed(1)} MB`);
    },
  );
});
