/**
 * Every IaC rule against its labelled twin pair under test/fixtures/iac/twins: `<rule>.bad.*` is a
 * compliant file with exactly one thing broken (the rule must fire, and nothing else), `<rule>.good.*`
 * the compliant twin (nothing may fire). Also every workload kind (OpenShift DeploymentConfig, CronJob
 * jobTemplate, PodTemplate...) and the variants of disabled verification and open ingress. Precision and
 * recall per area are printed and asserted.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { IAC_RULES, scanIac } from '../../../../server/src/skills/security/iac';
import { ruleAnchor } from '../../../../server/src/skills/findings/rule-docs';

const ROOT = path.resolve(__dirname, '../../../fixtures/iac/twins');

function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(dir, `${rel}${e.name}/`) : [`${rel}${e.name}`]));
}

const ruleIds = (file: string) => scanIac(ROOT, [file]).findings.map((f) => f.ruleId);

/** Expected rule ids of each labelled file (a bad file with no entry here is `<rule anchor>.bad.*`). */
const EXTRA: Record<string, string[]> = {
  'verification/wget.bad.dockerfile': ['docker/verification-disabled'],
  'verification/pip.bad.dockerfile': ['docker/verification-disabled'],
  'verification/apt.bad.dockerfile': ['docker/verification-disabled'],
  'verification/insecure.bad.dockerfile': ['docker/verification-disabled'],
  'verification/node.bad.dockerfile': ['docker/verification-disabled'],
  'terraform/open-ingress-variants.bad.tf': ['tf/azure-storage-public', 'tf/open-ingress', 'tf/open-ingress', 'tf/open-ingress', 'tf/open-ingress'],
  // The twin of verification-disabled plants three (curl -k, strict-ssl false, GIT_SSL_NO_VERIFY).
  'docker-verification-disabled.bad.dockerfile': ['docker/verification-disabled', 'docker/verification-disabled', 'docker/verification-disabled'],
  'k8s-rbac-wildcard.bad.yaml': ['k8s/rbac-wildcard', 'k8s/rbac-wildcard'],
};

function expected(file: string): string[] {
  if (EXTRA[file]) return EXTRA[file]!;
  if (file.includes('.good.')) return [];
  if (file.startsWith('kinds/')) return ['k8s/privileged'];
  const anchor = path.basename(file).replace(/\.bad\..*$/, '');
  const rule = IAC_RULES.find((r) => ruleAnchor(r.id) === anchor);
  assert.ok(rule, `${file} names a rule`);
  return [rule.id];
}

describe('IaC rules on their labelled twins', () => {
  const files = filesUnder(ROOT).sort();

  it('has a bad and a good twin for every rule', () => {
    for (const r of IAC_RULES) {
      const anchor = ruleAnchor(r.id);
      const bad = files.find((f) => f.startsWith(`${anchor}.bad.`));
      const good = files.find((f) => f.startsWith(`${anchor}.good.`));
      assert.ok(bad && good, `twins of ${r.id} (${anchor}.bad.* / ${anchor}.good.*)`);
    }
  });

  for (const r of IAC_RULES) {
    it(`${r.id} fires on its positive and not on the compliant twin`, () => {
      const anchor = ruleAnchor(r.id);
      const bad = files.find((f) => f.startsWith(`${anchor}.bad.`))!;
      const good = files.find((f) => f.startsWith(`${anchor}.good.`))!;
      assert.deepEqual(ruleIds(bad).sort(), expected(bad).sort(), bad);
      assert.deepEqual(ruleIds(good), [], good);
    });
  }

  it('checks every workload kind, OpenShift DeploymentConfig, CronJob jobTemplate and PodTemplate included', () => {
    const kinds = files.filter((f) => f.startsWith('kinds/'));
    assert.ok(kinds.some((f) => f.includes('DeploymentConfig')) && kinds.some((f) => f.includes('CronJob')) && kinds.some((f) => f.includes('PodTemplate')));
    for (const f of kinds) assert.deepEqual(ruleIds(f), expected(f), f);
  });

  it('reports one finding per disabled verification and per open ingress variant', () => {
    for (const f of files.filter((x) => x.startsWith('verification/') || x.startsWith('terraform/'))) assert.deepEqual(ruleIds(f).sort(), expected(f).sort(), f);
  });

  it('reaches precision and recall 1.0 per area over the twins (counts printed)', () => {
    const areas: Record<string, { tp: number; fp: number; fn: number }> = {};
    for (const f of files) {
      const got = ruleIds(f);
      const want = expected(f);
      const area = (id: string) => id.split('/')[0]!;
      const left = [...want];
      for (const g of got) {
        const i = left.indexOf(g);
        const a = (areas[area(g)] ??= { tp: 0, fp: 0, fn: 0 });
        if (i === -1) a.fp++;
        else { a.tp++; left.splice(i, 1); }
      }
      for (const l of left) (areas[area(l)] ??= { tp: 0, fp: 0, fn: 0 }).fn++;
    }
    console.log(`      ${files.length} labelled files; per area (tp/fp/fn): ${Object.entries(areas).map(([a, c]) => `${a} ${c.tp}/${c.fp}/${c.fn}`).join(', ')}`);
    for (const [a, c] of Object.entries(areas)) {
      assert.equal(c.fp, 0, `${a}: no false positive`);
      assert.equal(c.fn, 0, `${a}: no false negative`);
    }
    assert.ok(existsSync(path.join(ROOT, 'kinds/legacy-seccomp.good.yaml')));
  });
});
