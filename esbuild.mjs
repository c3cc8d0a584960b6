// One script, the bundles (client, server, worker, skills, scan worker, cli, webview) and the skills manifest. `--production` minifies, `--watch` rebuilds.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  metafile: true,
  legalComments: 'none',
};

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  { ...common, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] },
  { ...common, entryPoints: ['server/src/main.ts'], outfile: 'dist/server.js', platform: 'node', format: 'cjs', target: 'node20' },
  { ...common, entryPoints: ['server/src/workers/worker-main.ts'], outfile: 'dist/worker.js', platform: 'node', format: 'cjs', target: 'node20' },
  // The embedded skills, a skill module that the agents' workers load.
  { ...common, entryPoints: ['server/src/skills/builtin.ts'], outfile: 'dist/skills.js', platform: 'node', format: 'cjs', target: 'node20' },
  // The secret-scan worker's loop alone (scan-pool.ts starts it from next to the running bundle).
  { ...common, entryPoints: ['server/src/skills/security/scan-worker.ts'], outfile: 'dist/scan-worker.js', platform: 'node', format: 'cjs', target: 'node20' },
  { ...common, entryPoints: ['cli/src/main.ts'], outfile: 'dist/cli.js', platform: 'node', format: 'cjs', target: 'node20', banner: { js: '#!/usr/bin/env node' } },
  { ...common, entryPoints: ['webview/src/main.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife', target: 'es2022' },
];

mkdirSync('dist', { recursive: true });
if (watch) {
  for (const t of targets) await (await esbuild.context(t)).watch();
  console.log('[esbuild] watching');
} else {
  const results = await Promise.all(targets.map((t) => esbuild.build(t)));
  const sizes = {};
  results.forEach((r, i) => {
    for (const [file, out] of Object.entries(r.metafile.outputs)) if (file === targets[i].outfile) sizes[file] = out.bytes;
  });
  writeFileSync('dist/sizes.json', JSON.stringify(sizes, null, 2));
  // The embedded skills' listing, so the server starts no worker just to learn what skills.js holds.
  execFileSync(process.execPath, ['dist/worker.js', '--write-manifest', 'dist/skills.js'], { stdio: 'inherit' });
}
