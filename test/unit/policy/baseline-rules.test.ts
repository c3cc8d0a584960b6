import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkTexts, EMPTY_SETTINGS } from '../../../server/src/skills/policy/check';
import { BASELINE_RULES } from '../../../server/src/skills/policy/rules';

const FIX = path.join(__dirname, '../../fixtures/policy');
const read = (rel: string) => readFileSync(path.join(FIX, rel), 'utf8');

/** [file name, compliant text, mutation (one thing broken), the rules it must raise] per baseline rule. */
type Twin = { file: string; base: string; from: string | RegExp; to: string; expect: string[] };
const deployment = read('twins/deployment.yaml');
const dockerfile = read('twins/Dockerfile');
const compose = read('twins/docker-compose.yml');
const k8s = (from: string | RegExp, to: string, expect: string[]): Twin => ({ file: 'deploy/web.yaml', base: deployment, from, to, expect });

const TWINS: Record<string, Twin> = {
  'k8s.privileged': k8s('            allowPrivilegeEscalation: false\n', '            allowPrivilegeEscalation: false\n            privileged: true\n', ['k8s.privileged']),
  'k8s.host-namespaces': k8s('      securityContext:\n        runAsNonRoot: true\n', '      hostPID: true\n      securityContext:\n        runAsNonRoot: true\n', ['k8s.host-namespaces']),
  'k8s.host-path': k8s('          emptyDir: {}\n', '          hostPath:\n            path: /var/lib/app\n', ['k8s.host-path']),
  'k8s.docker-socket': k8s('          emptyDir: {}\n', '          hostPath:\n            path: /var/run/docker.sock\n', ['k8s.docker-socket']),
  'k8s.resource-limits': k8s('              memory: 256Mi\n', '', ['k8s.resource-limits']),
  'k8s.read-only-root-filesystem': k8s('readOnlyRootFilesystem: true', 'readOnlyRootFilesystem: false', ['k8s.read-only-root-filesystem']),
  'k8s.capabilities-drop-all': k8s('drop: [ALL]', 'drop: [NET_RAW]', ['k8s.capabilities-drop-all']),
  'k8s.allow-privilege-escalation': k8s('allowPrivilegeEscalation: false', 'allowPrivilegeEscalation: true', ['k8s.allow-privilege-escalation']),
  'k8s.run-as-non-root': k8s('runAsNonRoot: true', 'runAsNonRoot: false', ['k8s.run-as-non-root']),
  'k8s.image-digest': k8s(/@sha256:[0-9a-f]+/, '', ['k8s.image-digest']),
  'k8s.image-latest': k8s(/:1\.4\.2@sha256:[0-9a-f]+/, ':latest', ['k8s.image-digest', 'k8s.image-latest']),
  'k8s.replicas': k8s('replicas: 3', 'replicas: 1', ['k8s.replicas']),
  'docker.latest-base': { file: 'Dockerfile', base: dockerfile, from: /node:20\.18\.1-alpine@sha256:[0-9a-f]+/, to: 'node', expect: ['docker.base-digest', 'docker.latest-base'] },
  'docker.base-digest': { file: 'Dockerfile', base: dockerfile, from: /(node:20\.18\.1-alpine)@sha256:[0-9a-f]+/, to: '$1', expect: ['docker.base-digest'] },
  'docker.user-root': { file: 'Dockerfile', base: dockerfile, from: 'USER 65532', to: 'USER root', expect: ['docker.user-root'] },
  'compose.privileged': { file: 'docker-compose.yml', base: compose, from: '  worker:\n', to: '  worker:\n    privileged: true\n', expect: ['compose.privileged'] },
  'compose.docker-socket': { file: 'docker-compose.yml', base: compose, from: '- ./data:/data', to: '- /var/run/docker.sock:/var/run/docker.sock:ro', expect: ['compose.docker-socket'] },
  'compose.network-host': { file: 'docker-compose.yml', base: compose, from: '  worker:\n', to: '  worker:\n    network_mode: host\n', expect: ['compose.network-host'] },
  'compose.pid-host': { file: 'docker-compose.yml', base: compose, from: '  worker:\n', to: '  worker:\n    pid: host\n', expect: ['compose.pid-host'] },
  'compose.image-latest': { file: 'docker-compose.yml', base: compose, from: 'api:2.1.0', to: 'api:latest', expect: ['compose.image-latest'] },
};

const rulesOf = (file: string, text: string) => checkTexts([{ file, text }], EMPTY_SETTINGS).report.violations.map((v) => v.rule).sort();

describe('policy-ai baseline: each rule on a compliant twin with one thing broken', () => {
  it('every baseline rule has a twin here (a new rule without one fails this test)', () => {
    assert.deepEqual(Object.keys(TWINS).sort(), BASELINE_RULES.map((r) => r.id).sort());
  });

  it('the compliant twins raise nothing', () => {
    for (const [file, text] of [['deploy/web.yaml', deployment], ['Dockerfile', dockerfile], ['docker-compose.yml', compose]] as const) {
      assert.deepEqual(rulesOf(file, text), [], file);
    }
  });

  for (const [rule, t] of Object.entries(TWINS)) {
    it(`${rule}: raised by its twin, on the line of the offending key`, () => {
      const broken = t.base.replace(t.from, t.to);
      assert.notEqual(broken, t.base, 'the mutation applies');
      const { report } = checkTexts([{ file: t.file, text: broken }], EMPTY_SETTINGS);
      assert.deepEqual(report.violations.map((v) => v.rule).sort(), [...t.expect].sort());
      const v = report.violations.find((x) => x.rule === rule)!;
      const line = broken.split('\n')[v.line - 1] ?? '';
      const rowOf = BASELINE_RULES.find((r) => r.id === rule)!;
      assert.equal(v.severity, rowOf.severity);
      assert.ok(v.fix.length > 0 && v.message.length > 0);
      // The reported line holds the key the rule is about (or, for a missing key, its enclosing one).
      const keyOf: Record<string, RegExp> = {
        'k8s.privileged': /privileged: true/, 'k8s.host-namespaces': /hostPID/, 'k8s.host-path': /path: \/var\/lib\/app/, 'k8s.docker-socket': /docker\.sock/,
        'k8s.resource-limits': /limits:/, 'k8s.read-only-root-filesystem': /readOnlyRootFilesystem/, 'k8s.capabilities-drop-all': /drop:/,
        'k8s.allow-privilege-escalation': /allowPrivilegeEscalation/, 'k8s.run-as-non-root': /runAsNonRoot/, 'k8s.image-digest': /image:/, 'k8s.image-latest': /image:/,
        'k8s.replicas': /replicas: 1/, 'docker.latest-base': /^FROM node /, 'docker.base-digest': /^FROM node/, 'docker.user-root': /USER root/,
        'compose.privileged': /privileged/, 'compose.docker-socket': /docker\.sock/, 'compose.network-host': /network_mode/, 'compose.pid-host': /pid: host/, 'compose.image-latest': /image: .*latest/,
      };
      assert.match(line, keyOf[rule]!, `line ${v.line}: ${line}`);
      if (t.file.endsWith('.yaml')) assert.equal(v.object, 'Deployment/web');
    });
  }
});
