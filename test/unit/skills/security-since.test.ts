import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Artifact, SkillContext } from '../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../support/skill-context';
import { scanSkill, secretsSkill, type SecurityReportData } from '../../../server/src/skills/security/skill';
import { scanTree } from '../../../server/src/skills/security/scanner';
import { scanWorkerInfo, setScanWorkerHost, stopScanWorkers } from '../../../server/src/skills/security/scan-pool';

const ctx = (workspace: string, action: string, tier: string, input: Record<string, unknown> = {}): SkillContext =>
  skillContext({ agentId: 'security-ai', action, workspace, tier, input, prompt: 'security scan' });
const run = async (skill: typeof scanSkill, c: SkillContext): Promise<Artifact> => (await runSkill(skill, c)).generated;

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
const token = (c: string) => `ghp_${'Zq3xV8bN1mK5tR7wY2pL9sD4fG6hJ0cA1eU'}${c}`;

describe('security-ai: findings new since a commit (real git repository)', () => {
  const repo = mkdtempSync(path.join(tmpdir(), 'cadre-since-'));
  let first = '';
  before(() => {
    git(repo, 'init', '-q', '-b', 'main');
    mkdirSync(path.join(repo, 'app/src'), { recursive: true });
    writeFileSync(path.join(repo, 'app/src/old.ts'), `export const a = 1;\nconst t = "${token('1')}";\n`);
    writeFileSync(path.join(repo, 'app/src/run.ts'), 'export function f(x: string) {\n  eval(x);\n}\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    first = git(repo, 'rev-parse', 'HEAD').trim();
    // Later: the old secret moves two lines down (same fingerprint), a new secret and a new eval appear,
    // one committed, one only in the working tree, one in an untracked file.
    writeFileSync(path.join(repo, 'app/src/old.ts'), `// header\n\nexport const a = 1;\nconst t = "${token('1')}";\n`);
    writeFileSync(path.join(repo, 'app/src/run.ts'), 'export function f(x: string) {\n  eval(x);\n  return new Function(x);\n}\n');
    git(repo, 'commit', '-q', '-am', 'second');
    writeFileSync(path.join(repo, 'app/src/new.ts'), `const t2 = "${token('2')}";\n`);
  });
  after(() => stopScanWorkers());

  it('secrets: only the secret added after the commit; the moved one is not new', async () => {
    const all = (await run(secretsSkill, ctx(repo, 'secrets', 'core'))).data as SecurityReportData;
    assert.equal(all.findings.filter((f) => f.ruleId === 'github-token').length, 2);
    const a = await run(secretsSkill, ctx(repo, 'secrets', 'core', { since: 'HEAD~1' }));
    const d = a.data as SecurityReportData;
    assert.deepEqual(d.findings.map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`), ['github-token app/src/new.ts:1']);
    assert.deepEqual(d.summary.since, { ref: 'HEAD~1', commit: first, preexisting: 1 });
    assert.match(a.text!, /Only findings new since HEAD~1 \(/);
  });

  it('scan (ULTRA) from a subdirectory workspace: the new eval only; the index and HEAD are untouched', async () => {
    const ws = path.join(repo, 'app');
    const statusBefore = git(repo, 'status', '--porcelain');
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    const indexBefore = readFileSync(path.join(repo, '.git/index'));
    const d = (await run(scanSkill, ctx(ws, 'scan', 'ultra', { since: first }))).data as SecurityReportData;
    assert.deepEqual(d.findings.map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`).sort(), ['github-token src/new.ts:1', 'review/eval src/run.ts:3']);
    assert.equal(d.summary.since?.preexisting, 2, 'the old secret and the old eval');
    assert.equal(git(repo, 'status', '--porcelain'), statusBefore);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), headBefore);
    assert.deepEqual(readFileSync(path.join(repo, '.git/index')), indexBefore);
  });

  it('is unable, saying why, for an unknown commit, an option-like ref or a workspace outside git', async () => {
    const bad = await run(secretsSkill, ctx(repo, 'secrets', 'core', { since: 'no-such-branch' }));
    assert.match(bad.unable ?? '', /does not name a commit/);
    const opt = await run(secretsSkill, ctx(repo, 'secrets', 'core', { since: '--output=/tmp/x' }));
    assert.match(opt.unable ?? '', /not a valid commit-ish/);
    const plain = mkdtempSync(path.join(tmpdir(), 'cadre-since-nogit-'));
    writeFileSync(path.join(plain, 'a.ts'), 'const a = 1;\n');
    const nogit = await run(secretsSkill, ctx(plain, 'secrets', 'core', { since: 'HEAD' }));
    assert.match(nogit.unable ?? '', /not in a git repository/);
    const notString = await run(secretsSkill, ctx(repo, 'secrets', 'core', { since: 42 }));
    assert.match(notString.unable ?? '', /input\.since must be a commit-ish/);
  });
});

