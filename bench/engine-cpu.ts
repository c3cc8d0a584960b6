/**
 * The engine's own CPU per RIGOR step: a full step (five phases, 21 gates, audit records, ACMF counters,
 * events, durable writes on the journal store with the audit trail riding it) around a skill that does
 * nothing, so the figure is the engine's cost alone. CPU time (user + system, all threads) is steadier
 * than wall time on a shared machine. With `--against <dir>` the same steps run on the engine of
 * another checkout (e.g. a worktree of main) in the same process, rounds alternating, and the ratio is
 * printed: this tree / the other.
 * With `--workflows` each unit of work is a whole 9-step full-sdlc workflow run through the execution
 * service as bench/langgraph.ts runs it (checkpoints, event log, the execution record), skills that do
 * nothing: `--lanes` concurrent workflows, figures per step; wall time per step is printed too.
 * With `--skill-ms N` each workflow skill spins N ms of CPU (bench/langgraph.ts uses 1): the engine then
 * works around a busy main thread as it does there, and the figures printed are beyond the skills' time.
 * Run: node --import tsx bench/engine-cpu.ts [--workflows [--skill-ms 1]] [--lanes 32] [--steps 4000] [--rounds 8] [--against ../main]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fullSdlcSubmitter } from './workflow-submit';
import { spin } from './spin';

interface Tree {
  name: string;
  /** CPU ms per step and wall ms per step. */
  run(steps: number, lanes: number): Promise<{ cpu: number; wall: number }>;
  close(): Promise<void>;
}

async function openTree(root: string, name: string, workflows: boolean, skillMs: number): Promise<Tree> {
  return workflows ? openWorkflowTree(root, name, skillMs) : openStepTree(root, name);
}

