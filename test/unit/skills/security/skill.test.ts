import { strict as assert } from 'node:assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Artifact, SkillContext } from '../../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../../support/skill-context';
import { findSecrets } from '../../../../server/src/skills/secret-rules';
import { scanText } from '../../../../server/src/skills/security/scanner';
import { scanSkill, secretsSkill, SCAN_LIMITATION, type SecurityReportData } from '../../../../server/src/skills/security/skill';

const CORPUS = path.resolve(__dirname, '../../../fixtures/secrets');

const ctx = (workspace: string | undefined, input: Record<string, unknown> = {}, action = 'secrets'): SkillContext =>
  skillContext({ agentId: 'security-ai', action, workspace, tier: 'FREE', input, prompt: 'scan for secrets' });
const run = async (skill: typeof secretsSkill, c: SkillContext): Promise<Artifact> => (await runSkill(skill, c)).artifact;

describe('security-ai skills', () => {
  it('is unable without a workspace, and invents nothing', async () => {
    const a = await run(secretsSkill, ctx(undefined));
    assert.equal(a.unable, 'no workspace to scan');
    assert.equal(a.confidence, 0);
  });

  it('scans the workspace: findings, summary, SARIF, coverage-based confidence, no raw secret in text', async () => {
    const c = ctx(CORPUS);
    const evidence = await secretsSkill.research(c);
    const proposed = await secretsSkill.propose(c, evidence);
    assert.equal(proposed[0]?.kind, 'read');
    const a = await secretsSkill.generate(c, evidence);
    assert.equal(a.unable, undefined);
    assert.equal(a.goalRef, 'g1');
    const data = a.data as SecurityReportData;
    assert.equal(data.summary.total, data.findings.length);
    assert.ok(data.findings.filter((f) => f.severity !== 'info').length >= 15);
    assert.equal(data.summary.filesScanned, data.summary.filesConsidered);
    assert.equal(a.confidence, data.summary.coverage);
    assert.equal(a.confidence, 1);
    assert.equal((data.sarif as any).version, '2.1.0');
    assert.equal((data.sarif as any).runs[0].results.length, data.findings.length);
    assert.ok(a.text && a.text.includes('aws-access-key-id'));
    assert.deepEqual(findSecrets(a.text!), [], 'the secrets gate finds nothing in the report');
    assert.deepEqual(scanText(a.text!, 'report.md').filter((f) => f.severity !== 'info'), []);
    assert.deepEqual(findSecrets(JSON.stringify(data)), [], 'nor in the data');
    assert.equal(a.findingsAfter?.count, data.summary.total);
    assert.equal(a.findingsAfter?.maxSeverity, 4);
  });

  it('confidence follows coverage when files cannot be scanned', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-sec-cov-'));
    writeFileSync(path.join(ws, 'a.ts'), 'const x = 1;\n');
    writeFileSync(path.join(ws, 'b.ts'), 'const y = 2;\n');
    const c = ctx(ws);
    const evidence = await secretsSkill.research(c);
    evidence.pathsRead.push('missing.ts');
    const a = await secretsSkill.generate(c, evidence);
    assert.equal(a.confidence, 2 / 3);
  });

  it('reports only findings new since the baseline', async () => {
    const first = (await run(secretsSkill, ctx(CORPUS))).data as SecurityReportData;
    const keep = first.findings.find((f) => f.ruleId === 'jwt')!;
    const baseline = first.findings.filter((f) => f !== keep).map((f) => f.fingerprint);
    const a = await run(secretsSkill, ctx(CORPUS, { baseline }));
    const data = a.data as SecurityReportData;
    assert.deepEqual(data.findings.map((f) => f.ruleId), ['jwt']);
    assert.equal(data.summary.baselined, first.findings.length - 1);
  });

  it('scan states its limitations and the checks it ran (unknown tier counts as core)', async () => {
    const a = await run(scanSkill, ctx(CORPUS, {}, 'scan'));
    const data = a.data as SecurityReportData;
    assert.deepEqual(data.limitations, [SCAN_LIMITATION]);
    assert.deepEqual(data.checks?.map((c) => [c.id, c.status]), [['secrets', 'ran'], ['iac', 'ran'], ['dependencies', 'skipped'], ['code', 'skipped'], ['custom-rules', 'skipped']]);
    assert.match(a.summary, /checks run: secrets, iac; not run: dependencies, code, custom-rules/);
    assert.match(a.text!, /Check code \(ULTRA\+\): skipped \(static code analysis \(dangerous code patterns\) requires the ULTRA intelligence tier\)/);
  });
});
