import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

/**
 * adapt-ai over HTTP (issue 14 item 5): a real server (embedded skills, ULTRA). security-ai finds a
 * planted key in a test fixture; people rate that finding down twice through adapt-ai `feedback`
 * (recorded engine-side, once per execution, as their key); adapt-ai `evaluate` then reports the
 * finding as a false positive and proposes its suppression, without applying it. The inputs of the
 * six fact-backed actions are documented in the OpenAPI document.
 */
describe('adapt-ai over HTTP', function () {
  this.timeout(90_000);
  let server: ServerProcess & { url: string };
  const dirs: string[] = [];
  let project: string;
  let dataDir: string;
  let workspace: string;

  before(async () => {
    ensureBuilt();
    dataDir = tempDir('cadre-adapt-data-');
    workspace = tempDir('cadre-adapt-ws-');
    project = tempDir('cadre-adapt-src-');
    dirs.push(dataDir, workspace, project);
    writeFileSync(path.join(workspace, '.cadre.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
    mkdirSync(path.join(project, 'test'));
    writeFileSync(path.join(project, 'package.json'), '{"name":"svc","version":"1.0.0"}\n');
    writeFileSync(path.join(project, 'test', 'fixture-keys.ts'), 'export const awsAccessKeyId = "AKIAPYCDYBK377OXTZQ6";\n');
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function direct(agent: string, action: string, body: Json): Promise<Json> {
    const c = api(server.url);
    const r = await c.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, ...body });
    assert.equal(r.status, 202, r.text);
    return c.until(r.body['statusUrl'] as string, undefined, 30_000);
  }

  let scan: Json;
  let fingerprint: string;
  it('feedback rates a finding of a step by its fingerprint, as the caller\'s key', async () => {
    scan = await direct('security-ai', 'secrets', { source: project });
    assert.equal(scan['status'], 'completed', JSON.stringify(scan['error']));
    const findings = (scan['output'] as { findings: Array<{ fingerprint: string; ruleId: string; file: string }> }).findings;
    const f = findings.find((x) => x.file === 'test/fixture-keys.ts');
    assert.ok(f, JSON.stringify(findings).slice(0, 400));
    fingerprint = f.fingerprint;
    const done = await direct('adapt-ai', 'feedback', { input: { executionId: scan['executionId'], step: 0, finding: fingerprint, rating: 'down', reason: 'a test fixture, not a live key' } });
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { recorded: { finding: { fingerprint: string; ruleId: string; file: string }; good: boolean; by: string; agentId: string; replayed: boolean }; sameTarget: { down: number } };
    assert.deepEqual([out.recorded.finding.fingerprint, out.recorded.finding.ruleId, out.recorded.finding.file], [fingerprint, f.ruleId, 'test/fixture-keys.ts']);
    assert.deepEqual([out.recorded.good, out.recorded.agentId, out.recorded.replayed, out.sameTarget.down], [false, 'security-ai', false, 1]);
    assert.match(out.recorded.by, /^key:key_/);
    const again = await direct('adapt-ai', 'feedback', { input: { executionId: scan['executionId'], finding: fingerprint, rating: 1 } });
    assert.equal((again['output'] as { sameTarget: { down: number } }).sameTarget.down, 2, 'the finding is found in any step when no step is named');
  });

  it('rating an execution that does not exist, or a finding it does not have, needs input', async () => {
    const missing = await direct('adapt-ai', 'feedback', { input: { executionId: 'act_nope', rating: 'up' } });
    assert.deepEqual([missing['status'], missing['outcome']], ['failed', 'needs_input']);
    assert.match(JSON.stringify(missing['error']), /no execution act_nope/);
    const finding = await direct('adapt-ai', 'feedback', { input: { executionId: scan['executionId'], finding: 'fp-unknown', rating: 'up' } });
    assert.match(JSON.stringify(finding['error']), /no finding fp-unknown/);
    const bad = await api(server.url).post('/api/agents/adapt-ai/feedback', { input: { executionId: scan['executionId'], rating: 'meh' } });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual((bad.body['errors'] as Array<{ field: string }>).map((e) => e.field), ['body.input.rating']);
  });

  it('evaluate reports the down-rated finding as a false positive and proposes its suppression, not applied', async () => {
    const done = await direct('adapt-ai', 'evaluate', {});
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { falsePositives: Array<{ key: string; down: number }>; proposals: Array<{ id: string; kind: string; change: string; status: string }>; applied: boolean; agents: Array<{ agentId: string; mode: string }>; note: string };
    assert.deepEqual(out.falsePositives.map((x) => [x.key, x.down]), [[fingerprint, 2]]);
    const p = out.proposals.find((x) => x.kind === 'suppress_finding')!;
    assert.equal(p.id, `suppress:${fingerprint}`);
    assert.match(p.change, /cadre-ignore .+: a test fixture, not a live key/);
    assert.equal(p.status, 'proposed');
    assert.equal(out.applied, false);
    assert.match(out.note, /^proposals only/);
    assert.equal(out.agents.find((a) => a.agentId === 'security-ai')?.mode, 'AUTONOMOUS');
  });

  it('applying the suppression goes through ACMF: a person approves it, the next scan leaves the finding out, evaluate shows it in force', async () => {
    const c = api(server.url);
    // adapt-ai in LEARNING: its suppress_finding action waits for a person.
    const mode = await c.post('/v1/agents/adapt-ai/acmf', { mode: 'LEARNING', reason: 'test: adaptations need a person' });
    assert.equal(mode.status, 200, mode.text);
    const r = await c.post('/api/agents/adapt-ai/evaluate', { prompt: 'apply the suppression', input: { apply: [`suppress:${fingerprint}`] } });
    assert.equal(r.status, 202, r.text);
    const id = r.body['executionId'] as string;
    let approval: Json | undefined;
    for (let i = 0; i < 100 && !approval; i++) {
      approval = ((await c.get(`/v1/approvals?execution_id=${id}`)).body['approvals'] as Json[])[0];
      if (!approval) await new Promise((res) => setTimeout(res, 200));
    }
    assert.ok(approval, 'adapt-ai asked a person');
    assert.equal((approval['action'] as Json)['kind'], 'suppress_finding');
    assert.match(String((approval['action'] as Json)['description']), /suppress .*a test fixture, not a live key/);
    const decided = await c.post(`/v1/approvals/${approval['id'] as string}/decision`, { approved: true, reason: 'yes, a fixture' });
    assert.equal(decided.status, 200, decided.text);
    const done = await c.until(r.body['statusUrl'] as string, undefined, 30_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { applying: Array<{ id: string; status: string }>; applied: boolean };
    assert.deepEqual(out.applying.map((a) => [a.id, a.status]), [[`suppress:${fingerprint}`, 'allowed']]);
    assert.equal(out.applied, true);
    // Applied once the execution ended: the next scan of the tenant leaves the finding out, and says so.
    let rescan: Json = {};
    for (let i = 0; i < 20; i++) {
      rescan = await direct('security-ai', 'secrets', { source: project });
      const fs = (rescan['output'] as { findings: Array<{ fingerprint: string }> }).findings;
      if (!fs.some((f) => f.fingerprint === fingerprint)) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const after = rescan['output'] as { findings: Array<{ fingerprint: string }>; limitations: string[]; summary: { baselined: number } };
    assert.ok(!after.findings.some((f) => f.fingerprint === fingerprint), 'the suppressed finding is left out');
    assert.equal(after.summary.baselined, 1);
    assert.ok(after.limitations.some((l) => /rated false positives are suppressed \(adapt-ai, applied through ACMF\)/.test(l)), JSON.stringify(after.limitations));
    // evaluate shows it in force, with who let it through.
    await c.post('/v1/agents/adapt-ai/acmf', { mode: 'AUTONOMOUS', reason: 'test: back' });
    const ev = await direct('adapt-ai', 'evaluate', {});
    const inForce = (ev['output'] as { inForce: Array<{ proposalId: string; kind: string; by: string }> }).inForce;
    assert.deepEqual(inForce.map((a) => [a.proposalId, a.kind]), [[`suppress:${fingerprint}`, 'suppress_finding']]);
    assert.match(inForce[0]!.by, /^approved by key:key_/);
    // Still in force after a restart (it lives in the store), and scanning again and again stays quiet.
    await stop(server);
    server = await startStandalone(dataDir, { CADRE_API_KEY: KEY }, ['--workspace', workspace]);
    for (let i = 0; i < 3; i++) {
      const again = await direct('security-ai', 'secrets', { source: project });
      assert.equal(again['status'], 'completed', JSON.stringify(again['error']));
      assert.ok(!(again['output'] as { findings: Array<{ fingerprint: string }> }).findings.some((f) => f.fingerprint === fingerprint), `scan ${i + 1} after the restart`);
    }
  });

  it('the six actions document their input in OpenAPI', async () => {
    const doc = await api(server.url).get('/v1/openapi.json');
    const schemas = (doc.body['components'] as { schemas: Record<string, { properties?: Json }> }).schemas;
    const want: Record<string, string[]> = {
      GovernAiAuditTrailInput: ['executionId', 'agentId', 'kind', 'since', 'until', 'limit'], GovernAiApprovalInput: ['decide'],
      AdaptAiFeedbackInput: ['executionId', 'step', 'finding', 'rating', 'reason'], AdaptAiEvaluateInput: ['agentId', 'apply'],
      SuccessAiHealthInput: ['days'], SuccessAiEngagementInput: ['weeks'],
    };
    for (const [name, fields] of Object.entries(want)) {
      const props = Object.keys(schemas[name]?.properties ?? {});
      for (const f of fields) assert.ok(props.includes(f), `${name} documents ${f} (has ${props.join(', ') || 'nothing'})`);
    }
    const paths = doc.body['paths'] as Record<string, Json>;
    for (const p of ['/api/agents/govern-ai/audit-trail', '/api/agents/govern-ai/approval', '/api/agents/adapt-ai/feedback', '/api/agents/adapt-ai/evaluate', '/api/agents/success-ai/health', '/api/agents/success-ai/engagement']) {
      assert.ok(paths[p], `${p} documented`);
    }
  });
});
