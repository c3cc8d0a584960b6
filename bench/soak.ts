/**
 * The core-loop soak's mix as a benchmark (issue 10, "Measured"): the same CADRE_SOAK_TASKS (default
 * 100) tasks on the same fixture projects, sent twice in one run to two fresh servers:
 *  - verbs: as clients send them now (`review: ...`, `test: ...`: each verb runs its own agents);
 *  - baseline: the previous design's routing (capabilities only, no verb: every BUILD task runs the
 *    whole BUILD workflow, every SECURE task the SECURE workflow), approvals it asks denied at once
 *    (standing in for the person who would otherwise be paged).
 * Prints completed tasks per minute and the share that needed a person (asked an approval, ended
 * failed, or was refused) for both, and their ratio. Run: npm run build && npx tsx bench/soak.ts
 */
import { stop } from '../test/support/server-process';
import { startCoreLoopServer } from '../test/integration/core-loop/client';
import { buildProjects } from '../test/integration/core-loop/projects';
import { runMix, type MixReport, type Routing } from '../test/integration/core-loop/soak-mix';

export interface SoakSide { routing: Routing; tasks: number; completedPerMinute: number; neededPersonShare: number; report: MixReport }

function neededPerson(r: MixReport): number {
  return r.results.filter((x) => x.askedPerson || x.submitted !== 202 || x.status !== 'completed').length;
}

async function side(routing: Routing, tasks: number, log: (l: string) => void): Promise<SoakSide> {
  const p = buildProjects();
  const s = await startCoreLoopServer({ keys: 8 });
  try {
    const report = await runMix(s.client, p, { tasks, concurrency: 4, routing, denyApprovals: true, timeoutMs: 30_000 });
    const minutes = report.elapsedMs / 60_000;
    const out: SoakSide = { routing, tasks, completedPerMinute: report.completed / minutes, neededPersonShare: neededPerson(report) / tasks, report };
    log(`soak ${routing.padEnd(12)}: ${tasks} tasks in ${(report.elapsedMs / 1000).toFixed(1)} s: completed ${report.completed} (${out.completedPerMinute.toFixed(1)}/min), ` +
      `failed ${report.failed}, refused ${report.refused}, asked a person ${report.askedPerson}, left hanging ${report.hanging}; needed a person ${(out.neededPersonShare * 100).toFixed(1)}%`);
    return out;
  } finally {
    await stop(s.server);
  }
}

export async function runSoakBench(opts: { tasks?: number; log?: (l: string) => void } = {}): Promise<{ verbs: SoakSide; baseline: SoakSide; ok: boolean }> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const tasks = opts.tasks ?? Number(process.env['CADRE_SOAK_TASKS'] ?? 100);
  const baseline = await side('capabilities', tasks, log);
  const verbs = await side('verbs', tasks, log);
  const ratio = baseline.completedPerMinute > 0 ? verbs.completedPerMinute / baseline.completedPerMinute : Infinity;
  log(`soak: completed/min verbs ÷ baseline = ${Number.isFinite(ratio) ? ratio.toFixed(2) : '∞ (baseline completed none)'}; needed a person ${(baseline.neededPersonShare * 100).toFixed(1)}% -> ${(verbs.neededPersonShare * 100).toFixed(1)}%`);
  // Goal: more completed work per minute, and fewer tasks needing a person, than the old routing.
  return { verbs, baseline, ok: ratio > 1 && verbs.neededPersonShare < baseline.neededPersonShare };
}

if (require.main === module) {
  runSoakBench().then((r) => process.exit(r.ok ? 0 : 1)).catch((err: unknown) => {
    console.error(err);
    process.exit(2);
  });
}
