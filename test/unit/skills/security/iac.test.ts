import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { IAC_RULES, isDockerfile, isSecretName, isUnpinnedImage, parseDockerfile, scanDockerfile, scanIac, scanKubernetesYaml } from '../../../../server/src/skills/security/iac';
import { listFiles } from '../../../../server/src/skills/security/scanner';

const ROOT = path.resolve(__dirname, '../../../fixtures/iac');

/** Expected (line, rule id) pairs of each vulnerable fixture. */
const EXPECTED: Record<string, string[]> = {
  'vulnerable/Dockerfile': ['1 docker/run-as-root', '1 docker/unpinned-image', '2 docker/secret-in-env', '3 docker/secret-in-env', '4 docker/add-from-url', '5 docker/apt-no-install-recommends', '7 docker/curl-pipe-shell'],
  'vulnerable/Dockerfile.root': ['2 docker/unpinned-image', '6 docker/run-as-root'],
  'vulnerable/deployment.yaml': ['2 k8s/automount-service-account-token', '15 k8s/host-network', '17 k8s/capabilities-not-dropped', '17 k8s/missing-resource-limits', '17 k8s/read-only-root-filesystem',
    '17 k8s/seccomp-profile', '18 k8s/unpinned-image', '20 k8s/privileged', '21 k8s/allow-privilege-escalation', '22 k8s/run-as-root', '25 k8s/secret-in-env'],
  'vulnerable/multi.yaml': ['12 k8s/automount-service-account-token', '16 k8s/host-pid', '18 k8s/allow-privilege-escalation', '18 k8s/capabilities-not-dropped', '18 k8s/read-only-root-filesystem',
    '18 k8s/run-as-root', '18 k8s/seccomp-profile', '19 k8s/unpinned-image', '21 k8s/missing-resource-limits', '25 k8s/automount-service-account-token',
    '39 k8s/capabilities-not-dropped', '39 k8s/read-only-root-filesystem', '39 k8s/seccomp-profile', '49 k8s/secret-in-env'],
};

