import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { skills } from '../../../../server/src/skills/builtin';
import {
  snapshotSkill, tarEnd, tarEntry, TarReader, verifySkill, type Manifest, type TarEntry, type VerifyReport,
} from '../../../../server/src/skills/backup/index';
import { protectPath } from '../../../../server/src/skills/workspace/files';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/backup/project');
const dirs: string[] = [];

function workspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-backup-'));
  dirs.push(dir);
  cpSync(FIX, dir, { recursive: true });
  return dir;
}

/** Runs a skill through its phases; every artifact's data must match the schema the skill declares (the artifact-schema gate). */
async function run(skill: typeof snapshotSkill, ws: string, input: Record<string, unknown> = {}) {
  const r = await runSkill(skill, skillContext({ agentId: 'backup-ai', action: skill.action, workspace: ws, input }));
  const check = skill.outputSchema!.safeParse(r.artifact.data);
  assert.ok(check.success, `${skill.action} data matches its schema: ${check.success ? '' : check.error.message}`);
  return r;
}

/** Copies an archive and its manifest under a new name, changing `from` to `to` (same length) inside the decompressed tar. */
function tamperedCopy(ws: string, archive: string, from: string, to: string): string {
  const tar = gunzipSync(readFileSync(path.join(ws, archive)));
  const at = tar.indexOf(from);
  assert.ok(at > 0, `${from} is in the archive`);
  tar.write(to, at);
  const copy = archive.replace(/[^/]+\.tar\.gz$/, 'tampered.tar.gz');
  writeFileSync(path.join(ws, copy), gzipSync(tar));
  cpSync(path.join(ws, archive.replace(/\.tar\.gz$/, '.manifest.json')), path.join(ws, copy.replace(/\.tar\.gz$/, '.manifest.json')));
  return copy;
}

function entries(tar: Buffer): Array<TarEntry & { content: string }> {
  const out: Array<TarEntry & { content: string }> = [];
  let cur: Buffer[] = [];
  const r = new TarReader({ entry: () => { cur = []; }, data: (c) => cur.push(Buffer.from(c)), end: (e) => out.push({ ...e, content: Buffer.concat(cur).toString('utf8') }) });
  // Fed in small uneven chunks: the reader must not depend on block-aligned input.
  for (let i = 0; i < tar.length; i += 333) r.push(tar.subarray(i, i + 333));
  r.finish();
  return out;
}

