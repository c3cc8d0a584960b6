/**
 * backup-ai's embedded skills:
 *
 *  - `snapshot` (the verb `backup`): workspace files into `.cadre/backups/<name>.tar.gz` (or
 *    `input.destination`) with a SHA-256 manifest beside it (snapshot.ts). The write runs once per
 *    execution step through the side-effect ledger (a resumed step finds the archive of its
 *    interrupted attempt by its deterministic name). Cadre's own store is protected from every
 *    skill: a request for it (`input.store: true`, or a protected path) needs another input, and the
 *    result says where the store's backup belongs.
 *  - `verify`: restores an archive (`input.archive`, default the newest under `.cadre/backups/`)
 *    into a scratch folder and checks every hash (verify.ts). A changed file is a finding named by
 *    its path, never a failed gate of the step.
 */
import { existsSync, statSync } from 'node:fs';
import type { ProposedAction } from '../../engine/acmf/records';
import type { Artifact, Evidence, Skill, SkillContext } from '../../engine/rigor/skill';
import { walkFiles, WorkspaceFiles } from '../workspace/files';
import { shortId } from '../coding/git';
import { BACKUP_DIR, backupIgnoreFile, collectFiles, destinationOf, SnapshotInputError, writeSnapshot, type Manifest, type SnapshotResult } from './snapshot';
import { snapshotDataSchema, verifyDataSchema } from './schemas';
import { newestArchive, parseManifest, verifyArchive, type VerifyReport } from './verify';
import { backupInputSchema } from '../operate-inputs';

const RANK = { medium: 2, high: 3, critical: 4 } as const;
/** Files listed in the step's data (kept in the store); the manifest beside the archive lists them all. */
export const DATA_FILES = 1000;

export const STORE_REFUSAL = "Cadre's own store (the data directory: executions, audit trail, keys) is protected from every skill, backup-ai included, so it is not archived here; back it up from the server that owns it (stop it, or take the archive while no execution writes, then copy the data directory; `cadre store stats` shows where it is). input.paths takes workspace files and folders";

interface SnapshotPlan { files: string[]; skipped: string[]; source: string[]; dest: { archive: string; manifest: string } }
interface VerifyPlan { archive: string; real: string; sidecar?: { manifest: Manifest; from: string } }

function archiveBase(ctx: SkillContext): string {
  // Deterministic per execution step: a retried or resumed step writes, or finds, the same archive.
  return `snapshot-${shortId(ctx.request.executionId)}-s${ctx.request.step}`;
}

function planSnapshot(ctx: SkillContext): SnapshotPlan | { field: string; message: string } {
  const input = ctx.request.input;
  if (input['store'] === true || input['store'] === 'true') return { field: 'store', message: STORE_REFUSAL };
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  try {
    const dest = destinationOf(ws.root, input['destination'], archiveBase(ctx));
    const destDir = dest.archive.includes('/') ? dest.archive.slice(0, dest.archive.lastIndexOf('/')) : '';
    const exclude = [dest.archive, dest.manifest, ...(destDir && destDir !== BACKUP_DIR ? [destDir] : [])];
    const c = collectFiles(ws, input['paths'], exclude);
    return { ...c, dest };
  } catch (e) {
    if (e instanceof SnapshotInputError) return { field: e.field, message: e.message };
    throw e;
  }
}

