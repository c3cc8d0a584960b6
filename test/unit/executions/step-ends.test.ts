/**
 * A step's end is written while the next step runs (executions/step-ends.ts): the write overlaps the
 * next step's work, the stream stays in order (a step's step_completed, emitted once its end is durable,
 * before anything of the next step), and a failed write still fails the run.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent } from '../../../protocol/events';
import { EngineError } from '../../../server/src/engine/errors';
import type { Identified, Repository } from '../../../server/src/engine/ports';
import type { StepRecord } from '../../../server/src/engine/executions/records';
import type { Skill } from '../../../server/src/engine/rigor/skill';
import { ExecutionEvents } from '../../../server/src/engine/execution-events';
import { MAX_ENDS_IN_FLIGHT, StepEnds } from '../../../server/src/engine/executions/step-ends';
import { MessageBus } from '../../../server/src/engine/bus';
import { AppendOnlyFile } from '../../../server/src/store/durable-file';
import { applyDelta, type DeltaChange } from '../../../server/src/store/record-delta';
import { benchSkill, openBenchEngine } from '../../../bench/bench-engine';
import { fullSdlcSubmitter } from '../../../bench/workflow-submit';
import { spin } from '../../../bench/spin';
import { anyone, createHarness, fleetSkills, MemoryStore, settled, type Harness } from '../../support/engine-harness';

const AUTONOMOUS = 'defaults:\n  acmf_mode: AUTONOMOUS\n';
/** How long a step's checkpoint takes to become durable in the overlap tests: far above a turn of the event loop. */
const WRITE_MS = 150;

/** Steps whose end a patch writes (their status becomes final in it). */
function endedIn(before: { steps?: StepRecord[] } | undefined, patch: { steps?: StepRecord[] }): number[] {
  return (patch.steps ?? []).filter((s, i) => (s.status === 'completed' || s.status === 'failed') && before?.steps?.[i]?.status === 'running').map((s) => s.step);
}

/**
 * A store whose checkpoints of a step's end take `delayMs` to become durable (as an fsync does), and
 * optionally fail; memory holds the change at once, as the journal store's does.
 */
class SlowCheckpointStore extends MemoryStore {
  /** [step, when its end became durable (performance.now())] */
  readonly durableAt: Array<[number, number]> = [];
  constructor(private readonly delayMs: number, private readonly failStep: number | null = null) {
    super();
  }
  override collection<T extends Identified>(name: string): Repository<T> {
    const repo = super.collection<T>(name);
    if (name !== 'executions') return repo;
    const update = repo.update.bind(repo);
    const self = this;
    return Object.assign(Object.create(repo) as Repository<T>, {
      update(id: string, patch: Partial<T>): Promise<T> {
        const ended = endedIn(repo.get(id) as { steps?: StepRecord[] } | undefined, patch as { steps?: StepRecord[] });
        const written = update(id, patch);
        if (ended.length === 0) return written;
        return written.then((rec) => new Promise<T>((resolve, reject) => setTimeout(() => {
          if (self.failStep !== null && ended.includes(self.failStep)) return reject(new EngineError('ERR_STORE', `disk full writing step ${self.failStep}`));
          for (const s of ended) self.durableAt.push([s, performance.now()]);
          resolve(rec);
        }, self.delayMs)));
      },
    });
  }
}

/**
 * Wraps the fleet skills so each records when its step's research and generate started; `effects` agents
 * propose a file write; each generate works `workMs` first.
 */
function timedSkills(started: Array<[number, number]>, generated: Array<[number, number]> = [], effects: string[] = [], workMs = 0): Skill[] {
  return fleetSkills.map((s) => ({
    ...s,
    research: async (ctx) => {
      started.push([ctx.request.step, performance.now()]);
      return s.research(ctx);
    },
    propose: (ctx, evidence) => (effects.includes(s.agentId) ? [{ kind: 'write_file', description: 'write src/health.ts', paths: ['src/health.ts'] }] : s.propose(ctx, evidence)),
    generate: async (ctx, evidence) => {
      generated.push([ctx.request.step, performance.now()]);
      if (workMs > 0) await new Promise((resolve) => setTimeout(resolve, workMs));
      return s.generate(ctx, evidence);
    },
  }));
}

