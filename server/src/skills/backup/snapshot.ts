/**
 * backup-ai `snapshot`: workspace files into a gzip-compressed tar with a manifest of SHA-256 hashes.
 *
 *  - What: `input.paths` (workspace-relative files or folders), else the whole workspace without
 *    `.git`, `node_modules` and earlier backups (`.cadre/backups/`). Every read goes through
 *    WorkspaceFiles: a path outside the workspace or protected (Cadre's data directory, key material)
 *    is refused by name, never read. Symlinks to files inside are archived as the file they point to;
 *    symlinked folders are not entered.
 *  - Where: `.cadre/backups/` in the workspace, or `input.destination` (a folder, or a `.tar.gz` file
 *    name, inside the workspace). The archive is written under a `.partial` name and renamed when
 *    complete, so a half-written archive never looks like a backup.
 *  - Manifest: `<name>.manifest.json` beside the archive (format, time, every file's path, size and
 *    SHA-256, the archive's own SHA-256), and a copy of the file list inside the archive as
 *    `.cadre-backup/manifest.json`, so an archive alone can still be checked (less strongly: whoever
 *    changes the archive can change that copy too).
 */
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants as zc, createGzip } from 'node:zlib';
import { isProtected, isUnder, walkFiles, WorkspaceFiles } from '../workspace/files';
import { tarEnd, tarEntry } from './tar';

export const BACKUP_DIR = '.cadre/backups';
export const MANIFEST_ENTRY = '.cadre-backup/manifest.json';
export const MANIFEST_FORMAT = 'cadre-backup/1';
/** Files larger than this are left out and named (an archive entry is held in memory while written). */
export const MAX_FILE_BYTES = 512 * 1024 * 1024;
export const MAX_FILES = 100_000;
const SKIP_DIRS = new Set(['.git', 'node_modules']);

export interface ManifestFile { path: string; size: number; sha256: string; mode: number }

export interface Manifest {
  format: string;
  createdAt: string;
  /** What was asked: `workspace` or the given paths. */
  source: string[];
  algorithm: 'sha256';
  files: ManifestFile[];
  totalBytes: number;
  /** Only in the sidecar: the SHA-256 of the .tar.gz as written. */
  archive?: { path: string; sha256: string; bytes: number };
  /** Files left out, with why. */
  skipped: string[];
}

export class SnapshotInputError extends Error {
  override name = 'SnapshotInputError';
  constructor(readonly field: string, message: string) { super(message); }
}

/** Workspace-relative archive path for a destination (folder or `.tar.gz`), checked to stay inside the workspace. */
export function destinationOf(root: string, raw: unknown, baseName: string): { archive: string; manifest: string } {
  let rel = BACKUP_DIR;
  if (raw !== undefined && raw !== null && raw !== '') {
    if (typeof raw !== 'string') throw new SnapshotInputError('destination', 'input.destination must be a workspace-relative folder or .tar.gz file');
    rel = raw;
  }
  const abs = path.resolve(root, rel);
  if (!isUnder(abs, root)) throw new SnapshotInputError('destination', `input.destination: ${rel} is outside the workspace; nothing written`);
  // The nearest existing folder must really be inside (a symlink must not lead the write out).
  let probe = abs;
  while (!existsSync(probe)) probe = path.dirname(probe);
  const real = realpathSync(probe);
  if (!isUnder(real, realpathSync(root))) throw new SnapshotInputError('destination', `input.destination: ${rel} leads outside the workspace (through a symlink); nothing written`);
  if (isProtected(real) || isProtected(abs)) throw new SnapshotInputError('destination', `input.destination: ${rel} is protected (Cadre data or key material); nothing written`);
  const relNorm = path.relative(root, abs).split(path.sep).join('/');
  if (relNorm === '.git' || relNorm.startsWith('.git/')) throw new SnapshotInputError('destination', `input.destination: ${rel} is inside .git; nothing written`);
  const archive = /\.(tar\.gz|tgz)$/i.test(relNorm) ? relNorm : `${relNorm ? `${relNorm}/` : ''}${baseName}.tar.gz`;
  return { archive, manifest: archive.replace(/\.(tar\.gz|tgz)$/i, '') + '.manifest.json' };
}

