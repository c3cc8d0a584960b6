import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../server/src/skills/builtin';
import {
  assessSkill, CRITERIA, filesNamed, lockHealth, npmBounded, planSkill, pyBounded, type Assessment, type CriterionResult, type MaturityPlan,
} from '../../../server/src/skills/evolve/index';
import { fixtureProject } from '../../support/fixture-project';
import { runSkill, skillContext } from '../../support/skill-context';
import type { StepSummary } from '../../../server/src/engine/rigor/skill';

const dirs: string[] = [];

async function run(skill: typeof assessSkill, ws: string, input: Record<string, unknown> = {}, previous: StepSummary[] = []) {
  const ctx = skillContext({ agentId: 'evolve-ai', action: skill.action, workspace: ws, input });
  ctx.request.previous = previous;
  const r = await runSkill(skill, ctx);
  const check = skill.outputSchema!.safeParse(r.artifact.data);
  assert.ok(check.success, `${skill.action} data matches its schema: ${check.success ? '' : check.error.message}`);
  return r;
}

const criterion = (a: Assessment, id: string): CriterionResult => a.criteria.find((c) => c.id === id)!;
const check = (a: Assessment, id: string) => a.criteria.flatMap((c) => c.checks).find((k) => k.id === id)!;
const project = (files: Record<string, string>, git = true) => fixtureProject({ files, git, prefix: 'cadre-evolve-' }, dirs);