function indexOf(events: EngineEvent[], pred: (e: EngineEvent) => boolean): number {
  return events.findIndex(pred);
}

describe('a step ends while the next one runs (step-ends.ts)', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.close());

  it('the next step starts before the previous checkpoint is durable; the stream stays in step order with consecutive numbers', async () => {
    // 150 ms per checkpoint: the next step starts within a turn or two of the end, and the margin must hold in
    // a suite whose process has run ~1,900 tests (at 15 ms one step of five missed it once: a pause there).
    const store = new SlowCheckpointStore(WRITE_MS);
    const started: Array<[number, number]> = [];
    h = await createHarness({ skills: timedSkills(started, [], [], WRITE_MS + 50), yaml: AUTONOMOUS, store });
    const rec = await h.engine.executions.submitTask({ task: 'code: add a health endpoint in src/index.ts', capabilities: ['BUILD'], intelligence: 'core' }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.steps.map((s) => [s.agentId, s.status, s.reason])));
    const n = done.steps.length;
    assert.ok(n >= 3, `a chain of steps (${n})`);
    // Overlap: step i+1's research began before step i's end was durable (WRITE_MS later than memory).
    // Each step works longer than a write: at most one end is in flight behind a running step
    // (step-ends.ts), so with steps shorter than the write every other step waits for the end two
    // steps back and leads its predecessor's write by only its predecessor's duration (a few ms with
    // instant skills: it failed twice in full suites). Here every transition leads by about WRITE_MS.
    const lead = done.steps.slice(0, -1).map((s) => {
      const durable = store.durableAt.find(([st]) => st === s.step)?.[1];
      const next = started.find(([st]) => st === s.step + 1)?.[1];
      return durable === undefined || next === undefined ? -Infinity : durable - next;
    });
    const overlapped = lead.filter((ms) => ms > 0);
    assert.equal(overlapped.length, n - 1, `every next step overlapped its predecessor's write (${overlapped.length} of ${n - 1}; leads ${lead.map(Math.round).join(', ')} ms)`);
    const events = h.events.filter((e) => e.execution_id === rec.id);
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'sequence numbers are consecutive in delivery order');
    for (let i = 0; i + 1 < n; i++) {
      const completed = indexOf(events, (e) => e.type === 'step_completed' && e.step === i);
      const nextStarted = indexOf(events, (e) => e.type === 'step_started' && e.step === i + 1);
      assert.ok(completed >= 0 && nextStarted > completed, `step_completed(${i}) at ${completed} before step_started(${i + 1}) at ${nextStarted}`);
    }
    assert.equal(events.at(-1)!.type, 'execution_completed');
    assert.ok(indexOf(events, (e) => e.type === 'step_completed' && e.step === n - 1) < events.length - 1, 'the last step_completed before the execution ends');
  });

  it('a step that changes something (an effect ACMF allows) waits for the previous step\'s end to be durable before it acts', async () => {
    const store = new SlowCheckpointStore(WRITE_MS);
    const started: Array<[number, number]> = [];
    const generated: Array<[number, number]> = [];
    h = await createHarness({ skills: timedSkills(started, generated, ['coder-ai']), yaml: AUTONOMOUS, store });
    const rec = await h.engine.executions.submitTask({ task: 'code: add a health endpoint in src/index.ts', capabilities: ['BUILD'], intelligence: 'core' }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.steps.map((s) => [s.agentId, s.status, s.reason])));
    const coder = done.steps.find((s) => s.agentId === 'coder-ai')!;
    assert.ok(coder.step > 0);
    const durable = store.durableAt.find(([st]) => st === coder.step - 1)![1];
    const research = started.find(([st]) => st === coder.step)![1];
    const generate = generated.find(([st]) => st === coder.step)![1];
    assert.ok(research < durable, 'coder-ai started (research) while the step before was being written');
    assert.ok(generate >= durable, `coder-ai generated ${(durable - generate).toFixed(1)} ms before the step before was durable`);
    // A step without effects does not wait: the one after coder-ai generated before coder-ai's end was durable.
    const after = generated.find(([st]) => st === coder.step + 1)![1];
    assert.ok(after < store.durableAt.find(([st]) => st === coder.step)![1]);
  });

  it("a checkpoint that fails to be written stops the run before its next step starts once the failure is known, with the store's error; the execution's end is the last event", async () => {
    const store = new SlowCheckpointStore(5, 1);
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS, store });
    const rec = await h.engine.executions.submitTask({ task: 'code: add a health endpoint in src/index.ts', capabilities: ['BUILD'], intelligence: 'core' }, anyone);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'ERR_STORE');
    assert.match(done.error?.message ?? '', /disk full writing step 1/);
    const events = h.events.filter((e) => e.execution_id === rec.id);
    // (This store has no write units: step_completed follows the audit records and counters, written
    // apart from the checkpoint here; with the journal store they are one batch, step-batch-crash.test.ts.)
    // Steps run while the ends before them are written (MAX_ENDS_IN_FLIGHT): the run stops at the latest
    // when step 1's end is the oldest in flight, and no step starts once its failure is known.
    const started = events.filter((e) => e.type === 'step_started').map((e) => (e as { step: number }).step);
    assert.ok(Math.max(...started) <= 1 + MAX_ENDS_IN_FLIGHT, started.join(','));
    assert.equal(events.at(-1)!.type, 'execution_failed', events.slice(-6).map((e) => `${e.type}:${(e as { step?: number }).step ?? ''}`).join(' '));
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  });
});