/** The workspace-relative files to archive, and what was refused or left out. */
export function collectFiles(ws: WorkspaceFiles, paths: unknown, exclude: readonly string[]): { files: string[]; skipped: string[]; source: string[] } {
  const skipped: string[] = [];
  const excluded = (f: string) => f.startsWith(`${BACKUP_DIR}/`) || exclude.some((e) => f === e || f.startsWith(`${e}/`));
  const onSkip = (rel: string, why: string) => { skipped.push(`${rel}: ${why}`); };
  if (paths === undefined || paths === null || (Array.isArray(paths) && !paths.length) || paths === '') {
    const all = walkFiles(ws.root, { skipDirs: SKIP_DIRS, limit: MAX_FILES + 1, onSkip });
    if (all.length > MAX_FILES) throw new SnapshotInputError('paths', `the workspace holds more than ${MAX_FILES} files: name the folders to back up in input.paths`);
    return { files: all.filter((f) => !excluded(f)).sort(), skipped, source: ['workspace (without .git, node_modules, .cadre/backups)'] };
  }
  const list = typeof paths === 'string' ? [paths] : Array.isArray(paths) && paths.every((p) => typeof p === 'string' && p.trim()) ? (paths as string[]) : undefined;
  if (!list) throw new SnapshotInputError('paths', 'input.paths must be a workspace-relative file or folder, or a list of them');
  const out = new Set<string>();
  for (const given of list) {
    const r = ws.resolve(given);
    if (!r.ok) {
      if (r.reason === 'protected (Cadre data or key material)') throw new SnapshotInputError('paths', `input.paths: ${given} is protected (Cadre data or key material): skills never read Cadre's store; back it up from the server that owns it (see docs/decisions.md, "backup-ai")`);
      throw new SnapshotInputError('paths', r.reason === 'not found' ? `input.paths: ${given} does not exist in the workspace` : `input.paths: ${given} is ${r.reason}; not read`);
    }
    if (!r.rel && r.real !== ws.root) throw new SnapshotInputError('paths', `input.paths: ${given} is outside the workspace; not read`);
    if (ws.isFile(given)) { out.add(r.rel); continue; }
    const prefix = r.rel ? `${r.rel}/` : '';
    for (const f of walkFiles(r.real, { skipDirs: SKIP_DIRS, limit: MAX_FILES + 1, onSkip: (rel, why) => onSkip(prefix + rel, why) })) out.add(prefix + f);
    if (out.size > MAX_FILES) throw new SnapshotInputError('paths', `input.paths name more than ${MAX_FILES} files: back them up in parts`);
  }
  return { files: [...out].filter((f) => !excluded(f)).sort(), skipped, source: list };
}

export interface SnapshotResult { manifest: Manifest; archive: string; manifestPath: string; ignoreFile?: string }

/**
 * `.cadre/backups/.gitignore` (`*`), when the archive goes to the default folder and the file is not
 * there yet: like a tool's cache folder, the backups stay out of `git status`, so review-ai's diff and
 * readiness's clean-tree check do not take Cadre's own archives for the user's changes.
 */
export function backupIgnoreFile(root: string, dest: { archive: string }): string | undefined {
  if (!dest.archive.startsWith(`${BACKUP_DIR}/`)) return undefined;
  const rel = `${BACKUP_DIR}/.gitignore`;
  try {
    lstatSync(path.join(root, rel));
    return undefined;
  } catch {
    return rel;
  }
}

/**
 * Writes the archive and its sidecar manifest (workspace-relative paths in `dest`). Files that
 * vanish or grow too large between listing and reading are left out and named.
 */
export async function writeSnapshot(ws: WorkspaceFiles, files: readonly string[], dest: { archive: string; manifest: string }, source: string[], skippedBefore: string[], signal?: AbortSignal): Promise<SnapshotResult> {
  const manifest: Manifest = { format: MANIFEST_FORMAT, createdAt: new Date().toISOString(), source, algorithm: 'sha256', files: [], totalBytes: 0, skipped: [...skippedBefore] };
  const absArchive = path.join(ws.root, dest.archive);
  const absManifest = path.join(ws.root, dest.manifest);
  mkdirSync(path.dirname(absArchive), { recursive: true });
  const ignoreFile = backupIgnoreFile(ws.root, dest);
  // 'wx': never over an existing file or through a link planted there.
  if (ignoreFile) writeFileSync(path.join(ws.root, ignoreFile), '# Cadre backups (backup-ai): kept out of git\n*\n', { flag: 'wx' });
  const partial = `${absArchive}.partial`;
  const archiveHash = createHash('sha256');
  let bytes = 0;
  async function* blocks(): AsyncGenerator<Buffer> {
    for (const f of files) {
      if (signal?.aborted) throw new Error('snapshot cancelled');
      const r = ws.readBytes(f, MAX_FILE_BYTES);
      if (!r.ok) { manifest.skipped.push(`${f}: ${r.reason}`); continue; }
      const sha256 = createHash('sha256').update(r.buf).digest('hex');
      const mode = 0o644;
      manifest.files.push({ path: r.rel || f, size: r.buf.length, sha256, mode });
      manifest.totalBytes += r.buf.length;
      // One buffer per file: many 512-byte writes into gzip cost more than the copy.
      yield Buffer.concat(tarEntry(r.rel || f, r.buf, Date.now() / 1000, mode));
    }
    const inner = Buffer.from(JSON.stringify({ format: manifest.format, createdAt: manifest.createdAt, algorithm: 'sha256', files: manifest.files }, null, 1));
    for (const b of tarEntry(MANIFEST_ENTRY, inner, Date.now() / 1000)) yield b;
    yield tarEnd();
  }
  const tee = new Transform({ transform(chunk: Buffer, _enc, cb) { archiveHash.update(chunk); bytes += chunk.length; cb(null, chunk); } });
  try {
    await pipeline(Readable.from(blocks()), createGzip({ level: zc.Z_DEFAULT_COMPRESSION }), tee, createWriteStream(partial));
    renameSync(partial, absArchive);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
  manifest.archive = { path: dest.archive, sha256: archiveHash.digest('hex'), bytes };
  writeFileSync(absManifest, JSON.stringify(manifest, null, 2) + '\n');
  return { manifest, archive: dest.archive, manifestPath: dest.manifest, ...(ignoreFile ? { ignoreFile } : {}) };
}
