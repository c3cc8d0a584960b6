/**
 * The one way a skill runs `git` on a user's repository. A cloned repository is hostile input: its
 * `.git/config` (and files it includes), its hooks and its `.gitattributes` can name programs that git
 * runs during ordinary read-only commands (core.fsmonitor on `status`/`diff`, filter drivers on
 * `add`/`checkout`, textconv and external diff drivers on `diff`/`log`, hooks on `commit`...).
 *
 * Every invocation here:
 *  - starts from a fixed, minimal environment: nothing inherited from the server but PATH and the
 *    temp/system variables a process needs; no GIT_* of the server; system and global config off
 *    (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null); HOME and XDG_CONFIG_HOME an empty directory;
 *    no prompts, no askpass, no replace objects, no optional locks;
 *  - puts command-line config (`-c`, which wins over every config file, includes and includeIf
 *    included) that neutralises every known key naming a program (see HARDENING below);
 *  - neutralises the filter drivers the repository's config files define (names enumerated by reading
 *    those files with `git config --file ... --no-includes`, which executes nothing, following include
 *    paths ourselves) and passes --no-ext-diff --no-textconv to diff/log/show;
 *  - runs only built-in subcommands of an allow-list (an alias could be `!sh -c ...`);
 *  - never uses a shell (execFile with an argument array).
 * A repository whose config cannot be neutralised (a driver name git's `-c` cannot express, includes
 * nested too deep) is refused with UnsafeRepositoryError, saying why.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface GitResult { code: number; stdout: string; stderr: string; }

export interface GitRunOptions {
  signal?: AbortSignal;
  /** The only environment a caller may add: a temporary index (since.ts reads a commit's tree with one). */
  indexFile?: string;
  maxBuffer?: number;
}

/** The repository's config cannot be neutralised: the step must not run git on it. */
export class UnsafeRepositoryError extends Error {
  override name = 'UnsafeRepositoryError';
}

/** A git command that exited non-zero (gitOut). */
export class GitCommandError extends Error {
  override name = 'GitCommandError';
  constructor(readonly subcommand: string, readonly result: GitResult) {
    super(`git ${subcommand} failed: ${result.stderr.trim().split('\n').slice(-1)[0] || `exit ${result.code}`}`);
  }
}

const NULL_DEVICE = process.platform === 'win32' ? 'NUL' : '/dev/null';

/**
 * Config keys that make git run a program or reach the network, forced to a harmless value on every
 * invocation. Command-line config has the highest precedence, so the repository cannot override them.
 */
export const HARDENING: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'], // a hook program run by status/diff/add...
  ['core.hooksPath', NULL_DEVICE], // every hook (.git/hooks/* and a configured hooks directory)
  ['core.sshCommand', 'false'],
  ['core.gitProxy', ''],
  ['core.askPass', ''],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  ['core.pager', 'cat'],
  ['core.attributesFile', NULL_DEVICE],
  ['core.untrackedCache', 'false'],
  ['core.alternateRefsCommand', ''],
  ['core.quotepath', 'off'],
  ['diff.external', ''],
  ['diff.ignoreSubmodules', 'all'], // a submodule has its own (unenumerated) config: never entered
  ['status.submoduleSummary', 'false'],
  ['submodule.recurse', 'false'],
  ['credential.helper', ''], // an empty value resets the helper list
  ['protocol.allow', 'never'], // no transport at all (ext::, ssh, http...): skills work on local objects
  ['uploadpack.packObjectsHook', ''],
  ['receive.procReceiveRefs', ''],
  ['gpg.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['gpg.ssh.defaultKeyCommand', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['log.showSignature', 'false'],
  ['commit.verbose', 'false'],
  ['safe.bareRepository', 'explicit'], // a bare repository planted inside the workspace is not discovered
  ['maintenance.auto', 'false'],
  ['gc.auto', '0'],
];

/** Built-in subcommands skills may run (an alias of any other name could run a shell). */
const SUBCOMMANDS = new Set([
  'rev-parse', 'diff', 'ls-files', 'show', 'status', 'symbolic-ref', 'rev-list', 'log', 'cat-file', 'read-tree',
  'checkout-index', 'worktree', 'add', 'commit', 'branch', 'config', 'merge-base', 'for-each-ref', 'ls-tree',
  'update-ref', 'hash-object', 'init', 'diff-tree', 'diff-index', 'name-rev', 'describe', 'var', 'version',
]);

/** Subcommands that could run an external diff or a textconv program unless told not to. */
const DIFF_LIKE = new Set(['diff', 'log', 'show']);

/** Options a caller may put before the subcommand (after them come ours, which win). */
const GLOBAL_OPTION = /^--work-tree=/; // never --git-dir: the config enumerated must be the one git uses
const CALLER_CONFIG = /^(user\.(name|email)|commit\.gpgsign|core\.quotepath|color\.ui)=/i;

let emptyHome: string | undefined;
/** An empty directory used as HOME: no ~/.gitconfig, ~/.config/git/*, ~/.netrc reach git. */
function home(): string {
  if (!emptyHome) emptyHome = mkdtempSync(path.join(tmpdir(), 'cadre-git-home-'));
  return emptyHome;
}

