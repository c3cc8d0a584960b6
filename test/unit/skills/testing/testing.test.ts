import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import type { Skill, SkillContext, StepRequest } from '../../../../server/src/engine/rigor/skill';
import {
  coverageSkill, detectRunner, exportedFunctions, findUntested, generateSkeleton, generateTestsSkill, parseIstanbulSummary, parseJestJson, parseJUnit,
  parseLcov, parseMochaJson, parseNodeCoverage, parseTap, parseTextSummary, runCommand, skeletonChanges, testingSkills, testSkill,
} from '../../../../server/src/skills/testing';
import { skills } from '../../../../server/src/skills/builtin';

const FIX = path.resolve(__dirname, '../../../fixtures/testing');
const REP = (f: string) => readFileSync(path.join(FIX, 'reports', f), 'utf8');
const NODE_PROJECT = path.join(FIX, 'node-project');

function ctx(o: { action: string; workspace?: string; input?: Record<string, unknown>; allowed?: (k: string) => boolean; signal?: AbortSignal }): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 0, agentId: 'tester-ai', action: o.action, goal: { id: 'goal-t', prompt: 'test the project' }, input: o.input ?? {},
    scope: 'workspace' as StepRequest['scope'], tier: 'standard' as StepRequest['tier'], previous: [], ...(o.workspace ? { workspace: o.workspace } : {}),
  };
  return { request, signal: o.signal ?? new AbortController().signal, progress() {}, allowed: o.allowed ?? (() => false), once: (_k, f) => f() };
}
async function run(skill: Skill, c: SkillContext) {
  const evidence = await skill.research(c);
  const actions = await skill.propose(c, evidence);
  return { evidence, actions, artifact: await skill.generate(c, evidence) };
}
const canRun = (k: string) => k === 'run_command';

