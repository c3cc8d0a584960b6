/**
 * backup-ai `verify`: restores an archive into a scratch folder (under os.tmpdir(), removed
 * afterwards) and checks every file against the manifest's SHA-256 (hashed again from the restored
 * copy, i.e. what a restore really gives back). Every difference is named: a changed file (hash or
 * size), a file of the manifest missing from the archive, a file in the archive the manifest does
 * not list, an entry whose path would escape the restore folder (never written), an archive whose
 * own hash differs from the one recorded at snapshot time, an archive that cannot be decompressed
 * or read to its end.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { isUnder } from '../workspace/files';
import { MANIFEST_ENTRY, MANIFEST_FORMAT, type Manifest, type ManifestFile } from './snapshot';
import { TarReader, type TarEntry } from './tar';

export type VerifyKind = 'changed' | 'missing' | 'unexpected' | 'unsafe-path' | 'archive-changed' | 'archive-unreadable';

export interface VerifyFinding {
  kind: VerifyKind;
  severity: 'medium' | 'high' | 'critical';
  /** The file inside the archive (or the archive itself). */
  file: string;
  message: string;
  expected?: string;
  actual?: string;
}

export interface VerifyReport {
  archive: string;
  manifestFrom: string;
  verified: boolean;
  files: number;
  matched: number;
  bytes: number;
  restoredTo: string;
  findings: VerifyFinding[];
  /** Entries that are not regular files (links, folders), not compared. */
  skippedEntries: string[];
}

/** An entry path safe to restore: relative, no `..`, no NUL, not empty. */
export function safeEntryPath(name: string): string | undefined {
  const n = name.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!n || n.includes('\0') || n.startsWith('/') || /^[A-Za-z]:/.test(n)) return undefined;
  if (n.split('/').some((s) => s === '..')) return undefined;
  return n;
}

export function parseManifest(file: string, text: string): Manifest {
  let raw: unknown;
  try { raw = JSON.parse(text); } catch { throw new Error(`${file}: not valid JSON`); }
  const m = raw as Partial<Manifest> | null;
  if (!m || typeof m !== 'object' || m.format !== MANIFEST_FORMAT || !Array.isArray(m.files)) throw new Error(`${file}: not a backup-ai manifest (format ${MANIFEST_FORMAT} with files[])`);
  for (const f of m.files) if (!f || typeof f.path !== 'string' || typeof f.sha256 !== 'string' || typeof f.size !== 'number') throw new Error(`${file}: a file entry lacks path, size or sha256`);
  return m as Manifest;
}

async function sha256File(p: string): Promise<string> {
  // Small files in one read (most of a source tree); large ones streamed.
  if (statSync(p).size <= 64 * 1024 * 1024) return createHash('sha256').update(readFileSync(p)).digest('hex');
  const h = createHash('sha256');
  await pipeline(createReadStream(p), new Writable({ write(chunk: Buffer, _e, cb) { h.update(chunk); cb(); } }));
  return h.digest('hex');
}

/**
 * Restores `archiveReal` (an absolute path the caller confined) and compares it with `sidecar` (the
 * manifest beside the archive), or, without one, with the copy inside the archive.
 */
/** Bytes an archive without a manifest beside it may expand to when restored (2 GiB). */
export const MAX_RESTORE_BYTES = 2 * 1024 * 1024 * 1024;