describe('StepEnds', () => {
  const noGate = { hold: (_id: string, _steps: readonly number[], until: Promise<unknown>) => until.then(() => undefined, () => undefined) };
  const stored = (step: number) => ({ step }) as unknown as StepRecord;

  it(`a step counts as ended while the ${MAX_ENDS_IN_FLIGHT - 1} end(s) before it are still written, not more`, async () => {
    const ends = new StepEnds(noGate, 'x');
    const writes: Array<() => void> = [];
    const durable = () => new Promise<void>((resolve) => writes.push(resolve));
    const within = <T>(p: Promise<T>, ms: number): Promise<T | 'pending'> => Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
    // Steps 0 .. MAX-1 end with their own and the earlier ends in flight (no write done yet).
    for (let n = 0; n < MAX_ENDS_IN_FLIGHT; n++) {
      const ended = await within(ends.run(n, async () => ({ stored: stored(n), durable: durable() })), 5_000);
      assert.notEqual(ended, 'pending', `step ${n} ended while ${n + 1} end(s) were in flight`);
    }
    // Step MAX would leave MAX + 1 in flight: it waits for step 0's end.
    const last = ends.run(MAX_ENDS_IN_FLIGHT, async () => ({ stored: stored(MAX_ENDS_IN_FLIGHT), durable: durable() }));
    assert.equal(await within(last, 50), 'pending', `step ${MAX_ENDS_IN_FLIGHT} ended with ${MAX_ENDS_IN_FLIGHT + 1} ends in flight`);
    writes[0]!();
    assert.equal((await last).step, MAX_ENDS_IN_FLIGHT);
    for (const w of writes) w();
    await ends.settle();
  });

  it('no step starts once an earlier end is known to have failed, though that end is not the oldest in flight', async () => {
    const ends = new StepEnds(noGate, 'x');
    await ends.run(0, async () => ({ stored: stored(0), durable: Promise.reject(new Error('disk full')) }));
    await new Promise((r) => setImmediate(r));
    let started = false;
    await assert.rejects(ends.run(1, async () => {
      started = true;
      return { stored: stored(1), durable: Promise.resolve() };
    }), /disk full/);
    assert.equal(started, false);
  });
});

describe("an execution's end joins its last step's write (settlement.ts)", function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.close());

  it("a last checkpoint that fails to be written ends the execution failed with the store's error; it is never announced completed", async () => {
    const store = new SlowCheckpointStore(5, 8);
    h = await createHarness({ skills: fleetSkills, yaml: AUTONOMOUS, store });
    const rec = await h.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'add a health endpoint' } }, anyone);
    assert.equal(rec.steps.length, 9);
    const done = await settled(h.engine, rec.id);
    assert.equal(done.status, 'failed', JSON.stringify(done.steps.map((s) => [s.agentId, s.status])));
    assert.equal(done.error?.code, 'ERR_STORE');
    assert.match(done.error?.message ?? '', /disk full writing step 8/);
    const events = h.events.filter((e) => e.execution_id === rec.id);
    assert.ok(!events.some((e) => e.type === 'execution_completed'), 'never announced completed');
    assert.equal(events.at(-1)!.type, 'execution_failed');
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  });
});

