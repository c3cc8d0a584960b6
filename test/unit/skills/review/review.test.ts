import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SkillContext, StepRequest } from '../../../../server/src/engine/rigor/skill';
import { skills } from '../../../../server/src/skills/builtin';
import {
  analyzeFile, analyzeJsTs, isTestFile, missingTests, parseUnifiedZero, reviewSkill, reviewSkills, verifySkill,
  type ReviewData,
} from '../../../../server/src/skills/review/index';

const FIX = path.resolve(__dirname, '../../../fixtures/review');
const read = (f: string) => readFileSync(path.join(FIX, f), 'utf8');
const analyze = (f: string) => analyzeFile(f, read(f), null);
const rules = (f: string, rule: string) => analyze(f).findings.filter((x) => x.ruleId === rule);
const lines = (fs: Array<{ range: { startLine: number } }>) => fs.map((f) => f.range.startLine);

function ctx(input: Record<string, unknown>, workspace?: string, previous: StepRequest['previous'] = []): SkillContext {
  const request: StepRequest = {
    executionId: 'e1', step: 0, agentId: 'review-ai', action: 'review', goal: { id: 'goal-1', prompt: 'review my change' },
    input, scope: 'standard' as StepRequest['scope'], tier: 'free' as StepRequest['tier'], previous,
    ...(workspace ? { workspace } : {}),
  };
  return { request, signal: new AbortController().signal, progress() {}, allowed: () => false, once: (_k, f) => f() };
}

async function runSkill(skill = reviewSkill, c: SkillContext) {
  const ev = await skill.research(c);
  await skill.propose(c, ev);
  return skill.generate(c, ev);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

function tempRepo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-review-'));
  git(dir, 'init', '-q');
  git(dir, 'config', 'user.email', 't@example.com');
  git(dir, 'config', 'user.name', 'T');
  git(dir, 'config', 'commit.gpgsign', 'false');
  return dir;
}

