/**
 * Engine overhead of a full RIGOR step (five phases, 21 gates, audit records, events) around a skill
 * whose work takes 1 ms, as a ratio to the skill's own time measured in the same run.
 * Run: node --import tsx bench/rigor.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail } from '../server/src/audit/jsonl-audit-trail';
import { DEFAULT_CONFIG } from '../server/src/config/schema';
import { createEngine } from '../server/src/engine/index';
import type { Skill, StepRequest } from '../server/src/engine/rigor/skill';
import { reviewChecks } from '../server/src/skills/review-checks';
import { openStore, storeFilePath } from '../server/src/store/lowdb-store';
import { storeAnchorPort } from '../server/src/store/store-health';
import { describeFloor, measureFsyncFloor, type FsyncFloor } from './fsync-floor';
import { spin } from './spin';

const SKILL_MS = 1;

/** A skill that spends 1 ms of CPU in Generate and nearly nothing elsewhere. */
const skill: Skill = {
  agentId: 'review-ai',
  action: 'review',
  async research() {
    return { items: [{ source: 'bench', detail: 'input', weight: 2 }], constraints: [], pathsRead: [] };
  },
  propose() {
    return [];
  },
  async generate(ctx) {
    spin(SKILL_MS);
    return { kind: 'report', summary: 'bench', goalRef: ctx.request.goal.id, confidence: 0.9, data: {} };
  },
};

export interface RigorBenchResult {
  steps: number;
  lanes: number;
  /** CPU (all threads, user + system) per engine step, ms: includes the skill's own 1 ms. */
  cpuMsPerStep: number;
  skillMsPerStep: number;
  engineMsPerStep: number;
  overheadRatio: number;
  stepsPerSecond: number;
  /** Group commits per step (below 1: concurrent steps shared them). */
  auditFsyncsPerStep: number;
  storeWritesPerStep: number;
  /** The cost of one append + fsync on the same disk, measured in this run. */
  floor: FsyncFloor;
  ok: boolean;
  summary: string;
}

export async function runRigorBench(opts: { steps?: number; lanes?: number; log?: (l: string) => void } = {}): Promise<RigorBenchResult> {
  const steps = opts.steps ?? 2000;
  const lanes = opts.lanes ?? 32;
  const log = opts.log ?? ((l: string) => console.log(l));
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-rigor-'));
  const store = await openStore({ file: storeFilePath(dir) });
  // As the server wires them (host/runtime.ts): the trail rides the store's journal (one fsync per group
  // commit for audit records, counters and checkpoints), with its anchor in the store.
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), ...(store.auditJournal ? { journal: store.auditJournal() } : {}) });
  const engine = createEngine({ store, audit, config: DEFAULT_CONFIG, checks: reviewChecks, skills: [skill], log: () => {} });
  const request = (i: number): StepRequest => ({
    executionId: `exec_bench${i}`, step: 0, agentId: 'review-ai', action: 'review', goal: { id: 'goal_bench', prompt: 'bench' },
    input: {}, scope: 'mvp', tier: 'core', previous: [], workspace: dir,
  });
  const ctx = { request: request(0), signal: new AbortController().signal, progress: () => {}, allowed: () => false, once: <T>(_k: string, f: () => Promise<T>) => f() };

  // Warm-up of both paths, then alternate rounds so machine noise hits both alike.
  for (let i = 0; i < 50; i++) await engine.rigor.runStep(request(i));
  let skillNs = 0n;
  let engineNs = 0n;
  let engineCpuUs = 0;
  // Durable writes per step: audit fsyncs and store writes (group commits) during the measured rounds.
  const audit0 = audit.stats().fsyncs;
  const store0 = store.stats().writes;
  const rounds = 10;
  const per = Math.ceil(steps / rounds);
  for (let r = 0; r < rounds; r++) {
    let t = process.hrtime.bigint();
    for (let i = 0; i < per; i++) {
      const ev = await skill.research(ctx);
      await skill.propose(ctx, ev);
      await skill.generate(ctx, ev);
    }
    skillNs += process.hrtime.bigint() - t;
    t = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    let next = 0;
    const lane = async () => {
      while (next < per) await engine.rigor.runStep(request(r * per + next++));
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    engineNs += process.hrtime.bigint() - t;
    const c = process.cpuUsage(cpu0);
    engineCpuUs += c.user + c.system;
  }
  const auditFsyncs = audit.stats().fsyncs - audit0;
  const storeWrites = store.stats().writes - store0;
  await audit.close();
  await store.close();
  const floor = await measureFsyncFloor(dir);
  rmSync(dir, { recursive: true, force: true });

  const n = per * rounds;
  const skillMs = Number(skillNs) / 1e6 / n;
  const engineMs = Number(engineNs) / 1e6 / n;
  const overhead = (engineMs - skillMs) / skillMs;
  const result = {
    steps: n, lanes, auditFsyncsPerStep: auditFsyncs / n, storeWritesPerStep: storeWrites / n, cpuMsPerStep: engineCpuUs / 1000 / n, skillMsPerStep: skillMs, engineMsPerStep: engineMs, overheadRatio: overhead, stepsPerSecond: 1000 / engineMs, floor, ok: overhead < 0.05,
    summary: `rigor: ${n} steps on ${lanes} concurrent lane(s), skill ${skillMs.toFixed(3)} ms, full step ${engineMs.toFixed(3)} ms, overhead ${(engineMs - skillMs).toFixed(3)} ms = ${(overhead * 100).toFixed(1)}% of skill time (goal < 5%), ${(1000 / engineMs).toFixed(0)} steps/s, CPU ${(engineCpuUs / 1000 / n).toFixed(3)} ms/step, audit fsyncs ${(auditFsyncs / n).toFixed(2)} + store writes ${(storeWrites / n).toFixed(2)} per step; floor: ${describeFloor(floor)}`,
  };
  log(result.summary);
  return result;
}

if (require.main === module) {
  // One lane shows a step's latency (it waits for its own durable writes); 32 lanes show the
  // throughput cost when concurrent steps share group commits, the server's normal situation.
  (async () => {
    await runRigorBench({ lanes: 1, steps: 500 });
    const r = await runRigorBench({ lanes: 32 });
    process.exit(r.ok ? 0 : 1);
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
