/**
 * bench/langgraph.ts run as `npm run bench` runs it (bench/bundled.mjs: Cadre's modules bundled as
 * dist/server.js is), at a tiny size: it must build, run Cadre against each LangGraph variant at both concurrencies and print
 * its ratios, whatever they are (the verdict is a benchmark's, never asserted here: no absolute time and no
 * ratio in a test). A bench that no longer runs is what this catches.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');

describe('bench: bench/langgraph.ts through bench/bundled.mjs (smoke run)', function () {
  this.timeout(120_000);

  it('bundles Cadre as the server ships it, runs Cadre against each of the three LangGraph variants at 32 and 1, and prints the paired ratio', () => {
    const r = spawnSync(process.execPath, ['bench/bundled.mjs', 'bench/langgraph.ts', '--runs32', '4', '--runs1', '4', '--rounds', '1', '--block1', '2'], { cwd: root, encoding: 'utf8' });
    // 0: goal met, 1: not met (either is a result at this size); 2 or a signal: the bench broke.
    assert.ok(r.status === 0 || r.status === 1, `exit ${String(r.status)} ${String(r.signal)}\n${r.stdout}\n${r.stderr}`);
    const out = r.stdout;
    assert.match(out, /^langgraph: Cadre's code bundled as the server ships it \(bench\/bundled\.mjs\)$/m);
    for (const concurrency of ['32', ' 1']) {
      const rows = out.split('\n').filter((l) => l.startsWith(`langgraph: ${concurrency} concurrent, 4 runs of 9 steps: `));
      // Cadre against each of the three LangGraph variants, a pass each: six rows.
      assert.equal(rows.length, 6, `Cadre and a LangGraph variant per pass at ${concurrency.trim()} concurrent:\n${out}`);
      for (const variant of ['durability sync)', 'durability async)', 'durability sync, synchronous=FULL)']) {
        assert.ok(rows.some((l) => l.endsWith(`LangGraph (SqliteSaver, ${variant}`)), `LangGraph (${variant} at ${concurrency.trim()}:\n${out}`);
        assert.ok(rows.some((l) => l.includes('Cadre (RIGOR steps, journal store + audit trail + event log, durable checkpoints)') && l.endsWith(`[against LangGraph (SqliteSaver, ${variant}]`)), `Cadre against LangGraph (${variant}:\n${out}`);
      }
    }
    // Ratios of 4 runs can be anything, even negative (an overhead within the noise of the skills' own time).
    assert.match(out, /per-step overhead at 1 concurrent: \S+x \(goal <= 1\); paired blocks of 2 runs: median \S+x, middle half \S+x-\S+x \(2 blocks\)/);
  });
});
