// Bundles the @vscode/test-electron runner and the in-editor mocha suite into out/electron/ (git-ignored):
// the extension host cannot load TypeScript. Run by `npm run test:electron` before out/electron/run.js.
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const out = path.join(root, 'out', 'electron');
const suite = path.join(here, 'suite');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  // vscode is the extension host's own module; mocha and @vscode/test-electron load from node_modules.
  packages: 'external',
  absWorkingDir: root,
};

rmSync(out, { recursive: true, force: true });
await Promise.all([
  esbuild.build({ ...common, entryPoints: [path.join(here, 'run.ts')], outfile: path.join(out, 'run.js') }),
  esbuild.build({
    ...common,
    entryPoints: readdirSync(suite).filter((f) => f === 'index.ts' || f.endsWith('.test.ts')).map((f) => path.join(suite, f)),
    outdir: path.join(out, 'suite'),
  }),
]);