async function openStepTree(root: string, name: string): Promise<Tree> {
  const m = (p: string) => import(path.join(root, p)) as Promise<Record<string, any>>;
  const { openAuditTrail } = await m('server/src/audit/jsonl-audit-trail.ts');
  const { DEFAULT_CONFIG } = await m('server/src/config/schema.ts');
  const { createEngine } = await m('server/src/engine/index.ts');
  const { reviewChecks } = await m('server/src/skills/review-checks.ts');
  const { openStore, storeFilePath } = await m('server/src/store/lowdb-store.ts');
  const { storeAnchorPort } = await m('server/src/store/store-health.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-cpu-'));
  const store = await openStore({ file: storeFilePath(dir) });
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), ...(store.auditJournal ? { journal: store.auditJournal() } : {}) });
  const skill = {
    agentId: 'review-ai', action: 'review',
    async research() {
      return { items: [{ source: 'bench', detail: 'input', weight: 2 }], constraints: [], pathsRead: [] };
    },
    propose: () => [],
    async generate(ctx: { request: { goal: { id: string } } }) {
      return { kind: 'report', summary: 'bench', goalRef: ctx.request.goal.id, confidence: 0.9, data: { findings: [{ file: 'src/a.ts', line: 3, message: 'bench' }] } };
    },
  };
  const engine = createEngine({ store, audit, config: DEFAULT_CONFIG, checks: reviewChecks, skills: [skill], log: () => {} });
  let n = 0;
  const request = () => ({
    executionId: `exec_bench${n++}`, step: 0, agentId: 'review-ai', action: 'review', goal: { id: 'goal_bench', prompt: 'bench' },
    input: {}, scope: 'mvp', tier: 'core', previous: [], workspace: dir,
  });
  return {
    name,
    async run(steps, lanes) {
      let left = steps;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const lane = async () => {
        while (left-- > 0) await engine.rigor.runStep(request());
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      const c = process.cpuUsage(cpu0);
      return { cpu: (c.user + c.system) / 1000 / steps, wall: (performance.now() - t0) / steps };
    },
    async close() {
      await audit.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whole full-sdlc workflows through the execution service, wired as bench/langgraph.ts wires Cadre. */
async function openWorkflowTree(root: string, name: string, skillMs: number): Promise<Tree> {
  const m = (p: string) => import(path.join(root, p)) as Promise<Record<string, any>>;
  const { openAuditTrail } = await m('server/src/audit/jsonl-audit-trail.ts');
  const { parseConfig } = await m('server/src/config/load.ts');
  const { createEngine } = await m('server/src/engine/index.ts');
  const { reviewChecks } = await m('server/src/skills/review-checks.ts');
  const { JsonlEventLog } = await m('server/src/store/jsonl-event-log.ts');
  const { openStore, storeFilePath } = await m('server/src/store/lowdb-store.ts');
  const { storeAnchorPort } = await m('server/src/store/store-health.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-bench-cpu-'));
  const store = await openStore({ file: storeFilePath(dir) });
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), anchor: storeAnchorPort(store), ...(store.auditJournal ? { journal: store.auditJournal() } : {}) });
  const eventLog = await JsonlEventLog.open(path.join(dir, 'events'));
  const config = parseConfig('defaults:\n  acmf_mode: AUTONOMOUS\n', 'bench.yaml', {});
  const engine = createEngine({ store, audit, eventLog, config, checks: reviewChecks, skills: [], log: () => {} });
  const skill = (agentId: string, action: string) => ({
    agentId, action,
    async research() {
      return { items: [{ source: 'bench', detail: 'goal', weight: 2 }], constraints: [], pathsRead: [] };
    },
    propose: () => [],
    async generate(ctx: { request: { goal: { id: string } } }) {
      if (skillMs > 0) spin(skillMs);
      return { kind: 'report', summary: `${agentId} done`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { agentId } };
    },
  });
  const exec = engine.executions;
  let steps = 9;
  const submitter = fullSdlcSubmitter(engine, skill);
  const submit = async (prompt: string): Promise<void> => {
    steps = (await submitter.submit(prompt)).steps;
  };
  await submit('warm-up');
  let n = 0;
  return {
    name,
    async run(stepCount, lanes) {
      const runs = Math.max(1, Math.round(stepCount / steps));
      let left = runs;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const lane = async () => {
        while (left-- > 0) await submit(`run ${n++}`);
      };
      await Promise.all(Array.from({ length: Math.min(lanes, runs) }, lane));
      const c = process.cpuUsage(cpu0);
      return { cpu: (c.user + c.system) / 1000 / (runs * steps) - skillMs, wall: (performance.now() - t0) / (runs * steps) - skillMs };
    },
    async close() {
      if (submitter.refusals() > 0) console.log(`engine-cpu: ${name}: ${submitter.refusals()} submission(s) refused with ERR_OVERLOADED (retried after Retry-After)`);
      await exec.close();
      await eventLog.flush();
      await audit.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const lanes = Number(flag('--lanes') ?? 32);
  const steps = Number(flag('--steps') ?? 4000);
  const rounds = Number(flag('--rounds') ?? 8);
  const against = flag('--against');
  const workflows = process.argv.includes('--workflows');
  const skillMs = Number(flag('--skill-ms') ?? 0);
  const trees = [await openTree(path.resolve(__dirname, '..'), 'this tree', workflows, skillMs)];
  if (against) trees.push(await openTree(path.resolve(against), against, workflows, skillMs));
  for (const t of trees) await t.run(200, lanes); // warm-up (JIT)
  const per = Math.ceil(steps / rounds);
  const ms = trees.map(() => [] as number[]);
  const wall = trees.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    // Alternating order, so a burst of load from other processes hits both alike.
    const order = r % 2 === 0 ? trees.map((_, i) => i) : trees.map((_, i) => i).reverse();
    for (const i of order) {
      const got = await trees[i]!.run(per, lanes);
      ms[i]!.push(got.cpu);
      wall[i]!.push(got.wall);
    }
  }
  const unit = workflows ? `${lanes} concurrent full-sdlc workflows${skillMs > 0 ? `, skills of ${skillMs} ms (not counted)` : ''}` : `${lanes} lanes`;
  trees.forEach((t, i) => console.log(`engine-cpu: ${t.name}: ${median(ms[i]!).toFixed(3)} ms CPU per step, wall ${median(wall[i]!).toFixed(3)} ms per step (medians of ${rounds} rounds of ${per} steps, ${unit}; min CPU ${Math.min(...ms[i]!).toFixed(3)})`));
  if (trees.length === 2) console.log(`engine-cpu: this tree / ${against}: CPU ${(median(ms[0]!) / median(ms[1]!)).toFixed(2)}x, wall ${(median(wall[0]!) / median(wall[1]!)).toFixed(2)}x`);
  for (const t of trees) await t.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