describe('ExecutionEvents.hold', () => {
  it('queues an execution\'s events until the hold settles, lets the held step\'s step_completed through first, and numbers in delivery order', async () => {
    const bus = new MessageBus();
    const seen: EngineEvent[] = [];
    bus.subscribe('engine.event', (e) => void seen.push(e as EngineEvent));
    const events = new ExecutionEvents(bus, { now: () => 0 });
    let release!: () => void;
    const until = new Promise<void>((r) => (release = r));
    const released = events.hold('x', [3], until);
    events.emit({ type: 'step_started', execution_id: 'x', step: 4, agent_id: 'a', action: 'b' });
    events.emit({ type: 'step_started', execution_id: 'other', step: 0, agent_id: 'a', action: 'b' });
    events.emit({ type: 'step_completed', execution_id: 'x', step: 3, agent_id: 'a', passed: true, outcome: 'completed', reason: null, confidence: 1, duration_ms: 1 });
    assert.deepEqual(seen.map((e) => [e.execution_id, e.type, e.seq]), [['other', 'step_started', 1], ['x', 'step_completed', 1]]);
    release();
    await released;
    assert.deepEqual(seen.map((e) => [e.execution_id, e.type, e.seq]), [['other', 'step_started', 1], ['x', 'step_completed', 1], ['x', 'step_started', 2]]);
    events.emit({ type: 'step_started', execution_id: 'x', step: 5, agent_id: 'a', action: 'b' });
    assert.equal(seen.at(-1)!.seq, 3, 'the gate is gone once drained');
  });

  it('with two ends in flight, each step\'s events come between its predecessor\'s step_completed and its own', async () => {
    const bus = new MessageBus();
    const seen: string[] = [];
    bus.subscribe('engine.event', (e) => void seen.push(`${(e as EngineEvent).type}:${(e as { step?: number }).step}`));
    const events = new ExecutionEvents(bus, { now: () => 0 });
    const started = (step: number) => events.emit({ type: 'step_started', execution_id: 'x', step, agent_id: 'a', action: 'b' });
    const completed = (step: number) => events.emit({ type: 'step_completed', execution_id: 'x', step, agent_id: 'a', passed: true, outcome: 'completed', reason: null, confidence: 1, duration_ms: 1 });
    let end0!: () => void;
    let end1!: () => void;
    const durable0 = new Promise<void>((r) => (end0 = r));
    const durable1 = new Promise<void>((r) => (end1 = r));
    // Step 1 runs while step 0's end is written; step 2 while steps 0 and 1's are.
    const held1 = events.hold('x', [0], durable0);
    started(1);
    const held2 = events.hold('x', [0, 1], Promise.all([durable0, durable1]));
    started(2);
    assert.deepEqual(seen, []);
    completed(0);
    end0();
    await held1;
    assert.deepEqual(seen, ['step_completed:0', 'step_started:1']);
    completed(1); // step 1's end is durable: its step_completed follows its own events, before step 2's
    end1();
    await held2;
    assert.deepEqual(seen, ['step_completed:0', 'step_started:1', 'step_completed:1', 'step_started:2']);
  });

  it('a hold that rejects delivers the queue all the same (the events describe work that happened)', async () => {
    const bus = new MessageBus();
    const seen: EngineEvent[] = [];
    bus.subscribe('engine.event', (e) => void seen.push(e as EngineEvent));
    const events = new ExecutionEvents(bus, { now: () => 0 });
    const released = events.hold('x', [0], Promise.reject(new Error('disk full')));
    events.emit({ type: 'step_started', execution_id: 'x', step: 1, agent_id: 'a', action: 'b' });
    assert.equal(seen.length, 0);
    await released;
    assert.deepEqual(seen.map((e) => e.type), ['step_started']);
  });
});