describe('evolve-ai assess and plan', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('are the embedded skills of evolve-ai; the model is data: weights add up to 100, every check has value, effort and steps', () => {
    assert.ok(skills.includes(assessSkill) && skills.includes(planSkill));
    assert.equal(CRITERIA.reduce((n, c) => n + c.weight, 0), 100);
    assert.deepEqual(CRITERIA.map((c) => c.id), ['tests', 'ci', 'lint', 'docs', 'security', 'dependencies', 'release']);
    for (const c of CRITERIA) {
      assert.equal(c.checks.reduce((n, k) => n + k.points, 0), 100, `${c.id} checks add up to 100 points`);
      for (const k of c.checks) assert.ok(k.value >= 1 && k.value <= 5 && k.effort >= 1 && k.effort <= 5 && k.steps('js').length > 0 && k.steps(undefined).length > 0, k.id);
    }
  });

  it('the bare repository (no CI, no security policy, no tests, open ranges) is initial, each gap saying what was looked for', async () => {
    const ws = fixtureProject({ copy: { '.': 'maturity/bare' }, prefix: 'cadre-evolve-' }, dirs);
    const r = await run(assessSkill, ws);
    const a = r.artifact.data as Assessment;
    assert.equal(a.levelName, 'initial');
    assert.ok(a.score < 20, String(a.score));
    assert.deepEqual(a.ecosystems, ['js']);
    assert.equal(criterion(a, 'ci').score, 0);
    assert.match(check(a, 'ci-config').missing ?? '', /no CI configuration: looked for \.github\/workflows\/\*\.yml/);
    assert.equal(criterion(a, 'security').score, 0);
    assert.match(check(a, 'security-policy').missing ?? '', /SECURITY\.md/);
    assert.match(check(a, 'test-script').missing ?? '', /no test command/, 'npm\'s placeholder test script is not a test command');
    assert.match(check(a, 'pinned').missing ?? '', /express "\*" package\.json:10, lodash "latest" package\.json:11, left-pad ">=1\.0\.0" package\.json:12/);
    assert.equal(check(a, 'version').earned, 10, '"1.0" is a version but not a semantic one');
    assert.deepEqual(a.git, { repository: true, tags: [] });
    assert.equal(check(a, 'git-tags').earned, 0);
    assert.match(r.artifact.summary, /^maturity \d+\/100, level 1 \(initial\); tests 0, ci 0, lint 0, docs \d+, security 0, dependencies 0, release \d+/);
    assert.deepEqual(r.proposed.map((p) => p.kind), ['read']);
    assert.equal(r.artifact.findingsAfter?.maxSeverity, 2);
  });

  it('the kept twin scores 100 (optimizing) with evidence for every check, its release tag read from git', async () => {
    const ws = fixtureProject({ copy: { '.': 'maturity/kept' }, prefix: 'cadre-evolve-' }, dirs);
    execFileSync('git', ['tag', 'v1.2.0'], { cwd: ws });
    const r = await run(assessSkill, ws);
    const a = r.artifact.data as Assessment;
    assert.equal(a.score, 100, JSON.stringify(a.criteria.map((c) => [c.id, c.missing])));
    assert.equal(a.levelName, 'optimizing');
    for (const k of a.criteria.flatMap((c) => c.checks)) assert.ok(k.earned === k.points && k.evidence.length > 0, k.id);
    assert.deepEqual(check(a, 'ci-tests').evidence, [{ file: '.github/workflows/ci.yml', line: 13, detail: '- run: npm test' }]);
    assert.deepEqual(check(a, 'changelog-current').evidence, [{ file: 'CHANGELOG.md', line: 5, detail: '## [1.2.0] - 2026-10-01' }]);
    assert.match(check(a, 'git-tags').evidence[0]!.detail, /1 version tag\(s\), newest v1\.2\.0/);
    assert.equal(r.artifact.findingsAfter?.count, 0);
    const bare = await run(assessSkill, fixtureProject({ copy: { '.': 'maturity/bare' }, prefix: 'cadre-evolve-' }, dirs));
    assert.equal(r.artifact.confidence, 0.9, 'every check judged');
    assert.ok(bare.artifact.confidence < r.artifact.confidence, 'without a lock file the lock health cannot be judged: less sure');
  });

  it('outside a git repository the tags are not judged (left out of the score) rather than counted as missing', async () => {
    const ws = fixtureProject({ copy: { '.': 'maturity/kept' }, prefix: 'cadre-evolve-', git: false }, dirs);
    const r = await run(assessSkill, ws);
    const a = r.artifact.data as Assessment;
    assert.equal(check(a, 'git-tags').earned, null);
    assert.match(check(a, 'git-tags').missing ?? '', /^not judged: the workspace is not a git repository/);
    assert.equal(criterion(a, 'release').score, 100);
    assert.ok(r.artifact.confidence < 0.9 && r.artifact.confidence > 0.8, String(r.artifact.confidence));
  });

  it('detects Python, Go and Java by manifest and judges their own conventions', async () => {
    const py = (await run(assessSkill, project({
      'pyproject.toml': '[project]\nname = "svc"\nversion = "0.4.1"\n\n[tool.pytest.ini_options]\naddopts = "--cov=svc"\n\n[tool.ruff]\nline-length = 100\n',
      'requirements.txt': 'flask==3.0.3\nrequests>=2.0\n', 'svc/app.py': 'def app():\n    return 1\n', 'tests/test_app.py': 'def test_app():\n    assert True\n',
    }))).artifact.data as Assessment;
    assert.deepEqual(py.ecosystems, ['python']);
    assert.equal(check(py, 'test-script').evidence[0]?.file, 'pyproject.toml');
    assert.equal(check(py, 'lint-config').evidence[0]?.line, 8);
    assert.match(check(py, 'pinned').missing ?? '', /requests ">=2\.0" requirements\.txt:2/);
    assert.equal(check(py, 'version').evidence[0]?.line, 3);
    assert.match(check(py, 'lockfile').missing ?? '', /^python: no lock file/);
    const go = (await run(assessSkill, project({
      'go.mod': 'module example.com/svc\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n', 'go.sum': 'github.com/google/uuid v1.6.0 h1:abc=\n',
      'main.go': 'package main\n', 'main_test.go': 'package main\n', '.golangci.yml': 'linters:\n  enable: [govet]\n',
    }))).artifact.data as Assessment;
    assert.deepEqual(go.ecosystems, ['go']);
    assert.match(check(go, 'test-script').evidence[0]?.detail ?? '', /go test is built in/);
    assert.equal(check(go, 'lockfile').earned, 40);
    assert.equal(check(go, 'version').earned, null, 'Go versions live in tags');
    const java = (await run(assessSkill, project({
      'pom.xml': '<project>\n  <groupId>x</groupId>\n  <artifactId>svc</artifactId>\n  <version>2.1.0</version>\n  <dependencies>\n    <dependency>\n      <artifactId>guava</artifactId>\n      <version>[30.0,)</version>\n    </dependency>\n  </dependencies>\n  <build><plugins><plugin><artifactId>jacoco-maven-plugin</artifactId></plugin></plugins></build>\n</project>\n',
      'src/main/java/x/App.java': 'class App {}\n', 'src/test/java/x/AppTest.java': 'class AppTest {}\n',
    }))).artifact.data as Assessment;
    assert.deepEqual(java.ecosystems, ['java']);
    assert.deepEqual(check(java, 'version').evidence.map((e) => [e.file, e.line]), [['pom.xml', 4]]);
    assert.equal(check(java, 'coverage').evidence[0]?.file, 'pom.xml');
    assert.match(check(java, 'pinned').missing ?? '', /pom\.xml:8/);
    assert.equal(check(java, 'pinned').earned, 0, 'its one dependency has an open range; the project\'s own <version> is not a dependency');
    const gradle = (await run(assessSkill, project({
      'build.gradle': "plugins { id 'java' }\nversion = '1.0.0'\ndependencies {\n  implementation 'com.google.guava:guava:33.0.0-jre'\n  implementation 'org.slf4j:slf4j-api:2.+'\n}\n",
      'src/main/java/x/App.java': 'class App {}\n',
    }))).artifact.data as Assessment;
    assert.deepEqual([check(gradle, 'pinned').earned, check(gradle, 'version').evidence[0]?.line], [15, 2]);
    assert.match(check(gradle, 'pinned').missing ?? '', /build\.gradle:5/);
    const poetry = (await run(assessSkill, project({
      'pyproject.toml': '[project]\nname = "p"\nversion = "1.0.0"\ndependencies = [\n  "flask>=2.0",\n  "requests[socks]==2.31.0",\n]\n\n[tool.poetry.dependencies]\npython = "^3.11"\nhttpx = "^0.27"\nanyio = "*"\n',
      'p/app.py': 'x = 1\n',
    }))).artifact.data as Assessment;
    assert.match(check(poetry, 'pinned').missing ?? '', /^open version ranges: flask ">=2\.0" pyproject\.toml:5, anyio "\*" pyproject\.toml:12$/);
    assert.equal(check(poetry, 'pinned').earned, 15, '2 of 4 bounded');
  });

  it('plan orders the improvements by value / effort, each naming the files to add, and projects the score', async () => {
    const ws = fixtureProject({ copy: { '.': 'maturity/bare' }, prefix: 'cadre-evolve-' }, dirs);
    const r = await run(planSkill, ws);
    const p = r.artifact.data as MaturityPlan & { assessment: Assessment };
    assert.equal(p.from.source, 'assessed');
    for (let i = 1; i < p.items.length; i++) assert.ok(p.items[i - 1]!.priority >= p.items[i]!.priority, `ordered at ${i}`);
    assert.deepEqual(p.items.slice(0, 2).map((i) => [i.check, i.priority]), [['lockfile', 5], ['ci-tests', 5]]);
    const sec = p.items.find((i) => i.check === 'security-policy')!;
    assert.deepEqual(sec.files, ['SECURITY.md']);
    assert.deepEqual(p.items.find((i) => i.check === 'ci-config')!.files, ['.github/workflows/ci.yml', '.gitlab-ci.yml']);
    assert.equal(p.items.some((i) => i.check === 'lock-health'), false, 'a check not judged is not planned');
    assert.ok(p.projected.score > p.from.score && p.projected.levelName !== 'initial');
    assert.ok(Math.abs(p.items.reduce((n, i) => n + i.gain, 0) - (100 - p.from.score)) < 1.5, 'the gains add up to what is missing');
    assert.match(r.artifact.summary, /^\d+ improvement\(s\) from \d+\/100 \(initial\)/);
    const kept = await run(planSkill, fixtureProject({ copy: { '.': 'maturity/kept' }, prefix: 'cadre-evolve-', git: false }, dirs));
    assert.match(kept.artifact.summary, /^nothing to improve/);
  });

  it('plan takes the assessment of a previous step or of input.assessment; a malformed one is needs_input', async () => {
    const ws = fixtureProject({ copy: { '.': 'maturity/kept' }, prefix: 'cadre-evolve-', git: false }, dirs);
    const bare = (await run(assessSkill, fixtureProject({ copy: { '.': 'maturity/bare' }, prefix: 'cadre-evolve-' }, dirs))).artifact.data as Assessment;
    const prev: StepSummary = { step: 0, agentId: 'evolve-ai', action: 'assess', passed: true, confidence: 0.8, summary: '', data: bare };
    const fromPrev = (await run(planSkill, ws, {}, [prev])).artifact.data as MaturityPlan;
    assert.equal(fromPrev.from.source, 'previous step');
    assert.equal(fromPrev.from.score, bare.score, 'planned from the handed assessment, not from the workspace');
    const fromInput = (await run(planSkill, ws, { assessment: JSON.stringify(bare), limit: '3' })).artifact.data as MaturityPlan;
    assert.equal(fromInput.from.source, 'input');
    assert.equal(fromInput.items.length, 3);
    const bad = await run(planSkill, ws, { assessment: { score: 'high' } });
    assert.equal(bad.artifact.needsInput?.field, 'assessment');
    assert.match(bad.artifact.unable ?? '', /expected \{score, criteria/);
  });

  it('a broken manifest is needs_input naming file and line; a path outside is refused; an empty folder is not applicable', async () => {
    const broken = await run(assessSkill, project({ 'package.json': '{\n  "name": "x",\n  "version": \n}\n' }, false));
    assert.match(broken.artifact.unable ?? '', /^package\.json:\d+/);
    const out = await run(assessSkill, project({ 'a.txt': 'x' }, false), { paths: '/etc' });
    assert.equal(out.artifact.needsInput?.field, 'paths');
    const empty = mkdtempSync(path.join(tmpdir(), 'cadre-evolve-empty-'));
    dirs.push(empty);
    assert.match((await run(assessSkill, empty)).artifact.notApplicable ?? '', /no file to assess/);
  });

  it('range and lock judgements: open ranges, duplicate majors and deprecated packages', () => {
    assert.deepEqual(['*', 'latest', '', '>=1.2.0', 'x', '^1.2.3', '~2.0.0', '>=1 <2', '1.2.3', 'github:a/b', 'github:a/b#0123abc'].map(npmBounded),
      [false, false, false, false, false, true, true, true, true, false, true]);
    assert.deepEqual(['', '>=2.0', '==1.0', '~=1.4', '>=1,<2'].map(pyBounded), [false, false, true, true, true]);
    const lock = JSON.stringify({ lockfileVersion: 3, packages: {
      '': {}, 'node_modules/debug': { version: '4.3.4' }, 'node_modules/send/node_modules/debug': { version: '2.6.9' },
      'node_modules/request': { version: '2.88.2', deprecated: 'request has been deprecated' },
    } }, null, 2);
    const h = lockHealth('package-lock.json', lock)!;
    assert.deepEqual(h.duplicates, [{ name: 'debug', majors: [2, 4] }]);
    assert.deepEqual(h.deprecated.map((d) => [d.name, d.version]), [['request', '2.88.2']]);
    assert.ok(h.deprecated[0]!.line > 1);
    const yarn = '# yarn lockfile v1\n\n"@babel/core@^7.0.0", "@babel/core@^7.1.0":\n  version "7.24.0"\n\ndebug@^2.6.9:\n  version "2.6.9"\n\ndebug@^4.3.4:\n  version "4.3.4"\n';
    assert.deepEqual(lockHealth('yarn.lock', yarn)!.duplicates, [{ name: 'debug', majors: [2, 4] }]);
    const berry = '__metadata:\n  version: 6\n\n"debug@npm:^2.6.9":\n  version: 2.6.9\n\n"debug@npm:^4.3.4":\n  version: 4.3.4\n';
    assert.deepEqual(lockHealth('yarn.lock', berry)!.duplicates, [{ name: 'debug', majors: [2, 4] }]);
    const pnpm = "lockfileVersion: '9.0'\n\npackages:\n\n  debug@2.6.9:\n    resolution: {integrity: x}\n\n  debug@4.3.4(supports-color@8.1.1):\n    resolution: {integrity: y}\n\n  '@types/node@20.1.0':\n    resolution: {integrity: z}\n";
    const ph = lockHealth('pnpm-lock.yaml', pnpm)!;
    assert.deepEqual([ph.packages, ph.duplicates], [3, [{ name: 'debug', majors: [2, 4] }]]);
    assert.deepEqual(filesNamed(['add .github/dependabot.yml (or renovate.json)', 'add SECURITY.md: supported versions']), ['.github/dependabot.yml', 'renovate.json', 'SECURITY.md']);
  });

  it('test fixtures are not evidence of how the repository is run (a sample project\'s CI or SECURITY.md does not count)', async () => {
    const ws = project({ 'package.json': '{"name": "x", "version": "1.0.0"}\n', 'src/a.js': 'module.exports = 1;\n',
      'test/fixtures/sample/.github/workflows/ci.yml': 'on: push\njobs:\n  t:\n    steps:\n      - run: npm test\n', 'test/fixtures/sample/SECURITY.md': '# Security\n' }, false);
    const a = (await run(assessSkill, ws)).artifact.data as Assessment;
    assert.equal(check(a, 'ci-config').earned, 0);
    assert.equal(check(a, 'security-policy').earned, 0);
  });
});
