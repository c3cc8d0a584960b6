import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { fixtureProject } from '../../support/fixture-project';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

interface V { rule: string; file: string; line: number; object: string | null; container: string | null; fixable: string; source: string | null }
interface Counts { violations: number; byRule: Record<string, number> }
interface Report { violations: V[]; waived: Array<V & { waiver: { reason: string } }>; problems: Array<{ file: string; line: number | null; message: string }>; rules: Array<{ id: string; state: string }>; counts: Counts }
interface Enforced extends Report { mode: string; before: Counts; after: Counts; fixed: V[]; notFixed: Array<V & { why: string }>; files: string[]; diff: string; snapshot: string | null }

/** The install's policy section: lives in the server workspace's .cadre.yaml (a repository's file). */
const CONFIG = `defaults:
  intelligence: ultra
  acmf_mode: AUTONOMOUS
policy:
  rules:
    - id: team-label
      severity: medium
      kinds: [Deployment, DeploymentConfig]
      path: metadata.labels.team
      op: exists
      message: every workload names its owning team
  waivers:
    - rule: k8s.host-path
      object: Deployment/agent
      reason: the agent reads node logs
  disable: [k8s.image-digest]
  enforce:
    limits: {cpu: 250m, memory: 128Mi}
`;

/**
 * Issue 14 item 3, policy-ai over HTTP on a real server (dist/, agent workers, embedded skills, no
 * model) at the ULTRA tier: `check` finds the planted violations with file and line and nothing on the
 * compliant twin; `enforce` writes its fixes in AUTONOMOUS (re-check clean for the fixed rules, a
 * snapshot as rollback) and only proposes them in OBSERVE (nothing written).
 */
