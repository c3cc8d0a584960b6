/** Spawns the bundled server (dist/server.js) and waits on what it prints, never on a sleep. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const SERVER_JS = path.join(ROOT, 'dist', 'server.js');

/** Builds the bundles once when a test file runs outside `npm test`. */
export function ensureBuilt(): void {
  if (existsSync(SERVER_JS)) return;
  const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

export function tempDir(prefix = 'cadre-it-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface ServerProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Resolves with the first stdout line matching `re`. */
  line(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startServer(args: string[], env: NodeJS.ProcessEnv = {}): ServerProcess {
  const child = spawn(process.execPath, [SERVER_JS, ...args], { cwd: ROOT, env: { ...process.env, CADRE_API_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: Array<() => void> = [];
  const collect = (into: string[]) => {
    let buf = '';
    return (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      const lines = buf.split('\n');
      buf = lines.pop()!;
      into.push(...lines);
      for (const w of waiters.splice(0)) w();
    };
  };
  child.stdout!.on('data', collect(stdout));
  child.stderr!.on('data', collect(stderr));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  const line = (re: RegExp, timeoutMs = 15_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; stdout: ${stdout.join(' | ')}; stderr: ${stderr.join(' | ')}`)), timeoutMs);
      const check = () => {
        for (const l of stdout) {
          const m = l.match(re);
          if (m) {
            clearTimeout(timer);
            return resolve(m);
          }
        }
        if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer);
          return reject(new Error(`server exited (${child.exitCode ?? child.signalCode}) before printing ${re}; stderr: ${stderr.join(' | ')}`));
        }
        waiters.push(check);
      };
      check();
    });
  return { child, stdout, stderr, line, exited };
}

/** Starts a standalone server on an ephemeral port and returns its URL. */
export async function startStandalone(dataDir: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []): Promise<ServerProcess & { url: string }> {
  const p = startServer(['--standalone', '--port', '0', '--data-dir', dataDir, ...extra], env);
  const m = await p.line(/^Cadre listening on (http:\/\/127\.0\.0\.1:\d+)$/);
  return Object.assign(p, { url: m[1]! });
}

export async function stop(p: ServerProcess): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  await p.exited;
}
