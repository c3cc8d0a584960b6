import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../server/src/skills/builtin';
import { complianceSkill, parseFrameworks } from '../../../server/src/skills/govern/compliance-skill';
import { CONTROLS, FRAMEWORKS } from '../../../server/src/skills/govern/controls/frameworks';
import { PROBES } from '../../../server/src/skills/govern/controls/probes';
import type { ComplianceReport, ControlResult } from '../../../server/src/skills/govern/compliance';
import { fixtureProject } from '../../support/fixture-project';
import { runSkill, skillContext } from '../../support/skill-context';

/** The fixture's planted key, split so that this file holds no secret of its own. */
const PLANTED_KEY = 'AKIAQ4NXB7' + 'J2LKD6WZ3M';

const dirs: string[] = [];

async function run(ws: string, input: Record<string, unknown> = {}) {
  const r = await runSkill(complianceSkill, skillContext({ agentId: 'govern-ai', action: 'compliance', workspace: ws, input }));
  const check = complianceSkill.outputSchema!.safeParse(r.artifact.data);
  assert.ok(check.success, `data matches its schema: ${check.success ? '' : check.error.message}`);
  return r;
}

const control = (r: ComplianceReport, fw: string, id: string): ControlResult => {
  const c = r.frameworks.find((f) => f.framework === fw)?.controls.find((x) => x.id === id);
  assert.ok(c, `${fw} ${id} in the result`);
  return c;
};