function planVerify(ctx: SkillContext): VerifyPlan | { field: string; message: string } | { none: string } {
  const ws = new WorkspaceFiles(ctx.request.workspace!);
  const raw = ctx.request.input['archive'];
  let archive: string;
  if (raw === undefined || raw === null || raw === '') {
    const list = walkFiles(ws.root, { skipDirs: new Set(['.git', 'node_modules']), limit: 50_000 }).filter((f) => f.startsWith(`${BACKUP_DIR}/`));
    const found = newestArchive(BACKUP_DIR, list, (rel) => { try { return statSync(`${ws.root}/${rel}`).mtimeMs; } catch { return 0; } });
    if (!found) return { none: `no archive to verify: looked for input.archive and ${BACKUP_DIR}/*.tar.gz` };
    archive = found;
  } else if (typeof raw !== 'string') return { field: 'archive', message: 'input.archive must be a workspace-relative .tar.gz file' };
  else archive = raw;
  const r = ws.resolve(archive);
  if (!r.ok) return { field: 'archive', message: r.reason === 'not found' ? `input.archive: ${archive} does not exist in the workspace` : `input.archive: ${archive} is ${r.reason}; not read` };
  if (!ws.isFile(archive)) return { field: 'archive', message: `input.archive: ${archive} is not a file` };
  ws.read.add(r.real);
  const rel = r.rel || archive;
  const manifestRaw = ctx.request.input['manifest'];
  const manifestRel = typeof manifestRaw === 'string' && manifestRaw ? manifestRaw : rel.replace(/\.(tar\.gz|tgz)$/i, '') + '.manifest.json';
  const m = ws.readText(manifestRel, 256 * 1024 * 1024);
  if (!m.ok) {
    if (typeof manifestRaw === 'string' && manifestRaw) return { field: 'manifest', message: m.reason === 'not found' ? `input.manifest: ${manifestRaw} does not exist in the workspace` : `input.manifest: ${manifestRaw} is ${m.reason}; not read` };
    return { archive: rel, real: r.real };
  }
  try {
    return { archive: rel, real: r.real, sidecar: { manifest: parseManifest(m.rel, m.text), from: m.rel } };
  } catch (e) {
    return { field: 'manifest', message: (e as Error).message };
  }
}

