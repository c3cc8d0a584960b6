/**
 * 32 concurrent full-sdlc runs (--runs N) with skills whose work takes 1 ms of CPU: all must complete; engine
 * overhead per step as a ratio to the skills' own time (measured in the same run); peak memory per
 * running workflow. Run: node --import tsx bench/orchestration.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../server/src/engine/index';
import type { Skill } from '../server/src/engine/rigor/skill';
import { benchSkill, openBenchEngine } from './bench-engine';
import { describeFloor, measureFsyncFloor, type FsyncFloor } from './fsync-floor';
import { spin } from './spin';
import { standInForEveryAction } from './workflow-submit';

const SKILL_MS = 1;

const skill = (agentId: string, action: string): Skill => benchSkill(agentId, action, () => spin(SKILL_MS));

export interface OrchestrationBenchResult {
  runs: number;
  completed: number;
  steps: number;
  wallMs: number;
  skillMs: number;
  overheadRatio: number;
  peakMemoryPerRunKb: number;
  /** The cost of one append + fsync on the same disk, measured in this run. */
  floor: FsyncFloor;
  ok: boolean;
  summary: string;
}

export async function runOrchestrationBench(opts: { runs?: number; log?: (l: string) => void; deadlineMs?: number } = {}): Promise<OrchestrationBenchResult> {
  // 32 concurrent runs: the goal is stated at 32 lanes (100 overrun the fleet's queue bound, ERR_OVERLOADED).
  const runs = opts.runs ?? 32;
  const log = opts.log ?? ((l: string) => console.log(l));
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-orch-'));
  // As the server wires them (bench-engine.ts): the trail rides the store's journal, with its anchor in the store.
  const { engine, store, audit, close } = await openBenchEngine(dir);
  // A refused submission (ERR_OVERLOADED) or a failure rejects; the engine, the sampler and the directory go either way.
  let sampler: NodeJS.Timeout | undefined;
  let closed = false;
  try {
    // Every step action the plan resolves to gets the stand-in skill.
    const exec = engine.executions;
    standInForEveryAction(engine.skills, skill);
    const probe = await exec.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: 'warm-up' } }, { keyId: null, callbackSecret: null });
    await waitAll(exec, [probe.id]);

    // Baseline: the skills' own time for the same number of steps, in the same process.
    const steps = runs * probe.steps.length;
    let t = process.hrtime.bigint();
    for (let i = 0; i < steps; i++) spin(SKILL_MS);
    const skillMs = Number(process.hrtime.bigint() - t) / 1e6;

    global.gc?.();
    const base = process.memoryUsage();
    let peak = base.heapUsed + base.external;
    sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.heapUsed + m.external);
    }, 5);
    const audit0 = audit.stats().fsyncs;
    const store0 = store.stats().writes;
    t = process.hrtime.bigint();
    const ids: string[] = [];
    for (let i = 0; i < runs; i++) ids.push((await exec.invokeWorkflow({ capability: 'BUILD', workflow: 'full-sdlc', input: { prompt: `run ${i}` } }, { keyId: null, callbackSecret: null })).id);
    const statuses = await waitAll(exec, ids, opts.deadlineMs);
    const wallMs = Number(process.hrtime.bigint() - t) / 1e6;
    clearInterval(sampler);
    const completed = statuses.filter((s) => s === 'completed').length;
    const auditFsyncs = audit.stats().fsyncs - audit0;
    const storeWrites = store.stats().writes - store0;
    closed = true;
    await close();
    const floor = await measureFsyncFloor(dir);

    const overhead = (wallMs - skillMs) / skillMs;
    const perRunKb = (peak - base.heapUsed - base.external) / runs / 1024;
    const result = {
      runs, completed, steps, wallMs, skillMs, overheadRatio: overhead, peakMemoryPerRunKb: perRunKb, floor, ok: completed === runs && overhead < 0.1,
      summary: `orchestration: ${completed}/${runs} full-sdlc runs completed, ${steps} steps in ${wallMs.toFixed(0)} ms vs ${skillMs.toFixed(0)} ms of skill work: overhead ${((wallMs - skillMs) / steps).toFixed(3)} ms = ${(overhead * 100).toFixed(0)}% per step (goal < 10%), peak ${perRunKb.toFixed(0)} KB per running workflow, audit fsyncs ${(auditFsyncs / steps).toFixed(2)} + store writes ${(storeWrites / steps).toFixed(2)} per step; floor: ${describeFloor(floor)}`,
    };
    log(result.summary);
    return result;
  } finally {
    clearInterval(sampler);
    if (!closed) await close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The runs' end statuses once every one has ended and stopped running. A run still going after
 * `deadlineMs` (the default burst ends in ~2 s here) is an error naming it, not a wait forever: the
 * suite runs this bench as a test (burst-admission.test.ts) and mocha runs without --exit.
 */
async function waitAll(exec: Engine['executions'], ids: string[], deadlineMs = 60_000): Promise<string[]> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (Date.now() > until) {
      const left = ids.filter((id) => exec.isRunning(id) || !['completed', 'failed', 'cancelled'].includes(exec.get(id).status));
      throw new Error(`orchestration: ${left.length} of ${ids.length} run(s) not ended after ${deadlineMs / 1000} s: ${left.slice(0, 5).map((id) => `${id} ${exec.get(id).status} at ${exec.get(id).currentAgent ?? '-'}`).join(', ')}`);
    }
    const st = ids.map((id) => exec.get(id).status);
    if (st.every((s) => s === 'completed' || s === 'failed' || s === 'cancelled')) {
      if (!ids.some((id) => exec.isRunning(id))) return st;
      await new Promise((r) => setTimeout(r, 2));
      continue;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

if (require.main === module) {
  const i = process.argv.indexOf('--runs');
  runOrchestrationBench(i > 0 ? { runs: Number(process.argv[i + 1]) } : {}).then((r) => process.exit(r.ok ? 0 : 1), (err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
