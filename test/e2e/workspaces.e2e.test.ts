/**
 * The extension in a real VS Code (code-server + headless Chromium, see test/e2e/README.md) with a
 * multi-root workspace: findings of files in both folders reach the Problems panel, readiness checks
 * the folder of the active file, and a settings
 * change while a review runs is applied to the running server: the review completes, the server
 * process is the same, nothing restarted; `cadre.trace.server` turns tracing on, without a restart.
 *
 * Skipped, with a line saying so, when the environment is not installed (run test/e2e/setup.sh);
 * CADRE_E2E_REQUIRED=1 turns the skip into a failure.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ARTIFACTS, commitAll, failureArtifacts, languageServers, launch, plantedKey, requireE2e, ROOT, session, waitForApi, type Vsc } from './support/session';

/** Two folders, each its own git repository with a planted key in a file of its own name, and the .code-workspace file. */
function multiRoot(): { file: string; alpha: string; beta: string; settings(s: Record<string, unknown>): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cadre-e2e-mr-'));
  const alpha = path.join(root, 'alpha');
  const beta = path.join(root, 'beta');
  for (const [dir, name] of [[alpha, 'alpha'], [beta, 'beta']] as const) {
    mkdirSync(path.join(dir, 'src'), { recursive: true });
    writeFileSync(path.join(dir, `${name}-keys.js`), `const key = "${plantedKey()}";\nmodule.exports = { key };\n`);
  }
  // review-ai has something real to find in alpha (review/eval).
  // Long enough (4,000 small functions) that the review is still running when the settings test changes the
  // tier: on a loaded machine a 9-line file was reviewed before the Executions view first showed it.
  const filler = Array.from({ length: 4000 }, (_, i) => `export function f${i}(x: number): number {\n  return x * ${i} + 1;\n}\n`).join('\n');
  writeFileSync(path.join(alpha, 'src', 'calc.ts'), 'export function calc(expr: string): number {\n  return eval(expr) as number;\n}\n\nexport function sum(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n\n' + filler);
  for (const dir of [alpha, beta]) commitAll(dir);
  const file = path.join(root, 'multi.code-workspace');
  const settings = (s: Record<string, unknown>) => writeFileSync(file, JSON.stringify({ folders: [{ path: 'alpha' }, { path: 'beta' }], settings: s }, null, 2));
  settings({ 'cadre.intelligence.tier': 'core' });
  return { file, alpha, beta, settings };
}