describe('policy-ai check and enforce over HTTP', function () {
  this.timeout(90_000);
  let server: ServerProcess & { url: string };
  let a: ReturnType<typeof api>;
  const dirs: string[] = [];
  const project = () => fixtureProject({ prefix: 'cadre-it-policy-', copy: { deploy: 'policy/planted', compliant: 'policy/compliant', helm: 'policy/helm', openshift: 'policy/openshift', broken: 'policy/broken', compose: 'policy/compose' } }, dirs);
  let workspace: string;

  before(async () => {
    ensureBuilt();
    workspace = fixtureProject({ prefix: 'cadre-it-policy-ws-', copy: { deploy: 'policy/planted', compliant: 'policy/compliant', broken: 'policy/broken' }, files: { '.cadre.yaml': CONFIG } }, dirs);
    server = await startStandalone(tempDir('cadre-it-policy-data-'), { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
    a = api(server.url);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function direct(action: string, input: Json, source?: string): Promise<Json> {
    const r = await a.post(`/api/agents/policy-ai/${action}`, { prompt: `policy-ai ${action}`, input, ...(source ? { source } : {}) });
    assert.equal(r.status, 202, r.text);
    return a.until(r.body['statusUrl'] as string, undefined, 60_000);
  }

  it('check: planted violations with file, line, object and container; config rule, waiver, and a repository disable that is ignored', async () => {
    const done = await direct('check', {});
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as Report;
    const at = (rule: string) => out.violations.filter((v) => v.rule === rule).map((v) => `${v.file}:${v.line} ${v.object}${v.container ? ` ${v.container}` : ''}`);
    assert.deepEqual(at('k8s.privileged'), ['deploy/workloads.yaml:20 Deployment/agent agent']);
    assert.deepEqual(at('k8s.docker-socket'), ['deploy/workloads.yaml:27 Deployment/agent']);
    assert.deepEqual(at('team-label'), ['compliant/workloads.yaml:4 Deployment/agent', 'deploy/workloads.yaml:4 Deployment/agent']);
    assert.deepEqual(out.waived.map((w) => [w.rule, w.file, w.line, w.waiver.reason]), [['k8s.host-path', 'deploy/workloads.yaml', 30, 'the agent reads node logs']]);
    assert.equal(out.rules.find((r) => r.id === 'k8s.image-digest')!.state, 'on', 'policy.disable in a repository .cadre.yaml is ignored');
    assert.ok(at('k8s.image-digest').length > 0);
    assert.deepEqual(out.problems.map((p) => [p.file, p.line]), [['broken/bad.yaml', 8]]);
    assert.ok(server.stdout.some((l) => /policy\.disable in .*\.cadre\.yaml ignored/.test(l)) || server.stderr.some((l) => /policy\.disable in .*\.cadre\.yaml ignored/.test(l)), 'the refusal is logged');
    assert.equal(done['passed'], true, 'violations are findings of the project, not a failed gate');

    const twin = await direct('check', { paths: 'compliant' });
    assert.equal(twin['status'], 'completed');
    const t = twin['output'] as Report;
    assert.deepEqual(t.violations.filter((v) => v.rule !== 'team-label'), [], 'the compliant twin breaks no baseline rule');

    const only = await direct('check', { ruleIds: 'k8s.host-*,k8s.privileged', minSeverity: 'high' });
    assert.deepEqual([...new Set((only['output'] as Report).violations.map((v) => v.rule))].sort(), ['k8s.host-namespaces', 'k8s.privileged']);
  });

  it('enforce in AUTONOMOUS writes the fixes, keeps the originals as rollback, and the re-check is clean for the fixed rules', async () => {
    const dir = project();
    const before = readFileSync(path.join(dir, 'deploy/workloads.yaml'), 'utf8');
    const done = await direct('enforce', { paths: ['deploy', 'helm', 'openshift', 'compose'] }, dir);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 2000));
    const out = done['output'] as Enforced;
    assert.equal(out.mode, 'written');
    assert.deepEqual(out.files, ['compose/docker-compose.yml', 'deploy/workloads.yaml', 'helm/rendered.yaml', 'openshift/app.yaml']);
    const after = readFileSync(path.join(dir, 'deploy/workloads.yaml'), 'utf8');
    assert.notEqual(after, before);
    assert.match(after, /privileged: false # needs the node's devices, they said/);
    assert.match(after, /cpu: 250m/, 'limits come from policy.enforce.limits');
    assert.match(out.snapshot ?? '', /^\.cadre\/policy\/enforce-act_[0-9a-f]+-s0\.json$/);
    const snap = JSON.parse(readFileSync(path.join(dir, out.snapshot!), 'utf8')) as { format: string; files: Array<{ path: string; content: string }> };
    assert.equal(snap.format, 'cadre-policy-snapshot/1');
    assert.deepEqual(snap.files.map((f) => f.path), out.files);
    assert.equal(snap.files.find((f) => f.path === 'deploy/workloads.yaml')!.content, before, 'the original, to roll back to');
    assert.ok(out.after.violations < out.before.violations, `${out.before.violations} -> ${out.after.violations}`);
    for (const rule of ['k8s.privileged', 'k8s.host-namespaces', 'k8s.replicas', 'k8s.read-only-root-filesystem', 'k8s.capabilities-drop-all', 'k8s.allow-privilege-escalation', 'k8s.resource-limits', 'compose.privileged', 'compose.network-host', 'compose.pid-host']) {
      assert.ok(out.before.byRule[rule], `${rule} was there before`);
      assert.equal(out.after.byRule[rule], undefined, `${rule} is fixed`);
    }
    assert.ok(out.notFixed.some((n) => n.rule === 'k8s.docker-socket' && n.fixable === 'manual'));
    assert.ok(out.notFixed.some((n) => n.rule === 'k8s.image-latest' && /never guessed/.test(n.why)));
    const gates = done['gates'] as Array<{ gate: string; status: string; reason: string }>;
    const rollback = gates.find((g) => g.gate === 'rollback-ready')!;
    assert.deepEqual([rollback.status, rollback.reason], ['pass', `rollback by snapshot ${out.snapshot}`]);
    assert.equal(done['passed'], true, JSON.stringify(gates.filter((g) => g.status === 'fail')));

    // A later check of the same workspace agrees: the fixed rules are gone from the files themselves.
    const again = await direct('check', { paths: ['deploy', 'helm', 'openshift', 'compose'] }, dir);
    const left = (again['output'] as Report).violations.map((v) => v.rule);
    for (const rule of ['k8s.privileged', 'k8s.host-namespaces', 'k8s.replicas', 'compose.privileged']) assert.equal(left.includes(rule), false, rule);
  });

  it('enforce in OBSERVE only proposes: the diff and the counts once applied, nothing written', async () => {
    const lower = await a.post('/v1/agents/policy-ai/acmf', { mode: 'OBSERVE', reason: 'test: proposals only' });
    assert.equal(lower.status, 200, lower.text);
    try {
      const dir = project();
      const before = readFileSync(path.join(dir, 'deploy/workloads.yaml'), 'utf8');
      const done = await direct('enforce', { paths: 'deploy' }, dir);
      assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 2000));
      const out = done['output'] as Enforced;
      assert.equal(out.mode, 'proposed');
      assert.equal(out.snapshot, null);
      assert.equal(readFileSync(path.join(dir, 'deploy/workloads.yaml'), 'utf8'), before, 'nothing written');
      assert.equal(existsSync(path.join(dir, '.cadre')), false);
      assert.match(out.diff, /^-\s+privileged: true # needs the node's devices, they said$/m);
      assert.match(out.diff, /^\+\s+privileged: false # needs the node's devices, they said$/m);
      assert.ok(out.after.violations < out.before.violations);
      const rollback = (done['gates'] as Array<{ gate: string; status: string }>).find((g) => g.gate === 'rollback-ready')!;
      assert.equal(rollback.status, 'not_applicable', 'a proposal changes nothing');
    } finally {
      // Raising the mode back needs the approver role: the env key is an admin key.
      const up = await a.post('/v1/agents/policy-ai/acmf', { mode: 'AUTONOMOUS', reason: 'test: restore' });
      assert.equal(up.status, 200, up.text);
    }
  });

  it('the input schema is published in OpenAPI and checked at the door', async () => {
    const doc = await a.get('/v1/openapi.json');
    const schemas = (doc.body['components'] as { schemas: Record<string, { properties?: Json }> }).schemas;
    for (const name of ['PolicyAiCheckInput', 'PolicyAiEnforceInput']) assert.deepEqual(Object.keys(schemas[name]?.properties ?? {}).sort(), ['minSeverity', 'paths', 'ruleIds'], name);
    const bad = await a.post('/api/agents/policy-ai/check', { input: { minSeverity: 'urgent' } });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual((bad.body['errors'] as Array<{ field: string }>).map((e) => e.field), ['body.input.minSeverity']);
  });
});

describe('policy-ai: only $CADRE_HOME/config.yaml turns a baseline rule off', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('policy.disable from the user\'s own config: the rule is reported disabled and raises nothing', async () => {
    const dataDir = tempDir('cadre-it-policy-home-');
    dirs.push(dataDir);
    writeFileSync(path.join(dataDir, 'config.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\npolicy:\n  disable: [k8s.image-digest]\n');
    const ws = fixtureProject({ prefix: 'cadre-it-policy-ws2-', copy: { deploy: 'policy/planted' } }, dirs);
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', ws]);
    const a = api(server.url);
    const r = await a.post('/api/agents/policy-ai/check', { prompt: 'policy-ai check', input: {} });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, undefined, 30_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1000));
    const out = done['output'] as Report;
    assert.equal(out.rules.find((x) => x.id === 'k8s.image-digest')!.state, 'disabled');
    assert.equal(out.violations.some((v) => v.rule === 'k8s.image-digest'), false);
    assert.ok(out.violations.some((v) => v.rule === 'k8s.image-latest'), 'the other rules still run');
  });
});