/** The fixed environment of every git child process. */
export function gitEnv(indexFile?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only what a process needs to start and find git; nothing of the server's GIT_*, SSH_*, pagers...
  for (const k of ['PATH', 'Path', 'SystemRoot', 'SYSTEMROOT', 'ComSpec', 'PATHEXT', 'WINDIR', 'TMPDIR', 'TMP', 'TEMP']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  const h = home();
  Object.assign(env, {
    HOME: h, USERPROFILE: h, XDG_CONFIG_HOME: h,
    LC_ALL: 'C', LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: NULL_DEVICE, GIT_CONFIG_SYSTEM: NULL_DEVICE,
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0', GIT_PROTOCOL_FROM_USER: '0', GIT_ALLOW_PROTOCOL: '',
    GIT_OPTIONAL_LOCKS: '0', GIT_NO_REPLACE_OBJECTS: '1', GIT_NO_LAZY_FETCH: '1',
    GIT_PAGER: 'cat', PAGER: 'cat', GIT_EDITOR: 'false', GIT_SEQUENCE_EDITOR: 'false',
    GIT_SSH_COMMAND: 'false', GIT_EXTERNAL_DIFF: '',
  });
  if (indexFile) env['GIT_INDEX_FILE'] = indexFile;
  return env;
}

// ---- the repository's own config: which filter drivers it defines ----

interface RepoConfigFiles { files: string[]; }

/** Finds the git directory git would use from `cwd` (walking up to a `.git` entry), without running git. */
function findGitDirs(cwd: string): { gitDir: string; commonDir: string } | undefined {
  let dir = path.resolve(cwd);
  for (;;) {
    const dotGit = path.join(dir, '.git');
    let st: import('node:fs').Stats | undefined;
    try { st = statSync(dotGit); } catch { st = undefined; }
    // Like git, a `.git` directory that is not a repository is passed over and the search goes on up.
    if (st?.isDirectory() && looksLikeGitDir(dotGit)) return { gitDir: dotGit, commonDir: commonOf(dotGit) };
    if (st?.isFile()) {
      // A linked worktree or a submodule: `gitdir: <path>`.
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(safeRead(dotGit) ?? '');
      if (m) {
        const gitDir = path.resolve(dir, m[1]!);
        return { gitDir, commonDir: commonOf(gitDir) };
      }
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** git's own test (setup.c is_git_directory): HEAD, plus objects/ and refs/ or a commondir file. */
function looksLikeGitDir(dir: string): boolean {
  const exists = (p: string) => { try { statSync(path.join(dir, p)); return true; } catch { return false; } };
  return exists('HEAD') && (exists('commondir') || (exists('objects') && exists('refs')));
}

function commonOf(gitDir: string): string {
  const c = safeRead(path.join(gitDir, 'commondir'))?.trim();
  return c ? path.resolve(gitDir, c) : gitDir;
}

function safeRead(file: string): string | undefined {
  try { return readFileSync(file, 'utf8'); } catch { return undefined; }
}

function configFilesOf(cwd: string): RepoConfigFiles {
  const dirs = findGitDirs(cwd);
  if (!dirs) return { files: [] };
  const files = [path.join(dirs.commonDir, 'config')];
  // extensions.worktreeConfig: per-worktree settings.
  files.push(path.join(dirs.gitDir, 'config.worktree'));
  return { files };
}

/** Runs git with the hardened environment and config only (for reading a config file as data). */
function rawGit(cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile('git', [...args], {
      cwd, env: gitEnv(opts.indexFile), maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024, encoding: 'utf8', windowsHide: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
    }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 128) : 0;
      resolve({ code, stdout: String(stdout ?? ''), stderr: String(stderr ?? '') || (err ? err.message : '') });
    });
  });
}

const MAX_INCLUDE_DEPTH = 10;
/** What `-c key=value` can carry: git splits at the first '=' and a subsection cannot hold a newline. */
const EXPRESSIBLE = /^[^=\n\r\0]*$/;

interface Neutralise { drivers: Set<string>; /** Each config file read, with its stat signature (for the cache). */ files: Map<string, string>; }

/** `mtime:size:ino` of a file, '' when absent: a changed signature invalidates the cached driver list. */
function signature(file: string): string {
  try { const st = statSync(file); return `${st.mtimeMs}:${st.size}:${st.ino}`; } catch { return ''; }
}

/** Driver names per repository, valid while none of the config files read (includes too) changed. */
const driverCache = new Map<string, { files: Map<string, string>; drivers: string[] }>();
const DRIVER_CACHE_MAX = 256;

/**
 * Reads the config files (and the files they include, whatever the include's condition) as data and
 * collects the filter driver names they define.
 */
