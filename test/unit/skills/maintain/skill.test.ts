import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import {
  applyBatch, dependenciesSkill, fixSkill, healthSkill, parsePackageJson, planUpdates, raiseRange, type HealthReport, type Packument,
} from '../../../../server/src/skills/maintain/index';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/maintain');
const dirs: string[] = [];

/** A workspace copied from a fixture folder, with the registry metadata beside it; a git repository when asked. */
function workspace(fixture: string, git = false): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-maintain-'));
  dirs.push(dir);
  cpSync(path.join(FIX, fixture), dir, { recursive: true });
  cpSync(path.join(FIX, 'registry.json'), path.join(dir, 'registry.json'));
  if (git) {
    const sh = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', ...args], { cwd: dir, encoding: 'utf8' });
    sh('init', '-q', '-b', 'main');
    sh('add', '.');
    sh('commit', '-q', '-m', 'project');
  }
  return dir;
}

const git = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
/** Runs a skill through its phases; every artifact's data must match the schema the skill declares (the artifact-schema gate). */
async function run(skill: typeof healthSkill, ws: string, input: Record<string, unknown> = {}, allowed?: (k: string) => boolean) {
  const r = await runSkill(skill, skillContext({ agentId: 'maintain-ai', action: skill.action, workspace: ws, input, ...(allowed ? { allowed } : {}) }));
  const check = skill.outputSchema!.safeParse(r.artifact.data);
  assert.ok(check.success, `${skill.action} data matches its schema: ${check.success ? '' : check.error.message}`);
  return r;
}

function packument(name: string, latest: string, versions: Record<string, string | undefined>): Packument {
  return { name, latest, source: 'test', versions: new Map(Object.entries(versions).map(([v, d]) => [v, d ? { deprecated: d } : {}])) };
}