describe('review-ai analysis', () => {
  it('counts cyclomatic complexity of known functions', () => {
    const a = analyze('complexity.ts');
    const c = Object.fromEntries(a.functions.map((f) => [f.name, f.complexity]));
    assert.equal(c['straight'], 1);
    assert.equal(c['branchy'], 13);
    assert.equal(c['arrow'], 2);
    assert.equal(c['<anonymous>'], 2); // the inner arrow counts its own ternary only
    assert.equal(c['Box.bump'], 3);
    assert.equal(a.parsed, true);
    const cx = a.findings.filter((f) => f.ruleId === 'review/complexity');
    assert.equal(cx.length, 1);
    assert.match(cx[0]!.message, /branchy.*13/);
    assert.equal(cx[0]!.range.startLine, 6);
    // a higher threshold reports nothing
    assert.equal(analyzeJsTs('complexity.ts', read('complexity.ts'), null, { complexityThreshold: 13, maxFunctionLines: 60 }).findings.filter((f) => f.ruleId === 'review/complexity').length, 0);
  });

  it('reports long functions over the line limit only', () => {
    const body = Array.from({ length: 70 }, (_v, i) => `  total += ${i};`).join('\n');
    const text = `export function long(): number {\n  let total = 0;\n${body}\n  return total;\n}\nexport function short(): number {\n  return 1;\n}\n`;
    const f = analyzeJsTs('long.ts', text, null).findings.filter((x) => x.ruleId === 'review/long-function');
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /`long` is 74 lines/);
    assert.equal(analyzeJsTs('long.ts', text, null, { complexityThreshold: 10, maxFunctionLines: 100 }).findings.length, 0);
  });

  it('finds debug leftovers with a delete-line fix, and leaves console.error/warn', () => {
    const f = rules('debug.ts', 'review/debug-statement');
    assert.deepEqual(lines(f), [2, 4, 5, 11]);
    assert.ok(f.every((x) => x.severity === 'low' && x.fingerprint.length === 32));
    assert.deepEqual(f[0]!.fix!.edits[0]!.range, { startLine: 2, startColumn: 1, endLine: 3, endColumn: 1 });
    assert.equal(f[0]!.fix!.edits[0]!.newText, '');
    // on a shared line only the statement itself is deleted
    const inline = f[3]!.fix!.edits[0]!.range;
    assert.equal(inline.startLine, 11);
    assert.equal(inline.endLine, 11);
    assert.ok(inline.startColumn > 1);
  });

  it('finds debug leftovers in JSX/TSX', () => {
    const a = analyze('component.tsx');
    assert.equal(a.parsed, true);
    assert.deepEqual(lines(a.findings.filter((x) => x.ruleId === 'review/debug-statement')), [2]);
  });

  it('proves dead code after return/throw/break/continue and in if (false), not hoisted functions', () => {
    const f = rules('dead-code.ts', 'review/dead-code');
    assert.deepEqual(lines(f), [3, 8, 16, 20, 24]);
    assert.match(f[0]!.message, /after `return`/);
    assert.match(f[1]!.message, /after `throw`/);
    assert.match(f[2]!.message, /after `continue`/);
    assert.match(f[4]!.message, /if \(false\)/);
  });

  it('flags unsafe patterns and not their safe counterparts', () => {
    const a = analyze('unsafe.js');
    const by = (r: string) => lines(a.findings.filter((x) => x.ruleId === r));
    assert.deepEqual(by('review/eval'), [6, 7]);
    assert.deepEqual(by('review/shell-injection'), [8, 9, 10, 12]);
    assert.deepEqual(by('review/sql-concatenation'), [13, 14, 16]);
    assert.deepEqual(by('review/tls-disabled'), [17, 18, 19]);
    // nothing in safe() (lines 23..38) except nothing at all
    assert.deepEqual(a.findings.filter((x) => x.range.startLine >= 22 && x.ruleId !== 'review/debug-statement'), []);
    assert.ok(a.findings.filter((x) => x.ruleId !== 'review/debug-statement').every((x) => x.severity === 'high'));
  });

  it('reports nothing on clean code', () => {
    const a = analyze('clean.ts');
    assert.deepEqual(a.findings, []);
    assert.equal(a.functions.length, 4);
  });

  it('marks unparseable files', () => {
    const a = analyze('broken.ts');
    assert.equal(a.parsed, false);
    assert.ok(a.parseErrors > 0);
  });

  it('runs the regex checks only on Python and says so', () => {
    const a = analyze('tool.py');
    assert.equal(a.language, 'python');
    assert.deepEqual(a.checks, ['debug-statement (regex)']);
    assert.deepEqual(lines(a.findings), [1, 6, 7, 8]);
    assert.deepEqual(a.findings[1]!.fix!.edits[0]!.range, { startLine: 6, startColumn: 1, endLine: 7, endColumn: 1 });
    assert.deepEqual(analyzeFile('main.go', 'package main\nfunc main() { println("x") }\n', null).checks, []);
  });

  it('restricts findings to changed lines', () => {
    const text = read('debug.ts');
    const only4 = analyzeJsTs('debug.ts', text, { added: new Set([4]), deletedAt: new Set() });
    assert.deepEqual(only4.findings.map((f) => `${f.ruleId}:${f.range.startLine}`), ['review/debug-statement:4']);
    const cx = read('complexity.ts');
    // a change inside branchy reports its complexity; a change in straight does not
    assert.equal(analyzeJsTs('c.ts', cx, { added: new Set([9]), deletedAt: new Set() }).findings.length, 1);
    assert.equal(analyzeJsTs('c.ts', cx, { added: new Set([3]), deletedAt: new Set() }).findings.length, 0);
  });

  it('parses -U0 hunks', () => {
    const c = parseUnifiedZero('@@ -3 +3 @@\n-a\n+b\n@@ -10,2 +10,0 @@\n-x\n-y\n@@ -20,0 +19,3 @@\n+1\n+2\n+3\n');
    assert.deepEqual([...c.added], [3, 19, 20, 21]);
    assert.deepEqual([...c.deletedAt], [10]);
  });

  it('detects missing tests by base name', () => {
    assert.ok(isTestFile('src/__tests__/a.ts') && isTestFile('a.spec.js') && isTestFile('test/unit/b.ts') && isTestFile('pkg/test_c.py'));
    assert.ok(!isTestFile('src/latest.ts'));
    const all = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d/index.ts', 'test/a.test.ts', 'src/__tests__/b.ts', 'test/d.spec.ts', 'src/types.d.ts', 'app.py', 'test_app.py', 'lib.py'];
    assert.deepEqual(missingTests(['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d/index.ts', 'src/types.d.ts', 'README.md', 'app.py', 'lib.py'], all), ['src/c.ts', 'lib.py']);
  });
});

