/**
 * The engine's own CPU per RIGOR step: a full step (five phases, 21 gates, audit records, ACMF counters,
 * events, durable writes on the journal store with the audit trail riding it) around a skill that does
 * nothing, so the figure is the engine's cost alone. CPU time (user + system, all threads) is steadier
 * than wall time on a shared machine. With `--against <dir>` the same steps run on the engine of
 * another checkout (e.g. a worktree of main) in the same process, rounds alternating, and the ratio is
 * printed: this tree / the other.
 * Run: node --import tsx bench/engine-cpu.ts [--lanes 32] [--steps 4000] [--rounds 8] [--against ../main]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

interface Tree {
  name: string;
  run(steps: number, lanes: number): Promise<number>;
  close(): Promise<void>;
}

async function openTree(root: string, name: string): Promise<Tree> {
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
      const lane = async () => {
        while (left-- > 0) await engine.rigor.runStep(request());
      };
      await Promise.all(Array.from({ length: lanes }, lane));
      const c = process.cpuUsage(cpu0);
      return (c.user + c.system) / 1000 / steps;
    },
    async close() {
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
  const trees = [await openTree(path.resolve(__dirname, '..'), 'this tree')];
  if (against) trees.push(await openTree(path.resolve(against), against));
  for (const t of trees) await t.run(200, lanes); // warm-up (JIT)
  const per = Math.ceil(steps / rounds);
  const ms = trees.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    // Alternating order, so a burst of load from other processes hits both alike.
    const order = r % 2 === 0 ? trees.map((_, i) => i) : trees.map((_, i) => i).reverse();
    for (const i of order) ms[i]!.push(await trees[i]!.run(per, lanes));
  }
  trees.forEach((t, i) => console.log(`engine-cpu: ${t.name}: ${median(ms[i]!).toFixed(3)} ms CPU per step (median of ${rounds} rounds of ${per} steps, ${lanes} lanes; min ${Math.min(...ms[i]!).toFixed(3)})`));
  if (trees.length === 2) console.log(`engine-cpu: this tree / ${against}: ${(median(ms[0]!) / median(ms[1]!)).toFixed(2)}x`);
  for (const t of trees) await t.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