describe('tester-ai skills', function () {
  this.timeout(15000);

  describe('parsers', () => {
    it('TAP: leaf points only, SKIP/TODO, escaped #, YAML failure details', () => {
      const r = parseTap(REP('sample.tap'))!;
      assert.deepEqual([r.passed, r.failed, r.skipped], [2, 1, 2]);
      assert.equal(r.failures.length, 1);
      assert.equal(r.failures[0]!.name, 'INTENTIONAL FAILURE: divides by zero');
      assert.match(r.failures[0]!.message, /Infinity !== 0/);
      assert.equal(r.failures[0]!.file, '/repo/test/math.test.js');
      assert.equal(r.failures[0]!.line, 13, 'the assertion\'s frame (stack), not the test\'s declaration (location, line 12)');
      assert.deepEqual([r.failures[0]!.expected, r.failures[0]!.actual], ['0', 'Infinity'], 'read from the message when the YAML has no expected/actual');
      assert.equal(parseTap('just some text'), undefined);
    });
    it('JUnit XML: failure/error/skipped, entities and CDATA', () => {
      const r = parseJUnit(REP('junit.xml'))!;
      assert.deepEqual([r.passed, r.failed, r.skipped], [1, 2, 1]);
      assert.equal(r.failures[0]!.name, 'tests.test_calc test_div & zero');
      assert.equal(r.failures[0]!.message, 'assert 1 < 0');
      assert.equal(r.failures[0]!.file, 'tests/test_calc.py');
      assert.equal(r.failures[0]!.line, 7);
      assert.equal(r.failures[1]!.message, 'OSError: disk "full"');
    });
    it('mocha JSON (after an npm banner) with the failure location from the stack', () => {
      const r = parseMochaJson(REP('mocha.json'))!;
      assert.deepEqual([r.passed, r.failed, r.skipped], [2, 1, 1]);
      assert.deepEqual(r.failures[0], { name: 'calc INTENTIONAL FAILURE: subtracts', message: 'expected 1 to equal 2', file: '/repo/test/calc.test.js', line: 14, expected: '2', actual: '1' });
    });
    it('jest JSON', () => {
      const r = parseJestJson(REP('jest.json'))!;
      assert.deepEqual([r.passed, r.failed, r.skipped], [3, 1, 1]);
      assert.equal(r.failures[0]!.name, 'calc INTENTIONAL FAILURE: divides');
      assert.equal(r.failures[0]!.line, 9);
      assert.match(r.failures[0]!.message, /toBe/);
    });
    it('text summaries (partial)', () => {
      assert.deepEqual(parseTextSummary('\n  3 passing (5ms)\n  1 failing\n')!.failed, 1);
      const p = parseTextSummary('===== 1 failed, 4 passed, 2 skipped in 0.12s =====')!;
      assert.deepEqual([p.passed, p.failed, p.skipped, p.complete], [4, 1, 2, false]);
    });
    it('lcov and istanbul json-summary: overall and per file', () => {
      const l = parseLcov(REP('lcov.info'))!;
      assert.equal(l.lines, 44.44);
      assert.deepEqual(l.files.map((f) => [f.file, f.pct]), [['src/math.js', 50], ['src/strings.js', 100], ['src/unused.js', 0]]);
      assert.deepEqual(l.files[0]!.uncoveredLines, [3, 4]);
      assert.equal(l.files[0]!.functionsHit, 2);
      const s = parseIstanbulSummary(REP('coverage-summary.json'))!;
      assert.equal(s.lines, 44.44);
      assert.equal(s.files.find((f) => f.file.endsWith('unused.js'))!.pct, 0);
    });
    it('node --test coverage table', () => {
      const c = parseNodeCoverage('# start of coverage report\n# file | line % | branch % | funcs % | uncovered lines\n# lib.js | 75.00 | 100.00 | 50.00 | 5-6 9\n# all files | 80.00 | 100.00 | 60.00 |\n# end of coverage report')!;
      assert.equal(c.lines, 80);
      assert.deepEqual(c.files[0]!.uncoveredLines, [5, 6, 9]);
    });
  });

  describe('runner detection', () => {
    const V = (v: string) => path.join(FIX, 'pkg-variants', v);
    it('package.json scripts.test with reporter flags appended', () => {
      const m = detectRunner(V('mocha-script'))!;
      assert.equal(m.name, 'mocha');
      assert.deepEqual(m.argv, ['npm', '--silent', 'test', '--', '--reporter', 'json']);
      assert.match(m.detectedBy, /scripts\.test/);
      const n = detectRunner(NODE_PROJECT)!;
      assert.equal(n.name, 'node-test');
      // The reporter goes through NODE_OPTIONS: appended after `node --test test/` it would be read as a file pattern.
      assert.deepEqual(n.argv, ['npm', '--silent', 'test']);
      assert.match(n.env?.['NODE_OPTIONS'] ?? '', /--test-reporter=tap/);
    });
    it('compound scripts get no flags (node --test still gets its TAP reporter through NODE_OPTIONS); placeholder script falls back to devDependencies', () => {
      const c = detectRunner(V('compound'))!;
      assert.deepEqual(c.argv, ['npm', '--silent', 'test']);
      assert.equal(c.format, 'tap');
      assert.match(c.env?.['NODE_OPTIONS'] ?? '', /--test-reporter=tap/);
      const j = detectRunner(V('jest-dev'))!;
      assert.equal(j.name, 'jest');
      assert.ok(j.argv.includes('--json'));
      assert.match(j.detectedBy, /devDependencies: jest/);
      const v = detectRunner(V('vitest-dev'))!;
      assert.ok(v.argv.includes('run') && v.argv.includes('--reporter=json'));
      assert.equal(detectRunner(V('placeholder-only')), undefined);
    });
    it('`node --test test/` (a folder after --test) runs for real and its TAP is read: no flag is appended after the folder', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'cadre-nodetest-'));
      try {
        mkdirSync(path.join(dir, 'test'));
        writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'node --test test/' } }));
        writeFileSync(path.join(dir, 'lib.js'), 'exports.twice = (n) => n * 2;\n');
        writeFileSync(path.join(dir, 'test', 'lib.test.js'), "const t = require('node:test'); const a = require('node:assert'); const { twice } = require('../lib.js');\nt.test('twice', () => a.equal(twice(2), 4));\nt.test('twice 0', () => a.equal(twice(0), 0));\n");
        const { artifact } = await run(testSkill, ctx({ action: 'test', workspace: dir, allowed: canRun }));
        assert.equal(artifact.unable, undefined, artifact.unable);
        assert.match(artifact.summary, /2 passed, 0 failed/);
        const cov = (await run(coverageSkill, ctx({ action: 'coverage', workspace: dir, allowed: canRun }))).artifact;
        assert.equal(cov.unable, undefined, cov.unable);
        assert.equal(cov.coverage, 100, 'node --test coverage measured through the script as written');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it('pytest, go, explicit command', () => {
      const p = detectRunner(V('pytest'))!;
      assert.equal(p.name, 'pytest');
      assert.equal(p.detectedBy, 'pytest.ini');
      assert.ok(p.argv.some((a) => a.startsWith('--junitxml=')));
      assert.deepEqual(detectRunner(V('go'))!.argv, ['go', 'test', '-json', './...']);
      assert.equal(detectRunner(V('go'), ['make', 'test'])!.detectedBy, 'input.command');
    });
  });

  describe('runCommand', () => {
    it('kills the process tree on timeout', async () => {
      const t = Date.now();
      const r = await runCommand(['sh', '-c', 'sleep 30 & sleep 30; echo never'], { cwd: FIX, timeoutMs: 300 });
      assert.equal(r.timedOut, true);
      assert.ok(Date.now() - t < 5000);
      assert.doesNotMatch(r.stdout, /never/);
    });
    it('kills on abort and bounds output', async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 200);
      const r = await runCommand(['sh', '-c', 'head -c 300000 /dev/zero | tr "\\0" x; sleep 30'], { cwd: FIX, timeoutMs: 10000, signal: ac.signal, maxBytes: 1000 });
      assert.equal(r.aborted, true);
      assert.equal(r.stdout.length, 1000);
      assert.equal(r.truncated, true);
    });
  });

  describe('untested and skeletons', () => {
    it('lists exported functions by regex', () => {
      const src = "export function a() {}\nexport const b = (x: number) => x;\nexport const c = async () => 1;\nexport const NOT = 3;\nmodule.exports.d = function () {};\nexports.e = (y) => y;\n";
      assert.deepEqual(exportedFunctions('x.ts', src).map((f) => f.name), ['a', 'b', 'c', 'd', 'e']);
      assert.deepEqual(exportedFunctions('m.py', 'def top(x):\n    def inner(): pass\nasync def other():\n  pass\n').map((f) => f.name), ['top', 'other']);
    });
    it('finds functions no test mentions, and files by references or coverage', () => {
      const u = findUntested(NODE_PROJECT);
      assert.equal(u.basis, 'references');
      assert.deepEqual(u.functions.map((f) => `${f.file}:${f.name}`), ['math.js:multiply', 'math.js:divide', 'strings.js:shout']);
      assert.deepEqual(u.files, ['strings.js']);
      const cov = parseLcov('SF:math.js\nLF:3\nLH:2\nend_of_record\n')!;
      assert.deepEqual(findUntested(NODE_PROJECT, cov).files, ['strings.js']);
    });
    it('generates valid node:test and mocha skeletons (CommonJS and ESM)', () => {
      const node = generateSkeleton({ src: 'math.js', testPath: 'test/math.test.js', names: ['multiply', 'divide'], style: 'node-test', esm: false });
      assert.match(node, /require\('node:test'\)/);
      assert.match(node, /const \{ multiply, divide \} = require\('\.\.\/math\.js'\);/);
      assert.match(node, /TODO/);
      new vm.Script(node); // parses
      const mocha = generateSkeleton({ src: 'src/lib.ts', testPath: 'test/lib.test.ts', names: ['f'], style: 'mocha', esm: false });
      assert.match(mocha, /import \{ f \} from '\.\.\/src\/lib';/);
      assert.doesNotMatch(mocha, /node:test/);
      const esm = generateSkeleton({ src: 'a.mjs', testPath: 'a.test.mjs', names: ['g'], style: 'node-test', esm: true });
      assert.match(esm, /^import \{ describe, it \} from 'node:test';/);
      const changes = skeletonChanges(NODE_PROJECT, findUntested(NODE_PROJECT).functions, 'node-test', ['test/math.test.js']);
      assert.deepEqual(changes.map((c) => c.path), ['test/math_2.test.js', 'test/strings.test.js']);
      for (const c of changes) { assert.equal(c.kind, 'create'); assert.equal(c.linesRemoved, 0); assert.equal(c.linesAdded, c.content!.split('\n').length - 1); new vm.Script(c.content!); }
    });
  });

  describe('through the Skill interface', () => {
    it('is registered in the builtin list', () => {
      for (const s of testingSkills) assert.ok(skills.includes(s));
      assert.deepEqual(testingSkills.map((s) => `${s.agentId}/${s.action}`), ['tester-ai/test', 'tester-ai/coverage', 'tester-ai/generate-tests']);
    });
    it('test: really runs the fixture node project (node --test, TAP): 1 passed, 1 intentional failure', async () => {
      const { actions, artifact } = await run(testSkill, ctx({ action: 'test', workspace: NODE_PROJECT, allowed: canRun }));
      assert.ok(actions.some((a) => a.kind === 'run_command'));
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.equal(artifact.goalRef, 'goal-t');
      assert.deepEqual(artifact.tests, { passed: 1, failed: 1, skipped: 0 });
      const d = artifact.data as { runner: { name: string; detectedBy: string }; results: { failures: Array<{ name: string; message: string; file?: string; line?: number }> }; untested: { functions: unknown[] } };
      assert.equal(d.runner.name, 'node-test');
      assert.equal(d.results.failures[0]!.name, 'INTENTIONAL FAILURE: add(2, 2) is not 5');
      assert.match(d.results.failures[0]!.message, /4 == 5/);
      assert.match(d.results.failures[0]!.file!, /math\.test\.js$/);
      assert.equal(d.results.failures[0]!.line, 7);
      assert.ok(artifact.confidence >= 0.8);
      assert.equal(d.untested.functions.length, 3);
    });
    it('test: a run that leaves sources and tests unchanged declares its snapshot; one that changes a source does not', async () => {
      const clean = (await run(testSkill, ctx({ action: 'test', workspace: NODE_PROJECT, allowed: canRun }))).artifact;
      assert.equal(clean.rollback?.kind, 'snapshot');
      assert.match(clean.rollback!.ref, /^sha256:[0-9a-f]{16} \(\d+ source and test files, unchanged by the run\)$/);
      const ws = mkdtempSync(path.join(tmpdir(), 'cadre-tester-'));
      try {
        writeFileSync(path.join(ws, 'lib.js'), 'module.exports = 1;\n');
        // The "test" rewrites a source file: nothing to roll back with, and the summary says what changed.
        writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ scripts: { test: `node -e "require('fs').writeFileSync('lib.js', 'module.exports = 2;\\n'); console.log('ok 1 - x'); console.log('1..1')"` } }));
        const dirty = (await run(testSkill, ctx({ action: 'test', workspace: ws, allowed: canRun }))).artifact;
        assert.equal(dirty.rollback, undefined);
        assert.match(dirty.summary, /the test run changed 1 source\/test file\(s\): lib\.js/);
      } finally {
        rmSync(ws, { recursive: true, force: true });
      }
    });
    it('test: timeout kills the hanging fixture and reports it', async () => {
      const t = Date.now();
      const { artifact } = await run(testSkill, ctx({ action: 'test', workspace: path.join(FIX, 'hang-project'), allowed: canRun, input: { timeoutMs: 1500 } }));
      assert.ok(Date.now() - t < 8000);
      assert.match(artifact.unable!, /did not finish within 1500 ms/);
      assert.equal((artifact.data as { results: { timedOut?: boolean } | null }).results?.timedOut ?? true, true);
    });
    it('test: not applicable without a runner (nothing to do), unable when running is not allowed', async () => {
      const a = (await run(testSkill, ctx({ action: 'test', workspace: path.join(FIX, 'pkg-variants', 'placeholder-only'), allowed: canRun }))).artifact;
      assert.match(a.notApplicable!, /^no test runner detected: /);
      assert.equal(a.unable, undefined);
      const b = (await run(testSkill, ctx({ action: 'test', workspace: NODE_PROJECT }))).artifact;
      assert.match(b.unable!, /not allowed/);
    });
    it('test: a summary line that agrees with the exit code is complete evidence for the counts (confidence >= 0.75)', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'cadre-summary-'));
      try {
        writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'summary-only', version: '1.0.0', scripts: { test: 'node run.js' } }));
        writeFileSync(path.join(dir, 'run.js'), "console.log('  59 passing (120ms)');\n");
        const a = (await run(testSkill, ctx({ action: 'test', workspace: dir, allowed: canRun }))).artifact;
        assert.equal(a.unable, undefined, a.unable);
        assert.deepEqual([a.tests?.passed, a.tests?.failed], [59, 0], JSON.stringify(a.tests));
        assert.ok(a.confidence >= 0.75, `59 passed, 0 failed, exit 0: ${a.confidence} (was 0.55, below the 0.6 gate)`);
        // The same line contradicted by the exit code is partial evidence: lower.
        writeFileSync(path.join(dir, 'run.js'), "console.log('  59 passing (120ms)');\nprocess.exitCode = 1;\n");
        const b = (await run(testSkill, ctx({ action: 'test', workspace: dir, allowed: canRun }))).artifact;
        assert.ok(b.confidence < 0.6, `contradicted summary: ${b.confidence}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it('test: abort kills the run and rejects', async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('cancelled')), 300);
      await assert.rejects(run(testSkill, ctx({ action: 'test', workspace: path.join(FIX, 'hang-project'), allowed: canRun, signal: ac.signal })), /cancelled/);
    });
    it('coverage: node --test coverage from a real run; lcov report from input without running', async () => {
      const { artifact } = await run(coverageSkill, ctx({ action: 'coverage', workspace: NODE_PROJECT, allowed: canRun }));
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.equal(typeof artifact.coverage, 'number');
      const d = artifact.data as { coverage: { files: Array<{ file: string }> } };
      assert.ok(d.coverage.files.some((f) => f.file.endsWith('math.js')));
      // A report is read only inside the workspace (docs/decisions.md, confinement): from outside it is not.
      const outside = (await run(coverageSkill, ctx({ action: 'coverage', workspace: NODE_PROJECT, allowed: () => false, input: { lcov: path.join(FIX, 'reports', 'lcov.info') } }))).artifact;
      assert.notEqual(outside.coverage, 44.44);
      const copy = mkdtempSync(path.join(tmpdir(), 'cadre-cov-'));
      try {
        cpSync(NODE_PROJECT, copy, { recursive: true });
        cpSync(path.join(FIX, 'reports', 'lcov.info'), path.join(copy, 'reports-lcov.info'));
        const fromFile = (await run(coverageSkill, ctx({ action: 'coverage', workspace: copy, input: { lcov: 'reports-lcov.info' } }))).artifact;
        assert.equal(fromFile.coverage, 44.44);
        assert.equal(fromFile.tests, undefined);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });
    it('generate-tests: proposes skeletons as changes, writes nothing', async () => {
      const { actions, artifact } = await run(generateTestsSkill, ctx({ action: 'generate-tests', workspace: NODE_PROJECT }));
      assert.ok(!actions.some((a) => a.kind === 'run_command'));
      assert.deepEqual(artifact.changes!.map((c) => c.path), ['test/math_2.test.js', 'test/strings.test.js']);
      assert.match(artifact.changes![1]!.content!, /const \{ shout \} = require\('\.\.\/strings\.js'\);/);
      assert.equal(artifact.pathsWritten, undefined);
      assert.ok(artifact.confidence > 0 && artifact.confidence < 1);
    });
  });
});