export async function verifyArchive(archiveRel: string, archiveReal: string, sidecar: { manifest: Manifest; from: string } | undefined, signal?: AbortSignal): Promise<VerifyReport> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'cadre-restore-'));
  const findings: VerifyFinding[] = [];
  const restored = new Map<string, { size: number }>();
  const skippedEntries: string[] = [];
  let inner: Buffer[] | undefined;
  let innerManifest: Manifest | undefined;
  try {
    let fd: number | undefined;
    let current: { rel: string; size: number } | undefined;
    const made = new Set<string>();
    const reader = new TarReader({
      entry(e: TarEntry) {
        current = undefined;
        if (e.name === MANIFEST_ENTRY) { inner = []; return; }
        inner = undefined;
        if (e.type !== '0' && e.type !== '\0' && e.type !== '7') { skippedEntries.push(`${e.name} (tar type ${e.type})`); return; }
        const rel = safeEntryPath(e.name);
        const abs = rel ? path.resolve(scratch, rel) : undefined;
        if (!rel || !abs || !isUnder(abs, scratch)) {
          findings.push({ kind: 'unsafe-path', severity: 'critical', file: e.name, message: `entry ${JSON.stringify(e.name)} (header at byte ${e.offset}) would be written outside the restore folder: not restored` });
          return;
        }
        const parent = path.dirname(abs);
        if (!made.has(parent)) { mkdirSync(parent, { recursive: true }); made.add(parent); }
        fd = openSync(abs, 'w');
        current = { rel, size: 0 };
      },
      data(chunk) {
        if (inner) inner.push(Buffer.from(chunk));
        else if (fd !== undefined && current) { writeSync(fd, chunk); current.size += chunk.length; }
      },
      end() {
        if (fd !== undefined) { closeSync(fd); fd = undefined; }
        if (current) restored.set(current.rel, { size: current.size });
        current = undefined;
        if (inner) {
          try { innerManifest = parseManifest(`${archiveRel}:${MANIFEST_ENTRY}`, Buffer.concat(inner).toString('utf8')); } catch { /* named below when it is needed */ }
          inner = undefined;
        }
      },
    });
    // The archive may come from anywhere (a repository can hold one): what it expands to is bounded by
    // what its manifest lists (tar headers and padding included), else by a fixed ceiling, so a
    // compression bomb cannot fill the disk or memory.
    const limit = sidecar
      ? sidecar.manifest.files.reduce((n, f) => n + (Number.isFinite(f.size) ? f.size : 0), 0) + 1536 * (sidecar.manifest.files.length + 8) + (1 << 20)
      : MAX_RESTORE_BYTES;
    let expanded = 0;
    try {
      await pipeline(createReadStream(archiveReal), createGunzip(), new Writable({
        write(chunk: Buffer, _e, cb) {
          if (signal?.aborted) { cb(new Error('verify cancelled')); return; }
          expanded += chunk.length;
          if (expanded > limit) { cb(new Error(`it expands beyond ${limit} bytes, more than ${sidecar ? 'its manifest lists' : 'the restore limit'}; restoring stopped`)); return; }
          try { reader.push(chunk); cb(); } catch (e) { cb(e as Error); }
        },
        final(cb) { try { reader.finish(); cb(); } catch (e) { cb(e as Error); } },
      }));
    } catch (e) {
      if (fd !== undefined) { closeSync(fd); fd = undefined; }
      if (signal?.aborted) throw e;
      findings.push({ kind: 'archive-unreadable', severity: 'critical', file: archiveRel, message: `the archive cannot be read to its end: ${(e as Error).message}; the files after that point cannot be restored` });
    }
    const expected: { manifest: Manifest; from: string } | undefined = sidecar ?? (innerManifest ? { manifest: innerManifest, from: `${archiveRel}:${MANIFEST_ENTRY} (inside the archive: it changes with the archive)` } : undefined);
    if (!expected) throw new Error(`no manifest to verify against: no ${archiveRel.replace(/\.(tar\.gz|tgz)$/i, '')}.manifest.json beside the archive and no readable ${MANIFEST_ENTRY} in it`);
    const sha = await sha256File(archiveReal);
    if (expected.manifest.archive?.sha256 && expected.manifest.archive.sha256 !== sha) {
      findings.push({ kind: 'archive-changed', severity: 'high', file: archiveRel, message: `the archive's SHA-256 differs from the one recorded when it was written`, expected: expected.manifest.archive.sha256, actual: sha });
    }
    const listed = new Map<string, ManifestFile>(expected.manifest.files.map((f) => [f.path, f]));
    let matched = 0;
    let bytes = 0;
    for (const f of expected.manifest.files) {
      const got = restored.get(f.path);
      if (!got) { findings.push({ kind: 'missing', severity: 'high', file: f.path, message: `${f.path} is in the manifest but was not restored from the archive` }); continue; }
      const actual = await sha256File(path.join(scratch, f.path));
      bytes += got.size;
      if (actual !== f.sha256 || got.size !== f.size) {
        findings.push({ kind: 'changed', severity: 'critical', file: f.path, message: `${f.path} restored with SHA-256 ${actual.slice(0, 16)}… (${got.size} bytes), the manifest says ${f.sha256.slice(0, 16)}… (${f.size} bytes)`, expected: f.sha256, actual });
      } else matched++;
    }
    for (const rel of restored.keys()) {
      if (!listed.has(rel)) findings.push({ kind: 'unexpected', severity: 'medium', file: rel, message: `${rel} is in the archive but not in the manifest` });
    }
    return {
      archive: archiveRel, manifestFrom: expected.from, verified: findings.length === 0, files: expected.manifest.files.length, matched, bytes,
      restoredTo: scratch, findings, skippedEntries,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The newest archive under a folder of the workspace (by modification time), workspace-relative. */
export function newestArchive(dir: string, list: string[], mtime: (rel: string) => number): string | undefined {
  return list.filter((f) => f.startsWith(`${dir}/`) && /\.(tar\.gz|tgz)$/i.test(f)).sort((a, b) => mtime(b) - mtime(a) || b.localeCompare(a))[0];
}