describe("a step's end is written while the next step works (journal store, audit riding it, as the server wires them)", function () {
  this.timeout(30_000);

  it('the journal write holding step N\'s end begins before step N+1 generates unless another write held the journal meanwhile (the end waits for the disk, not for a turn of the event loop); the final record rides the last one', async () => {
    // The store groups a tick's changes and writes them from a later turn of the event loop; the next
    // step's phases await only settled promises, so without a turn in between the whole next step ran
    // first while the disk was idle, and the end's write began only after it (measured: ~0.45 ms idle per
    // step on one run). A write already in flight is a good reason: the end goes out with the next one.
    const writes: Array<{ at: number; done: number; text: string }> = [];
    const append = AppendOnlyFile.prototype.append;
    AppendOnlyFile.prototype.append = function (this: AppendOnlyFile, buf: Buffer): Promise<number> {
      const w = { at: performance.now(), done: Infinity, text: buf.toString('utf8') };
      writes.push(w);
      return append.call(this, buf).finally(() => (w.done = performance.now()));
    };
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-step-overlap-'));
    const bench = await openBenchEngine(dir);
    try {
      const generated = new Map<string, number>();
      const researched = new Map<string, number>();
      const skill = (agentId: string, action: string): Skill => {
        const base = benchSkill(agentId, action);
        return {
          ...base,
          async research(ctx) {
            researched.set(`${ctx.request.executionId}:${ctx.request.step}`, performance.now());
            return base.research(ctx);
          },
          async generate(ctx) {
            generated.set(`${ctx.request.executionId}:${ctx.request.step}`, performance.now());
            // Work well above one write, so the write before a step's end is normally done when it ends.
            spin(2);
            return { kind: 'report', summary: `${agentId} done`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId } };
          },
        };
      };
      const submitter = fullSdlcSubmitter(bench.engine, skill);
      const late: string[] = [];
      for (let run = 0; run < 3; run++) {
        writes.length = 0;
        const { id, steps } = await submitter.submit(`run ${run}`);
        const ends = endsPerWrite(writes.map((w) => w.text), id);
        for (let n = 0; n + 1 < steps; n++) {
          const i = ends.findIndex((e) => e.steps.includes(n));
          const next = generated.get(`${id}:${n + 1}`);
          assert.ok(i >= 0 && next !== undefined, `step ${n}'s end was written and step ${n + 1} generated`);
          const write = writes[i]!.at;
          // Another write was in flight from step N's work to step N+1's start (a disk that held an fsync up):
          // step N's end goes out after it.
          const began = researched.get(`${id}:${n + 1}`)!;
          const busy = writes.some((w, j) => j !== i && w.at <= began && w.done >= generated.get(`${id}:${n}`)!);
          if (next < write && !busy) late.push(`run ${run}: step ${n}'s write began ${(write - next).toFixed(2)} ms after step ${n + 1} generated, the disk idle`);
        }
        // The execution's final record rides the last step's write (one serial write less per run).
        const last = ends.find((e) => e.steps.includes(steps - 1));
        assert.ok(last?.executionEnded, `run ${run}: the write of the last step's end also ends the execution (${ends.filter((e) => e.executionEnded).length} write(s) end it)`);
      }
      assert.deepEqual(late, []);
    } finally {
      AppendOnlyFile.prototype.append = append;
      await bench.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a run starts while its acceptance is written (journal store, as the server wires it)', function () {
  this.timeout(30_000);

  /** Runs `body` with the journal's append of a new execution's record (its acceptance) replaced by `acceptance`. */
  async function withAcceptance(acceptance: (write: () => Promise<number>, log: string[]) => Promise<number>, body: (bench: Awaited<ReturnType<typeof openBenchEngine>>, log: string[]) => Promise<void>): Promise<void> {
    const log: string[] = [];
    const append = AppendOnlyFile.prototype.append;
    AppendOnlyFile.prototype.append = function (this: AppendOnlyFile, buf: Buffer): Promise<number> {
      const accepts = buf.toString('utf8').split('\n').filter((l) => l.trim()).some((l) => ((JSON.parse(l) as { o?: unknown[][] }).o ?? []).some((op) =>
        op[0] === 'p' && op[1] === 'executions' && (op[2] as { request?: { prompt?: string } }).request?.prompt === 'accept me'));
      return accepts ? acceptance(() => append.call(this, buf), log) : append.call(this, buf);
    };
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-accept-overlap-'));
    const bench = await openBenchEngine(dir);
    try {
      bench.engine.bus.subscribe('engine.event', (e) => void log.push(`event ${(e as EngineEvent).type}`));
      const skill = (agentId: string, action: string): Skill => ({
        ...benchSkill(agentId, action),
        async generate(ctx) {
          log.push(`generate ${ctx.request.step}`);
          return { kind: 'report', summary: `${agentId} done`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId } };
        },
      });
      await fullSdlcSubmitter(bench.engine, skill).submit('warm-up');
      log.length = 0;
      await body(bench, log);
    } finally {
      AppendOnlyFile.prototype.append = append;
      await bench.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('the first step works while the acceptance write is in flight; nothing of the run is streamed before that write is done, and the 202 still waits for it', async () => {
    await withAcceptance(async (write, log) => {
      log.push('acceptance write begins');
      await new Promise((r) => setTimeout(r, 50)); // a slow disk: the first step's work fits in this wait
      const n = await write();
      log.push('acceptance write done');
      return n;
    }, async (bench, log) => {
      const rec = await bench.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'accept me' } }, { keyId: null, callbackSecret: null });
      log.push('accepted');
      await settledRun(bench, rec.id);
      const at = (line: string) => log.indexOf(line);
      assert.ok(at('acceptance write begins') >= 0 && at('acceptance write done') > at('acceptance write begins'), log.join('\n'));
      assert.ok(at('generate 0') > at('acceptance write begins') && at('generate 0') < at('acceptance write done'), `step 0 generates during the acceptance write:\n${log.join('\n')}`);
      const firstEvent = log.findIndex((l) => l.startsWith('event '));
      assert.ok(firstEvent > at('acceptance write done'), `no event before the acceptance is durable:\n${log.join('\n')}`);
      assert.equal(log[firstEvent], 'event execution_started', 'the stream starts with execution_started, in order');
      assert.ok(at('accepted') > at('acceptance write done'), 'invokeWorkflow (the 202) resolves after the write');
      assert.equal(bench.engine.executions.get(rec.id).status, 'completed');
    });
  });

  it('a run whose acceptance write fails is refused and goes no further than its first step: no step ends, the run does not end', async () => {
    // The disk fails once (the store retries what a failed write held with its next write, which succeeds).
    let failures = 0;
    await withAcceptance(async (write) => {
      if (failures++ === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return write();
    }, async (bench, log) => {
      await assert.rejects(bench.engine.executions.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'accept me' } }, { keyId: null, callbackSecret: null }), /no space left|ENOSPC/);
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(!log.includes('generate 1'), `the run stopped:\n${log.join('\n')}`);
      assert.deepEqual(log.filter((l) => l === 'event step_completed' || l === 'event execution_completed' || l === 'event execution_failed'), [], log.join('\n'));
    });
  });
});

