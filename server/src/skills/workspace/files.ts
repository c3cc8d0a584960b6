/**
 * Workspace file access for skills: the one rule for what a skill may read.
 *
 *  - A path (absolute, or relative to the workspace) is resolved with realpath; it must lie inside the
 *    workspace's realpath (or a directory the caller explicitly allows). A symlink that resolves
 *    outside is refused like any outside path: nothing is read, and the refusal names the path only,
 *    never its content.
 *  - Protected paths are never readable, even inside the workspace: Cadre's data directory (store,
 *    audit trail, keys) and well-known key material of the user (~/.ssh, ~/.aws, ~/.gnupg, ...).
 *  - Directory walks never descend into a symlinked directory and report symlinks that lead outside.
 *
 * Everything is synchronous on purpose: skills call it from their own code paths (some in worker
 * threads), and a refused read must not depend on timing.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';

export type Refusal = 'outside the workspace' | 'protected (Cadre data or key material)' | 'not found' | 'not a file' | 'too large';

export interface Refused { ok: false; reason: Refusal; /** The path as given (never its content). */ given: string }

export type Resolved =
  | { ok: true; /** Realpath of the file. */ real: string; /** Workspace-relative, forward slashes ('' for outside-but-allowed). */ rel: string }
  | Refused;

const extraProtected = new Set<string>();

/** Marks a directory or file as never readable by a skill (the runtime adds its data directory). */
export function protectPath(p: string): void {
  extraProtected.add(path.resolve(p));
}

/** Environment variable listing protected paths (path.delimiter-separated): worker threads inherit it. */
export const PROTECTED_ENV = 'CADRE_PROTECTED_PATHS';

/**
 * Protects the server's data directory for every skill of this process: here (protectPath) and in
 * the agent worker threads started after this call, which get a copy of process.env.
 */
export function protectDataDir(dataDir: string): void {
  const abs = path.resolve(dataDir);
  protectPath(abs);
  const list = (process.env[PROTECTED_ENV] ?? '').split(path.delimiter).filter(Boolean);
  if (!list.includes(abs)) process.env[PROTECTED_ENV] = [...list, abs].join(path.delimiter);
}

/** Environment variable listing folders outside workspaces that skills may read (config `security.read_paths`). */
export const READ_PATHS_ENV = 'CADRE_READ_PATHS';

/**
 * Allows skills of this process and of the worker threads started after this call to read `paths`
 * (absolute folders) besides their workspace. Protected paths stay unreadable inside them.
 */
export function allowReadPaths(paths: readonly string[]): void {
  const list = [...new Set(paths.map((p) => path.resolve(p)))];
  if (list.length) process.env[READ_PATHS_ENV] = list.join(path.delimiter);
  else delete process.env[READ_PATHS_ENV];
}

function configuredReadPaths(): string[] {
  return (process.env[READ_PATHS_ENV] ?? '').split(path.delimiter).filter(Boolean);
}

/** Default protected paths: Cadre's data directory and the user's key material. */
function defaultProtected(): string[] {
  const home = homedir();
  const cadreHome = process.env['CADRE_HOME']?.trim();
  return [
    cadreHome ? path.resolve(cadreHome) : path.join(home, '.cadre'),
    ...(process.env[PROTECTED_ENV] ?? '').split(path.delimiter).filter(Boolean),
    // System configuration and live kernel state are never project files.
    ...(process.platform === 'win32' ? [] : ['/etc', '/proc', '/sys', '/dev']),
    ...['.ssh', '.aws', '.gnupg', '.azure', '.kube', '.docker', '.netrc', '.git-credentials', '.npmrc', '.pypirc',
      path.join('.config', 'gcloud'), path.join('.config', 'gh'), path.join('.local', 'share', 'keyrings')].map((p) => path.join(home, p)),
  ];
}

function realOrResolved(p: string): string {
  try { return realpathSync(p); } catch { return path.resolve(p); }
}

let cache: { key: string; paths: string[] } | undefined;

/** Realpaths of every protected location (symlinks to them are caught too); cached per setting. */
export function protectedPaths(): string[] {
  const key = `${process.env['CADRE_HOME'] ?? ''}\0${process.env[PROTECTED_ENV] ?? ''}\0${homedir()}\0${[...extraProtected].join('\0')}`;
  if (cache?.key !== key) {
    cache = { key, paths: [...new Set([...defaultProtected(), ...extraProtected].flatMap((p) => [path.resolve(p), realOrResolved(p)]))] };
  }
  return cache.paths;
}

