/** Test-runner detection from the workspace and a bounded, killable run of the test command. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';


/**
 * The server's environment without Cadre's own secrets and paths (the API key, the data directory,
 * the protected-path list): a project's test command is the project's code, not Cadre's.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^CADRE_/i.test(k)) env[k] = v;
  return env;
}

export type RunnerName = 'node-test' | 'mocha' | 'jest' | 'vitest' | 'ava' | 'npm-script' | 'pytest' | 'go' | 'maven' | 'gradle' | 'custom';
/** How the output of the run is read. */
export type OutputFormat = 'tap' | 'mocha-json' | 'jest-json' | 'junit-file' | 'go-json' | 'text';

export interface DetectedRunner {
  name: RunnerName;
  /** argv; argv[0] is the program. */
  argv: string[];
  /** Display form of the command. */
  command: string;
  /** Why this runner was chosen (file and field). */
  detectedBy: string;
  format: OutputFormat;
  /** Workspace-relative JUnit XML files or folder read after the run (format junit-file). */
  junitPaths?: string[];
  /** Runs through a shell (input.command given as a string). */
  shell?: boolean;
  /** Environment added to the run (node --test's reporter goes through NODE_OPTIONS). */
  env?: Record<string, string>;
  /** package.json scripts.test when the runner came from it. */
  script?: string;
}

const DEFAULT_NPM_TEST = /no test specified/;

function readJson(file: string): Record<string, unknown> | undefined {
  try { return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>; } catch { return undefined; }
}

/** The runner a test script invokes, and whether the script is a single command (so reporter flags can be appended). */
export function runnerOfScript(script: string): { name: RunnerName; single: boolean } {
  const single = !/&&|\|\||;|\||\n/.test(script);
  const s = ` ${script} `;
  if (/\snode\s+(?:[^|&;]*\s)?--test\b/.test(s)) return { name: 'node-test', single };
  if (/\s(?:npx\s+)?vitest\b/.test(s)) return { name: 'vitest', single };
  if (/\s(?:npx\s+)?jest\b/.test(s)) return { name: 'jest', single };
  if (/\s(?:npx\s+)?mocha\b/.test(s)) return { name: 'mocha', single };
  if (/\s(?:npx\s+)?ava\b/.test(s)) return { name: 'ava', single };
  return { name: 'npm-script', single };
}

/** Machine-readable reporter flags for a JS runner. */
export function reporterFlags(name: RunnerName): { flags: string[]; format: OutputFormat; env?: Record<string, string> } {
  switch (name) {
    // Not a flag: appended after `node --test test/` it is read as a file pattern ("Could not find
    // '--test-reporter=tap'" on Node 20). NODE_OPTIONS reaches the node of any script form.
    case 'node-test': return { flags: [], format: 'tap', env: { NODE_OPTIONS: [process.env['NODE_OPTIONS'], '--test-reporter=tap'].filter(Boolean).join(' ') } };
    case 'mocha': return { flags: ['--reporter', 'json'], format: 'mocha-json' };
    case 'jest': return { flags: ['--json'], format: 'jest-json' };
    case 'vitest': return { flags: ['--reporter=json'], format: 'jest-json' };
    case 'ava': return { flags: ['--tap'], format: 'tap' };
    default: return { flags: [], format: 'text' };
  }
}

const JS_BINS: RunnerName[] = ['vitest', 'jest', 'mocha', 'ava'];

/**
 * Detection order: input.command; package.json scripts.test (not npm's placeholder); a JS runner
 * in devDependencies/dependencies; pytest (pytest.ini, conftest.py, pyproject [tool.pytest], setup.cfg
 * [tool:pytest], tox.ini [pytest]); go.mod; pom.xml; build.gradle(.kts).
 */
