/**
 * `npm run test:electron`: downloads VS Code with @vscode/test-electron (when this machine can reach
 * update.code.visualstudio.com) and runs the bundled mocha suite (out/electron/suite) inside its
 * extension host, with this repository as the extension under development and a fixture workspace
 * holding a planted secret. Needs `npm run build` (dist/) and `node test/electron/build.mjs` (out/electron/).
 *
 *   CADRE_VSCODE_VERSION     VS Code to download (default: stable; engines.vscode allows >= 1.100)
 *   CADRE_VSCODE_EXECUTABLE  an installed VS Code (Electron) binary to use instead of downloading one
 *
 * On Linux without a display, run it under `xvfb-run -a`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';

// Bundled to out/electron/run.js: the repository is two levels up.
const ROOT = path.resolve(__dirname, '../..');
const SUITE = path.join(__dirname, 'suite', 'index.js');

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
function plantedKey(): string {
  const alnum = 'ABCDEFGHJKLMNPQRSTUVWXYZ234567';
  let body = '';
  for (let i = 0; i < 16; i++) body += alnum[(i * 7 + 3) % alnum.length];
  return ['AK', 'IA', body].join('');
}

function fixtureWorkspace(scratch: string): string {
  const ws = path.join(scratch, 'workspace');
  mkdirSync(path.join(ws, '.vscode'), { recursive: true });
  writeFileSync(path.join(ws, 'config.js'), `const key = "${plantedKey()}";\nmodule.exports = { key };\n`);
  writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({
    // Any free port, and a data dir of its own: never the user's running Cadre.
    'cadre.server.port': 0,
    'cadre.server.dataDir': path.join(scratch, 'data'),
  }, null, 2));
  return ws;
}

function fail(message: string): never {
  console.error(`test:electron: ${message}`);
  process.exit(1);
}

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'client.js')) || !existsSync(path.join(ROOT, 'dist', 'server.js'))) fail('dist/ is missing: run `npm run build` first');
  if (!existsSync(SUITE)) fail('out/electron/suite/index.js is missing: run `node test/electron/build.mjs` first');

  let vscodeExecutablePath = process.env.CADRE_VSCODE_EXECUTABLE || undefined;
  if (!vscodeExecutablePath) {
    const version = process.env.CADRE_VSCODE_VERSION || 'stable';
    try {
      vscodeExecutablePath = await downloadAndUnzipVSCode({ version, timeout: 20_000 });
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      fail(`cannot download VS Code ${version} (${reason}); run it on a machine that reaches update.code.visualstudio.com or set CADRE_VSCODE_EXECUTABLE`);
    }
  }
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    console.warn('test:electron: no DISPLAY; if VS Code fails to start, run under `xvfb-run -a npm run test:electron`');
  }

  const scratch = mkdtempSync(path.join(tmpdir(), 'cadre-electron-'));
  try {
    const workspace = fixtureWorkspace(scratch);
    const code = await runTests({
      vscodeExecutablePath,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: SUITE,
      launchArgs: [workspace, '--disable-extensions', '--user-data-dir', path.join(scratch, 'user-data'), '--extensions-dir', path.join(scratch, 'extensions')],
      extensionTestsEnv: { CADRE_API_KEY: '' },
    });
    process.exitCode = code;
  } catch (err) {
    // Not fail(): process.exit would skip the clean-up below.
    console.error(`test:electron: the extension tests failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

void main();
