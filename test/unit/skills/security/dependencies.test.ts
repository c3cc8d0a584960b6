import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Artifact, SkillContext } from '../../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../../support/skill-context';
import { advisoryAffects, advisorySeverity, cvss3BaseScore, parseAdvisories, parsePackageLock, parsePnpmKey, parsePnpmLock, parseYarnLock, scanDependencies } from '../../../../server/src/skills/security/dependencies';
import { listFiles } from '../../../../server/src/skills/security/scanner';
import { compareSemver, rangeAffects } from '../../../../server/src/skills/security/semver';
import { scanSkill, type SecurityReportData } from '../../../../server/src/skills/security/skill';

const DEPS = path.resolve(__dirname, '../../../fixtures/deps');
const IAC = path.resolve(__dirname, '../../../fixtures/iac');
const read = (p: string) => readFileSync(path.join(DEPS, p), 'utf8');
const nv = (l: Array<{ name: string; version: string }>) => l.map((p) => `${p.name}@${p.version}`).sort();

describe('security-ai dependency scanning', () => {
  it('parses package-lock.json v3 (packages map, nested, links and workspace packages skipped) with lines', () => {
    const pkgs = parsePackageLock(read('npm/package-lock.json'));
    assert.deepEqual(nv(pkgs), ['@babel/traverse@7.23.2', 'axios@1.6.0', 'event-stream@3.3.6', 'lodash@4.17.20', 'minimist@0.0.8', 'minimist@1.2.5', 'mkdirp@0.5.1', 'semver@7.5.4']);
    assert.deepEqual(pkgs.find((p) => p.version === '0.0.8'), { name: 'minimist', version: '0.0.8', path: 'node_modules/mkdirp/node_modules/minimist', line: 52 });
  });

  it('parses package-lock.json v1 (nested dependencies)', () => {
    const pkgs = parsePackageLock(read('npm-v1/package-lock.json'));
    assert.deepEqual(nv(pkgs), ['lodash@4.17.21', 'minimist@0.0.8', 'mkdirp@0.5.1', 'semver@5.7.1']);
    assert.deepEqual(pkgs.find((p) => p.name === 'minimist'), { name: 'minimist', version: '0.0.8', path: 'node_modules/mkdirp/node_modules/minimist', line: 20 });
  });

  it('parses yarn.lock v1 (quoted, scoped, multi-spec headers) and berry entries', () => {
    const pkgs = parseYarnLock(read('yarn/yarn.lock'));
    assert.deepEqual(nv(pkgs), ['@babel/traverse@7.22.5', 'debug@4.3.4', 'lodash@4.17.21', 'semver@6.3.0']);
    assert.equal(pkgs.find((p) => p.name === '@babel/traverse')!.line, 5);
    assert.deepEqual(nv(parseYarnLock('__metadata:\n  version: 6\n\n"lodash@npm:^4.17.0":\n  version: 4.17.15\n  resolution: "lodash@npm:4.17.15"\n')), ['lodash@4.17.15']);
  });

  it('parses pnpm-lock.yaml (v9 keys) and v5/v6 key shapes', () => {
    const pkgs = parsePnpmLock(read('pnpm/pnpm-lock.yaml'));
    assert.deepEqual(nv(pkgs), ['@babel/traverse@8.0.0-alpha.2', 'axios@0.27.2', 'follow-redirects@1.15.6', 'minimist@1.2.8']);
    assert.equal(pkgs.find((p) => p.name === 'axios')!.line, 23);
    assert.deepEqual(parsePnpmKey('/@types/node@20.1.0(typescript@5.0.0)'), { name: '@types/node', version: '20.1.0' });
    assert.deepEqual(parsePnpmKey('/lodash/4.17.20'), { name: 'lodash', version: '4.17.20' });
    assert.deepEqual(parsePnpmKey('/@scope/pkg/1.0.0_react@18.0.0'), { name: '@scope/pkg', version: '1.0.0' });
  });

  it('semver comparison incl. prereleases', () => {
    assert.equal(compareSemver('1.2.3', '1.2.3'), 0);
    assert.equal(compareSemver('1.10.0', '1.9.9'), 1);
    assert.equal(compareSemver('1.0.0-alpha', '1.0.0'), -1);
    assert.equal(compareSemver('1.0.0-alpha.1', '1.0.0-alpha.beta'), -1);
    assert.equal(compareSemver('1.0.0-alpha.10', '1.0.0-alpha.9'), 1);
    assert.equal(compareSemver('1.0.0-rc.1', '1.0.0-beta.11'), 1);
    assert.equal(compareSemver('v2.0.0+build.5', '2.0.0'), 0);
  });

  it('OSV range matching: [introduced, fixed), introduced 0, last_affected, several intervals, open end', () => {
    const ev = [{ introduced: '0' }, { fixed: '4.17.21' }];
    assert.deepEqual(rangeAffects('4.17.20', ev), { affected: true, fixed: '4.17.21' });
    assert.deepEqual(rangeAffects('4.17.21', ev), { affected: false }, 'fixed is exclusive');
    assert.equal(rangeAffects('0.0.1', ev).affected, true);
    assert.equal(rangeAffects('4.17.21-rc.1', ev).affected, true, 'a prerelease of the fix is still affected');
    const two = [{ introduced: '1.0.0' }, { fixed: '1.2.6' }, { introduced: '2.0.0' }, { fixed: '2.0.3' }];
    assert.equal(rangeAffects('0.9.0', two).affected, false);
    assert.equal(rangeAffects('1.0.0', two).affected, true, 'introduced is inclusive');
    assert.equal(rangeAffects('1.5.0', two).affected, false);
    assert.deepEqual(rangeAffects('2.0.1', two), { affected: true, fixed: '2.0.3' });
    const la = [{ introduced: '1.0.0' }, { last_affected: '1.4.0' }];
    assert.equal(rangeAffects('1.4.0', la).affected, true);
    assert.equal(rangeAffects('1.4.1', la).affected, false);
    assert.deepEqual(rangeAffects('9.9.9', [{ introduced: '3.0.0' }]), { affected: true });
    assert.equal(rangeAffects('not-a-version', ev).affected, false);
  });

  it('advisories: explicit versions, other ecosystems ignored, severity from database_specific or CVSS', () => {
    const advs = parseAdvisories(read('advisories.json'));
    const byId = (id: string) => advs.find((a) => a.id === id)!;
    assert.equal(advisoryAffects(byId('GHSA-mh6f-8j2x-4483'), 'event-stream', '3.3.6').affected, true);
    assert.equal(advisoryAffects(byId('GHSA-mh6f-8j2x-4483'), 'event-stream', '3.3.5').affected, false);
    assert.equal(advisoryAffects(byId('PYSEC-2021-0001'), 'lodash', '4.17.20').affected, false);
    assert.equal(advisorySeverity(byId('GHSA-c2qf-rxjj-qqgw')), 'medium');
    assert.equal(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:N/A:N'), 6.5);
    assert.equal(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H'), 9.8);
    assert.equal(cvss3BaseScore('CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N'), 6.4);
    assert.equal(advisorySeverity(byId('GHSA-wf5p-g6vw-rhxx')), 'medium');
    assert.deepEqual(parseAdvisories(JSON.stringify({ vulns: [{ id: 'X' }, { nope: 1 }] })).map((a) => a.id), ['X']);
  });

  it('matches the fixture lock files: one finding per (package@version, advisory), with fixed version and line', () => {
    const r = scanDependencies(DEPS, listFiles(DEPS), path.join(DEPS, 'advisories.json'));
    assert.deepEqual(r.findings.map((f) => `${f.file}:${f.range.startLine} ${f.snippet} ${f.ruleId} ${f.severity}`), [
      'npm-v1/package-lock.json:20 minimist@0.0.8 deps/GHSA-xvch-5gv4-984h critical',
      'npm-v1/package-lock.json:27 semver@5.7.1 deps/GHSA-c2qf-rxjj-qqgw medium',
      'npm/package-lock.json:29 event-stream@3.3.6 deps/GHSA-mh6f-8j2x-4483 critical',
      'npm/package-lock.json:34 lodash@4.17.20 deps/GHSA-35jh-r3h4-6jhm high',
      'npm/package-lock.json:39 minimist@1.2.5 deps/GHSA-xvch-5gv4-984h critical',
      'npm/package-lock.json:52 minimist@0.0.8 deps/GHSA-xvch-5gv4-984h critical',
      'pnpm/pnpm-lock.yaml:20 @babel/traverse@8.0.0-alpha.2 deps/GHSA-67hx-6x53-jw92 critical',
      'pnpm/pnpm-lock.yaml:23 axios@0.27.2 deps/GHSA-wf5p-g6vw-rhxx medium',
      'yarn/yarn.lock:5 @babel/traverse@7.22.5 deps/GHSA-67hx-6x53-jw92 critical',
      'yarn/yarn.lock:22 semver@6.3.0 deps/GHSA-c2qf-rxjj-qqgw medium',
    ]);
    assert.match(r.findings.find((f) => f.snippet === 'lodash@4.17.20')!.message, /CVE-2021-23337.*fixed in 4\.17\.21/);
    assert.match(r.findings.find((f) => f.snippet === 'event-stream@3.3.6')!.message, /no fixed version is known/);
    assert.equal(r.lockfiles.length, 4);
    assert.ok(r.rules.every((x) => x.family === 'dependencies'));
  });
});

const ctx = (workspace: string, tier: string, input: Record<string, unknown> = {}): SkillContext =>
  skillContext({ agentId: 'security-ai', action: 'scan', workspace, tier, input, prompt: 'security scan' });
const run = async (c: SkillContext): Promise<Artifact> => (await runSkill(scanSkill, c)).artifact;

describe('security-ai scan: tier gating', () => {
  const ws = mkdtempSync(path.join(tmpdir(), 'cadre-scan-tier-'));
  cpSync(path.join(IAC, 'vulnerable/Dockerfile'), path.join(ws, 'Dockerfile'));
  cpSync(path.join(DEPS, 'npm/package-lock.json'), path.join(ws, 'package-lock.json'));
  mkdirSync(path.join(ws, '.cadre'));
  cpSync(path.join(DEPS, 'advisories.json'), path.join(ws, '.cadre/advisories.json'));
  const status = (d: SecurityReportData) => Object.fromEntries(d.checks!.map((c) => [c.id, c.status]));

  it('core: secrets + IaC run, no dependency findings, and the artifact says dependencies were skipped', async () => {
    const a = await run(ctx(ws, 'core'));
    const d = a.data as SecurityReportData;
    assert.equal(d.scope, 'scan');
    assert.deepEqual(status(d), { secrets: 'ran', iac: 'ran', dependencies: 'skipped', code: 'skipped', 'custom-rules': 'skipped' });
    assert.match(d.checks!.find((c) => c.id === 'dependencies')!.reason!, /PRO/);
    assert.ok(d.findings.some((f) => f.ruleId === 'docker/run-as-root'));
    assert.ok(!d.findings.some((f) => f.ruleId.startsWith('deps/')));
    assert.match(a.text!, /Check dependencies \(PRO\+\): skipped/);
    assert.equal((d.sarif as any).runs[0].results.length, d.findings.length);
  });

  it('pro: adds dependency findings from .cadre/advisories.json; code analysis still skipped', async () => {
    const d = (await run(ctx(ws, 'pro'))).data as SecurityReportData;
    assert.deepEqual(status(d), { secrets: 'ran', iac: 'ran', dependencies: 'ran', code: 'skipped', 'custom-rules': 'skipped' });
    assert.deepEqual(d.findings.filter((f) => f.ruleId.startsWith('deps/')).map((f) => f.snippet).sort(), ['event-stream@3.3.6', 'lodash@4.17.20', 'minimist@0.0.8', 'minimist@1.2.5']);
    assert.ok(d.limitations.some((l) => /local OSV file only.*input\.online is not set/.test(l)));
    assert.equal(d.checks!.find((c) => c.id === 'dependencies')!.online!.status, 'skipped');
    const rules = (d.sarif as any).runs[0].tool.driver.rules.map((r: { id: string }) => r.id);
    assert.ok(rules.includes('deps/GHSA-35jh-r3h4-6jhm') && rules.includes('docker/run-as-root'));
  });

  it('ultra: static code analysis runs (no JS/TS here), custom rules skipped without a file; a missing advisory file is stated', async () => {
    const d = (await run(ctx(ws, 'ultra', { advisories: 'missing.json' }))).data as SecurityReportData;
    assert.deepEqual(status(d), { secrets: 'ran', iac: 'ran', dependencies: 'unavailable', code: 'ran', 'custom-rules': 'skipped' });
    assert.match(d.checks!.find((c) => c.id === 'code')!.reason!, /no JavaScript or TypeScript file/);
    assert.match(d.checks!.find((c) => c.id === 'custom-rules')!.reason!, /\.cadre\/rules\.yaml/);
    assert.ok(!d.findings.some((f) => f.ruleId.startsWith('deps/') || f.ruleId.startsWith('review/')));
  });
});
