/**
 * The e2e suite's one harness helper (test/e2e/README.md): the environment check (skip, or fail with
 * CADRE_E2E_REQUIRED=1), the typed face of harness.mjs, fixture helpers (git, a free port, a planted key),
 * failure artifacts, and VS Code sessions shared between test files.
 *
 * A session is named by a profile: the files that ask for the same profile (the same extensions, workspace
 * and settings) get the same VS Code, started once; starting a session of another profile closes the one
 * open before (the machine runs one VS Code at a time), and the last one closes when the mocha run ends.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, ROOT } from '../../support/server-process';

export const E2E_HOME = process.env['VSCODE_E2E_HOME'] ?? path.join(homedir(), '.cache', 'vscode-e2e');
export const ARTIFACTS = path.join(ROOT, 'test', 'e2e', 'artifacts');
export { ROOT };

// -------------------------------------------------------------------------------------------------
// harness.mjs as the tests use it (playwright's objects typed only as far as they are used)

export interface Locator {
  first(): Locator;
  nth(i: number): Locator;
  click(o?: object): Promise<void>;
  hover(o?: object): Promise<void>;
  waitFor(o: object): Promise<void>;
  count(): Promise<number>;
  locator(sel: string, o?: object): Locator;
  innerText(): Promise<string>;
  allInnerTexts(): Promise<string[]>;
  getAttribute(name: string): Promise<string | null>;
  fill(value: string): Promise<void>;
  inputValue(): Promise<string>;
}
export interface Frame { evaluate<T>(fn: () => T): Promise<T>; url(): string }
export interface Page {
  locator(sel: string, o?: object): Locator;
  keyboard: { press(k: string): Promise<void>; type(t: string): Promise<void> };
  frames(): Frame[];
  evaluate<T>(fn: () => T): Promise<T>;
  context(): { grantPermissions(p: string[]): Promise<void> };
}
export interface Vsc {
  page: Page;
  waitUntil<T>(fn: () => Promise<T | null | false | undefined>, o: { timeoutMs: number; what: string }): Promise<T>;
  statusBarItems(): Promise<Array<{ id: string; text: string; label: string }>>;
  openFile(rel: string): Promise<void>;
  openView(title: string): Promise<void>;
  runCommand(title: string, o?: { timeoutMs: number }): Promise<void>;
  press(keys: string): Promise<void>;
  text(scope?: string): Promise<string>;
  waitForText(text: string | RegExp, o: { timeoutMs: number; scope?: string }): Promise<string>;
  screenshot(file: string): Promise<void>;
  outputChannel(name: string): string;
  dumpDiagnostics(dir: string): Promise<void>;
  processTree(): Array<{ pid: number; ppid: number; cmd: string }>;
  close(): Promise<void>;
}

export interface LaunchOptions {
  extensionPath: string | string[];
  workspacePath?: string;
  workspaceFile?: string;
  viewport?: { width: number; height: number };
  settings?: Record<string, unknown>;
}

// -------------------------------------------------------------------------------------------------
// The environment

/**
 * In a suite's `before`: skips the suite with a line saying why when the real-VS-Code environment is not
 * installed (CADRE_E2E_REQUIRED=1 turns that into a failure), else builds dist/ when missing.
 */
export function requireE2e(ctx: Mocha.Context): void {
  if (!existsSync(path.join(E2E_HOME, 'env.json'))) {
    const line = `e2e skipped: the real-VS-Code environment is not installed (bash test/e2e/setup.sh installs it into ${E2E_HOME})`;
    if (process.env['CADRE_E2E_REQUIRED'] === '1') throw new Error(line.replace('skipped', 'required but'));
    console.log(`      ${line}`);
    ctx.skip();
  }
  ensureBuilt();
  mkdirSync(ARTIFACTS, { recursive: true });
}

// -------------------------------------------------------------------------------------------------
// Sessions

interface Session<T> { profile: string; value: Promise<T & { vsc: Vsc }>; close(): Promise<void> }
let open: Session<unknown> | null = null;

/**
 * The VS Code session of `profile`, started by `start` the first time a file asks for it and reused by the
 * next files that ask for the same profile; `cleanup` runs after its VS Code closes (stand-ins, env).
 * Another profile's open session is closed first.
 */