describe('maintain-ai skills', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('are the embedded skills of maintain-ai health, dependencies and fix', () => {
    for (const s of [healthSkill, dependenciesSkill, fixSkill]) assert.ok(skills.includes(s), s.action);
  });

  describe('health', () => {
    it('reports the planted drift with file and line, proposes only reads, and is confident on complete input', async () => {
      const r = await run(healthSkill, workspace('npm-drift'));
      const data = r.artifact.data as HealthReport;
      assert.equal(data.findings.length, 6);
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read']);
      assert.deepEqual(r.evidence.pathsRead, ['package.json', 'package-lock.json', '.nvmrc']);
      assert.match(r.artifact.summary, /^6 finding\(s\): lock-unsatisfied package-lock\.json:30 \(express\)/);
      assert.ok(r.artifact.confidence >= 0.75, String(r.artifact.confidence));
      assert.deepEqual(r.artifact.findingsAfter, { count: 6, maxSeverity: 3 });
      assert.match(r.artifact.text ?? '', /\| high \| lock-missing \| package\.json:15 \|/);
    });

    it('the clean twin: nothing found, completed, saying what was examined', async () => {
      const r = await run(healthSkill, workspace('npm-clean'));
      assert.equal(r.artifact.unable, undefined);
      assert.match(r.artifact.summary, /^nothing found: no lock-file drift and no engines mismatch; examined 3 file\(s\) \(package\.json, package-lock\.json, \.nvmrc\), 2 direct dependencies/);
      assert.deepEqual(r.artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    });

    it('a package of a workspaces monorepo is not blamed for having no lock of its own: the root lock is named', async () => {
      const ws = workspace('npm-clean');
      mkdirSync(path.join(ws, 'packages/a'), { recursive: true });
      cpSync(path.join(FIX, 'yarn-drift/package.json'), path.join(ws, 'packages/a/package.json'));
      const r = await run(healthSkill, ws, { path: 'packages/a' });
      const data = r.artifact.data as HealthReport;
      assert.deepEqual(data.findings, []);
      assert.deepEqual(data.examined.notCompared, ['packages/a/package.json: its dependencies are locked in package-lock.json (a workspaces monorepo): run health on that folder']);
      const lone = workspace('yarn-drift');
      rmSync(path.join(lone, 'yarn.lock'));
      const none = await run(healthSkill, lone);
      assert.deepEqual((none.artifact.data as HealthReport).findings.map((f) => f.kind), ['no-lockfile']);
    });

    it('a folder with no manifest is not applicable, naming where it looked', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'cadre-maintain-empty-'));
      dirs.push(dir);
      writeFileSync(path.join(dir, 'README.md'), '# nothing\n');
      const r = await run(healthSkill, dir);
      assert.match(r.artifact.notApplicable ?? '', /^no manifest, lock file or node version pin to check: looked for package\.json, package-lock\.json/);
    });

    it('an unreadable lock file needs input, naming file and line; a path outside the workspace is refused by name', async () => {
      const ws = workspace('npm-clean');
      writeFileSync(path.join(ws, 'package-lock.json'), '{\n  "lockfileVersion": 3,\n  "packages": {\n');
      const r = await run(healthSkill, ws);
      assert.equal(r.artifact.unable, 'package-lock.json:4: not valid JSON');
      assert.deepEqual(r.artifact.needsInput, { field: 'path' });
      const out = await run(healthSkill, workspace('npm-clean'), { path: '../../etc' });
      assert.match(out.artifact.unable ?? '', /^input\.path: \.\.\/\.\.\/etc\/ is outside the workspace; not read$/);
      assert.deepEqual(out.artifact.needsInput, { field: 'path' });
    });
  });

  describe('dependencies', () => {
    it('finds the outdated and the deprecated packages against the registry file and plans patch, minor and major batches with a risk note each', async () => {
      const r = await run(dependenciesSkill, workspace('npm-drift'), { registry: 'registry.json' });
      const data = r.artifact.data as ReturnType<typeof planUpdates> & { registry: string };
      assert.match(r.artifact.summary, /^5 outdated and 1 deprecated of 6 judged direct dependencies \(deprecated: left-pad@1\.3\.0 package\.json:15\); plan: patch 2, minor 3, major 3$/);
      const batch = (b: string) => data.batches.find((x) => x.bump === b)!.updates.map((u) => `${u.name} ${u.from}->${u.to} ${u.newRange}`);
      assert.deepEqual(batch('patch'), ['lodash 4.17.20->4.17.21 ^4.17.21', 'typescript 5.1.3->5.1.6 ~5.1.6']);
      // mocha 10.3.0 is deprecated: never a target; express's prerelease 5.0.0-beta.3 neither.
      assert.deepEqual(batch('minor'), ['express 4.17.3->4.19.2 ^4.19.2', 'mocha 10.2.0->10.4.0 ^10.4.0', 'typescript 5.1.3->5.4.5 ~5.4.5']);
      assert.deepEqual(batch('major'), ['chalk 4.1.2->5.3.0 ^5.3.0', 'express 4.17.3->5.1.0 ^5.1.0', 'mocha 10.2.0->11.0.1 ^11.0.1']);
      assert.deepEqual(data.batches.map((b) => b.risk.split(':')[0]), ['low', 'medium', 'high']);
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read'], 'with a registry file nothing goes to the network');
      assert.ok(r.artifact.confidence >= 0.75);
      assert.deepEqual(r.artifact.findingsAfter, { count: 6, maxSeverity: 2 });
    });

    it('the clean twin is current: nothing outdated, nothing deprecated, no batch', async () => {
      const r = await run(dependenciesSkill, workspace('npm-clean'), { registry: 'registry.json' });
      assert.equal(r.artifact.summary, '0 outdated and 0 deprecated of 2 judged direct dependencies; plan: nothing to update');
      assert.deepEqual(r.artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    });

    it('without registry metadata it proposes http_request; refused by ACMF it needs input.registry and guesses nothing', async () => {
      const r = await run(dependenciesSkill, workspace('npm-clean'), {}, (k) => k !== 'http_request');
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read', 'http_request']);
      assert.match(r.artifact.unable ?? '', /^no registry metadata: give input\.registry .* or let ACMF allow http_request to https:\/\/registry\.npmjs\.org\//);
      assert.deepEqual(r.artifact.needsInput, { field: 'registry' });
    });

    it('as a step of a domain workflow (nobody gave it input) without registry metadata it is not applicable, not needs_input', async () => {
      const ctx = skillContext({ agentId: 'maintain-ai', action: 'fix', workspace: workspace('npm-drift', true), input: {}, allowed: (k) => k !== 'http_request' });
      ctx.request.goal.workflow = 'operate';
      const r = await runSkill(fixSkill, ctx);
      assert.equal(r.artifact.unable, undefined);
      assert.match(r.artifact.notApplicable ?? '', /^no registry metadata: give input\.registry .* \(step of the operate workflow: nothing to update without registry metadata\)$/);
    });

    it('input.online: false keeps it off the network: no http_request proposed, input.registry needed', async () => {
      const r = await run(dependenciesSkill, workspace('npm-clean'), { online: false });
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read']);
      assert.deepEqual([r.artifact.unable, r.artifact.needsInput], ['no registry metadata: give input.registry (a workspace file of npm packuments); input.online is false, so the registry is not asked', { field: 'registry' }]);
    });

    it('a registry file that is not packuments needs input, naming the file and line', async () => {
      const ws = workspace('npm-clean');
      writeFileSync(path.join(ws, 'bad.json'), '[\n  {"name": "lodash", "versions": []}\n]\n');
      const r = await run(dependenciesSkill, ws, { registry: 'bad.json' });
      assert.equal(r.artifact.unable, 'bad.json:2: lodash: versions must be an object of version → manifest');
      assert.deepEqual(r.artifact.needsInput, { field: 'registry' });
    });
  });

  describe('planUpdates', () => {
    it('a 0.x minor step is breaking (major batch); a range it cannot rewrite is kept and said so', () => {
      const pkg = parsePackageJson('package.json', '{\n "dependencies": {\n  "zed": "^0.2.1",\n  "wide": ">=1.0.0 <3"\n }\n}\n');
      const plan = planUpdates(pkg, undefined, new Map([
        ['zed', packument('zed', '0.3.0', { '0.2.1': undefined, '0.2.4': undefined, '0.3.0': undefined })],
        ['wide', packument('wide', '1.2.0', { '1.0.0': 'old', '1.1.0': undefined, '1.2.0': undefined })],
      ]));
      assert.deepEqual(plan.batches.map((b) => [b.bump, b.updates.map((u) => `${u.name}->${u.to}:${u.newRange}`)]), [
        ['patch', ['zed->0.2.4:^0.2.4']],
        ['minor', ['wide->1.2.0:null']],
        ['major', ['zed->0.3.0:^0.3.0']],
      ]);
      assert.equal(plan.dependencies.find((d) => d.name === 'wide')!.deprecated, 'old', 'current from the range (no lock): its lowest version, deprecated');
      assert.match(plan.batches[2]!.risk, /0\.x minor steps count as breaking: zed/);
      assert.match(plan.batches[1]!.risk, /range of wide is not a simple \^\/~\/exact range: edit by hand/);
    });

    it('raiseRange keeps the operator; applyBatch edits only the value on the dependency line', () => {
      assert.deepEqual([raiseRange('^1.2.3', '1.4.0'), raiseRange('~1.2', '1.2.9'), raiseRange('1.2.3', '1.2.4'), raiseRange('1.x || 2.x', '2.0.0')], ['^1.4.0', '~1.2.9', '1.2.4', null]);
      const text = '{\n  "dependencies": {\n    "a": "^1.0.0",\n    "b": "^1.0.0"\n  }\n}\n';
      const out = applyBatch(text, { bump: 'minor', risk: '', updates: [{ name: 'b', from: '1.0.0', to: '1.3.0', range: '^1.0.0', newRange: '^1.3.0', file: 'package.json', line: 4, deprecatedNow: false }] });
      assert.equal(out.text, '{\n  "dependencies": {\n    "a": "^1.0.0",\n    "b": "^1.3.0"\n  }\n}\n');
    });
  });

  describe('fix', () => {
    it('commits the patch batch on a new branch in a separate worktree; the checkout, its branch and uncommitted work stay untouched', async () => {
      const ws = workspace('npm-drift', true);
      writeFileSync(path.join(ws, 'index.js'), '// work in progress\n');
      const statusBefore = git(ws, 'status', '--porcelain');
      const r = await run(fixSkill, ws, { registry: 'registry.json' });
      const data = r.artifact.data as { mode: string; branch: string; commit: string; diff: string };
      assert.equal(data.mode, 'branch', r.artifact.summary);
      assert.equal(data.branch, 'cadre/e1-s0-fix');
      assert.deepEqual(r.proposed.map((p) => p.kind), ['read', 'write_file', 'git_commit']);
      assert.match(r.artifact.summary, /^patch batch applied on new branch cadre\/e1-s0-fix \([0-9a-f]{12}\): lodash 4\.17\.20 -> 4\.17\.21, typescript 5\.1\.3 -> 5\.1\.6; current branch untouched; the lock file is not regenerated/);
      const committed = JSON.parse(git(ws, 'show', `${data.branch}:package.json`)) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
      assert.equal(committed.dependencies['lodash'], '^4.17.21');
      assert.equal(committed.devDependencies['typescript'], '~5.1.6');
      assert.equal(committed.dependencies['express'], '^4.18.0', 'only the batch changes');
      assert.equal(git(ws, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'main');
      assert.equal(git(ws, 'status', '--porcelain'), statusBefore);
      assert.equal(JSON.parse(readFileSync(path.join(ws, 'package.json'), 'utf8')).dependencies.lodash, '^4.17.20', 'the working copy is not edited');
      assert.deepEqual(r.artifact.rollback, { kind: 'branch', ref: 'cadre/e1-s0-fix' });
      assert.deepEqual(r.artifact.changes!.map((c) => [c.path, c.kind, c.applied, c.linesAdded, c.linesRemoved]), [['package.json', 'modify', true, 2, 2]]);
      assert.match(git(ws, 'log', '-1', '--format=%B', data.branch), /Cadre-Execution: e1:0/);
      assert.equal(git(ws, 'worktree', 'list').trim().split('\n').length, 1, 'the temporary worktree is gone');
    });

    it('a retried step adopts the commit of its earlier attempt instead of committing twice', async () => {
      const ws = workspace('npm-drift', true);
      const first = (await run(fixSkill, ws, { registry: 'registry.json' })).artifact.data as { branch: string; commit: string };
      const again = (await run(fixSkill, ws, { registry: 'registry.json' })).artifact.data as { branch: string; commit: string };
      assert.deepEqual([again.branch, again.commit], [first.branch, first.commit]);
      assert.deepEqual(git(ws, 'branch', '--list', '--format=%(refname:short)').trim().split('\n').sort(), ['cadre/e1-s0-fix', 'main']);
    });

    it('without write_file / git_commit allowed it proposes the diff and writes nothing (applied: false)', async () => {
      const ws = workspace('npm-drift', true);
      const r = await run(fixSkill, ws, { registry: 'registry.json', batch: 'major' }, (k) => k === 'read');
      const data = r.artifact.data as { mode: string; diff: string };
      assert.equal(data.mode, 'proposal');
      assert.match(data.diff, /-    "chalk": "\^4\.1\.0",\n-    "express": "\^4\.18\.0",\n\+    "chalk": "\^5\.3\.0",\n\+    "express": "\^5\.1\.0",/);
      assert.deepEqual(r.artifact.changes!.map((c) => c.applied), [false]);
      assert.equal(r.artifact.rollback, undefined);
      assert.equal(git(ws, 'branch', '--list').trim(), '* main');
      assert.match(r.artifact.summary, /^major batch proposed as a diff, nothing written \(ACMF did not allow write_file and git_commit\): chalk 4\.1\.2 -> 5\.3\.0/);
    });

    it('an empty batch applies nothing; without a repository only the diff is proposed; an unknown batch needs input', async () => {
      const clean = await run(fixSkill, workspace('npm-clean', true), { registry: 'registry.json' });
      assert.match(clean.artifact.summary, /^nothing to apply: the patch batch is empty \(2 dependencies judged; batches: none\)/);
      assert.equal(clean.artifact.changes, undefined);
      const noGit = await run(fixSkill, workspace('npm-drift'), { registry: 'registry.json' });
      assert.deepEqual(noGit.proposed.map((p) => p.kind), ['read'], 'no repository: nothing to write or commit is proposed');
      assert.match(noGit.artifact.summary, /^patch batch proposed as a diff, nothing written \(the workspace is not a git repository with a commit\)/);
      const bad = await run(fixSkill, workspace('npm-clean', true), { registry: 'registry.json', batch: 'everything' });
      assert.deepEqual([bad.artifact.unable, bad.artifact.needsInput], ['input.batch must be one of patch, minor, major', { field: 'batch' }]);
    });
  });
});