export function detectRunner(workspace: string, command?: string | string[]): DetectedRunner | undefined {
  if (command && (typeof command === 'string' ? command.trim() : command.length)) {
    const isStr = typeof command === 'string';
    const argv = isStr ? [command] : command;
    return { name: 'custom', argv, command: isStr ? command : command.join(' '), detectedBy: 'input.command', format: 'text', ...(isStr ? { shell: true } : {}) };
  }
  const pkg = readJson(path.join(workspace, 'package.json'));
  if (pkg) {
    const scripts = (pkg['scripts'] ?? {}) as Record<string, unknown>;
    const test = typeof scripts['test'] === 'string' ? scripts['test'] : undefined;
    if (test && !DEFAULT_NPM_TEST.test(test)) {
      const r = runnerOfScript(test);
      // Flags can only be appended to a single-command script; node --test's reporter is an environment setting, so it applies to any form.
      const rep = r.single || r.name === 'node-test' ? reporterFlags(r.name) : { flags: [], format: 'text' as const };
      const argv = ['npm', '--silent', 'test', ...(rep.flags.length ? ['--', ...rep.flags] : [])];
      return {
        name: r.name === 'npm-script' ? 'npm-script' : r.name, argv, command: argv.join(' '), format: rep.format, ...(rep.env ? { env: rep.env } : {}), script: test,
        detectedBy: `package.json scripts.test: "${test}"${r.single || rep.env ? '' : ' (compound script: no reporter flags appended)'}`,
      };
    }
    const deps = { ...((pkg['dependencies'] ?? {}) as object), ...((pkg['devDependencies'] ?? {}) as object) } as Record<string, unknown>;
    for (const name of JS_BINS) {
      if (!(name in deps)) continue;
      const rep = reporterFlags(name);
      const bin = path.join('node_modules', '.bin', name);
      const argv = [existsSync(path.join(workspace, bin)) ? path.join(workspace, bin) : 'npx', ...(existsSync(path.join(workspace, bin)) ? [] : ['--no-install', name]), ...(name === 'vitest' ? ['run'] : []), ...rep.flags];
      return { name, argv, command: [existsSync(path.join(workspace, bin)) ? bin : `npx --no-install ${name}`, ...argv.slice(existsSync(path.join(workspace, bin)) ? 1 : 3)].join(' '), detectedBy: `package.json devDependencies: ${name}`, format: rep.format };
    }
  }
  const has = (f: string) => existsSync(path.join(workspace, f));
  const contains = (f: string, re: RegExp) => { try { return re.test(readFileSync(path.join(workspace, f), 'utf8')); } catch { return false; } };
  const pyWhy = has('pytest.ini') ? 'pytest.ini' : has('conftest.py') ? 'conftest.py' : contains('pyproject.toml', /\[tool\.pytest|pytest/) ? 'pyproject.toml' : contains('setup.cfg', /\[tool:pytest\]/) ? 'setup.cfg [tool:pytest]' : contains('tox.ini', /\[pytest\]/) ? 'tox.ini [pytest]' : undefined;
  if (pyWhy) {
    const junit = '.cadre-pytest-junit.xml';
    const argv = ['python3', '-m', 'pytest', '-q', `--junitxml=${junit}`];
    return { name: 'pytest', argv, command: argv.join(' '), detectedBy: pyWhy, format: 'junit-file', junitPaths: [junit] };
  }
  if (has('go.mod')) return { name: 'go', argv: ['go', 'test', '-json', './...'], command: 'go test -json ./...', detectedBy: 'go.mod', format: 'go-json' };
  if (has('pom.xml')) return { name: 'maven', argv: ['mvn', '-q', '-B', 'test'], command: 'mvn -q -B test', detectedBy: 'pom.xml', format: 'junit-file', junitPaths: ['target/surefire-reports'] };
  const gradle = has('build.gradle') ? 'build.gradle' : has('build.gradle.kts') ? 'build.gradle.kts' : undefined;
  if (gradle) {
    const prog = has('gradlew') ? './gradlew' : 'gradle';
    return { name: 'gradle', argv: [prog, 'test'], command: `${prog} test`, detectedBy: gradle, format: 'junit-file', junitPaths: ['build/test-results/test'] };
  }
  return undefined;
}

/**
 * The run that measures coverage. node --test takes `--experimental-test-coverage` on its command line
 * only (Node refuses it in NODE_OPTIONS, and after `node --test test/` it is read as a file pattern), so
 * a single-command `node --test …` script is run as written with the flag placed right after `node`,
 * through a shell with node_modules/.bin on PATH as npm would. Other runners: their own command.
 */
export function coverageRun(runner: DetectedRunner, workspace: string): { argv: string[]; shell?: boolean; env?: Record<string, string> } {
  if (runner.name !== 'node-test' || !runner.script || !runnerOfScript(runner.script).single) return { argv: runner.argv, ...(runner.shell ? { shell: true } : {}), ...(runner.env ? { env: runner.env } : {}) };
  const script = runner.script.replace(/(^|\s)node(\s+)/, '$1node --experimental-test-coverage$2');
  const PATH = [path.join(workspace, 'node_modules', '.bin'), process.env['PATH']].filter(Boolean).join(path.delimiter);
  return { argv: ['sh', '-c', script], env: { ...runner.env, PATH } };
}

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  /** stdout then stderr, each bounded to its last `maxBytes`. */
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** The program could not be started (ENOENT...). */
  spawnError?: string;
}

class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size > this.max && this.chunks.length) {
      const over = this.size - this.max;
      const first = this.chunks[0]!;
      this.truncated = true;
      if (first.length <= over) { this.chunks.shift(); this.size -= first.length; }
      else { this.chunks[0] = first.subarray(over); this.size -= over; }
    }
  }
  toString(): string { return Buffer.concat(this.chunks).toString('utf8'); }
}

function killTree(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* already gone */ } }
}

/**
 * Runs argv in cwd as its own process group (detached) so that a timeout or an abort kills the whole
 * tree (SIGTERM to -pid, SIGKILL 1 s later). Output is kept bounded to the last `maxBytes` per stream.
 */
export function runCommand(argv: string[], opts: { cwd: string; timeoutMs: number; signal?: AbortSignal; shell?: boolean; maxBytes?: number; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  const max = opts.maxBytes ?? 1024 * 1024;
  const started = Date.now();
  return new Promise((resolve) => {
    const out = new Tail(max), err = new Tail(max);
    let timedOut = false, aborted = false, done = false;
    let killTimer: NodeJS.Timeout | undefined;
    const finish = (exitCode: number | null, signal: string | null, spawnError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode, signal, stdout: out.toString(), stderr: err.toString(), truncated: out.truncated || err.truncated, timedOut, aborted, durationMs: Date.now() - started, ...(spawnError ? { spawnError } : {}) });
    };
    const [prog, ...args] = argv;
    const child = spawn(prog!, args, { cwd: opts.cwd, detached: true, shell: opts.shell ?? false, stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnv(), CI: 'true', FORCE_COLOR: '0', NO_COLOR: '1', ...opts.env } });
    const stop = () => {
      killTree(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killTree(child.pid, 'SIGKILL'), 1000);
      killTimer.unref();
    };
    const onAbort = () => { aborted = true; stop(); };
    const timer = setTimeout(() => { timedOut = true; stop(); }, opts.timeoutMs);
    if (opts.signal?.aborted) onAbort(); else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => finish(null, null, e.message));
    child.on('close', (code, sig) => finish(code, sig));
  });
}
