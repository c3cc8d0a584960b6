import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { PooledClient } from '../core-loop/client';
import { fixtureProject } from '../../support/fixture-project';

interface StepView { agentId: string; action: string; outcome: string | null; reason: string | null; confidence: number | null; summary: string | null }
interface HealthOut { findings: Array<{ kind: string; file: string; line: number | null; package: string | null }> }
interface VerifyOut { verified: boolean; matched: number; files: number; findings: Array<{ kind: string; file: string }> }

/**
 * Issue 12, maintain-ai and backup-ai over HTTP on a real server (dist/, real agent workers, embedded
 * skills, no language model) whose agents are AUTONOMOUS: every action and the verbs `maintain` and
 * `backup` complete with no approval asked, the planted facts are found with their location, the
 * clean twins raise nothing. The server's own --workspace is the drifting npm project, so the GET
 * form (input from the query string, no `source`) has something to read.
 */
describe('maintain-ai and backup-ai over HTTP', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  let a: PooledClient;
  const dirs: string[] = [];

  /** A git repository holding a copy of a fixture folder (and the registry metadata beside it). */
  const project = (fixture: string, extra: Record<string, string> = {}): string =>
    fixtureProject({ prefix: 'cadre-it-maint-', copy: { '.': fixture, 'registry.json': 'maintain/registry.json' }, files: extra }, dirs);

  before(async () => {
    ensureBuilt();
    const ws = project('maintain/npm-drift', { '.cadre.yaml': 'defaults:\n  acmf_mode: AUTONOMOUS\n' });
    server = await startStandalone(tempDir('cadre-it-maint-data-'), { CADRE_API_KEY: KEY }, ['--workspace', ws]);
    a = await PooledClient.create(server.url, 3);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function noApproval(id: string): Promise<void> {
    const r = await a.get(`/v1/approvals?status=all&execution_id=${id}`);
    assert.equal((r.body['approvals'] as unknown[]).length, 0, `no approval asked: ${r.text}`);
  }

  async function direct(agent: string, action: string, input: Json, source: string): Promise<Json> {
    const r = await a.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, input, source });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    await noApproval(r.body['executionId'] as string);
    return done;
  }

  async function verb(verbName: string, task: string, source: string): Promise<{ done: Json; steps: StepView[] }> {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['OPERATE'], verb: verbName, task, source });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    await noApproval(r.body['taskId'] as string);
    return { done, steps: (done['output'] as { steps?: StepView[] } | null)?.steps ?? [] };
  }

  it('the maintain verb runs maintain-ai health: the planted drift with file and line; the clean twin raises nothing', async () => {
    const { done, steps } = await verb('maintain', 'maintain: are the lock files in order?', project('maintain/npm-drift'));
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1200));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['maintain-ai', 'health', 'completed']]);
    assert.match(steps[0]!.summary ?? '', /^6 finding\(s\): lock-unsatisfied package-lock\.json:30 \(express\); engines-running package\.json:10 \(node\); lock-missing package\.json:15 \(left-pad\)/);
    assert.ok((steps[0]!.confidence ?? 0) >= 0.75);
    const clean = await verb('maintain', 'maintain: are the lock files in order?', project('maintain/npm-clean'));
    assert.equal(clean.done['status'], 'completed');
    assert.match(clean.steps[0]!.summary ?? '', /^nothing found: no lock-file drift and no engines mismatch; examined 3 file\(s\)/);
  });

  it('health and verify in the GET form read the server workspace (input from the query string); a broken lock file is needs_input naming file and line', async () => {
    const r = await a.get('/api/agents/maintain-ai/health?path=.');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body['status'], 'completed', r.text.slice(0, 1000));
    const out = r.body['output'] as HealthOut;
    assert.ok(out.findings.some((f) => f.kind === 'lock-missing' && f.file === 'package.json' && f.line === 15 && f.package === 'left-pad'), JSON.stringify(out.findings));
    const verify = await a.get('/api/agents/backup-ai/verify');
    assert.equal(verify.status, 200, verify.text);
    assert.deepEqual([verify.body['status'], verify.body['outcome']], ['completed', 'not_applicable']);
    assert.match(String(verify.body['reason']), /no archive to verify: looked for input\.archive and \.cadre\/backups\/\*\.tar\.gz$/);
    const broken = project('maintain/npm-clean', { 'package-lock.json': '{\n  "lockfileVersion": 3,\n  "packages": {\n' });
    const bad = await direct('maintain-ai', 'health', {}, broken);
    assert.deepEqual([bad['status'], bad['outcome']], ['failed', 'needs_input']);
    assert.equal(bad['reason'], 'maintain-ai health needs input: package-lock.json:4: not valid JSON');
  });

  it('dependencies: outdated and deprecated against the registry file, batches with risk notes; the clean twin is current', async () => {
    const done = await direct('maintain-ai', 'dependencies', { registry: 'registry.json' }, project('maintain/npm-drift'));
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1200));
    const out = done['output'] as { dependencies: Array<{ name: string; deprecated: string | null; line: number }>; batches: Array<{ bump: string; risk: string; updates: unknown[] }> };
    assert.deepEqual(out.batches.map((b) => [b.bump, b.updates.length, b.risk.split(':')[0]]), [['patch', 2, 'low'], ['minor', 3, 'medium'], ['major', 3, 'high']]);
    assert.deepEqual(out.dependencies.filter((d) => d.deprecated).map((d) => [d.name, d.line]), [['left-pad', 15]]);
    const schemaGate = (done['gates'] as Array<{ gate: string; status: string; reason: string }>).find((g) => g.gate === 'artifact-schema')!;
    assert.deepEqual([schemaGate.status, schemaGate.reason], ['pass', 'data matches the maintain-ai dependencies schema']);
    assert.equal(done['passed'], true, 'outdated packages are findings, not a failed gate');
    const clean = await direct('maintain-ai', 'dependencies', { registry: 'registry.json' }, project('maintain/npm-clean'));
    assert.equal(clean['status'], 'completed');
    assert.deepEqual((clean['output'] as { batches: unknown[] }).batches, []);
  });

  it('fix applies the patch batch on a new branch of the project, checkout untouched, with no approval in AUTONOMOUS', async () => {
    const dir = project('maintain/npm-drift');
    const done = await direct('maintain-ai', 'fix', { registry: 'registry.json', batch: 'patch' }, dir);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as { mode: string; branch: string };
    assert.equal(out.mode, 'branch');
    assert.equal(done['passed'], true, JSON.stringify(done['gates']));
    const rollback = (done['gates'] as Array<{ gate: string; status: string; reason: string }>).find((g) => g.gate === 'rollback-ready')!;
    assert.deepEqual([rollback.status, rollback.reason], ['pass', `rollback by branch ${out.branch}`]);
    const committed = JSON.parse(execFileSync('git', ['show', `${out.branch}:package.json`], { cwd: dir, encoding: 'utf8' })) as { dependencies: Record<string, string> };
    assert.equal(committed.dependencies['lodash'], '^4.17.21');
    assert.equal(execFileSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim(), 'main');
    assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }), '');
  });

  it('the backup verb snapshots the project; verify restores the clean archive and names the file changed in a tampered copy', async () => {
    const dir = project('backup/project');
    const { done, steps } = await verb('backup', 'backup: snapshot the service before the migration', dir);
    assert.equal(done['status'], 'completed', JSON.stringify(done['output']).slice(0, 1500));
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['backup-ai', 'snapshot', 'completed']]);
    const archive = /written to (\.cadre\/backups\/snapshot-[a-z0-9]+-s0\.tar\.gz)/.exec(steps[0]!.summary ?? '')?.[1];
    assert.ok(archive && existsSync(path.join(dir, archive)), steps[0]!.summary ?? '');
    // registry.json rides along in every project copy: 5 files.
    assert.match(steps[0]!.summary ?? '', /^snapshot of 5 file\(s\)/);

    const clean = await direct('backup-ai', 'verify', {}, dir);
    assert.equal(clean['status'], 'completed', JSON.stringify(clean).slice(0, 1200));
    const c = clean['output'] as VerifyOut;
    assert.deepEqual([c.verified, c.matched, c.files, c.findings], [true, 5, 5, []]);

    const tar = gunzipSync(readFileSync(path.join(dir, archive)));
    tar.write('15900.00', tar.indexOf('15000.00'));
    writeFileSync(path.join(dir, '.cadre/backups/copy.tar.gz'), gzipSync(tar));
    cpSync(path.join(dir, archive.replace(/\.tar\.gz$/, '.manifest.json')), path.join(dir, '.cadre/backups/copy.manifest.json'));
    const bad = await direct('backup-ai', 'verify', { archive: '.cadre/backups/copy.tar.gz' }, dir);
    assert.equal(bad['status'], 'completed', 'a changed file is a finding of the archive, not a failure of the step');
    assert.deepEqual([clean['passed'], bad['passed']], [true, true], JSON.stringify(bad['gates']));
    const b = bad['output'] as VerifyOut;
    assert.equal(b.verified, false);
    assert.deepEqual(b.findings.map((f) => `${f.kind} ${f.file}`), ['archive-changed .cadre/backups/copy.tar.gz', 'changed data/ledger.csv']);
  });

  it('snapshot as a direct action with paths and a destination: only those files, every gate passed (rollback by deleting the new files)', async () => {
    const done = await direct('backup-ai', 'snapshot', { paths: ['config', 'data'], destination: 'backups/pre-migration.tar.gz' }, project('backup/project'));
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1200));
    assert.equal(done['passed'], true, JSON.stringify(done['gates']));
    const out = done['output'] as { archive: string; files: Array<{ path: string }> };
    assert.deepEqual([out.archive, out.files.map((f) => f.path)], ['backups/pre-migration.tar.gz', ['config/settings.json', 'data/ledger.csv']]);
    const gates = done['gates'] as Array<{ gate: string; status: string; reason: string }>;
    assert.equal(gates.find((g) => g.gate === 'rollback-ready')!.reason, 'rollback by revert delete backups/pre-migration.tar.gz and backups/pre-migration.manifest.json');
    assert.equal(gates.find((g) => g.gate === 'artifact-schema')!.reason, 'data matches the backup-ai snapshot schema');
  });

  it('snapshot asked for Cadre\'s store is needs_input saying the store is protected', async () => {
    const done = await direct('backup-ai', 'snapshot', { store: true }, project('backup/project'));
    assert.deepEqual([done['status'], done['outcome']], ['failed', 'needs_input']);
    assert.match(String(done['reason']), /^backup-ai snapshot needs input: Cadre's own store .* is protected from every skill/);
  });
});
