import { strict as assert } from 'node:assert';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Artifact, SkillContext } from '../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../support/skill-context';
import { REVIEW_RULES } from '../../../server/src/skills/review/rules';
import { CODE_ANALYSIS_RULES } from '../../../server/src/skills/code-analysis/rules';
import { analyzeCodeText, CODE_RULES } from '../../../server/src/skills/security/code';
import { CustomRulesError, expandReplacement, loadCustomRules, matchCustomRules, parseCustomRules } from '../../../server/src/skills/security/custom-rules';
import { scanSkill, type SecurityReportData } from '../../../server/src/skills/security/skill';

const FIXTURES = path.resolve(__dirname, '../../fixtures/security');
const ULTRA = path.join(FIXTURES, 'ultra');

const ctx = (workspace: string, tier: string, input: Record<string, unknown> = {}): SkillContext =>
  skillContext({ agentId: 'security-ai', action: 'scan', workspace, tier, input, prompt: 'security scan' });
const run = async (c: SkillContext): Promise<Artifact> => (await runSkill(scanSkill, c)).artifact;

const status = (d: SecurityReportData) => Object.fromEntries(d.checks!.map((c) => [c.id, c.status]));
const at = (d: SecurityReportData, prefix: string) => d.findings.filter((f) => f.ruleId.startsWith(prefix)).map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`).sort();

describe('security-ai scan: static code analysis (ULTRA)', () => {
  it('reports the code-analysis rules, the same ones review-ai runs', () => {
    assert.deepEqual(CODE_RULES.map((r) => r.id), CODE_ANALYSIS_RULES.map((r) => r.id));
    for (const id of ['code/sql-injection', 'code/xss', 'review/eval', 'review/shell-injection', 'review/sql-concatenation', 'review/tls-disabled']) {
      assert.ok(CODE_RULES.some((r) => r.id === id), id);
      assert.ok(REVIEW_RULES.some((r) => r.id === id), `review-ai reports ${id} too`);
    }
  });

  it('finds the dangerous patterns, honours a suppression with a reason, and is silent on clean code', () => {
    const text = readFileSync(path.join(ULTRA, 'src/danger.ts'), 'utf8');
    const r = analyzeCodeText('src/danger.ts', text);
    assert.deepEqual(r.findings.map((f) => `${f.ruleId}:${f.range.startLine}`).sort(),
      ['review/eval:5', 'review/eval:6', 'review/shell-injection:7', 'review/sql-concatenation:8', 'review/tls-disabled:9']);
    assert.deepEqual(r.suppressed.map((s) => `${s.finding.ruleId}:${s.finding.range.startLine}:${s.reason}`), ['review/eval:11:fixed input from the build script, never user data']);
    assert.ok(!r.findings.some((f) => f.ruleId === 'review/debug-statement' || f.ruleId === 'review/complexity'), 'only the security family');
    assert.deepEqual(analyzeCodeText('src/clean.ts', readFileSync(path.join(ULTRA, 'src/clean.ts'), 'utf8')).findings, []);
  });

  it('tier gating: CORE and PRO skip code analysis and custom rules and name the tier; ULTRA runs both', async () => {
    for (const tier of ['core', 'pro']) {
      const a = await run(ctx(ULTRA, tier));
      const d = a.data as SecurityReportData;
      assert.equal(status(d).code, 'skipped');
      assert.equal(status(d)['custom-rules'], 'skipped');
      assert.match(d.checks!.find((c) => c.id === 'code')!.reason!, /requires the ULTRA intelligence tier/);
      assert.match(d.checks!.find((c) => c.id === 'custom-rules')!.reason!, /requires the ULTRA intelligence tier/);
      assert.deepEqual(at(d, 'review/'), [], `${tier}: no code findings`);
      assert.deepEqual(at(d, 'custom/'), [], `${tier}: no custom findings`);
      assert.match(a.text!, /Check custom-rules \(ULTRA\+\): skipped/);
    }
    const a = await run(ctx(ULTRA, 'ultra'));
    const d = a.data as SecurityReportData;
    assert.equal(status(d).code, 'ran');
    assert.equal(status(d)['custom-rules'], 'ran');
    assert.deepEqual(d.checks!.find((c) => c.id === 'code')!.files, ['src/clean.ts', 'src/danger.ts']);
    assert.deepEqual(at(d, 'review/'), ['review/eval src/danger.ts:5', 'review/eval src/danger.ts:6', 'review/shell-injection src/danger.ts:7',
      'review/sql-concatenation src/danger.ts:8', 'review/tls-disabled src/danger.ts:9']);
    assert.deepEqual(at(d, 'custom/'), ['custom/no-plain-http config/app.yml:1', 'custom/no-plain-http src/danger.ts:15']);
    assert.equal(d.suppressed.filter((s) => s.ruleId === 'review/eval').length, 1);
    const sarifRules = (d.sarif as any).runs[0].tool.driver.rules.map((r: { id: string }) => r.id);
    assert.ok(sarifRules.includes('review/eval') && sarifRules.includes('custom/no-plain-http'));
    assert.match(a.summary, /checks run: secrets, iac, code, custom-rules/);
  });
});

describe('security-ai custom rules (ULTRA)', () => {
  it('loads .cadre/rules.yaml: ids, globs, fixes with groups', () => {
    const rules = loadCustomRules(path.join(ULTRA, '.cadre/rules.yaml'), ULTRA);
    assert.deepEqual(rules.map((r) => [r.id, r.severity]), [['custom/no-plain-http', 'medium'], ['custom/no-todo', 'info']]);
    const r = matchCustomRules(rules, 'config/app.yml', readFileSync(path.join(ULTRA, 'config/app.yml'), 'utf8'));
    assert.equal(r.findings.length, 1, 'localhost excluded by the pattern');
    const f = r.findings[0]!;
    assert.deepEqual(f.range, { startLine: 1, startColumn: 11, endLine: 1, endColumn: 38 });
    assert.equal(f.fix?.edits[0]?.newText, 'https://api.internal.example');
    assert.equal(f.message, 'Plain http URL; use https');
    assert.deepEqual(matchCustomRules(rules, 'docs/readme.md', 'see http://x.org TODO').findings.map((x) => x.ruleId), ['custom/no-todo'], 'globs select files');
    assert.deepEqual(matchCustomRules(rules, 'a.yml', 'TODO').findings, [], '! excludes');
  });

  it('honours cadre-ignore on custom rules (by id or the custom family)', () => {
    const rules = parseCustomRules("rules:\n  - id: no-x\n    severity: low\n    message: no x\n    pattern: 'xx+'\n", 'rules.yaml');
    const text = 'a xxx\n// cadre-ignore custom: legacy format, removed in v2\nb xxxx\n';
    const r = matchCustomRules(rules, 'f.ts', text);
    assert.deepEqual(r.findings.map((f) => f.range.startLine), [1]);
    assert.deepEqual(r.suppressed.map((s) => s.finding.range.startLine), [3]);
  });

  it('a bad regex, a bad severity and a bad id give clear file:line:col errors', () => {
    const text = readFileSync(path.join(FIXTURES, 'bad-rules.yaml'), 'utf8');
    let err: unknown;
    try {
      parseCustomRules(text, '.cadre/rules.yaml');
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof CustomRulesError);
    const lines = err.message.split('\n');
    assert.equal(lines.length, 3, err.message);
    assert.match(lines[0]!, /^\.cadre\/rules\.yaml:9:5: rules\[1\]\.pattern: invalid regular expression: \/password=\(\\w\+\/\w*: Unterminated group$/);
    assert.match(lines[1]!, /^\.cadre\/rules\.yaml:10:5: rules\[2\]\.id: must be 1-64 letters/);
    assert.match(lines[2]!, /^\.cadre\/rules\.yaml:11:5: rules\[2\]\.severity: must be one of critical, high, medium, low, info \(got "urgent"\)/);
    assert.deepEqual(err.issues.map((i) => [i.line, i.path]), [[9, 'rules[1].pattern'], [10, 'rules[2].id'], [11, 'rules[2].severity']]);
  });

  it('rejects YAML errors, unknown keys, duplicate ids and patterns matching the empty string', () => {
    assert.throws(() => parseCustomRules('rules: [\n', 'r.yaml'), /r\.yaml:\d+:\d+: YAML syntax error/);
    assert.throws(() => parseCustomRules('rules:\n  - id: a\n    severity: low\n    message: m\n    pattern: x\n    glob: "*.ts"\n', 'r.yaml'), /r\.yaml:2:5: rules\[0\]: unknown key\(s\) glob/);
    assert.throws(() => parseCustomRules('rules:\n  - {id: a, severity: low, message: m, pattern: x}\n  - {id: a, severity: low, message: m, pattern: y}\n', 'r.yaml'), /r\.yaml:3:6: rules\[1\]\.id: duplicate rule id "a"/);
    assert.throws(() => parseCustomRules('rules:\n  - {id: a, severity: low, message: m, pattern: "x*"}\n', 'r.yaml'), /matches the empty string/);
    assert.equal(expandReplacement('$$-$&-$1-$9', Object.assign(['ab', 'b'], { index: 0, input: 'ab' }) as unknown as RegExpExecArray), '$-ab-b-$9');
  });

  it('an invalid rules file makes the check an error with the messages; the rest of the scan still runs', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-custom-bad-'));
    cpSync(path.join(ULTRA, 'src'), path.join(ws, 'src'), { recursive: true });
    writeFileSync(path.join(ws, 'my-rules.yaml'), readFileSync(path.join(FIXTURES, 'bad-rules.yaml')));
    const d = (await run(ctx(ws, 'ultra', { rules: 'my-rules.yaml' }))).data as SecurityReportData;
    const check = d.checks!.find((c) => c.id === 'custom-rules')!;
    assert.equal(check.status, 'error');
    assert.match(check.reason!, /my-rules\.yaml:9:5: rules\[1\]\.pattern: invalid regular expression/);
    assert.match(check.reason!, /my-rules\.yaml:11:5: rules\[2\]\.severity/);
    assert.equal(status(d).code, 'ran');
    assert.ok(d.limitations.some((l) => /custom rules did not run: 3 problem\(s\) in my-rules\.yaml/.test(l)));
    const missing = (await run(ctx(ws, 'ultra', { rules: 'nope.yaml' }))).data as SecurityReportData;
    assert.match(missing.checks!.find((c) => c.id === 'custom-rules')!.reason!, /custom rules file not found: nope\.yaml/);
  });
});
