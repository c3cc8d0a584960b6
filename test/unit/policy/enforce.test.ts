import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkTexts, collectFiles, EMPTY_SETTINGS, type PolicySettings, type SourceFile } from '../../../server/src/skills/policy/check';
import { planFixes } from '../../../server/src/skills/policy/enforce';

const FIX = path.join(__dirname, '../../fixtures/policy');
const DIGEST = 'sha256:' + 'e'.repeat(64);

function enforce(files: SourceFile[], settings: PolicySettings = EMPTY_SETTINGS) {
  const { report, checked } = checkTexts(files, settings);
  const plans = planFixes(checked, report.violations);
  const afterFiles = files.map((f) => ({ file: f.file, text: plans.find((p) => p.file === f.file)?.after ?? f.text }));
  return { before: report, plans, after: checkTexts(afterFiles, settings).report, texts: new Map(afterFiles.map((f) => [f.file, f.text])) };
}
const dir = (d: string) => collectFiles(path.join(FIX, d), undefined).files;

describe('policy-ai enforce: mechanical fixes with the yaml Document API', () => {
  it('privileged pods: every auto-fixable violation is gone on re-check; what needs a person or a value stays, named', () => {
    const r = enforce(dir('planted'));
    const autoRules = new Set(r.before.violations.filter((v) => v.fixable === 'auto').map((v) => v.rule));
    assert.deepEqual([...autoRules].sort(), ['k8s.allow-privilege-escalation', 'k8s.capabilities-drop-all', 'k8s.host-namespaces', 'k8s.privileged', 'k8s.read-only-root-filesystem', 'k8s.replicas', 'k8s.run-as-non-root']);
    assert.equal(r.after.violations.filter((v) => v.fixable === 'auto').length, 0, JSON.stringify(r.after.violations.filter((v) => v.fixable === 'auto')));
    assert.deepEqual(r.after.violations.map((v) => v.rule).sort(), r.before.violations.filter((v) => v.fixable !== 'auto').map((v) => v.rule).sort());
    // No number is invented: without policy.enforce.limits the limits stay missing.
    assert.ok(r.after.violations.some((v) => v.rule === 'k8s.resource-limits' && v.fixable === 'needs-value' && /policy\.enforce\.limits/.test(v.fixNote ?? '')));
    assert.ok(r.after.violations.some((v) => v.rule === 'k8s.image-digest' && /digest is never guessed/.test(v.fixNote ?? '')));
  });

  it('keeps comments, quoting and the documents it did not touch; removes host namespaces; sets replicas', () => {
    const text = readFileSync(path.join(FIX, 'planted/workloads.yaml'), 'utf8');
    const out = enforce([{ file: 'workloads.yaml', text }]).texts.get('workloads.yaml')!;
    assert.ok(out.startsWith('# Privileged pods and friends'), 'the file header comment stays, once');
    assert.equal(out.split('# Privileged pods and friends').length, 2);
    assert.match(out, /privileged: false # needs the node's devices, they said/);
    assert.match(out, /schedule: "0 3 \* \* \*"/, 'quoting stays');
    assert.doesNotMatch(out, /hostNetwork|hostPID|hostIPC/);
    assert.match(out, /replicas: 2/);
    assert.match(out, /matchLabels: \{app: agent\}/, 'flow maps keep their style');
    assert.match(out, /drop: \[NET_RAW, ALL\]/, 'ALL is added beside what drop lists');
    const helm = readFileSync(path.join(FIX, 'helm/rendered.yaml'), 'utf8');
    const fixed = enforce([{ file: 'rendered.yaml', text: helm }]).texts.get('rendered.yaml')!;
    const docs = (t: string) => t.split(/^---$/m);
    assert.equal(docs(fixed)[1], docs(helm)[1], 'the ServiceAccount is byte-identical');
    assert.equal(docs(fixed)[2], docs(helm)[2], 'the Service is byte-identical');
    assert.match(docs(fixed)[3]!, /^\n# Source: shop\/templates\/deployment\.yaml\n/);
    assert.match(fixed, /          securityContext:\n            allowPrivilegeEscalation: false\n/, 'an empty {} becomes a block map at the file\'s indentation');
  });

  it('limits and digests are written only from the config; a Dockerfile FROM and a Compose image are pinned the same way', () => {
    const settings: PolicySettings = { ...EMPTY_SETTINGS, enforce: { limits: { cpu: '250m', memory: '128Mi' }, digests: { 'example/agent:latest': DIGEST, 'node:latest': DIGEST, 'example/api:latest': DIGEST } } };
    const r = enforce([...dir('planted'), ...dir('docker').map((f) => ({ ...f, file: 'docker/Dockerfile' })), ...dir('compose')], settings);
    assert.equal(r.after.violations.some((v) => v.rule === 'k8s.resource-limits'), false);
    assert.match(r.texts.get('workloads.yaml')!, /image: example\/agent:latest@sha256:e{64}/);
    assert.match(r.texts.get('workloads.yaml')!, /cpu: 250m\n\s+memory: 128Mi/);
    assert.match(r.texts.get('docker/Dockerfile')!, /^FROM node:latest@sha256:e{64} AS build$/m);
    assert.match(r.texts.get('docker/Dockerfile')!, /^FROM node:20-slim$/m, 'no digest known: left as is');
    const compose = r.texts.get('docker-compose.yml')!;
    assert.match(compose, /image: example\/api:latest@sha256:e{64}/);
    assert.match(compose, /privileged: false/);
    assert.doesNotMatch(compose, /network_mode|pid: host/);
    assert.match(compose, /\/var\/run\/docker\.sock/, 'the socket mount needs a person');
    assert.deepEqual(r.after.violations.filter((v) => v.file === 'docker-compose.yml').map((v) => v.rule), ['compose.image-latest', 'compose.docker-socket']);
  });

  it('a waived violation is not fixed; a compliant file gets no plan', () => {
    const settings: PolicySettings = { ...EMPTY_SETTINGS, waivers: [{ rule: 'k8s.replicas', reason: 'singleton' }] };
    const r = enforce(dir('planted'), settings);
    assert.match(r.texts.get('workloads.yaml')!, /replicas: 1/);
    assert.equal(r.after.waived.filter((w) => w.rule === 'k8s.replicas').length, 1);
    assert.deepEqual(enforce(dir('compliant')).plans, []);
  });
});
