/**
 * Issue 12, "Tests": the OPERATE domain workflow (observe-ai → debug-ai → incident-ai → maintain-ai →
 * review-ai → deploy-ai) completes in AUTONOMOUS with no approval, over HTTP on a real server with
 * the embedded skills: on a service with an incident in its logs (observe-ai finds the SLO burn,
 * incident-ai classifies it, deploy-ai runs the project's own `deploy:staging` script once) and on a
 * fresh project (every step not applicable, each with its reason — nothing fails for lack of data).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { api, startFleetServer, type Json } from '../../support/fleet-server';
import { ROOT, stop, type ServerProcess } from '../../support/server-process';

const FIX = path.resolve(__dirname, '../../fixtures');
interface Phase { agentId: string; action: string; status: string; summary: string | null }

function service(withIncident: boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-operate-'));
  const scripts = withIncident ? { start: 'node index.js', 'deploy:staging': 'node -e "require(\'fs\').appendFileSync(\'deployed.txt\', \'staging\\\\n\')"' } : {};
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'orders-api', version: '1.4.0', scripts }, null, 2)}\n`);
  writeFileSync(path.join(dir, 'index.js'), "require('http').createServer((q, r) => r.end(q.url === '/health' ? 'ok' : 'orders')).listen(3000);\n");
  writeFileSync(path.join(dir, '.gitignore'), 'deployed.txt\n');
  if (withIncident) {
    mkdirSync(path.join(dir, 'logs'));
    cpSync(path.join(FIX, 'incident/incident.jsonl'), path.join(dir, 'logs/app.jsonl'));
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  const commit = (m: string) => git('-c', 'user.email=ops@example.com', '-c', 'user.name=Ops', '-c', 'commit.gpgsign=false', 'commit', '-qm', m);
  commit('orders api');
  // A second release: deploy-ai's rollback goes back to the commit before the deployed one.
  writeFileSync(path.join(dir, 'CHANGELOG.md'), '## 1.4.0\n- orders export\n');
  git('add', '.');
  commit('release 1.4.0');
  return dir;
}

describe('the OPERATE domain workflow over HTTP (AUTONOMOUS, embedded skills)', function () {
  this.timeout(120_000);
  let server: ServerProcess & { url: string };
  let a: ReturnType<typeof api>;
  const dirs: string[] = [];

  before(async () => {
    server = await startFleetServer({ skills: false });
    a = api(server.url);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function operate(dir: string): Promise<{ done: Json; phases: Phase[] }> {
    const r = await a.post('/api/workflows/invoke', { capability: 'OPERATE', workflow: 'operate', input: { prompt: 'check the orders service', source: dir } });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, undefined, 90_000);
    const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['workflowId'] as string}`);
    assert.deepEqual(approvals.body['approvals'], [], 'nobody was asked');
    return { done, phases: done['phases'] as Phase[] };
  }

  it('on a service with an incident in its logs: detects the SLO burn, classifies it, ships with the project\'s deploy script once', async () => {
    const dir = service(true);
    dirs.push(dir);
    const { done, phases } = await operate(dir);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const by = Object.fromEntries(phases.map((p) => [p.agentId, p]));
    assert.deepEqual(phases.map((p) => p.agentId), ['observe-ai', 'debug-ai', 'incident-ai', 'maintain-ai', 'review-ai', 'deploy-ai']);
    assert.match(by['observe-ai']!.summary ?? '', /slo-burn-availability of logs\/app\.jsonl/);
    assert.equal(by['observe-ai']!.status, 'completed');
    assert.match(by['incident-ai']!.summary ?? '', /^SEV[12]: /);
    assert.equal(by['deploy-ai']!.status, 'completed', by['deploy-ai']!.summary ?? '');
    assert.equal(readFileSync(path.join(dir, 'deployed.txt'), 'utf8'), 'staging\n', 'the deploy script ran exactly once');
    for (const p of phases.filter((x) => x.status === 'skipped')) assert.match(p.summary ?? '', /not applicable: \S/, `${p.agentId} says why it had nothing to do`);
  });

  it('a direct action asked in one call (GET) with input it cannot use answers 422 naming the file and line', async () => {
    const dir = service(false);
    dirs.push(dir);
    mkdirSync(path.join(dir, 'metrics'));
    writeFileSync(path.join(dir, 'metrics', 'api.prom'), '# TYPE api_latency_ms gauge\napi_latency_ms{job="api" 12\n');
    const r = await a.get(`/api/agents/observe-ai/analyze?source=${encodeURIComponent(dir)}&metrics=metrics/api.prom`);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body['code'], 'ERR_NEEDS_INPUT');
    assert.match(String(r.body['detail']), /metrics\/api\.prom:2/, 'the file and line');
    const status = await a.get(String((r.body['details'] as Json)['statusUrl']));
    assert.equal(status.body['status'], 'failed', 'the execution stays readable');
  });

  it('documents each direct action with a skill as its own OpenAPI path, with its input and result schemas', async () => {
    const doc = await a.get('/v1/openapi.json');
    const paths = doc.body['paths'] as Record<string, Record<string, Json>>;
    const schemas = (doc.body['components'] as { schemas: Record<string, Json> }).schemas;
    const analyze = paths['/api/agents/observe-ai/analyze'];
    assert.ok(analyze?.['post'] && analyze['get'], Object.keys(paths).filter((p) => p.startsWith('/api/agents/')).join(', '));
    assert.deepEqual(Object.keys((schemas['ObserveAiAnalyzeInput'] as { properties: Json }).properties), ['metrics', 'logs', 'slo', 'rules']);
    assert.ok(schemas['ObserveAiAnalyzeResult'], 'the result data schema');
    assert.deepEqual(analyze['post']!['x-cadre-result'], { $ref: '#/components/schemas/ObserveAiAnalyzeResult' });
    const query = (analyze['get']!['parameters'] as Array<{ name: string; in: string }>).filter((p) => p.in === 'query').map((p) => p.name);
    assert.deepEqual(query, ['metrics', 'logs', 'slo', 'rules']);
    assert.ok(paths['/api/agents/incident-ai/triage'] && paths['/api/agents/dba-ai/indexes'], 'every agent action with a skill');
    // Not an action without a skill: every catalog action missing from the embedded skills' manifest has no path of its own.
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'dist/skills.manifest.json'), 'utf8')) as { skills: Array<{ agentId: string; action: string }> };
    const withSkill = new Set(manifest.skills.map((s) => `/api/agents/${s.agentId}/${s.action}`));
    const documented = Object.keys(paths).filter((p) => /^\/api\/agents\/[a-z-]+-ai\/[a-z-]+$/.test(p));
    assert.deepEqual(documented.filter((p) => !withSkill.has(p)), [], 'a path for an action without a skill');
  });

  it('input of the wrong shape is refused at submission (422 naming each field), before any execution exists', async () => {
    const dir = service(false);
    dirs.push(dir);
    const r = await a.post('/api/agents/observe-ai/analyze', { prompt: 'look', source: dir, input: { metrics: 42 } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body['code'], 'ERR_NEEDS_INPUT');
    assert.deepEqual((r.body['errors'] as Array<{ field: string }>).map((e) => e.field), ['body.input.metrics']);
    assert.equal(JSON.stringify(r.body).includes('statusUrl'), false, 'no execution was made');
    const cap = await a.post('/api/agents/capacity-ai/forecast', { source: dir, input: { season: 'weekly', limit: '90%', batch: 1 } });
    assert.equal(cap.status, 422, cap.text);
    assert.deepEqual((cap.body['errors'] as Array<{ field: string }>).map((e) => e.field), ['body.input.season'], 'a number given as text passes; other fields are the request\'s own');
    const ok = await a.post('/api/agents/capacity-ai/forecast', { source: dir, input: { season: '24', limit: '90' } });
    assert.equal(ok.status, 202, ok.text);
  });

  it('every OPERATE and OPTIMIZE action documents its input in OpenAPI', async () => {
    const doc = await a.get('/v1/openapi.json');
    const schemas = (doc.body['components'] as { schemas: Record<string, { properties?: Json }> }).schemas;
    const want: Record<string, string[]> = {
      IncidentAiTriageInput: ['logs', 'events', 'errorRate'], CapacityAiForecastInput: ['series', 'metrics', 'limit'], MaintainAiFixInput: ['batch'],
      BackupAiVerifyInput: ['archive'], OptimizeAiBenchmarkInput: ['command', 'baseline', 'runs'], DbaAiIndexesInput: ['schema', 'dialect'],
      CostAiOptimizeInput: ['export', 'utilization'], BillingAiAnalyticsInput: ['since', 'until', 'horizon'], DeployAiDeployInput: ['environment', 'strategy'],
    };
    for (const [name, fields] of Object.entries(want)) {
      const props = Object.keys(schemas[name]?.properties ?? {});
      for (const f of fields) assert.ok(props.includes(f), `${name} documents ${f} (has ${props.join(', ') || 'nothing'})`);
    }
  });

  it('on a fresh project: every step is not applicable with its reason, and the workflow completes', async () => {
    const dir = service(false);
    dirs.push(dir);
    const { done, phases } = await operate(dir);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    assert.deepEqual(phases.map((p) => p.status), ['skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
    const reasons = Object.fromEntries(phases.map((p) => [p.agentId, p.summary ?? '']));
    assert.match(reasons['observe-ai']!, /no metrics or logs to analyze/);
    assert.match(reasons['debug-ai']!, /nothing to diagnose/);
    assert.match(reasons['incident-ai']!, /nothing to triage: observe-ai \(step 0\) found no data/);
    assert.match(reasons['review-ai']!, /nothing to verify/);
    assert.match(reasons['deploy-ai']!, /no deploy command for staging/);
    assert.equal(existsSync(path.join(dir, 'deployed.txt')), false);
  });
});
