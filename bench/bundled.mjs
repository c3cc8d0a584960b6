/**
 * Runs a bench on Cadre's code as the server ships it: the bench file and the Cadre modules it imports
 * bundled by esbuild with the server bundle's options (esbuild.mjs: bundle, CommonJS, node20, not
 * minified), its packages (LangGraph, SQLite...) loaded from node_modules as they ship.
 *
 * Why: under `node --import tsx` every Cadre module is a per-file transform that reaches its imports
 * through export getters and wraps named functions in a keep-names helper (both visible in profiles:
 * `get` and `__name` frames on the step's hot path); dist/server.js has neither. A bench that compares
 * Cadre with another library (bench/langgraph.ts) must run the code users run, or it charges Cadre for
 * the bench's loader. Benches that compare two Cadre trees (engine-cpu.ts) can stay on tsx.
 *
 * The bundle is written next to the bench (bench/.bundled/, ignored by git, one file per process so two
 * runs do not overwrite each other's, removed afterwards) so that its packages resolve from the project's
 * node_modules, and run in a child process with no flags, as the extension starts the server (the bench's
 * own main guard then holds); the child's exit code is this script's (a build that fails is 2, as a bench
 * that crashes: 1 means only that a goal was not met).
 * Run: node bench/bundled.mjs bench/langgraph.ts [the bench's flags]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const entry = process.argv[2];
if (!entry || !entry.endsWith('.ts')) {
  console.error('usage: node bench/bundled.mjs bench/<name>.ts [flags]');
  process.exit(2);
}
const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '.bundled');
mkdirSync(dir, { recursive: true });
const outfile = path.join(dir, `${path.basename(entry, '.ts')}.${process.pid}.cjs`);
let status = 2;
try {
  await esbuild.build({
    entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', packages: 'external',
    logLevel: 'warning',
  });
  status = spawnSync(process.execPath, [outfile, ...process.argv.slice(3)], { stdio: 'inherit' }).status ?? 2;
} catch (err) {
  console.error(`bundled: cannot build ${entry}: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  rmSync(outfile, { force: true });
}
process.exit(status);
