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
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, ROOT } from '../support/server-process';

const E2E_HOME = process.env['VSCODE_E2E_HOME'] ?? path.join(homedir(), '.cache', 'vscode-e2e');
const ARTIFACTS = path.join(ROOT, 'test', 'e2e', 'artifacts');

interface Locator { first(): Locator; count(): Promise<number>; allInnerTexts(): Promise<string[]> }
interface Vsc {
  page: { locator(sel: string, o?: object): Locator };
  waitUntil<T>(fn: () => Promise<T | null | false | undefined>, o: { timeoutMs: number; what: string }): Promise<T>;
  statusBarItems(): Promise<Array<{ id: string; text: string; label: string }>>;
  openFile(rel: string): Promise<void>;
  openView(title: string): Promise<void>;
  runCommand(title: string, o?: { timeoutMs: number }): Promise<void>;
  press(keys: string): Promise<void>;
  text(scope?: string): Promise<string>;
  waitForText(text: string | RegExp, o: { timeoutMs: number; scope?: string }): Promise<string>;
  screenshot(file: string): Promise<void>;
  dumpDiagnostics(dir: string): Promise<void>;
  outputChannel(name: string): string;
  close(): Promise<void>;
  processTree(): Array<{ pid: number; ppid: number; cmd: string }>;
}

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
const plantedKey = () => ['AK', 'IA', 'QWERTYUIOPASDFGH'].join('');

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 'e2e', GIT_AUTHOR_EMAIL: 'e2e@example.com', GIT_COMMITTER_NAME: 'e2e', GIT_COMMITTER_EMAIL: 'e2e@example.com' } });
}

/** Two folders, each its own git repository with a planted key in a file of its own name, and the .code-workspace file. */
function multiRoot(): { file: string; alpha: string; beta: string; settings(s: Record<string, unknown>): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cadre-e2e-mr-'));
  const alpha = path.join(root, 'alpha');
  const beta = path.join(root, 'beta');
  for (const [dir, name] of [[alpha, 'alpha'], [beta, 'beta']] as const) {
    mkdirSync(path.join(dir, 'src'), { recursive: true });
    writeFileSync(path.join(dir, `${name}-keys.js`), `const key = "${plantedKey()}";\nmodule.exports = { key };\n`);
    git(dir, 'init', '-q', '-b', 'main');
  }
  // review-ai has something real to find in alpha (review/eval).
  writeFileSync(path.join(alpha, 'src', 'calc.ts'), 'export function calc(expr: string): number {\n  return eval(expr) as number;\n}\n\nexport function sum(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n');
  for (const dir of [alpha, beta]) {
    git(dir, 'add', '.');
    git(dir, 'commit', '-q', '-m', 'fixture');
  }
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
  const servers = () => vsc!.processTree().filter((p) => /dist\/server\.js/.test(p.cmd) && /--node-ipc/.test(p.cmd));

  before(async function () {
    if (!existsSync(path.join(E2E_HOME, 'env.json'))) {
      const line = `e2e skipped: the real-VS-Code environment is not installed (bash test/e2e/setup.sh installs it into ${E2E_HOME})`;
      if (process.env['CADRE_E2E_REQUIRED'] === '1') throw new Error(line.replace('skipped', 'required but'));
      console.log(`      ${line}`);
      this.skip();
    }
    ensureBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    ws = multiRoot();
    const harness = (await import(pathToFileURL(path.join(__dirname, 'harness.mjs')).href)) as { launch(o: object): Promise<Vsc> };
    vsc = await harness.launch({ extensionPath: ROOT, installMode: 'link', workspaceFile: ws.file, viewport: { width: 1500, height: 1800 }, settings: { 'cadre.server.port': 0 } });
    await vsc.waitUntil(async () => (await vsc!.statusBarItems()).some((t) => /Cadre: http:\/\/127\.0\.0\.1:\d+/.test(t.text)), { timeoutMs: 90_000, what: 'the Cadre status item to show the API URL' });
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && vsc) {
      const name = this.currentTest.title.replace(/\W+/g, '-').slice(0, 60);
      await vsc.screenshot(path.join(ARTIFACTS, `FAILED-mr-${name}.png`)).catch(() => {});
      await Promise.resolve().then(() => writeFileSync(path.join(ARTIFACTS, `FAILED-mr-${name}-cadre-output.txt`), vsc!.outputChannel('Cadre'))).catch(() => {});
      await Promise.resolve().then(() => vsc!.dumpDiagnostics(path.join(ARTIFACTS, `FAILED-mr-${name}-logs`))).catch(() => {});
    }
  });
  after(async () => vsc?.close());

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

  it('runs readiness on the folder of the active file: beta, with its untracked file, not the first folder', async () => {
    writeFileSync(path.join(ws.beta, 'beta-untracked.txt'), 'not committed\n');
    await vsc!.openFile('beta-keys.js');
    await vsc!.runCommand('Cadre: Run Readiness Checks');
    await vsc!.openView('Cadre');
    await vsc!.waitForText(/beta: (Ready to deploy|\d+ readiness checks? failing)/, { scope: 'sidebar', timeoutMs: 90_000 });
    await vsc!.waitForText('beta-untracked.txt', { scope: 'sidebar', timeoutMs: 10_000 });
    await shot('multi-root-readiness-beta');
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