/** `child` equals `parent` or lies under it (both absolute, normalised). */
export function isUnder(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** True when the absolute path is, or is inside, a protected location. */
export function isProtected(abs: string): boolean {
  return protectedPaths().some((p) => isUnder(abs, p));
}

export interface ConfineOptions {
  /** Extra directories (absolute) allowed besides those of the configuration (`security.read_paths`). */
  allow?: readonly string[];
}

/** Confines reads to one workspace. */
export class WorkspaceFiles {
  /** Realpath of the workspace. */
  readonly root: string;
  private readonly allow: string[];
  /** Realpaths actually read through this object (for the scope-boundary gate's evidence.pathsRead). */
  readonly read = new Set<string>();
  /** Paths refused, with why (for the artifact: names only, never content). */
  readonly refused = new Map<string, Refusal>();

  constructor(workspace: string, opts: ConfineOptions = {}) {
    this.root = realOrResolved(workspace);
    this.allow = [...(opts.allow ?? []), ...configuredReadPaths()].map(realOrResolved);
  }

  /** Resolves a workspace-relative or absolute path; refuses outside or protected paths. */
  resolve(given: string): Resolved {
    const abs = path.isAbsolute(given) ? path.resolve(given) : path.resolve(this.root, given);
    let real: string;
    try { real = realpathSync(abs); } catch {
      // A missing path: judge the lexical path (a traversal is still outside).
      const lexicalOk = isUnder(abs, this.root) || this.allow.some((a) => isUnder(abs, a));
      return this.refuse(given, lexicalOk ? (isProtected(abs) ? 'protected (Cadre data or key material)' : 'not found') : 'outside the workspace');
    }
    const inside = isUnder(real, this.root);
    if (!inside && !this.allow.some((a) => isUnder(real, a))) return this.refuse(given, 'outside the workspace');
    if (isProtected(real) || isProtected(abs)) return this.refuse(given, 'protected (Cadre data or key material)');
    return { ok: true, real, rel: inside ? path.relative(this.root, real).split(path.sep).join('/') : '' };
  }

  private refuse(given: string, reason: Refusal): Refused {
    this.refused.set(given, reason);
    return { ok: false, reason, given };
  }

  /** Reads a file (bounded), or says why not: never throws, never returns outside content. */
  readText(given: string, maxBytes = 16 * 1024 * 1024): { ok: true; text: string; real: string; rel: string } | Refused {
    const b = this.readBytes(given, maxBytes);
    return b.ok ? { ok: true, text: b.buf.toString('utf8'), real: b.real, rel: b.rel } : b;
  }

  readBytes(given: string, maxBytes = 16 * 1024 * 1024): { ok: true; buf: Buffer; real: string; rel: string } | Refused {
    const r = this.resolve(given);
    if (!r.ok) return r;
    let fd: number;
    try { fd = openSync(r.real, 'r'); } catch { return this.refuse(given, 'not found'); }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return this.refuse(given, 'not a file');
      if (st.size > maxBytes) return this.refuse(given, 'too large');
      const buf = Buffer.alloc(st.size);
      let off = 0;
      while (off < st.size) {
        const n = readSync(fd, buf, off, st.size - off, off);
        if (n <= 0) break;
        off += n;
      }
      this.read.add(r.real);
      return { ok: true, buf: buf.subarray(0, off), real: r.real, rel: r.rel };
    } finally {
      closeSync(fd);
    }
  }

  /** True when the path resolves to a readable regular file inside the workspace. */
  isFile(given: string): boolean {
    const r = this.resolve(given);
    if (!r.ok) return false;
    try { return statSync(r.real).isFile(); } catch { return false; }
  }

  /** Refusals as one line for an artifact's constraints: names and reasons only. */
  refusalLines(): string[] {
    return [...this.refused].filter(([, why]) => why !== 'not found').map(([p, why]) => `${p}: ${why}, not read`);
  }
}

export interface WalkEntry { rel: string; abs: string; }

/**
 * Files under `root` (workspace-relative, forward slashes), bounded. Symlinked directories are never
 * entered; a symlinked file is listed only when it resolves inside the root (and is not protected).
 * `onSkip` hears every symlink left out.
 */
export function walkFiles(root: string, opts: { skipDirs?: ReadonlySet<string>; limit?: number; onSkip?: (rel: string, why: Refusal) => void } = {}): string[] {
  const limit = opts.limit ?? 20000;
  const files = new WorkspaceFiles(root);
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    if (out.length >= limit) return;
    let entries: Dirent[];
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (out.length >= limit) return;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!opts.skipDirs?.has(e.name) && !isProtected(abs)) walk(abs, r);
      } else if (e.isFile()) {
        if (!isProtected(abs)) out.push(r);
      } else if (e.isSymbolicLink()) {
        const res = files.resolve(r);
        if (!res.ok) { opts.onSkip?.(r, res.reason); continue; }
        let st: import('node:fs').Stats;
        try { st = statSync(res.real); } catch { continue; }
        if (st.isFile()) out.push(r); // a link to a file inside: listed under its own name
        else opts.onSkip?.(r, 'not a file'); // a symlinked directory is never entered (cycles, escapes)
      }
    }
  };
  walk(files.root, '');
  return out;
}

/** lstat without throwing. */
export function lstatOrUndefined(p: string): import('node:fs').Stats | undefined {
  try { return lstatSync(p); } catch { return undefined; }
}

/** An input naming a file the step may not read: the message names the input and the path, never content. */
export class InputFileError extends Error {
  override name = 'InputFileError';
  constructor(readonly input: string, readonly given: string, readonly reason: Refusal) {
    super(`${input}: ${given} is ${reason === 'outside the workspace' ? 'outside the workspace' : reason}; not read`);
  }
}

/**
 * The realpath of a file named by a step input (`input.baseline`, `input.advisories`...), relative to
 * the workspace or absolute; throws InputFileError when it is outside the workspace or protected.
 * Undefined when it does not exist (the caller says so).
 */
export function confinedInputFile(workspace: string, given: string, input: string, opts: ConfineOptions = {}): string | undefined {
  const r = new WorkspaceFiles(workspace, opts).resolve(given);
  if (r.ok) return r.real;
  if (r.reason === 'not found') return undefined;
  throw new InputFileError(input, given, r.reason);
}

/**
 * JSON.parse whose error never quotes the text (Node's message includes a piece of it): only the
 * position, so that an error about a file says what is wrong without showing what is in it.
 */
export function parseJsonQuietly(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e instanceof Error ? e.message : '')?.[1];
    throw new Error(`${what}: not valid JSON${pos !== undefined ? ` (at character ${pos})` : ''}`);
  }
}