/** Resolves once the execution has ended. */
async function settledRun(bench: Awaited<ReturnType<typeof openBenchEngine>>, id: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const status = bench.engine.executions.get(id).status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${id} did not end`);
}

/** Whether a journal line ends an execution (an update setting its status to completed or failed). */
/**
 * Per journal append, which steps of execution `id` it ends and whether it ends the execution: the
 * execution's record replayed as the journal carries it (whole puts and deltas, record-delta.ts).
 */
function endsPerWrite(texts: string[], id: string): Array<{ steps: number[]; executionEnded: boolean }> {
  let rec: Record<string, unknown> | null = null;
  const ended = (r: Record<string, unknown> | null): Set<number> =>
    new Set(((r?.['steps'] ?? []) as StepRecord[]).filter((st) => st.status === 'completed' || st.status === 'failed').map((st) => st.step));
  return texts.map((text) => {
    const before = ended(rec);
    const statusBefore = rec?.['status'];
    for (const line of text.split('\n').filter((l) => l.trim())) {
      for (const op of (JSON.parse(line) as { o?: unknown[][] }).o ?? []) {
        if (op[1] !== 'executions') continue;
        if (op[0] === 'p' && (op[2] as { id: string }).id === id) rec = structuredClone(op[2] as Record<string, unknown>);
        if (op[0] === 'u' && op[2] === id && rec) {
          const out = applyDelta(rec, op[3] as DeltaChange[]);
          if (typeof out === 'string') throw new Error(out);
          rec = out;
        }
      }
    }
    const steps = [...ended(rec)].filter((n) => !before.has(n));
    const status = rec?.['status'];
    return { steps, executionEnded: status !== statusBefore && (status === 'completed' || status === 'failed') };
  });
}