describe('review-ai skills', () => {
  let repo: string;
  beforeEach(() => { repo = tempRepo(); });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('are registered in the builtin skills', () => {
    assert.equal(reviewSkills.length, 2);
    assert.ok(skills.includes(reviewSkill) && skills.includes(verifySkill));
  });

  it('reviews only the changed lines of a git diff', async () => {
    mkdirSync(path.join(repo, 'src'));
    mkdirSync(path.join(repo, 'test'));
    cpSync(path.join(FIX, 'debug.ts'), path.join(repo, 'src/debug.ts'));
    cpSync(path.join(FIX, 'complexity.ts'), path.join(repo, 'src/complexity.ts'));
    writeFileSync(path.join(repo, 'test/debug.test.ts'), 'test\n');
    writeFileSync(path.join(repo, 'test/complexity.test.ts'), 'test\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    // modify: one new console.log in debug.ts; nothing in complexity.ts; a new untracked file without tests
    const d = read('debug.ts').split('\n');
    d.splice(7, 0, '  console.log("new leftover");');
    writeFileSync(path.join(repo, 'src/debug.ts'), d.join('\n'));
    writeFileSync(path.join(repo, 'src/fresh.ts'), 'export function f(x: number): number {\n  return eval(String(x));\n}\n');
    const art = await runSkill(reviewSkill, ctx({}, repo));
    assert.equal(art.unable, undefined);
    assert.equal(art.goalRef, 'goal-1');
    const data = art.data as ReviewData;
    assert.equal(data.mode, 'diff');
    assert.deepEqual(data.files.map((f) => f.file).sort(), ['src/debug.ts', 'src/fresh.ts']);
    assert.deepEqual(data.findings.map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`), [
      'review/debug-statement src/debug.ts:8',
      'review/missing-tests src/fresh.ts:1',
      'review/eval src/fresh.ts:2',
    ]);
    assert.equal(data.counts.total, 3);
    assert.equal(data.counts.byRule['review/eval'], 1);
    assert.equal(data.counts.bySeverity['high'], 1);
    assert.deepEqual(art.findingsAfter, { count: 3, maxSeverity: 3 });
    assert.ok(art.complexity && art.complexity.max === 1, 'changed functions measured');
    assert.match(art.complexity!.where, /src\/(debug|fresh)\.ts:\d+/);
    assert.equal((data.sarif['runs'] as Array<{ results: unknown[] }>)[0]!.results.length, 3);
    assert.ok(art.confidence > 0.9 && art.confidence <= 0.95);
    assert.match(art.text!, /review\/eval src\/fresh\.ts:2/);
    assert.ok(!art.text!.includes('new leftover'), 'the report carries no code');
  });

  it('respects suppressions and reports a directive without a reason', async () => {
    cpSync(path.join(FIX, 'suppressed.ts'), path.join(repo, 'suppressed.ts'));
    const art = await runSkill(reviewSkill, ctx({ files: ['suppressed.ts'] }, repo));
    const data = art.data as ReviewData;
    assert.equal(data.mode, 'files');
    assert.deepEqual(data.suppressed.map((s) => `${s.ruleId}:${s.line}`), ['review/eval:3', 'review/debug-statement:4']);
    assert.deepEqual(data.findings.map((f) => `${f.ruleId}:${f.range.startLine}`), [
      'review/missing-tests:1', 'cadre/suppression-without-reason:5', 'review/eval:6',
    ]);
  });

  it('is unable outside a git repo with no files, and reviews given files there', async () => {
    const plain = mkdtempSync(path.join(tmpdir(), 'cadre-review-plain-'));
    try {
      const a = await runSkill(reviewSkill, ctx({}, plain));
      assert.match(a.unable!, /not a git repository/);
      assert.equal(a.confidence, 0);
      cpSync(path.join(FIX, 'unsafe.js'), path.join(plain, 'unsafe.js'));
      cpSync(path.join(FIX, 'broken.ts'), path.join(plain, 'broken.ts'));
      cpSync(path.join(FIX, 'tool.py'), path.join(plain, 'tool.py'));
      const b = await runSkill(reviewSkill, ctx({ files: 'unsafe.js, broken.ts, tool.py' }, plain));
      const data = b.data as ReviewData;
      assert.equal(b.unable, undefined);
      assert.deepEqual(data.coverage, { reviewed: 3, parsed: 1, unparseable: 1, regexOnly: 1, ratio: 0.467 });
      assert.ok(b.confidence < 0.7);
      assert.deepEqual(data.files.find((f) => f.file === 'tool.py')!.checks, ['debug-statement (regex)', 'missing-tests']);
      const c = await runSkill(reviewSkill, ctx({ files: ['../etc/passwd'] }, plain));
      assert.match(c.unable!, /outside the workspace/);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it('verify reviews the files a previous step changed and measures findings before/after', async () => {
    cpSync(path.join(FIX, 'debug.ts'), path.join(repo, 'debug.ts'));
    writeFileSync(path.join(repo, 'debug.test.ts'), 'x\n');
    const none = await runSkill(verifySkill, ctx({}, repo));
    assert.match(none.unable!, /no changed files/);
    const review = await runSkill(reviewSkill, ctx({ files: ['debug.ts'] }, repo));
    const fixed = read('debug.ts').split('\n').filter((l) => !/console\.(log|debug)|debugger/.test(l)).join('\n');
    writeFileSync(path.join(repo, 'debug.ts'), fixed);
    const prev: StepRequest['previous'] = [
      { step: 0, agentId: 'review-ai', action: 'review', passed: true, confidence: review.confidence, summary: review.summary, data: review.data },
      { step: 1, agentId: 'debug-ai', action: 'fix', passed: true, confidence: 0.8, summary: 'fixed', data: { changes: [{ path: 'debug.ts', kind: 'modify' }] } },
    ];
    const art = await runSkill(verifySkill, ctx({}, repo, prev));
    assert.equal(art.kind, 'verification');
    assert.deepEqual((art.data as ReviewData).files.map((f) => f.file), ['debug.ts']);
    assert.deepEqual(art.findingsBefore, { count: 4, maxSeverity: 1 });
    assert.deepEqual(art.findingsAfter, { count: 0, maxSeverity: 0 });
  });

  it('an empty diff is not applicable (nothing changed since the base), not unable', async () => {
    writeFileSync(path.join(repo, 'a.txt'), 'x\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    const art = await runSkill(reviewSkill, ctx({}, repo));
    assert.equal(art.unable, undefined);
    assert.match(art.notApplicable ?? '', /^nothing changed since /);
    assert.match(art.summary, /not applicable: nothing changed since/);
    assert.equal((art.data as ReviewData).findings.length, 0);
  });
});