describe('security-ai IaC checks', () => {
  // twins/ holds the per-rule twin pairs (iac-twins.test.ts).
  const result = scanIac(ROOT, listFiles(ROOT).filter((f) => !f.startsWith('twins/')));

  it('finds exactly the expected rules in each vulnerable fixture (precision and recall 1)', () => {
    for (const [file, expected] of Object.entries(EXPECTED)) {
      const got = result.findings.filter((f) => f.file === file).map((f) => `${f.range.startLine} ${f.ruleId}`).sort();
      assert.deepEqual(got, [...expected].sort(), file);
    }
    const tp = result.findings.filter((f) => EXPECTED[f.file]?.includes(`${f.range.startLine} ${f.ruleId}`)).length;
    const expectedTotal = Object.values(EXPECTED).flat().length;
    assert.equal(tp / result.findings.length, 1, 'precision');
    assert.equal(tp / expectedTotal, 1, 'recall');
  });

  it('reports nothing on the clean fixtures (incl. multi-stage, digests, secretKeyRef, non-Kubernetes YAML)', () => {
    assert.deepEqual(result.findings.filter((f) => f.file.startsWith('clean/')).map((f) => `${f.file}:${f.range.startLine} ${f.ruleId}`), []);
    assert.ok(result.dockerfiles.includes('clean/Containerfile'));
    assert.ok(result.manifests.includes('clean/statefulset.yaml'));
    assert.ok(!result.manifests.includes('clean/not-kubernetes.yaml'));
    assert.deepEqual(result.errors, []);
  });

  it('every finding has a known rule, a severity, a range, a fingerprint, and no secret value', () => {
    const ids = new Set(IAC_RULES.map((r) => r.id));
    for (const f of result.findings) {
      assert.ok(ids.has(f.ruleId), f.ruleId);
      assert.equal(f.severity, IAC_RULES.find((r) => r.id === f.ruleId)!.severity);
      assert.match(f.fingerprint, /^[0-9a-f]{32}$/);
      assert.ok(f.range.startLine >= 1 && f.range.endColumn >= f.range.startColumn);
      assert.ok(!JSON.stringify(f).includes('changeme-fixture') && !JSON.stringify(f).includes('fixture-api-key-value'), 'secret value leaked');
    }
    assert.equal(new Set(result.findings.map((f) => f.fingerprint)).size, result.findings.length);
  });

  it('offers safe text-edit fixes: --no-install-recommends, privileged/allowPrivilegeEscalation false', () => {
    const text = readFileSync(path.join(ROOT, 'vulnerable/Dockerfile'), 'utf8');
    const apt = result.findings.find((f) => f.ruleId === 'docker/apt-no-install-recommends')!;
    const e = apt.fix!.edits[0]!;
    const line = text.split('\n')[e.range.startLine - 1]!;
    const fixed = line.slice(0, e.range.startColumn - 1) + e.newText + line.slice(e.range.endColumn - 1);
    assert.equal(fixed, 'RUN apt-get update && apt-get install --no-install-recommends -y \\');
    const priv = result.findings.find((f) => f.ruleId === 'k8s/privileged')!;
    assert.equal(priv.fix!.edits[0]!.newText, 'false');
    assert.deepEqual(priv.fix!.edits[0]!.range, { startLine: 20, startColumn: 25, endLine: 20, endColumn: 29 });
    assert.equal(result.findings.find((f) => f.ruleId === 'docker/run-as-root')!.fix, undefined, 'no unsafe fix');
  });

  it('fingerprints do not depend on line numbers', () => {
    const a = scanDockerfile('FROM node\nCMD ["x"]\n', 'Dockerfile');
    const b = scanDockerfile('# moved\n\nFROM node\nCMD ["x"]\n', 'Dockerfile');
    assert.deepEqual(a.map((f) => f.fingerprint), b.map((f) => f.fingerprint));
    assert.notDeepEqual(a.map((f) => f.range.startLine), b.map((f) => f.range.startLine));
  });

  it('Dockerfile parsing: continuations, stage aliases, ARG base, USER per stage', () => {
    assert.deepEqual(parseDockerfile('RUN a \\\n  # c\n  b\nCMD x').map((i) => [i.keyword, i.args, i.startLine, i.endLine]), [['RUN', 'a b', 1, 3], ['CMD', 'x', 4, 4]]);
    const f = scanDockerfile('ARG BASE=node:20\nFROM ${BASE} AS build\nUSER app\nFROM build\nCMD x\n', 'Dockerfile');
    assert.deepEqual(f.map((x) => x.ruleId), ['docker/run-as-root'], 'USER does not carry into the next stage; stage and ARG bases are not images');
    assert.ok(isDockerfile('svc/Dockerfile.prod') && isDockerfile('app.dockerfile') && !isDockerfile('Dockerfile.md.txt/readme'));
  });

  it('image and name helpers', () => {
    assert.ok(isUnpinnedImage('nginx') && isUnpinnedImage('nginx:latest') && isUnpinnedImage('localhost:5000/app'));
    assert.ok(!isUnpinnedImage('nginx:1.25') && !isUnpinnedImage('nginx@sha256:abc') && !isUnpinnedImage('localhost:5000/app:1.0'));
    assert.ok(isSecretName('DB_PASSWORD') && isSecretName('API_KEY') && isSecretName('GITHUB_TOKEN') && isSecretName('KEY'));
    assert.ok(!isSecretName('MONKEY') && !isSecretName('KEYBOARD_LAYOUT') && !isSecretName('LOG_LEVEL'));
  });

  it('Kubernetes: pod-level runAsNonRoot applies to containers; broken documents are reported, not thrown', () => {
    const ok = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  automountServiceAccountToken: false\n  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n  containers:\n  - name: c\n    image: a:1\n'
      + '    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}\n    resources: {limits: {cpu: 1, memory: 1Gi}}\n';
    assert.deepEqual(scanKubernetesYaml(ok, 'p.yaml').findings, []);
    const broken = scanKubernetesYaml(`${ok}---\nkind: Pod\n  bad: [\n`, 'p.yaml');
    assert.equal(broken.errors.length, 1);
    assert.equal(broken.workloads, 1);
  });
});