function mib(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

export function renderSnapshot(r: SnapshotResult): string {
  const m = r.manifest;
  const out = ['# backup-ai snapshot', '', `Archive: ${r.archive} (${mib(m.archive?.bytes ?? 0)}, SHA-256 ${m.archive?.sha256}); manifest: ${r.manifestPath}.`, '', `${m.files.length} file(s), ${mib(m.totalBytes)}, from ${m.source.join(', ')}.`, ''];
  out.push('| file | bytes | SHA-256 |', '|---|---|---|', ...m.files.slice(0, 200).map((f) => `| ${f.path} | ${f.size} | ${f.sha256} |`));
  if (m.files.length > 200) out.push('', `and ${m.files.length - 200} more in the manifest.`);
  if (m.skipped.length) out.push('', '## Left out', '', ...m.skipped.map((s) => `- ${s}`));
  out.push('', `Cadre's own store is not in this archive: ${STORE_REFUSAL.split('; ')[0]}.`);
  return out.join('\n');
}

export function renderVerify(r: VerifyReport): string {
  const out = ['# backup-ai verify', '', `Archive ${r.archive} restored into a scratch folder (removed afterwards) and checked against ${r.manifestFrom}: ${r.matched}/${r.files} file(s) match (${mib(r.bytes)} restored).`, ''];
  if (!r.findings.length) out.push('Every SHA-256 matches: the archive restores what was backed up.');
  else out.push('| severity | kind | file | message |', '|---|---|---|---|', ...r.findings.map((f) => `| ${f.severity} | ${f.kind} | ${f.file} | ${f.message} |`));
  if (r.skippedEntries.length) out.push('', '## Entries not compared', '', ...r.skippedEntries.map((s) => `- ${s}`));
  return out.join('\n');
}

function makeSnapshotSkill(): Skill {
  const prepared = new WeakMap<Evidence, ReturnType<typeof planSnapshot>>();
  const kind = 'backup-snapshot';
  return {
    agentId: 'backup-ai',
    action: 'snapshot',
    inputSchema: backupInputSchema,
    needs: ['workspace'],
    outputSchema: snapshotDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace to back up'); return evidence; }
      const p = planSnapshot(ctx);
      prepared.set(evidence, p);
      if ('field' in p) evidence.constraints.push(p.message);
      else {
        evidence.items.push({ source: p.source.join(', '), detail: `${p.files.length} file(s) to archive into ${p.dest.archive}`, weight: 0.8 });
        // Every file read lies under these (the given paths, or the workspace itself), all confined by WorkspaceFiles.
        const given = ctx.request.input['paths'];
        evidence.pathsRead.push(...(typeof given === 'string' ? [given] : Array.isArray(given) && given.length ? (given as string[]) : ['.']));
        evidence.constraints.push(...p.skipped.map((s) => `${s}, not archived`));
      }
      ctx.progress(30, 0.6);
      return evidence;
    },
    propose(ctx, evidence) {
      const p = prepared.get(evidence);
      if (!p || 'field' in p || !p.files.length) return [];
      const ignore = ctx.request.workspace ? backupIgnoreFile(ctx.request.workspace, p.dest) : undefined;
      const actions: ProposedAction[] = [
        { kind: 'read', description: `read ${p.files.length} file(s) to archive`, paths: p.files.slice(0, 500) },
        { kind: 'write_file', description: `write the archive ${p.dest.archive} and its manifest ${p.dest.manifest}`, paths: [p.dest.archive, p.dest.manifest, ...(ignore ? [ignore] : [])] },
      ];
      return actions;
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `backup-ai snapshot: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      const wsPath = ctx.request.workspace;
      if (!wsPath || !existsSync(wsPath)) return unable('no workspace was given to back up');
      const p = prepared.get(evidence) ?? planSnapshot(ctx);
      if ('field' in p) return unable(p.message, p.field);
      if (!p.files.length) {
        const why = `nothing to back up: ${p.source.join(', ')} holds no file`;
        return { kind, summary: `backup-ai snapshot: not applicable: ${why}`, goalRef, confidence: 1, data: null, notApplicable: why, tokens: 0 };
      }
      const ws = new WorkspaceFiles(wsPath);
      const result = await ctx.once<SnapshotResult>(`backup-ai:snapshot:${ctx.request.executionId}:${ctx.request.step}`,
        () => writeSnapshot(ws, p.files, p.dest, p.source, p.skipped, ctx.signal),
        {
          // After a crash between writing and recording: the archive is complete when its sidecar manifest exists (written last).
          reconcile: async () => {
            const m = ws.readText(p.dest.manifest);
            if (!m.ok) return undefined;
            try { return { manifest: parseManifest(m.rel, m.text), archive: p.dest.archive, manifestPath: p.dest.manifest }; } catch { return undefined; }
          },
        });
      const m = result.manifest;
      const share = p.files.length ? m.files.length / p.files.length : 1;
      const confidence = Math.round(0.9 * (0.5 + 0.5 * share) * 100) / 100;
      ctx.progress(100, confidence);
      const left = m.skipped.length ? `; ${m.skipped.length} left out (${m.skipped.slice(0, 3).join('; ')}${m.skipped.length > 3 ? '; ...' : ''})` : '';
      return {
        kind, goalRef, confidence, tokens: 0,
        summary: `snapshot of ${m.files.length} file(s) (${mib(m.totalBytes)}) written to ${result.archive} (${mib(m.archive?.bytes ?? 0)}, SHA-256 ${m.archive?.sha256.slice(0, 16)}…), manifest ${result.manifestPath}${left}`,
        data: { archive: result.archive, manifest: result.manifestPath, archiveSha256: m.archive?.sha256 ?? null, archiveBytes: m.archive?.bytes ?? 0, fileCount: m.files.length, files: m.files.slice(0, DATA_FILES), totalBytes: m.totalBytes, source: m.source, skipped: m.skipped, createdAt: m.createdAt, store: 'not included: protected from skills' },
        text: renderSnapshot(result),
        pathsWritten: [result.archive, result.manifestPath, ...(result.ignoreFile ? [result.ignoreFile] : [])],
        actionsTaken: [{ kind: 'write_file', description: `wrote ${result.archive} and ${result.manifestPath}${result.ignoreFile ? ` (and ${result.ignoreFile})` : ''}`, paths: [result.archive, result.manifestPath, ...(result.ignoreFile ? [result.ignoreFile] : [])] }],
        // Two new files and nothing else changed: removing them undoes the step.
        rollback: { kind: 'revert', ref: `delete ${result.archive} and ${result.manifestPath}` },
      };
    },
  };
}

function makeVerifySkill(): Skill {
  const prepared = new WeakMap<Evidence, ReturnType<typeof planVerify>>();
  const kind = 'backup-verify';
  return {
    agentId: 'backup-ai',
    action: 'verify',
    inputSchema: backupInputSchema,
    needs: ['workspace'],
    outputSchema: verifyDataSchema,
    async research(ctx) {
      const evidence: Evidence = { items: [], constraints: [], pathsRead: [] };
      const ws = ctx.request.workspace;
      if (!ws || !existsSync(ws)) { evidence.constraints.push('no workspace holding an archive'); return evidence; }
      const p = planVerify(ctx);
      prepared.set(evidence, p);
      if ('field' in p) evidence.constraints.push(p.message);
      else if ('none' in p) evidence.constraints.push(p.none);
      else {
        evidence.items.push({ source: p.archive, detail: `archive to restore, manifest ${p.sidecar ? p.sidecar.from : 'inside the archive'}`, weight: p.sidecar ? 0.8 : 0.5 });
        evidence.pathsRead.push(p.archive, ...(p.sidecar ? [p.sidecar.from] : []));
      }
      ctx.progress(20, 0.5);
      return evidence;
    },
    propose(_ctx, evidence) {
      const p = prepared.get(evidence);
      if (!p || 'field' in p || 'none' in p) return [];
      // The restore goes to the skill's own scratch folder under the OS temp dir (removed afterwards), not the workspace.
      return [
        { kind: 'read', description: `read the archive${p.sidecar ? ' and its manifest' : ''}`, paths: [p.archive, ...(p.sidecar ? [p.sidecar.from] : [])] },
        { kind: 'analyze', description: 'restore into a scratch folder under the OS temp dir and compare every SHA-256 with the manifest' },
      ];
    },
    async generate(ctx, evidence): Promise<Artifact> {
      const goalRef = ctx.request.goal.id;
      const unable = (why: string, field?: string): Artifact => ({ kind, summary: `backup-ai verify: unable: ${why}`, goalRef, confidence: 0, data: null, unable: why, ...(field ? { needsInput: { field } } : {}), tokens: 0 });
      const wsPath = ctx.request.workspace;
      if (!wsPath || !existsSync(wsPath)) return unable('no workspace was given holding an archive');
      const p = prepared.get(evidence) ?? planVerify(ctx);
      if ('field' in p) return unable(p.message, p.field);
      if ('none' in p) return { kind, summary: `backup-ai verify: not applicable: ${p.none}`, goalRef, confidence: 1, data: null, notApplicable: p.none, tokens: 0 };
      let r: VerifyReport;
      try {
        r = await verifyArchive(p.archive, p.real, p.sidecar, ctx.signal);
      } catch (e) {
        return unable((e as Error).message, 'manifest');
      }
      // Complete evidence (a sidecar manifest with the archive's hash, every file restored) is confident; the in-archive copy only vouches for itself.
      const confidence = Math.round((p.sidecar ? 0.92 : 0.75) * 100) / 100;
      ctx.progress(100, confidence);
      const n = r.findings.length;
      const summary = n
        ? `${n} problem(s) in ${r.archive}: ${r.findings.slice(0, 4).map((f) => `${f.kind} ${f.file}`).join('; ')}${n > 4 ? `; and ${n - 4} more` : ''} (${r.matched}/${r.files} file(s) match ${r.manifestFrom})`
        : `verified: ${r.matched}/${r.files} file(s) of ${r.archive} restored with the SHA-256 of ${r.manifestFrom}${p.sidecar?.manifest.archive ? ', archive hash matches' : ''}`;
      return {
        kind, summary, goalRef, confidence, tokens: 0, data: r, text: renderVerify(r),
        findingsAfter: { count: n, maxSeverity: n ? Math.max(...r.findings.map((f) => RANK[f.severity])) : 0 },
      };
    },
  };
}

export const snapshotSkill: Skill = makeSnapshotSkill();
export const verifySkill: Skill = makeVerifySkill();