describe('secret scan shared with worker threads', () => {
  after(() => setScanWorkerHost(undefined));
  function tree(): string {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-par-'));
    for (let i = 0; i < 40; i++) {
      mkdirSync(path.join(ws, `d${i % 5}`), { recursive: true });
      const body = Array.from({ length: 200 }, (_, k) => (k % 50 === 7 ? `const apiToken = "${token(String(i % 10))}";` : `const v${k} = call(${k}); // keyboard tokens`)).join('\n');
      writeFileSync(path.join(ws, `d${i % 5}`, `f${i}.ts`), `${body}\n`);
    }
    writeFileSync(path.join(ws, 'bin.dat'), Buffer.from([1, 0, 2, 0]));
    return ws;
  }
  /** A scan shared with one worker, which takes the first batch (here: every file) before the calling thread starts. */
  async function sharedScan(ws: string) {
    const before = scanWorkerInfo().batches;
    const shared = await scanTree(ws, { workers: 1 });
    return { shared, workerBatches: scanWorkerInfo().batches - before };
  }

  it('gives exactly the in-thread result', async () => {
    const ws = tree();
    try {
      assert.match(scanWorkerInfo().script ?? '', /scan-worker\.ts$/, 'under tsx the worker runs the scan-worker entry');
      const inThread = await scanTree(ws, { workers: 0 });
      const { shared, workerBatches } = await sharedScan(ws);
      assert.ok(inThread.findings.length >= 40);
      assert.ok(workerBatches > 0, 'a worker scanned a batch');
      assert.deepEqual(shared, inThread);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('gives exactly the in-thread result with the built worker (dist/scan-worker.js, after npm run build)', async function () {
    const dist = path.resolve(__dirname, '../../../dist');
    if (!existsSync(path.join(dist, 'scan-worker.js'))) this.skip();
    // As if this module ran from the skills bundle: the worker is the small entry next to it.
    await setScanWorkerHost(path.join(dist, 'skills.js'));
    assert.equal(scanWorkerInfo().script, path.join(dist, 'scan-worker.js'));
    const ws = tree();
    try {
      const inThread = await scanTree(ws, { workers: 0 });
      const { shared, workerBatches } = await sharedScan(ws);
      assert.ok(workerBatches > 0, 'the built worker scanned a batch');
      assert.deepEqual(shared, inThread);
    } finally {
      rmSync(ws, { recursive: true, force: true });
      await setScanWorkerHost(undefined);
    }
    // Another host bundle without a scan-worker.js next to it gets no workers; skills.js runs itself.
    await setScanWorkerHost(path.join(tmpdir(), 'server.js'));
    assert.equal(scanWorkerInfo().script, undefined);
    await setScanWorkerHost(path.join(tmpdir(), 'skills.js'));
    assert.equal(scanWorkerInfo().script, path.join(tmpdir(), 'skills.js'));
  });
});
