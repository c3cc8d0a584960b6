import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { checkTexts, collectFiles, EMPTY_SETTINGS, readSettings, type PolicySettings } from '../../../server/src/skills/policy/check';
import { parsePolicyPath } from '../../../server/src/skills/policy/custom';
import { parseConfig } from '../../../server/src/config/load';
import { EngineError } from '../../../server/src/engine/errors';

const FIX = path.join(__dirname, '../../fixtures/policy');
const check = (dir: string, settings: PolicySettings = EMPTY_SETTINGS, filters = {}) => checkTexts(collectFiles(path.join(FIX, dir), undefined).files, settings, filters).report;
const settings = (s: Partial<PolicySettings>): PolicySettings => ({ ...EMPTY_SETTINGS, ...s });

describe('policy-ai check on fixtures', () => {
  it('privileged pods: every workload of a multi-document file is judged, with object, container and line; the compliant twin raises nothing', () => {
    const r = check('planted');
    assert.deepEqual(r.examined.kubernetes, ['workloads.yaml']);
    assert.equal(r.examined.objects, 3);
    const priv = r.violations.find((v) => v.rule === 'k8s.privileged')!;
    assert.deepEqual([priv.line, priv.object, priv.container, priv.severity, priv.fixable], [20, 'Deployment/agent', 'agent', 'critical', 'auto']);
    const sock = r.violations.find((v) => v.rule === 'k8s.docker-socket')!;
    assert.deepEqual([sock.line, sock.fixable], [27, 'manual']);
    const root = r.violations.find((v) => v.rule === 'k8s.run-as-non-root' && v.object === 'CronJob/report')!;
    assert.deepEqual([root.line, root.fixable], [44, 'manual'], 'runAsUser 0 of a CronJob pod: a person picks the UID');
    assert.deepEqual(r.violations.filter((v) => v.rule === 'k8s.host-namespaces').map((v) => [v.object, v.line]), [['Deployment/agent', 14], ['Deployment/agent', 15], ['Pod/debug', 57]]);
    assert.equal(r.counts.violations, 27);
    assert.deepEqual(r.counts.bySeverity, { critical: 2, high: 9, medium: 16, low: 0 });
    const clean = check('compliant');
    assert.equal(clean.examined.objects, 3);
    assert.deepEqual(clean.violations, []);
  });

  it('Helm-rendered output: each object names its chart template (# Source:); a Service and a ServiceAccount are not workloads', () => {
    const r = check('helm');
    assert.equal(r.examined.objects, 4);
    assert.ok(r.violations.every((v) => v.source === (v.object === 'Deployment/shop' ? 'shop/templates/deployment.yaml' : 'shop/templates/redis.yaml')), JSON.stringify(r.violations.map((v) => [v.object, v.source])));
    assert.deepEqual(r.violations.filter((v) => v.object === 'StatefulSet/shop-redis').map((v) => [v.rule, v.line]), [['k8s.replicas', 61]]);
    const sc = r.violations.find((v) => v.rule === 'k8s.read-only-root-filesystem')!;
    assert.equal(sc.line, 45, 'an empty securityContext: {} is where the key is missing');
  });

  it('OpenShift: a List of a DeploymentConfig and a Route; the DeploymentConfig needs 2 replicas and a pinned image', () => {
    const r = check('openshift');
    assert.deepEqual(r.violations.map((v) => [v.rule, v.object, v.line]), [
      ['k8s.replicas', 'DeploymentConfig/legacy', 10], ['k8s.image-digest', 'DeploymentConfig/legacy', 20], ['k8s.image-latest', 'DeploymentConfig/legacy', 20],
    ]);
  });

  it('Dockerfile and Compose: FROM latest and unpinned, no USER; privileged, socket, host network and PID, latest image', () => {
    assert.deepEqual(check('docker').violations.map((v) => [v.rule, v.line]), [['docker.base-digest', 1], ['docker.latest-base', 1], ['docker.user-root', 6], ['docker.base-digest', 6]]);
    assert.deepEqual(check('compose').violations.map((v) => [v.rule, v.object, v.line]), [
      ['compose.image-latest', 'service api', 3], ['compose.privileged', 'service api', 4], ['compose.network-host', 'service api', 5],
      ['compose.image-latest', 'service watchtower', 7], ['compose.pid-host', 'service watchtower', 8], ['compose.docker-socket', 'service watchtower', 10],
    ]);
  });

  it('YAML that does not parse is a problem with file and line, not a crash; an unrendered Helm template says so', () => {
    const r = check('broken');
    assert.deepEqual(r.violations, []);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]!.file, 'bad.yaml');
    assert.equal(r.problems[0]!.line, 8);
    assert.match(r.problems[0]!.message, /does not parse as YAML/);
    const tpl = checkTexts([{ file: 'chart/templates/d.yaml', text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels: {{- include "x" . | nindent 4 }}\n' }], EMPTY_SETTINGS).report;
    assert.equal(tpl.problems.length, 1);
    assert.match(tpl.problems[0]!.message, /unrendered Helm chart template: not judged/);
    assert.deepEqual(tpl.violations, []);
    // Outside a chart's templates/ folder, a broken document with {{ }} says what it probably is.
    const loose = checkTexts([{ file: 'out.yaml', text: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec: {{- toYaml .Values.spec | nindent 2 }}\n  x: [\n' }], EMPTY_SETTINGS).report;
    assert.match(loose.problems[0]?.message ?? '', /looks like an unrendered Helm template/);
  });

  it('input.paths limits the files; a path outside the workspace is refused by name', () => {
    const c = collectFiles(FIX, ['docker', 'compose/docker-compose.yml']);
    assert.deepEqual(c.files.map((f) => f.file), ['compose/docker-compose.yml', 'docker/Dockerfile']);
    assert.match(collectFiles(path.join(FIX, 'docker'), ['../compose']).problem ?? '', /input\.paths: \.\.\/compose is outside the workspace; not read/);
  });
});

describe('policy-ai config rules, waivers, disable and filters', () => {
  const teamLabel = { id: 'team-label', severity: 'medium' as const, kinds: ['Deployment', 'DeploymentConfig'], path: 'metadata.labels.team', op: 'exists' as const, message: 'every workload names its team' };

  it('a config rule reports the line of the deepest key that exists; its twin with the key passes', () => {
    const r = check('planted', settings({ rules: [teamLabel] }));
    const v = r.violations.filter((x) => x.rule === 'team-label');
    assert.deepEqual(v.map((x) => [x.object, x.line, x.severity]), [['Deployment/agent', 4, 'medium']], 'metadata: is line 4; the CronJob and the Pod are not named kinds');
    assert.match(v[0]!.message, /every workload names its team \(metadata\.labels\.team is missing\)/);
    const ok = checkTexts([{ file: 'd.yaml', text: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  labels:\n    team: core\n' }], settings({ rules: [teamLabel] })).report;
    assert.deepEqual(ok.violations.filter((x) => x.rule === 'team-label'), []);
  });

  it('operators: equals, matches, gte, in, absent over $containers and $pod, keys with dots', () => {
    const rules: PolicySettings['rules'] = [
      { id: 'pull-always', severity: 'low', kinds: ['*'], path: '$containers.imagePullPolicy', op: 'equals', value: 'Always', message: 'pull images every time' },
      { id: 'registry', severity: 'high', kinds: ['Deployment', 'StatefulSet'], path: 'spec.template.spec.containers[*].image', op: 'matches', value: '^registry\\.example\\.com/', message: 'images come from our registry' },
      { id: 'min-replicas', severity: 'medium', kinds: ['Deployment'], path: 'spec.replicas', op: 'gte', value: 3, message: 'three replicas' },
      { id: 'service-type', severity: 'medium', kinds: ['Service'], path: 'spec.type', op: 'in', value: ['ClusterIP'], message: 'internal services only' },
      { id: 'no-sa-name', severity: 'low', kinds: ['Deployment'], path: '$pod.serviceAccountName', op: 'absent', message: 'the default service account' },
      { id: 'name-label', severity: 'low', kinds: ['Deployment'], path: 'spec.template.metadata.labels["app.kubernetes.io/name"]', op: 'exists', message: 'recommended labels' },
    ];
    const r = check('helm', settings({ rules }));
    const got = r.violations.filter((v) => rules.some((x) => x.id === v.rule)).map((v) => [v.rule, v.object, v.container, v.line]);
    assert.deepEqual(got, [
      ['min-replicas', 'Deployment/shop', null, 31],
      ['no-sa-name', 'Deployment/shop', null, 40],
      ['registry', 'Deployment/shop', null, 47],
      ['pull-always', 'Deployment/shop', 'shop', 48],
      ['pull-always', 'StatefulSet/shop-redis', 'redis', 72],
      ['registry', 'StatefulSet/shop-redis', null, 73],
    ], 'name-label holds: the quoted key with dots is found');
  });

  it('Compose services are a kind config rules can name (ComposeService)', () => {
    const rule = { id: 'restart', severity: 'low' as const, kinds: ['ComposeService'], path: 'restart', op: 'exists' as const, message: 'services restart' };
    const r = check('compose', settings({ rules: [rule] }));
    assert.deepEqual(r.violations.filter((v) => v.rule === 'restart').map((v) => v.object), ['service api', 'service watchtower', 'service db']);
  });

  it('a waiver is reported as waived with its reason, never dropped; disable turns a baseline rule off; filters narrow rules and severity', () => {
    const waived = check('planted', settings({ waivers: [{ rule: 'k8s.replicas', object: 'Deployment/agent', reason: 'a node agent: one per cluster' }, { rule: 'k8s.host-path', file: '*.yaml', reason: 'reads node logs' }] }));
    assert.equal(waived.counts.violations, 25);
    assert.deepEqual(waived.waived.map((w) => [w.rule, w.waiver.reason]), [['k8s.replicas', 'a node agent: one per cluster'], ['k8s.host-path', 'reads node logs']]);
    const off = check('planted', settings({ disable: ['k8s.image-digest', 'k8s.nope'] }));
    assert.equal(off.violations.some((v) => v.rule === 'k8s.image-digest'), false);
    assert.equal(off.rules.find((x) => x.id === 'k8s.image-digest')!.state, 'disabled');
    assert.deepEqual(off.notes, ['policy.disable names "k8s.nope", which is no baseline rule: ignored (configured rules are removed from policy.rules instead)']);
    const high = check('planted', EMPTY_SETTINGS, { severity: 'high' });
    assert.deepEqual([...new Set(high.violations.map((v) => v.severity))].sort(), ['critical', 'high']);
    const only = check('planted', EMPTY_SETTINGS, { rules: ['k8s.host-*', 'k8s.privileged'] });
    assert.deepEqual([...new Set(only.violations.map((v) => v.rule))].sort(), ['k8s.host-namespaces', 'k8s.host-path', 'k8s.privileged']);
  });

  it('paths parse with their grammar; a bad one is named with its position', () => {
    assert.deepEqual(parsePolicyPath('spec.template.spec.containers[*].image'), [{ key: 'spec' }, { key: 'template' }, { key: 'spec' }, { key: 'containers' }, { all: true }, { key: 'image' }]);
    assert.deepEqual(parsePolicyPath('metadata.annotations["a.b/c"]'), [{ key: 'metadata' }, { key: 'annotations' }, { key: 'a.b/c' }]);
    assert.throws(() => parsePolicyPath('spec..x'), /path "spec\.\.x" at character 6: expected a key/);
    assert.deepEqual(readSettings({ rules: [{ id: 'x', path: 'a[' }] }), { error: 'policy.rules x: path "a[" at character 2: expected [N] or [*]' });
  });

  it('the config validates policy rules with a clear error (file, line, key path)', () => {
    const bad = `policy:\n  rules:\n    - id: k8s.mine\n      severity: high\n      kinds: [Deployment]\n      path: spec.replicas\n      op: gte\n      value: "two"\n      message: m\n    - id: ok\n      severity: low\n      kinds: [Pod]\n      path: spec..x\n      op: matches\n      value: "("\n      message: m\n`;
    let err: EngineError | undefined;
    try { parseConfig(bad, '.cadre.yaml', {}); } catch (e) { err = e as EngineError; }
    assert.ok(err instanceof EngineError);
    assert.match(err.message, /\.cadre\.yaml:3:\d+: policy\.rules\[0\]\.id: ids under k8s\., docker\., compose\. belong to the built-in baseline/);
    assert.match(err.message, /policy\.rules\[0\]\.value: op gte needs a number/);
    assert.match(err.message, /policy\.rules\[1\]\.path: must be a dotted path/);
    assert.match(err.message, /policy\.rules\[1\]\.value: not a valid regular expression/);
    const good = parseConfig(`policy:\n  rules:\n    - id: team\n      severity: medium\n      kinds: [Deployment]\n      path: metadata.labels.team\n      op: exists\n      message: m\n  waivers:\n    - rule: k8s.replicas\n      reason: singleton\n  enforce:\n    limits: {cpu: 250m}\n`, '.cadre.yaml', {});
    assert.equal(good.policy.rules[0]!.id, 'team');
    assert.deepEqual(good.policy.enforce.limits, { cpu: '250m' });
    assert.deepEqual(good.policy.disable, []);
  });
});

describe('policy-ai and Kustomize', () => {
  it('a patch a kustomization.yaml names is a partial object: not judged, said so; the base is judged', () => {
    const base = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n';
    const patch = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n';
    const r = checkTexts([
      { file: 'k/base/pod.yaml', text: base },
      { file: 'k/overlay/kustomization.yaml', text: 'resources: [../base]\npatches:\n  - path: pin.yaml\npatchesStrategicMerge:\n  - more.yaml\n' },
      { file: 'k/overlay/pin.yaml', text: patch },
      { file: 'k/overlay/more.yaml', text: patch },
    ], EMPTY_SETTINGS).report;
    assert.deepEqual(r.problems.map((p) => p.file).sort(), ['k/overlay/more.yaml', 'k/overlay/pin.yaml']);
    assert.match(r.problems[0]!.message, /a Kustomize patch of k\/overlay\/kustomization\.yaml \(a partial object\): not judged/);
    assert.deepEqual([...new Set(r.violations.map((v) => v.file))], ['k/base/pod.yaml']);
  });
});
