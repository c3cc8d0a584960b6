import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { EngineError } from '../../../server/src/engine/errors';
import type { Artifact, Evidence, Skill, SkillContext, StepRequest } from '../../../server/src/engine/rigor/skill';
import { AgentWorkers, type AgentWorkersOptions } from '../../../server/src/workers/agent-workers';
import { anyone, createHarness, MemoryStore, settled, type Harness } from '../../support/engine-harness';

const ROOT = path.resolve(__dirname, '../../..');
const CPU_SKILLS = path.join(ROOT, 'test/fixtures/skills/cpu-skills.cjs');
const FLEET_SKILLS = path.join(ROOT, 'test/fixtures/skills/fleet-skills.cjs');
/** Under tsx the worker runs the TypeScript entry; `--import tsx` does not reach a worker's entry on Node 20 (tsx#354), `--require tsx/cjs` does. */
const TS_WORKER: Pick<AgentWorkersOptions, 'workerFile' | 'execArgv'> = {
  workerFile: path.join(ROOT, 'server/src/workers/worker-main.ts'),
  execArgv: ['--require', require.resolve('tsx/cjs')],
};

function request(over: Partial<StepRequest> = {}): StepRequest {
  return { executionId: 'exec_w1', step: 0, agentId: 'cpu-ai', action: 'echo', goal: { id: 'goal_1', prompt: 'do it' }, input: {}, scope: 'mvp', tier: 'core', previous: [], ...over };
}

/** The main-side ctx.once semantics (as the execution service's ledger): a recorded key returns its result, a failed effect records nothing. */
class MemoryLedger {
  readonly records = new Map<string, unknown>();
  async once<T>(req: StepRequest, key: string, effect: () => Promise<T>): Promise<T> {
    const id = `${req.executionId}:${req.step}:${key}`;
    if (this.records.has(id)) return this.records.get(id) as T;
    const v = await effect();
    this.records.set(id, v);
    return v;
  }
}

interface CtxOptions {
  signal?: AbortSignal;
  progress?: Array<[number, number | undefined]>;
  allowed?: (kind: string) => boolean;
  ledger?: MemoryLedger;
}

function context(req: StepRequest, o: CtxOptions = {}): SkillContext {
  const signal = o.signal ?? new AbortController().signal;
  return {
    request: { ...req, signal },
    signal,
    progress: (p, c) => void o.progress?.push([p, c]),
    allowed: o.allowed ?? (() => false),
    once: (key, effect) => (o.ledger ? o.ledger.once(req, key, effect) : effect()),
  };
}

const EVIDENCE: Evidence = { items: [{ source: 'test', detail: 'x', weight: 1 }], constraints: [], pathsRead: [] };