export async function session<T extends object>(profile: string, start: () => Promise<T & { vsc: Vsc }>, cleanup: () => Promise<void> = async () => {}): Promise<T & { vsc: Vsc }> {
  if (open?.profile === profile) return (open as Session<T>).value;
  await closeSession();
  const value = start();
  const s: Session<T> = {
    profile, value,
    close: async () => {
      const v = await value.catch(() => null);
      await v?.vsc.close().catch(() => {});
      await cleanup().catch(() => {});
    },
  };
  open = s as Session<unknown>;
  return value;
}

export async function closeSession(): Promise<void> {
  const s = open;
  open = null;
  await s?.close();
}

// The last session closes with the run (a root hook: this module is loaded by the spec files).
if (typeof after === 'function') {
  after(async function () {
    this.timeout(60_000);
    await closeSession();
  });
}

/** Starts VS Code with Cadre (and `extensionPath`'s others) through harness.mjs. */
export async function launch(o: LaunchOptions): Promise<Vsc> {
  const harness = (await import(pathToFileURL(path.join(__dirname, '..', 'harness.mjs')).href)) as { launch(o: object): Promise<Vsc> };
  return harness.launch({ installMode: 'link', ...o });
}

/**
 * Sets environment variables that the editor (and through it the extension's server) inherits at launch;
 * the returned function puts the previous values back.
 */
export function withEnv(vars: Record<string, string>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** In a suite: on a failed test, a screenshot, the Cadre output channel and the editor's logs under artifacts/, named `FAILED-<prefix><test>`. */
export function failureArtifacts(vsc: () => Vsc | null | undefined, prefix = ''): void {
  afterEach(async function () {
    const v = vsc();
    if (this.currentTest?.state !== 'failed' || !v) return;
    const name = `FAILED-${prefix}${this.currentTest.title.replace(/\W+/g, '-').slice(0, 60)}`;
    await v.screenshot(path.join(ARTIFACTS, `${name}.png`)).catch(() => {});
    await Promise.resolve().then(() => writeFileSync(path.join(ARTIFACTS, `${name}-cadre-output.txt`), v.outputChannel('Cadre'))).catch(() => {});
    await Promise.resolve().then(() => v.dumpDiagnostics(path.join(ARTIFACTS, `${name}-logs`))).catch(() => {});
  });
}

/**
 * The Cadre language servers among the processes of a session (`vsc.processTree()`). A child a server is
 * spawning (git, a test runner) carries the server's own command line between fork and exec: a match whose
 * parent matches too is such a child, not a second server (a snapshot caught one once, as a "restart").
 */
export function languageServers(vsc: Vsc): Array<{ pid: number; ppid: number; cmd: string }> {
  const matches = vsc.processTree().filter((p) => /dist\/server\.js/.test(p.cmd) && /--node-ipc/.test(p.cmd));
  const pids = new Set(matches.map((p) => p.pid));
  return matches.filter((p) => !pids.has(p.ppid));
}

/** Waits until the Cadre status item shows the local API (`url` when given, else any loopback URL). */
export function waitForApi(vsc: Vsc, url?: string, timeoutMs = 120_000): Promise<unknown> {
  const shown = (t: string) => (url ? t.includes(url) : /Cadre: http:\/\/127\.0\.0\.1:\d+/.test(t));
  return vsc.waitUntil(async () => (await vsc.statusBarItems()).some((t) => shown(t.text)), { timeoutMs, what: `the Cadre status item to show ${url ?? 'the API URL'}` });
}

/**
 * Where a notification shows: its toast, or the notification center when that is open (VS Code then puts new
 * notifications there, not in toasts; a test that opened it to find a toast that had hidden itself leaves it open
 * for the tests after it: two of them failed on empty toasts in a full suite). A CSS scope for waitForText/text.
 */
export const NOTIFICATIONS = '.notifications-toasts, .notifications-center';

// -------------------------------------------------------------------------------------------------
// Fixtures

export const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'e2e', GIT_AUTHOR_EMAIL: 'e2e@example.com', GIT_COMMITTER_NAME: 'e2e', GIT_COMMITTER_EMAIL: 'e2e@example.com' };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV }).trim();
}

/** `git init` on main and one commit of everything in `dir`. */
export function commitAll(dir: string, message = 'fixture'): void {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', message);
}

/** A fake AWS access key id built at run time, so the repository holds no secret-looking literal. */
export const plantedKey = (): string => ['AK', 'IA', 'QWERTYUIOPASDFGH'].join('');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
