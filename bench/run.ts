/**
 * Runs every benchmark in turn; each prints its own ratio against a baseline of the same run.
 * Run: npm run bench
 */
import { runRigorBench } from './rigor';
import { runStoreBench } from './store';

async function main(): Promise<void> {
  const results: Array<{ name: string; ok: boolean }> = [];
  const store = await runStoreBench();
  results.push({ name: 'store', ok: store.ok });
  await runRigorBench({ lanes: 1, steps: 500 });
  const rigor = await runRigorBench({ lanes: 32 });
  results.push({ name: 'rigor', ok: rigor.ok });
  console.log(results.map((r) => `${r.name}: ${r.ok ? 'goal met' : 'goal NOT met'}`).join('; '));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