describe('backup-ai skills', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('are the embedded skills of backup-ai snapshot and verify', () => {
    assert.ok(skills.includes(snapshotSkill));
    assert.ok(skills.includes(verifySkill));
  });

  describe('snapshot', () => {
    it('archives the workspace without .git, node_modules and earlier backups, with a SHA-256 manifest, under .cadre/backups', async () => {
      const ws = workspace();
      mkdirSync(path.join(ws, 'node_modules/x'), { recursive: true });
      writeFileSync(path.join(ws, 'node_modules/x/index.js'), 'module.exports = 1;\n');
      execFileSync('git', ['init', '-q'], { cwd: ws });
      mkdirSync(path.join(ws, '.cadre/backups'), { recursive: true });
      writeFileSync(path.join(ws, '.cadre/backups/old.tar.gz'), 'an older backup');
      const r = await run(snapshotSkill, ws);
      const data = r.artifact.data as { archive: string; manifest: string; files: Array<{ path: string; sha256: string; size: number }>; archiveSha256: string };
      assert.equal(data.archive, '.cadre/backups/snapshot-e1-s0.tar.gz');
      assert.deepEqual(data.files.map((f) => f.path), ['README.md', 'config/settings.json', 'data/ledger.csv', 'src/app.js']);
      const ledger = readFileSync(path.join(ws, 'data/ledger.csv'));
      assert.equal(data.files[2]!.sha256, (await import('node:crypto')).createHash('sha256').update(ledger).digest('hex'));
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read', 'write_file']);
      // The backups folder gets a `*` .gitignore on first use: Cadre's archives never show as the user's changes.
      assert.deepEqual(r.artifact.pathsWritten, ['.cadre/backups/snapshot-e1-s0.tar.gz', '.cadre/backups/snapshot-e1-s0.manifest.json', '.cadre/backups/.gitignore']);
      assert.deepEqual(r.proposed.find((p) => p.kind === 'write_file')?.paths, r.artifact.pathsWritten, 'declared before it was written');
      assert.doesNotMatch(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ws, encoding: 'utf8' }), /\.cadre\//);
      assert.equal(r.artifact.rollback?.kind, 'revert');
      assert.ok(r.artifact.confidence >= 0.75);
      const manifest = JSON.parse(readFileSync(path.join(ws, data.manifest), 'utf8')) as Manifest;
      assert.equal(manifest.archive?.sha256, data.archiveSha256);
      assert.equal(manifest.format, 'cadre-backup/1');
      // The archive is a real tar.gz: the system's tar lists it.
      const listed = execFileSync('tar', ['-tzf', path.join(ws, data.archive)], { encoding: 'utf8' }).trim().split('\n');
      assert.deepEqual(listed, ['README.md', 'config/settings.json', 'data/ledger.csv', 'src/app.js', '.cadre-backup/manifest.json']);
      assert.deepEqual(readdirSync(path.join(ws, '.cadre/backups')).sort(), ['.gitignore', 'old.tar.gz', 'snapshot-e1-s0.manifest.json', 'snapshot-e1-s0.tar.gz'], 'no .partial left');
    });

    it('input.paths and input.destination: only the named files, to the named .tar.gz', async () => {
      const ws = workspace();
      const r = await run(snapshotSkill, ws, { paths: ['config', 'data/ledger.csv'], destination: 'backups/nightly.tar.gz' });
      const data = r.artifact.data as { archive: string; manifest: string; files: Array<{ path: string }> };
      assert.deepEqual([data.archive, data.manifest], ['backups/nightly.tar.gz', 'backups/nightly.manifest.json']);
      assert.deepEqual(data.files.map((f) => f.path), ['config/settings.json', 'data/ledger.csv']);
    });

    it('Cadre\'s store, a protected path, a path or destination outside the workspace: needs input, named, nothing read or written', async () => {
      const ws = workspace();
      const store = await run(snapshotSkill, ws, { store: true });
      assert.deepEqual(store.artifact.needsInput, { field: 'store' });
      assert.match(store.artifact.unable ?? '', /^Cadre's own store .* is protected from every skill/);
      const outside = await run(snapshotSkill, ws, { paths: ['/etc/hostname'] });
      assert.deepEqual(outside.artifact.needsInput, { field: 'paths' });
      assert.match(outside.artifact.unable ?? '', /^input\.paths: \/etc\/hostname is (outside the workspace|protected)/);
      mkdirSync(path.join(ws, 'cadre-data'));
      writeFileSync(path.join(ws, 'cadre-data/store.jsonl'), '{}\n');
      protectPath(path.join(ws, 'cadre-data'));
      const prot = await run(snapshotSkill, ws, { paths: 'cadre-data' });
      assert.match(prot.artifact.unable ?? '', /^input\.paths: cadre-data is protected \(Cadre data or key material\): skills never read Cadre's store/);
      const dest = await run(snapshotSkill, ws, { destination: '../elsewhere' });
      assert.deepEqual([dest.artifact.unable, dest.artifact.needsInput], ['input.destination: ../elsewhere is outside the workspace; nothing written', { field: 'destination' }]);
      const out = mkdtempSync(path.join(tmpdir(), 'cadre-backup-out-'));
      dirs.push(out);
      symlinkSync(out, path.join(ws, 'link-out'));
      const viaLink = await run(snapshotSkill, ws, { destination: 'link-out/b.tar.gz' });
      assert.match(viaLink.artifact.unable ?? '', /leads outside the workspace \(through a symlink\); nothing written/);
      assert.deepEqual(readdirSync(out), []);
      assert.equal(existsSync(path.join(ws, '.cadre')), false, 'nothing was written');
    });
  });

  describe('verify', () => {
    it('the untouched archive (clean twin) restores with every hash matching; the tampered copy names the changed file', async () => {
      const ws = workspace();
      const snap = await run(snapshotSkill, ws);
      const archive = (snap.artifact.data as { archive: string }).archive;
      const clean = await run(verifySkill, ws);
      const c = clean.artifact.data as VerifyReport;
      assert.deepEqual([c.verified, c.matched, c.files, c.findings], [true, 4, 4, []]);
      assert.match(clean.artifact.summary, /^verified: 4\/4 file\(s\) of \.cadre\/backups\/snapshot-e1-s0\.tar\.gz restored with the SHA-256 of \.cadre\/backups\/snapshot-e1-s0\.manifest\.json, archive hash matches$/);
      assert.deepEqual(clean.proposed.map((p) => p.kind), ['read', 'analyze']);
      assert.ok(clean.artifact.confidence >= 0.75);
      assert.equal(existsSync(c.restoredTo), false, 'the scratch folder is removed');

      const copy = tamperedCopy(ws, archive, '15000.00', '15900.00');
      const bad = await run(verifySkill, ws, { archive: copy });
      const b = bad.artifact.data as VerifyReport;
      assert.equal(b.verified, false);
      assert.deepEqual(b.findings.map((f) => `${f.kind} ${f.file}`), ['archive-changed .cadre/backups/tampered.tar.gz', 'changed data/ledger.csv']);
      assert.match(bad.artifact.summary, /^2 problem\(s\) in \.cadre\/backups\/tampered\.tar\.gz: archive-changed \.cadre\/backups\/tampered\.tar\.gz; changed data\/ledger\.csv \(3\/4 file\(s\) match/);
      assert.deepEqual(bad.artifact.findingsAfter, { count: 2, maxSeverity: 4 });
      assert.equal(bad.artifact.unable, undefined, 'a changed file is a finding, not a failure of the step');
    });

    it('without the sidecar manifest it verifies against the copy inside the archive, less confidently', async () => {
      const ws = workspace();
      const snap = await run(snapshotSkill, ws);
      const d = snap.artifact.data as { archive: string; manifest: string };
      rmSync(path.join(ws, d.manifest));
      const r = await run(verifySkill, ws, { archive: d.archive });
      const v = r.artifact.data as VerifyReport;
      assert.equal(v.verified, true);
      assert.match(v.manifestFrom, /manifest\.json \(inside the archive: it changes with the archive\)$/);
      assert.equal(r.artifact.confidence, 0.75);
    });

    it('a truncated archive is unreadable past a point: named, and the files it could not restore are missing', async () => {
      const ws = workspace();
      const d = (await run(snapshotSkill, ws)).artifact.data as { archive: string };
      const full = readFileSync(path.join(ws, d.archive));
      writeFileSync(path.join(ws, d.archive), full.subarray(0, Math.floor(full.length / 2)));
      const v = (await run(verifySkill, ws, { archive: d.archive })).artifact.data as VerifyReport;
      assert.equal(v.verified, false);
      assert.ok(v.findings.some((f) => f.kind === 'archive-unreadable'));
      assert.ok(v.findings.some((f) => f.kind === 'missing'));
    });

    it('an entry that would escape the restore folder is never written and is named', async () => {
      const ws = workspace();
      const evil = gzipSync(Buffer.concat([...tarEntry('ok.txt', Buffer.from('fine\n'), 0), ...tarEntry('../escape.txt', Buffer.from('pwned\n'), 0), tarEnd()]));
      mkdirSync(path.join(ws, 'in'));
      writeFileSync(path.join(ws, 'in/evil.tar.gz'), evil);
      const manifest: Manifest = { format: 'cadre-backup/1', createdAt: new Date(0).toISOString(), source: ['test'], algorithm: 'sha256', files: [], totalBytes: 0, skipped: [] };
      writeFileSync(path.join(ws, 'in/evil.manifest.json'), JSON.stringify(manifest));
      const v = (await run(verifySkill, ws, { archive: 'in/evil.tar.gz' })).artifact.data as VerifyReport;
      assert.deepEqual(v.findings.map((f) => `${f.kind} ${f.file}`), ['unsafe-path ../escape.txt', 'unexpected ok.txt']);
      assert.equal(existsSync(path.join(tmpdir(), 'escape.txt')), false);
    });

    it('an archive that expands far beyond what its manifest lists (a compression bomb) stops restoring, named', async () => {
      const ws = workspace();
      // 64 MB of zeros compress to ~64 KB; the manifest lists one 5-byte file.
      const bomb = gzipSync(Buffer.concat([...tarEntry('big.bin', Buffer.alloc(64 * 1024 * 1024), 0), tarEnd()]), { level: 9 });
      mkdirSync(path.join(ws, 'in'));
      writeFileSync(path.join(ws, 'in/bomb.tar.gz'), bomb);
      const manifest: Manifest = { format: 'cadre-backup/1', createdAt: new Date(0).toISOString(), source: ['test'], algorithm: 'sha256', files: [{ path: 'a.txt', size: 5, sha256: '0'.repeat(64), mode: 0o644 }], totalBytes: 5, skipped: [] };
      writeFileSync(path.join(ws, 'in/bomb.manifest.json'), JSON.stringify(manifest));
      const v = (await run(verifySkill, ws, { archive: 'in/bomb.tar.gz' })).artifact.data as VerifyReport;
      assert.equal(v.verified, false);
      const unreadable = v.findings.find((f) => f.kind === 'archive-unreadable');
      assert.match(unreadable?.message ?? '', /expands beyond \d+ bytes, more than its manifest lists/, JSON.stringify(v.findings));
    });

    it('no archive anywhere is not applicable; a missing or outside archive needs input', async () => {
      const ws = workspace();
      const none = await run(verifySkill, ws);
      assert.equal(none.artifact.notApplicable, 'no archive to verify: looked for input.archive and .cadre/backups/*.tar.gz');
      const missing = await run(verifySkill, ws, { archive: 'nope.tar.gz' });
      assert.deepEqual([missing.artifact.unable, missing.artifact.needsInput], ['input.archive: nope.tar.gz does not exist in the workspace', { field: 'archive' }]);
      const outside = await run(verifySkill, ws, { archive: '/etc/passwd' });
      assert.deepEqual(outside.artifact.needsInput, { field: 'archive' });
    });
  });

  describe('tar', () => {
    it('reads what it writes (long paths through pax headers), fed in uneven chunks', () => {
      const long = `${'d'.repeat(70)}/${'e'.repeat(70)}/file-é.txt`;
      const tar = Buffer.concat([...tarEntry('a.txt', Buffer.from('alpha\n'), 0), ...tarEntry(long, Buffer.from('x'.repeat(1000)), 0), ...tarEntry('empty', Buffer.alloc(0), 0), tarEnd()]);
      assert.deepEqual(entries(tar).map((e) => [e.name, e.size, e.content.length]), [['a.txt', 6, 6], [long, 1000, 1000], ['empty', 0, 0]]);
    });

    it('reads an archive GNU tar made, and names a damaged header by its offset', () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'cadre-gnutar-'));
      dirs.push(dir);
      writeFileSync(path.join(dir, 'one.txt'), 'one\n');
      mkdirSync(path.join(dir, 'sub'));
      writeFileSync(path.join(dir, 'sub/two.txt'), 'two two\n');
      const tar = execFileSync('tar', ['-cf', '-', '-C', dir, 'one.txt', 'sub/two.txt']);
      assert.deepEqual(entries(tar).map((e) => [e.name, e.content]), [['one.txt', 'one\n'], ['sub/two.txt', 'two two\n']]);
      const broken = Buffer.from(tar);
      broken[512 + 512 + 10] = broken[512 + 512 + 10]! ^ 0xff; // the second header
      assert.throws(() => entries(broken), /header checksum mismatch at byte 1024/);
    });
  });
});