/** Max lateness of a 5 ms interval timer on this thread while it runs. */
function lagMonitor() {
  let max = 0;
  let last = performance.now();
  const t = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last - 5);
    last = now;
  }, 5);
  return () => {
    clearInterval(t);
    return max;
  };
}

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('agent workers (skills in worker threads)', function () {
  this.timeout(30_000);
  let workers: AgentWorkers;
  let logs: string[];
  const make = (modules = [CPU_SKILLS], more: Partial<AgentWorkersOptions> = {}) => (workers = new AgentWorkers({ ...TS_WORKER, modules, log: (l) => void logs.push(l), ...more }));
  const skill = async (agentId: string, action: string): Promise<Skill> => (await workers.skillsFor(agentId)).find((s) => s.action === action)!;
  beforeEach(() => (logs = []));
  afterEach(async () => workers?.close());

  it('lists the modules\' skills in a worker, never loading the module on the main thread', async () => {
    make();
    const cpu = await workers.skillsFor('cpu-ai');
    assert.deepEqual(cpu.map((s) => s.action).sort(), ['crash', 'echo', 'effect', 'fail', 'schema', 'spin', 'wait']);
    assert.deepEqual((await workers.skillsFor('echo-ai')).map((s) => s.action), ['echo']);
    assert.equal(typeof cpu.find((s) => s.action === 'echo')!.optimize, 'function');
    assert.equal(cpu.find((s) => s.action === 'spin')!.optimize, undefined);
    assert.ok(cpu.find((s) => s.action === 'schema')!.outputSchema);
    assert.equal(require.cache[CPU_SKILLS], undefined);
    assert.equal((globalThis as { __cpuSkillsLoads?: number }).__cpuSkillsLoads, undefined);
    assert.equal(workers.status('cpu-ai').state, 'cold', 'listing does not warm the agent');
    assert.equal(await workers.skillsFor('cpu-ai').then((l) => l[0]), cpu[0], 'proxies are stable objects');
  });

  it('a CPU-heavy skill spins 300 ms in the worker while the main event loop keeps ticking', async () => {
    make();
    const spin = await skill('cpu-ai', 'spin');
    await workers.ensureWarm('cpu-ai');
    const progress: Array<[number, number | undefined]> = [];
    const stop = lagMonitor();
    const t0 = performance.now();
    const a = await spin.generate(context(request({ action: 'spin', input: { ms: 300 } }), { progress }), EVIDENCE);
    const took = performance.now() - t0;
    const maxLag = stop();
    assert.ok(took >= 290, `the skill really spun (${took.toFixed(0)} ms)`);
    assert.ok(maxLag < 50, `main-thread timer lag ${maxLag.toFixed(1)} ms`);
    const data = a.data as { isMainThread: boolean; threadId: number };
    assert.equal(data.isMainThread, false);
    assert.equal(data.threadId, workers.status('cpu-ai').threadId);
    assert.deepEqual(progress, [[25, 0.25], [50, 0.5], [75, 0.75]], 'progress callbacks arrive on the main side, in order');

    // Control: the same skill in process blocks the loop for the whole spin (so the monitor measures something).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const inProcess = (require(CPU_SKILLS) as { skills: Skill[] }).skills.find((s) => s.agentId === 'cpu-ai' && s.action === 'spin')!;
    const stop2 = lagMonitor();
    await new Promise((r) => setTimeout(r, 10));
    await inProcess.generate(context(request({ action: 'spin', input: { ms: 300 } })), EVIDENCE);
    await new Promise((r) => setTimeout(r, 10));
    assert.ok(stop2() >= 250, 'in process, the spin blocks the main thread');
    console.log(`      main-thread max timer lag: ${maxLag.toFixed(1)} ms in a worker vs blocked ~300 ms in process`);
  });

  it('warms cold -> warming -> warm, concurrent callers share one warm-up, and the cost is measured', async () => {
    make();
    assert.deepEqual(workers.status('cpu-ai'), { state: 'cold', inflight: 0, threadId: null, warmUpMs: null, draining: false });
    const a = workers.ensureWarm('cpu-ai');
    const warming = workers.status('cpu-ai');
    assert.equal(warming.state, 'warming');
    const b = workers.ensureWarm('cpu-ai');
    const echo = await skill('cpu-ai', 'echo');
    const c = echo.generate(context(request({ input: { v: 1 } })), EVIDENCE); // a call to a warming agent waits for the same warm-up
    assert.equal(workers.status('cpu-ai').inflight, 1);
    await Promise.all([a, b, c]);
    const warm = workers.status('cpu-ai');
    assert.equal(warm.state, 'warm');
    assert.equal(warm.threadId, warming.threadId, 'one worker for all three callers');
    assert.equal(logs.filter((l) => l.includes('warming')).length, 1);
    assert.ok(warm.warmUpMs! > 0 && workers.lastWarmUpMs === warm.warmUpMs);
    assert.equal(((await c).data as { threadId: number }).threadId, warm.threadId);
    console.log(`      warm-up (spawn + tsx + module load): ${warm.warmUpMs!.toFixed(1)} ms`);
  });

  it('one worker per agent (sharedWorkers: 0)', async () => {
    make([CPU_SKILLS], { sharedWorkers: 0 });
    const [a, b] = await Promise.all([
      (await skill('cpu-ai', 'echo')).generate(context(request()), EVIDENCE),
      (await skill('echo-ai', 'echo')).generate(context(request({ agentId: 'echo-ai' })), EVIDENCE),
    ]);
    const ta = (a.data as { threadId: number }).threadId;
    const tb = (b.data as { threadId: number }).threadId;
    assert.notEqual(ta, tb);
    assert.deepEqual([workers.status('cpu-ai').threadId, workers.status('echo-ai').threadId], [ta, tb]);
    assert.deepEqual(workers.liveAgents().sort(), ['cpu-ai', 'echo-ai']);
  });

  it('coolDown terminates an idle worker; the next call warms a new one', async () => {
    make();
    const echo = await skill('cpu-ai', 'echo');
    const first = (await echo.generate(context(request()), EVIDENCE)).data as { threadId: number };
    assert.equal(await workers.coolDown('cpu-ai'), true);
    assert.deepEqual(workers.status('cpu-ai'), { state: 'cold', inflight: 0, threadId: null, warmUpMs: null, draining: false });
    assert.ok(logs.some((l) => l.includes('cpu-ai: cooled down')));
    const p = echo.generate(context(request()), EVIDENCE);
    assert.equal(workers.status('cpu-ai').state, 'warming', 'a request to a cold agent starts it');
    const second = (await p).data as { threadId: number };
    assert.notEqual(second.threadId, first.threadId);
    assert.equal(await workers.coolDown('nobody-ai'), false);
  });

  it('coolDown waits for in-flight calls; a new call while draining keeps the worker warm', async () => {
    make();
    const spin = await skill('cpu-ai', 'spin');
    const running = spin.generate(context(request({ action: 'spin', input: { ms: 200 } })), EVIDENCE);
    await workers.ensureWarm('cpu-ai');
    const cooled = workers.coolDown('cpu-ai');
    assert.deepEqual([workers.status('cpu-ai').draining, workers.status('cpu-ai').inflight], [true, 1]);
    await running; // finishes normally
    assert.equal(await cooled, true);
    assert.equal(workers.status('cpu-ai').state, 'cold');

    const again = spin.generate(context(request({ action: 'spin', input: { ms: 100 } })), EVIDENCE);
    await workers.ensureWarm('cpu-ai');
    const cooled2 = workers.coolDown('cpu-ai');
    const echo = await skill('cpu-ai', 'echo');
    const late = echo.generate(context(request()), EVIDENCE); // the agent is busy again
    assert.equal(await cooled2, false);
    await Promise.all([again, late]);
    assert.equal(workers.status('cpu-ai').state, 'warm');
  });

  it('calls racing cool-downs never hang or land on a dead worker', async () => {
    make();
    const echo = await skill('cpu-ai', 'echo');
    const calls: Array<Promise<unknown>> = [];
    const cools: Array<Promise<boolean>> = [];
    for (let i = 0; i < 20; i++) {
      calls.push(echo.generate(context(request({ input: { i } })), EVIDENCE));
      cools.push(workers.coolDown('cpu-ai'));
      if (i % 3 === 0) await new Promise((r) => setTimeout(r, 1));
      if (i % 5 === 0) await calls[i];
    }
    const outs = (await Promise.all(calls)) as Artifact[];
    assert.deepEqual(outs.map((o) => (o.data as { input: { i: number } }).input.i), Array.from({ length: 20 }, (_, i) => i));
    await Promise.all(cools); // each resolved: stopped, or kept warm by the next call
    await workers.coolDown('cpu-ai');
    assert.equal(workers.status('cpu-ai').state, 'cold');
  });

  it('once(): the main ledger decides and the worker performs the effect exactly once', async () => {
    make();
    const effect = await skill('cpu-ai', 'effect');
    const ledger = new MemoryLedger();
    const req = request({ action: 'effect', executionId: 'exec_once', step: 2 });
    const first = (await effect.generate(context(req, { ledger }), EVIDENCE)).data as { once: { n: number; deployed: string }; effectsInThisWorker: number };
    const second = (await effect.generate(context({ ...req, attempt: 2 }, { ledger }), EVIDENCE)).data as typeof first;
    assert.deepEqual(first, { once: { deployed: 'exec_once:2', n: 1 }, effectsInThisWorker: 1 });
    assert.deepEqual(second, { once: { deployed: 'exec_once:2', n: 1 }, effectsInThisWorker: 1 }, 'the retried step gets the recorded result; the effect did not run again');
    assert.deepEqual([...ledger.records.keys()], ['exec_once:2:deploy']);
    // A fresh worker (after a cool-down) still does not repeat it: the ledger lives on the main side.
    await workers.coolDown('cpu-ai');
    const third = (await effect.generate(context(req, { ledger }), EVIDENCE)).data as typeof first;
    assert.deepEqual(third, { once: { deployed: 'exec_once:2', n: 1 }, effectsInThisWorker: 0 });
    // Another step is another key: it runs.
    const other = (await effect.generate(context({ ...req, step: 3 }, { ledger }), EVIDENCE)).data as typeof first;
    assert.deepEqual(other, { once: { deployed: 'exec_once:3', n: 1 }, effectsInThisWorker: 1 });
  });

  it('abort reaches the worker: a skill waiting on its signal stops, and the proxy rejects with the reason', async () => {
    make();
    const wait = await skill('cpu-ai', 'wait');
    const ac = new AbortController();
    const progress: Array<[number, number | undefined]> = [];
    const p = wait.generate(context(request({ action: 'wait' }), { signal: ac.signal, progress }), EVIDENCE);
    await until(() => progress.length > 0); // the skill is running in the worker
    const reason = new EngineError('ERR_CANCELLED', 'cancelled by a person');
    const t0 = performance.now();
    ac.abort(reason);
    await assert.rejects(p, (err) => err === reason);
    assert.ok(performance.now() - t0 < 50);
    // The worker's skill saw its own signal abort and ended its call.
    await until(() => workers.status('cpu-ai').inflight === 0, 1000);
    // An already aborted signal rejects without a call.
    await assert.rejects(wait.generate(context(request({ action: 'wait' }), { signal: ac.signal }), EVIDENCE), (err) => err === reason);
  });

  it('a crashing worker fails its in-flight calls (retryable ERR_SKILL_FAILED) and the next call gets a new worker', async () => {
    make();
    const [crash, wait, echo] = await Promise.all([skill('cpu-ai', 'crash'), skill('cpu-ai', 'wait'), skill('cpu-ai', 'echo')]);
    const before = ((await echo.generate(context(request()), EVIDENCE)).data as { threadId: number }).threadId;
    const bystander = wait.generate(context(request({ action: 'wait' })), EVIDENCE);
    const crashing = crash.generate(context(request({ action: 'crash', input: { mode: 'exit' } })), EVIDENCE);
    for (const p of [crashing, bystander]) {
      await assert.rejects(p, (err: EngineError) => err.code === 'ERR_SKILL_FAILED' && err.retryable === true && err.name === 'EngineError' && /cpu-ai's worker crashed \(exit code 7\)/.test(err.message));
    }
    assert.equal(workers.status('cpu-ai').state, 'cold');
    const after = ((await echo.generate(context(request()), EVIDENCE)).data as { threadId: number }).threadId;
    assert.notEqual(after, before);
    // An uncaught error in the worker is a crash too, and its message is kept.
    await assert.rejects(crash.generate(context(request({ action: 'crash', input: { mode: 'throw' } })), EVIDENCE), (err: EngineError) => err.code === 'ERR_SKILL_FAILED' && err.retryable && /uncaught in the skill/.test(err.message));
    assert.equal(((await echo.generate(context(request()), EVIDENCE)).data as { isMainThread: boolean }).isMainThread, false);
  });

  it('errors thrown in the worker keep their message and code', async () => {
    make();
    const fail = await skill('cpu-ai', 'fail');
    await assert.rejects(fail.generate(context(request({ action: 'fail', input: { message: 'disk is full', code: 'ENOSPC' } })), EVIDENCE), (err: Error & { code?: string }) => err instanceof Error && err.message === 'disk is full' && err.code === 'ENOSPC');
    await assert.rejects(fail.generate(context(request({ action: 'fail', input: { message: 'plain' } })), EVIDENCE), (err: Error & { code?: string }) => err.message === 'plain' && err.code === undefined);
    assert.equal(workers.status('cpu-ai').state, 'warm', 'a thrown error is not a crash');
  });

  it('allowed() is a snapshot taken when the call starts, over known and proposed kinds', async () => {
    make();
    const echo = await skill('cpu-ai', 'echo');
    const req = request({ input: { propose: ['write_file', 'custom_kind'], kinds: ['custom_kind', 'write_file', 'read', 'deploy', 'never_proposed'] } });
    const allowed = (k: string) => k === 'custom_kind' || k === 'read' || k === 'never_proposed';
    const ctx = context(req, { allowed });
    const actions = await echo.propose(ctx, EVIDENCE);
    assert.deepEqual(actions.map((a) => a.kind), ['write_file', 'custom_kind']);
    const a = await echo.generate(ctx, EVIDENCE);
    assert.deepEqual((a.data as { allowed: unknown }).allowed, { custom_kind: true, write_file: false, read: true, deploy: false, never_proposed: false });
  });

  it('research, propose, generate and optimize cross with their arguments; concurrent calls share the worker', async () => {
    make();
    const echo = await skill('cpu-ai', 'echo');
    const req = request({ previous: [{ step: 0, agentId: 'req-ai', action: 'analyze', passed: true, confidence: 0.9, summary: 's', data: { when: new Date(0), tags: new Set(['a']) } }] });
    const ev = await echo.research(context(req));
    assert.deepEqual(ev, { items: [{ source: 'goal', detail: 'do it', weight: 1 }], constraints: [], pathsRead: [] });
    const outs = await Promise.all([1, 2, 3, 4, 5].map((v) => echo.generate(context({ ...req, input: { v } }), ev)));
    assert.deepEqual(outs.map((o) => (o.data as { input: { v: number } }).input.v), [1, 2, 3, 4, 5]);
    assert.equal(new Set(outs.map((o) => (o.data as { threadId: number }).threadId)).size, 1);
    const d = outs[0]!.data as { hasSignal: boolean; previous: string[] };
    assert.deepEqual([d.hasSignal, d.previous], [true, ['req-ai']], 'the worker request carries its own signal');
    const opt = await echo.optimize!(context(req), outs[0]!, ['p1', 'p2']);
    assert.deepEqual([(opt.artifact.data as { learned: string[] }).learned, opt.patterns], [['p1', 'p2'], ['echo-pattern']]);
  });

  it('the output schema runs in the worker and answers the Review gate for the data it saw', async () => {
    make();
    const schema = await skill('cpu-ai', 'schema');
    const ok = await schema.generate(context(request({ action: 'schema', input: { n: 1 } })), EVIDENCE);
    const bad = await schema.generate(context(request({ action: 'schema', input: { n: 'one' } })), EVIDENCE);
    assert.deepEqual(schema.outputSchema!.safeParse(ok.data), { success: true });
    assert.deepEqual(schema.outputSchema!.safeParse(bad.data), { success: false, error: { message: 'n must be a number' } });
    assert.equal(schema.outputSchema!.safeParse({ n: 1 }).success, false, 'data that never went through the worker is not vouched for');
  });

  it('a module that does not load fails the warm-up with ERR_SKILL_UNAVAILABLE', async () => {
    make([path.join(ROOT, 'test/fixtures/skills/does-not-exist.cjs')]);
    await assert.rejects(workers.discover(), (err: EngineError) => err.code === 'ERR_SKILL_UNAVAILABLE' && /could not be loaded/.test(err.message));
    await assert.rejects(workers.ensureWarm('cpu-ai'), (err: EngineError) => err.code === 'ERR_SKILL_UNAVAILABLE');
    assert.equal(workers.status('cpu-ai').state, 'cold');
  });

  it('measures warm-up and the round trip of a trivial generate', async () => {
    make();
    const echo = await skill('cpu-ai', 'echo');
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      await workers.ensureWarm('cpu-ai');
      warm.push(workers.lastWarmUpMs!);
      await workers.coolDown('cpu-ai');
    }
    await workers.ensureWarm('cpu-ai');
    const ctx = context(request({ input: { v: 1 } }));
    for (let i = 0; i < 200; i++) await echo.generate(ctx, EVIDENCE); // JIT warm-up
    const n = 1000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await echo.generate(ctx, EVIDENCE);
    const perCallUs = ((performance.now() - t0) / n) * 1000;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const inProcess = (require(CPU_SKILLS) as { skills: Skill[] }).skills.find((s) => s.agentId === 'cpu-ai' && s.action === 'echo')!;
    for (let i = 0; i < 200; i++) await inProcess.generate(ctx, EVIDENCE);
    const t1 = performance.now();
    for (let i = 0; i < n; i++) await inProcess.generate(ctx, EVIDENCE);
    const inProcessUs = ((performance.now() - t1) / n) * 1000;
    console.log(`      warm-up (tsx entry): ${warm.map((w) => w.toFixed(1)).join(', ')} ms; trivial generate round trip: ${perCallUs.toFixed(0)} µs (in process: ${inProcessUs.toFixed(1)} µs)`);
    assert.ok(perCallUs < 5000);
  });

  const distWorker = path.join(ROOT, 'dist/worker.js');
  (existsSync(distWorker) ? it : it.skip)('runs with the bundled dist/worker.js (production entry)', async () => {
    workers = new AgentWorkers({ workerFile: distWorker, modules: [CPU_SKILLS], execArgv: [], log: (l) => void logs.push(l) });
    const echo = await skill('cpu-ai', 'echo');
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await echo.generate(context(request({ input: { v: 7 } })), EVIDENCE);
      assert.deepEqual([(a.data as { input: unknown }).input, (a.data as { isMainThread: boolean }).isMainThread], [{ v: 7 }, false]);
      warm.push(workers.lastWarmUpMs!);
      await workers.coolDown('cpu-ai');
    }
    await workers.ensureWarm('cpu-ai');
    const ctx = context(request({ input: { v: 1 } }));
    for (let i = 0; i < 200; i++) await echo.generate(ctx, EVIDENCE);
    const n = 1000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await echo.generate(ctx, EVIDENCE);
    console.log(`      warm-up (dist/worker.js): ${warm.map((w) => w.toFixed(1)).join(', ')} ms; round trip ${(((performance.now() - t0) / n) * 1000).toFixed(0)} µs`);
  });

  describe('the fleet skills through the proxies, in the real engine', () => {
    let h: Harness;
    afterEach(async () => h?.close());
    const ultra = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

    it('a single RIGOR step passes all 21 gates with the skill in its worker', async () => {
      make([FLEET_SKILLS]);
      h = await createHarness({ skills: await workers.allSkills() });
      const result = await h.engine.rigor.runStep(h.request({ agentId: 'review-ai', action: 'review' }));
      assert.equal(result.passed, true, JSON.stringify(result.gates.filter((g) => g.status === 'fail')));
      assert.equal(result.gates.length, 21);
      assert.deepEqual(workers.liveAgents(), ['review-ai']);
      const progress = h.events.filter((e) => e.type === 'work_progress' && e.phase === 'Generate').map((e) => (e.type === 'work_progress' ? e.progress : -1));
      assert.deepEqual(progress, [50, 100], "the skill's progress reaches the engine's events");
    });

    it('a BUILD task runs its six agents, each in its own worker (sharedWorkers: 0); a retried step does not repeat its side effect', async () => {
      make([FLEET_SKILLS], { sharedWorkers: 0 });
      const store = new MemoryStore();
      h = await createHarness({ skills: await workers.allSkills(), yaml: ultra, store });
      const rec = await h.engine.executions.submitTask({ task: 'add a login page effect:architect-ai crash:architect-ai:1', capabilities: ['BUILD'] }, anyone);
      const done = await settled(h.engine, rec.id);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.deepEqual((done.output?.result as { saw: string[] }).saw, ['req-ai', 'planner-ai', 'architect-ai', 'coder-ai', 'review-ai']);
      assert.deepEqual(workers.liveAgents().sort(), ['architect-ai', 'coder-ai', 'planner-ai', 'req-ai', 'review-ai', 'tester-ai']);
      const threads = new Set(workers.liveAgents().map((a) => workers.status(a).threadId));
      assert.equal(threads.size, 6);
      const ledger = await store.collection<{ id: string; result: unknown }>('sideEffects').list();
      assert.equal(ledger.length, 1);
      assert.deepEqual(ledger[0]!.result, { ran: `${rec.id}:2` });
    });
  });
});

