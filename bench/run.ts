/**
 * Runs every benchmark in turn; each prints its own ratio against a baseline of the same run.
 * Run: npm run bench (the HTTP ones start the built server: npm run build first; the extension one
 * makes its own production build in a temp directory)
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { runCodeAnalysisBench } from './code-analysis';
import { runExtensionBench } from './extension';
import { runGrowthBench } from './growth';
import { runHttpBench } from './http';
import { runHttpFrameworkBench } from './http-framework';
import { runMemoryBench } from './memory';
import { runSseFanoutBench, runTaskAckBench } from './http-engine';
import { runOrchestrationBench } from './orchestration';
import { runRigorBench } from './rigor';
import { runSoakBench } from './soak';
import { runStoreBench } from './store';

async function main(): Promise<void> {
  const goals: Array<{ name: string; ok: boolean }> = [];
  goals.push({ name: 'store (group commit >= 20x)', ok: (await runStoreBench()).ok });
  goals.push({ name: 'code analysis (5,000-line file within 3x of parsing it)', ok: runCodeAnalysisBench().ok });
  await runRigorBench({ lanes: 1, steps: 500 });
  goals.push({ name: 'rigor (overhead < 5%)', ok: (await runRigorBench({ lanes: 32 })).ok });
  goals.push({ name: 'orchestration (overhead < 10%)', ok: (await runOrchestrationBench()).ok });
  // Cadre's code bundled as the server ships it (bench/bundled.mjs), in a child process.
  goals.push({ name: 'langgraph (Cadre per-step overhead <= LangGraph sqlite, 32 and 1 concurrent)', ok: spawnSync(process.execPath, [path.join(__dirname, 'bundled.mjs'), path.join(__dirname, 'langgraph.ts')], { stdio: 'inherit' }).status === 0 });
  goals.push({ name: 'growth (task ack p50 at 100k / 1k executions < 1.5x, RSS under bound)', ok: (await runGrowthBench()).ok });
  const http = await runHttpBench();
  goals.push({ name: 'http (authenticated read >= 0.85 of bare)', ok: http.ok });
  // The HTTP framework decision (docs/decisions.md): Cadre's door against fastify, same routes; no goal, a record.
  await runHttpFrameworkBench();
  await runTaskAckBench();
  goals.push({ name: 'sse (p99 < 50 ms)', ok: (await runSseFanoutBench()).ok });
  goals.push({ name: 'memory (default warm pool < 250 MB, < 20 MB per additional warm agent)', ok: (await runMemoryBench()).ok });
  goals.push({ name: 'soak (verb routing completes more per minute and needs a person less often than capabilities-only)', ok: (await runSoakBench()).ok });
  const extension = await runExtensionBench({ log: (line) => console.log(line) });
  console.log(extension.summary);
  goals.push({ name: 'extension (client < 300 KB minified)', ok: extension.clientOk });
  goals.push({ name: 'extension (server spawn to ready < 10x a bare node start)', ok: extension.startupOk });
  for (const g of goals) console.log(`${g.ok ? 'met    ' : 'NOT met'}  ${g.name}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