describe('extension in a real VS Code: multi-root workspace and live settings (e2e)', function () {
  this.timeout(240_000);
  let vsc: Vsc | null = null;
  let ws: ReturnType<typeof multiRoot>;
  const shot = (name: string) => vsc!.screenshot(path.join(ARTIFACTS, `${name}.png`));
  const servers = () => languageServers(vsc!);

  before(async function () {
    requireE2e(this);
    ({ vsc, ws } = await session('multi-root', async () => {
      const mr = multiRoot();
      return { ws: mr, vsc: await launch({ extensionPath: ROOT, workspaceFile: mr.file, viewport: { width: 1500, height: 1800 }, settings: { 'cadre.server.port': 0 } }) };
    }));
    await waitForApi(vsc!, undefined, 90_000);
  });
  failureArtifacts(() => vsc, 'mr-');

  it('shows findings on files of both folders in the Problems panel', async () => {
    await vsc!.openFile('alpha-keys.js');
    await vsc!.openFile('beta-keys.js');
    await vsc!.press('Control+Shift+M');
    const problems = await vsc!.waitUntil(async () => {
      const t = await vsc!.text('panel');
      return /alpha-keys\.js/.test(t) && /beta-keys\.js/.test(t) && (t.match(/aws-access-key-id/g) ?? []).length >= 2 ? t : null;
    }, { timeoutMs: 60_000, what: 'the planted keys of both folders in the Problems panel' });
    await shot('multi-root-problems');
    // Both folders are served by the one server.
    assert.equal(servers().length, 1, JSON.stringify(servers()));
    assert.match(problems, /aws-access-key-id/);
  });

  it('runs readiness on the folder of the active file: beta, with its untracked file, not the first folder; the Executions view names the folder', async () => {
    writeFileSync(path.join(ws.beta, 'beta-untracked.txt'), 'not committed\n');
    await vsc!.openFile('beta-keys.js');
    await vsc!.runCommand('Cadre: Run Readiness Checks');
    await vsc!.openView('Cadre');
    await vsc!.waitForText(/beta: (Ready to deploy|\d+ readiness checks? failing)/, { scope: 'sidebar', timeoutMs: 90_000 });
    await vsc!.waitForText('beta-untracked.txt', { scope: 'sidebar', timeoutMs: 10_000 });
    await shot('multi-root-readiness-beta');
    // The Executions view names the folder each execution worked on: deploy-ai's readiness ran on beta.
    await vsc!.waitForText(/deploy-ai readiness\s*\w+[^\n]*· rigor · beta/, { scope: 'sidebar', timeoutMs: 30_000 });
  });

  it('applies a tier change while a review runs: the review completes on the same server process', async () => {
    const [server] = servers();
    assert.ok(server, 'the language server process');
    await vsc!.openFile('calc.ts');
    await vsc!.runCommand('Cadre: Review with review-ai');
    await vsc!.openView('Cadre');
    const reviewRuns = async () => [...(await vsc!.text('sidebar')).matchAll(/review-ai review\s*(queued|running|waiting approval|completed|failed|cancelled)[^\n]*· rigor/g)].map((m) => m[1]!);
    const startedAs = await vsc!.waitUntil(async () => (await reviewRuns())[0] ?? null, { timeoutMs: 60_000, what: 'the review in the Executions tree' });
    // The workspace's settings change on disk, as an edit of the .code-workspace file would: VS Code reloads them.
    ws.settings({ 'cadre.intelligence.tier': 'ultra' });
    await vsc!.waitUntil(async () => /settings applied: intelligence ultra/.test(vsc!.outputChannel('Cadre')), { timeoutMs: 30_000, what: 'the server to apply the new tier' });
    const status = await vsc!.waitUntil(async () => {
      const s = (await reviewRuns())[0];
      return s && ['completed', 'failed', 'cancelled'].includes(s) ? s : null;
    }, { timeoutMs: 90_000, what: 'the review to end' });
    await shot('multi-root-settings-applied');
    const out = vsc!.outputChannel('Cadre');
    assert.ok(['queued', 'running'].includes(startedAs), `the review was still running when the tier changed (${startedAs})`);
    assert.equal(status, 'completed', `the review ended ${status}`);
    assert.deepEqual(servers().map((p) => p.pid), [server.pid], 'the same server process throughout');
    assert.doesNotMatch(out, /restarting the server|resumed \d+ execution/);
  });

  it('cadre.trace.server traces the messages with the server into the Cadre Trace channel, without a restart', async () => {
    const [server] = servers();
    assert.doesNotMatch(vsc!.outputChannel('Cadre Trace'), /cadre\/executions/, 'nothing is traced while the setting is off');
    ws.settings({ 'cadre.intelligence.tier': 'ultra', 'cadre.trace.server': 'messages' });
    // Ask the server something until the switch has reached the client (alpha's calc.ts is active: no folder pick).
    const traced = () => /Sending request 'cadre\/readiness/.test(vsc!.outputChannel('Cadre Trace'));
    await vsc!.waitUntil(async () => {
      if (traced()) return true;
      await vsc!.runCommand('Cadre: Run Readiness Checks');
      await vsc!.waitUntil(async () => traced() || null, { timeoutMs: 5_000, what: 'a trace' }).catch(() => {});
      return traced();
    }, { timeoutMs: 60_000, what: 'the traced cadre/readiness request in the Cadre Trace channel' });
    assert.deepEqual(servers().map((p) => p.pid), [server!.pid], 'the same server process');
  });
});