async function enumerateDrivers(files: string[], seen: Set<string>, depth: number, out: Neutralise, signal?: AbortSignal): Promise<void> {
  for (const file of files) {
    const abs = path.resolve(file);
    if (seen.has(abs)) continue;
    seen.add(abs);
    out.files.set(abs, signature(abs));
    let st: import('node:fs').Stats;
    try { st = statSync(abs); } catch { continue; } // git ignores a missing include too
    if (!st.isFile()) continue;
    if (depth > MAX_INCLUDE_DEPTH) throw new UnsafeRepositoryError(`the repository's git config includes files more than ${MAX_INCLUDE_DEPTH} levels deep; Cadre does not run git on it`);
    const r = await rawGit(path.dirname(abs), ['config', '--file', abs, '--no-includes', '--list', '-z'], { signal });
    if (r.code !== 0) throw new UnsafeRepositoryError(`the repository's git config ${abs} cannot be read as a config file, so its drivers cannot be neutralised; Cadre does not run git on it`);
    const includes: string[] = [];
    for (const entry of r.stdout.split('\0')) {
      if (!entry) continue;
      const nl = entry.indexOf('\n');
      const key = nl < 0 ? entry : entry.slice(0, nl);
      const value = nl < 0 ? '' : entry.slice(nl + 1);
      const lower = key.toLowerCase();
      const m = /^filter\.(.+)\.[^.]+$/s.exec(key);
      if (m) {
        if (!EXPRESSIBLE.test(m[1]!)) throw new UnsafeRepositoryError('the repository\'s git config defines a filter driver whose name cannot be overridden on the command line; Cadre does not run git on it');
        out.drivers.add(m[1]!);
      }
      if ((lower === 'include.path' || (lower.startsWith('includeif.') && lower.endsWith('.path'))) && value) {
        // `%(prefix)/` is relative to git's install prefix, which we cannot know for sure: refuse.
        if (value.startsWith('%(prefix)')) throw new UnsafeRepositoryError(`the repository's git config includes ${value}, a path relative to git's installation that Cadre cannot read to neutralise; Cadre does not run git on it`);
        // `~/` is expanded by git against HOME, which is an empty directory here.
        const target = value.startsWith('~/') ? path.join(home(), value.slice(2)) : path.resolve(path.dirname(abs), value);
        includes.push(target);
      }
    }
    if (includes.length) await enumerateDrivers(includes, seen, depth + 1, out, signal);
  }
}

/** The `-c` arguments that neutralise this repository's config. */
export async function hardeningArgs(cwd: string, signal?: AbortSignal): Promise<string[]> {
  const roots = configFilesOf(cwd).files;
  const key = roots.join('\0');
  let drivers: string[];
  const cached = driverCache.get(key);
  if (cached && [...cached.files].every(([f, sig]) => signature(f) === sig)) drivers = cached.drivers;
  else {
    const out: Neutralise = { drivers: new Set(), files: new Map() };
    await enumerateDrivers(roots, new Set(), 0, out, signal);
    drivers = [...out.drivers].sort();
    if (driverCache.size >= DRIVER_CACHE_MAX) driverCache.delete(driverCache.keys().next().value!);
    driverCache.set(key, { files: out.files, drivers });
  }
  const args: string[] = [];
  for (const [k, v] of HARDENING) args.push('-c', `${k}=${v}`);
  for (const d of drivers) {
    // An empty clean/smudge/process is "no filter" for git; required=false keeps it from failing.
    for (const k of ['clean', 'smudge', 'process']) args.push('-c', `filter.${d}.${k}=`);
    args.push('-c', `filter.${d}.required=false`);
  }
  return args;
}

/** Splits the caller's arguments into its allowed global options, the subcommand and the rest. */
function splitArgs(args: readonly string[]): { globals: string[]; sub: string; rest: string[] } {
  const globals: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-c') {
      const kv = args[i + 1] ?? '';
      if (!CALLER_CONFIG.test(kv)) throw new UnsafeRepositoryError(`git: the config override "${kv.split('=')[0]}" is not one a skill may set`);
      globals.push(a, kv);
      i++;
    } else if (GLOBAL_OPTION.test(a)) globals.push(a);
    else break;
  }
  const sub = args[i];
  if (!sub || !SUBCOMMANDS.has(sub)) throw new UnsafeRepositoryError(`git: "${sub ?? ''}" is not a git command skills may run`);
  return { globals, sub, rest: args.slice(i + 1) };
}

/**
 * Runs `git <args>` in `cwd` with the hardened environment and config. Resolves with the exit code
 * and output (non-zero is not an error); rejects only with UnsafeRepositoryError.
 */
export async function runGit(cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<GitResult> {
  const { globals, sub, rest } = splitArgs(args);
  const hardening = await hardeningArgs(cwd, opts.signal);
  const extra = DIFF_LIKE.has(sub) ? ['--no-ext-diff', '--no-textconv'] : [];
  const full = ['--no-pager', ...globals, ...hardening, sub, ...extra, ...rest];
  return rawGit(cwd, full, opts);
}

/** runGit, throwing GitCommandError on a non-zero exit; resolves with stdout. */
export async function gitOut(cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<string> {
  const r = await runGit(cwd, args, opts);
  if (r.code !== 0) throw new GitCommandError(args.find((a) => SUBCOMMANDS.has(a)) ?? 'git', r);
  return r.stdout;
}