describe('govern-ai compliance', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('is the embedded skill of govern-ai compliance', () => {
    assert.ok(skills.includes(complianceSkill));
  });

  it('the checklists are data: every control names probes that exist or says why it is organisational, with the ids the frameworks use', () => {
    for (const fw of FRAMEWORKS) {
      for (const c of CONTROLS[fw]) {
        assert.ok(c.organisational ? c.probes.length === 0 : c.probes.length > 0 && c.probes.every((p) => PROBES[p]), `${fw} ${c.id}`);
        assert.ok(c.title && c.evidence, `${fw} ${c.id} has a title and what evidence counts`);
      }
    }
    const ids = (fw: 'soc2' | 'hipaa' | 'pci-dss') => CONTROLS[fw].map((c) => c.id);
    for (const id of ['CC6.1', 'CC7.2', 'CC8.1']) assert.ok(ids('soc2').includes(id), id);
    for (const id of ['164.312(a)(1)', '164.312(b)', '164.312(e)(1)']) assert.ok(ids('hipaa').includes(id), id);
    for (const id of ['3.5', '6.2', '6.3.3', '8.3', '10.2']) assert.ok(ids('pci-dss').includes(id), id);
  });

  it('the bare repository: no CI, review, security policy or lock file; the committed key, the unencrypted database and TLS checks turned off are named with file and line', async () => {
    const ws = fixtureProject({ copy: { '.': 'compliance/bare' }, prefix: 'cadre-compliance-' }, dirs);
    const r = await run(ws);
    const data = r.artifact.data as ComplianceReport;
    assert.deepEqual(data.frameworks.map((f) => [f.framework, f.met]), [['soc2', 0], ['hipaa', 0], ['pci-dss', 0]]);
    assert.deepEqual(data.frameworks.map((f) => f.score), [0, 0, 0]);
    const pci35 = control(data, 'pci-dss', '3.5');
    assert.equal(pci35.status, 'missing');
    assert.ok(pci35.contrary.some((e) => e.file === 'infra/main.tf' && e.line === 5 && /unencrypted/.test(e.detail)), JSON.stringify(pci35.contrary));
    const key = pci35.contrary.find((e) => e.file === 'src/settings.js');
    assert.equal(key?.line, 3);
    assert.match(key!.detail, /^aws-access-key-id/);
    assert.ok(!JSON.stringify(data).includes(PLANTED_KEY), 'the key itself never leaves the step');
    const tls = control(data, 'hipaa', '164.312(e)(1)');
    assert.equal(tls.status, 'missing');
    assert.deepEqual(tls.contrary.map((e) => `${e.file}:${e.line}`), ['src/client.js:4']);
    const cc81 = control(data, 'soc2', 'CC8.1');
    assert.equal(cc81.status, 'missing');
    assert.ok(cc81.missing.some((m) => m.what === 'a CI pipeline configuration' && /\.github\/workflows/.test(m.where)), JSON.stringify(cc81.missing));
    assert.equal(control(data, 'pci-dss', '12.10').status, 'missing');
    assert.match(r.artifact.summary, /^soc2 0% \(0\/10 met, 0 partial, 10 missing, 5 not assessable\)/);
    assert.match(r.artifact.summary, /1 secret\(s\) committed$/);
    assert.deepEqual(r.artifact.findingsAfter, { count: 29, maxSeverity: 3 }, '10 + 8 + 11 controls missing; a committed secret is high');
    assert.deepEqual(r.proposed.map((p) => p.kind), ['read']);
  });

  it('the kept twin meets every assessable control, each with its evidence (file and line)', async () => {
    const ws = fixtureProject({ copy: { '.': 'compliance/kept' }, prefix: 'cadre-compliance-' }, dirs);
    const r = await run(ws);
    const data = r.artifact.data as ComplianceReport;
    for (const f of data.frameworks) {
      assert.equal(f.score, 1, `${f.framework}: ${JSON.stringify(f.controls.filter((c) => c.status !== 'met' && c.status !== 'not_assessable').map((c) => [c.id, c.missing]))}`);
      for (const c of f.controls.filter((x) => x.status === 'met')) assert.ok(c.found.length > 0, `${f.framework} ${c.id} has evidence`);
    }
    assert.deepEqual(control(data, 'hipaa', '164.312(d)').found.map((e) => `${e.file}:${e.line}`), ['package.json:12', 'package.json:11'], 'passport and otplib');
    assert.deepEqual(control(data, 'pci-dss', '10.2').found.map((e) => `${e.file}:${e.line}`), ['package.json:13', 'src/audit.js:4']);
    assert.ok(control(data, 'soc2', 'A1.2').found.some((e) => e.file === 'infra/main.tf' && e.line === 7), 'backup_retention_period');
    assert.deepEqual(r.artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    const bare = await run(fixtureProject({ copy: { '.': 'compliance/bare' }, prefix: 'cadre-compliance-' }, dirs));
    assert.ok(r.artifact.confidence > 0 && r.artifact.confidence === bare.artifact.confidence, 'confidence follows what could be assessed, not whether it was met');
  });

  it('organisational controls and audit-evidenced controls without audit facts are not_assessable, saying why', async () => {
    const ws = fixtureProject({ copy: { '.': 'compliance/kept' }, prefix: 'cadre-compliance-' }, dirs);
    const data = (await run(ws, { framework: 'pci-dss' })).artifact.data as ComplianceReport;
    assert.deepEqual(data.frameworks.map((f) => f.framework), ['pci-dss']);
    const org = control(data, 'pci-dss', '12.1');
    assert.equal(org.status, 'not_assessable');
    assert.match(org.why ?? '', /^organisational control, not visible in a repository/);
    const logs = control(data, 'pci-dss', '10.3');
    assert.equal(logs.status, 'not_assessable');
    assert.match(logs.why ?? '', /no audit facts were given \(input\.audit\)/);
    const changes = control(data, 'pci-dss', '6.5.1');
    assert.equal(changes.status, 'met', 'the repository part decides while the audit part cannot be assessed');
    assert.deepEqual(changes.checks.map((c) => [c.probe, c.status]), [['change-management', 'met'], ['approved-changes', 'not_assessable']]);
  });

  it('audit facts, when given, decide the audit-evidenced controls: a broken chain and automatic approvals are named', async () => {
    const ws = fixtureProject({ copy: { '.': 'compliance/kept' }, prefix: 'cadre-compliance-' }, dirs);
    const good = (await run(ws, { framework: 'pci-dss', audit: { chainVerified: true, records: 120, approvals: { decided: 4, byPerson: 4 } } })).artifact.data as ComplianceReport;
    assert.equal(control(good, 'pci-dss', '10.3').status, 'met');
    assert.match(control(good, 'pci-dss', '10.3').found[0]!.detail, /verified over 120 record/);
    assert.equal(control(good, 'pci-dss', '6.5.1').status, 'met');
    const bad = (await run(ws, { framework: 'pci-dss', audit: { chainVerified: 'false', tampered: 'seq 17: hash mismatch', approvals: { decided: '4', byPerson: '1' } } })).artifact.data as ComplianceReport;
    assert.equal(control(bad, 'pci-dss', '10.3').status, 'missing');
    assert.match(control(bad, 'pci-dss', '10.3').contrary[0]!.detail, /seq 17: hash mismatch/);
    assert.equal(control(bad, 'pci-dss', '6.5.1').status, 'partial');
    const empty = (await run(ws, { framework: 'pci-dss', audit: { chainVerified: true, records: 0, approvals: { decided: 0, byPerson: 0 } } })).artifact.data as ComplianceReport;
    assert.equal(control(empty, 'pci-dss', '10.3').status, 'not_assessable', 'an empty trail verifies vacuously');
    assert.match(control(empty, 'pci-dss', '10.3').why ?? '', /holds no record of this tenant yet/);
  });

  it('paths narrow what is judged; repository-level files stay in view', async () => {
    const ws = fixtureProject({ copy: { '.': 'compliance/kept' }, prefix: 'cadre-compliance-' }, dirs);
    const data = (await run(ws, { framework: 'soc2', paths: ['infra'] })).artifact.data as ComplianceReport;
    assert.equal(control(data, 'soc2', 'CC8.1').status, 'met', 'CI and CODEOWNERS are repository-level');
    const cc72 = control(data, 'soc2', 'CC7.2');
    assert.equal(cc72.status, 'partial', 'the logging library of the top-level package.json counts; the audit log in src/ is out of scope');
    assert.deepEqual(cc72.missing.map((m) => m.what), ['an audit log or trail in code or configuration (audit log, audit trail, Kubernetes audit policy, CloudTrail)']);
    assert.deepEqual(data.examined.scope, ['infra']);
  });

  it('bad input is needs_input naming the field: an unknown framework, a path outside the workspace', async () => {
    assert.deepEqual(parseFrameworks('SOC 2, PCI'), ['soc2', 'pci-dss']);
    assert.deepEqual(parseFrameworks(undefined), ['soc2', 'hipaa', 'pci-dss']);
    const ws = fixtureProject({ copy: { '.': 'compliance/kept' }, prefix: 'cadre-compliance-', git: false }, dirs);
    const r = await run(ws, { framework: ['soc2', 'iso27001'] });
    assert.equal(r.artifact.needsInput?.field, 'framework');
    assert.match(r.artifact.unable ?? '', /unknown framework "iso27001" \(soc2, hipaa, pci-dss\)/);
    const out = await run(ws, { paths: '../..' });
    assert.equal(out.artifact.needsInput?.field, 'paths');
    assert.match(out.artifact.unable ?? '', /outside the workspace/);
    assert.equal(complianceSkill.inputSchema!.safeParse({ framework: 3 }).success, false);
  });

  it('an empty workspace is not applicable; a .env ignored by git is not a committed secret', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'cadre-compliance-empty-'));
    dirs.push(empty);
    const r = await run(empty);
    assert.match(r.artifact.notApplicable ?? '', /no file to judge/);
    const ws = mkdtempSync(path.join(tmpdir(), 'cadre-compliance-env-'));
    dirs.push(ws);
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, '.gitignore'), '.env\n');
    writeFileSync(path.join(ws, '.env'), `AWS_ACCESS_KEY_ID=${PLANTED_KEY}\n`);
    writeFileSync(path.join(ws, 'src/app.js'), 'module.exports = 1;\n');
    const data = (await run(ws, { framework: 'soc2' })).artifact.data as ComplianceReport;
    const cc61 = control(data, 'soc2', 'CC6.1');
    assert.equal(cc61.contrary.length, 0, JSON.stringify(cc61.contrary));
    assert.ok(cc61.found.some((e) => e.file === '.gitignore' && e.line === 1));
  });

  it('the alternatives count too: branch protection as code, Kubernetes RBAC, HSTS, a Velero schedule; a repository without infrastructure cannot show encryption at rest', async () => {
    const ws = fixtureProject({ prefix: 'cadre-compliance-', files: {
      '.github/workflows/ci.yml': 'on: push\njobs:\n  t:\n    steps:\n      - run: go test ./...\n',
      '.github/settings.yml': 'branches:\n  - name: main\n    protection:\n      required_pull_request_reviews:\n        required_approving_review_count: 2\n',
      'deploy/rbac.yaml': 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n',
      'deploy/backup.yaml': 'apiVersion: velero.io/v1\nkind: Schedule\nmetadata:\n  name: nightly\n',
      'nginx.conf': 'server {\n  add_header Strict-Transport-Security "max-age=63072000" always;\n}\n',
      'main.go': 'package main\n',
    } }, dirs);
    const data = (await run(ws, { framework: 'soc2' })).artifact.data as ComplianceReport;
    const cc81 = control(data, 'soc2', 'CC8.1');
    assert.ok(cc81.found.some((e) => e.file === '.github/settings.yml' && e.line === 4), JSON.stringify(cc81.found));
    assert.equal(cc81.checks[0]!.status, 'met');
    assert.ok(control(data, 'soc2', 'CC6.1').found.some((e) => e.file === 'deploy/rbac.yaml' && e.line === 2));
    assert.deepEqual(control(data, 'soc2', 'CC6.6').found.map((e) => `${e.file}:${e.line}`), ['nginx.conf:2']);
    assert.deepEqual(control(data, 'soc2', 'A1.2').found.map((e) => `${e.file}:${e.line}`), ['deploy/backup.yaml:1']);
    const noInfra = fixtureProject({ prefix: 'cadre-compliance-', files: { 'src/app.js': 'module.exports = 1;\n' } }, dirs);
    const none = (await run(noInfra, { framework: 'hipaa' })).artifact.data as ComplianceReport;
    assert.equal(control(none, 'hipaa', '164.312(a)(2)(iv)').status, 'not_assessable');
    assert.match(control(none, 'hipaa', '164.312(a)(2)(iv)').why ?? '', /no infrastructure definition/);
  });
});
