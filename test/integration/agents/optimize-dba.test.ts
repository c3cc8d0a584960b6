import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { KEY, type Json } from '../../support/fleet-server';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { PooledClient } from '../core-loop/client';
import { fixtureProject } from '../../support/fixture-project';

const FIX = path.resolve(__dirname, '../../fixtures');

interface Finding { rule: string; file: string; line: number }
interface HotSpot { function: string; location: string; selfShare: number; file: string }

/**
 * Issue 12, optimize-ai and dba-ai [PRO] over HTTP on a real server (dist/, real agent workers,
 * embedded skills, no language model), every agent AUTONOMOUS and the default intelligence pro: each
 * action completes with no approval asked, the planted facts come back with their location, the clean
 * twins raise nothing, bad input is needs_input naming the field and the file. The server's own
 * --workspace holds the planted SQL and the hot profile, so the GET form (input from the query
 * string, no `source`) has something to read. optimize-ai and dba-ai have no task verb (verbs.ts).
 */
describe('optimize-ai and dba-ai over HTTP', function () {
  this.timeout(60_000);
  let server: ServerProcess & { url: string };
  let a: PooledClient;
  const dirs: string[] = [];

  /** A git repository holding copies of fixture files (`to` -> fixture path under test/fixtures). */
  const project = (files: Record<string, string>, extra: Record<string, string> = {}): string =>
    fixtureProject({ prefix: 'cadre-it-optdba-', copy: files, files: extra }, dirs);

  before(async () => {
    ensureBuilt();
    const ws = project({ db: 'dba/planted/db', 'hot.cpuprofile': 'optimize/hot.cpuprofile' }, { '.cadre.yaml': 'defaults:\n  intelligence: pro\n  acmf_mode: AUTONOMOUS\n' });
    server = await startStandalone(tempDir('cadre-it-optdba-data-'), { CADRE_API_KEY: KEY }, ['--workspace', ws]);
    a = await PooledClient.create(server.url, 3);
  });
  after(async () => {
    if (server) await stop(server);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function direct(agent: string, action: string, input: Json, source: string): Promise<Json> {
    const r = await a.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, input, source, intelligence: 'pro' });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['executionId'] as string}`);
    assert.equal((approvals.body['approvals'] as unknown[]).length, 0, `no approval asked: ${approvals.text}`);
    return done;
  }
  /** Completed, with the artifact-schema gate passing on the action's declared data shape. */
  const ok = (done: Json, gates = true) => {
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    if (!gates) { // the GET form's 200 carries the Review's table (docs/api.md): no gate failed
      const table = done['gates'] as Array<{ gate: string; status: string }>;
      assert.deepEqual(table.filter((g) => g.status === 'fail'), []);
      return;
    }
    const gate = (done['gates'] as Array<{ gate: string; status: string; reason: string }>).find((g) => g.gate === 'artifact-schema');
    assert.equal(gate?.status, 'pass', JSON.stringify(gate));
  };

  it('optimize-ai analyze: the planted hot function with its url:line; the idle twin raises nothing; the GET form reads the server workspace', async () => {
    const hot = await direct('optimize-ai', 'analyze', {}, project({ 'prof/app.cpuprofile': 'optimize/hot.cpuprofile' }));
    ok(hot);
    const out = hot['output'] as { hotSpots: HotSpot[] };
    assert.equal(out.hotSpots.length, 1);
    assert.equal(out.hotSpots[0]!.function, 'slowHash');
    assert.match(out.hotSpots[0]!.location, /hot\.js:4$/);
    assert.equal(out.hotSpots[0]!.file, 'prof/app.cpuprofile');
    const idle = await direct('optimize-ai', 'analyze', { profile: 'idle.cpuprofile' }, project({ 'idle.cpuprofile': 'optimize/idle.cpuprofile' }));
    ok(idle);
    assert.deepEqual((idle['output'] as { hotSpots: unknown[] }).hotSpots, []);
    const get = await a.get('/api/agents/optimize-ai/analyze?profile=hot.cpuprofile&threshold=50');
    assert.equal(get.status, 200, get.text);
    ok(get.body, false);
    assert.equal((get.body['output'] as { hotSpots: HotSpot[] }).hotSpots[0]!.function, 'slowHash');
  });

  it('optimize-ai benchmark runs the command and the baseline interleaved with no approval in AUTONOMOUS', async () => {
    const done = await direct('optimize-ai', 'benchmark', { command: ['sleep', '0.12'], baseline: 'sleep 0.01', runs: 5, warmup: 0 }, project({}, { 'README.md': 'bench\n' }));
    ok(done);
    const out = done['output'] as { commandStats: { runs: number; medianMs: number }; baselineStats: { runs: number }; comparison: { ratio: number; verdict: string } };
    assert.deepEqual([out.commandStats.runs, out.baselineStats.runs], [5, 5]);
    assert.ok(out.commandStats.medianMs >= 120, String(out.commandStats.medianMs));
    assert.ok(out.comparison.ratio > 1 && out.comparison.verdict === 'slower', JSON.stringify(out.comparison));
  });

  it('dba-ai analyze-queries: every planted anti-pattern with file and line, the clean twin nothing; the GET form; a broken file is needs_input with its line', async () => {
    const planted = await direct('dba-ai', 'analyze-queries', {}, project({ db: 'dba/planted/db', src: 'dba/planted/src' }));
    ok(planted);
    const found = (planted['output'] as { findings: Finding[] }).findings.map((f) => `${f.rule} ${f.file}:${f.line}`).sort();
    assert.deepEqual(found, [
      'delete-without-where db/queries.sql:6', 'function-on-column db/queries.sql:10', 'implicit-cast db/queries.sql:12', 'leading-wildcard-like db/queries.sql:8',
      'leading-wildcard-like src/orders.js:17', 'n-plus-one src/orders.js:13', 'n-plus-one src/orders.js:6', 'select-star db/queries.sql:2', 'update-without-where db/queries.sql:4',
    ]);
    const clean = await direct('dba-ai', 'analyze-queries', {}, project({ db: 'dba/clean/db', src: 'dba/clean/src' }));
    ok(clean);
    assert.deepEqual((clean['output'] as { findings: unknown[] }).findings, []);
    const get = await a.get('/api/agents/dba-ai/analyze-queries?files=db/queries.sql');
    assert.equal(get.status, 200, get.text);
    ok(get.body, false);
    assert.equal((get.body['output'] as { findings: Finding[] }).findings.length, 6);
    const broken = await direct('dba-ai', 'analyze-queries', { files: ['bad.sql'] }, project({}, { 'bad.sql': 'SELECT 1;\nSELECT FROM WHERE;\n' }));
    assert.equal(broken['status'], 'failed');
    assert.equal(broken['outcome'], 'needs_input', JSON.stringify(broken).slice(0, 800));
    assert.match(String(broken['reason']), /bad\.sql:2: PostgreSQL syntax error/);
  });

  it('the OPTIMIZE domain workflow on a project with a profile and SQL: optimize-ai and dba-ai complete with their findings, no approval', async () => {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['OPTIMIZE'], task: 'why is the shop slow?', source: project({ db: 'dba/planted/db', src: 'dba/planted/src', 'hot.cpuprofile': 'optimize/hot.cpuprofile' }), intelligence: 'pro' });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 45_000);
    const approvals = await a.get(`/v1/approvals?status=all&execution_id=${r.body['taskId'] as string}`);
    assert.equal((approvals.body['approvals'] as unknown[]).length, 0, approvals.text);
    const steps = (done['output'] as { steps?: Array<{ agentId: string; action: string; outcome: string; summary: string | null }> } | null)?.steps ?? [];
    const mine = steps.filter((s) => s.agentId === 'optimize-ai' || s.agentId === 'dba-ai').map((s) => [s.agentId, s.action, s.outcome]);
    assert.deepEqual(mine, [['optimize-ai', 'analyze', 'completed'], ['dba-ai', 'analyze-queries', 'completed']], JSON.stringify(steps).slice(0, 1500));
    assert.match(steps.find((s) => s.agentId === 'optimize-ai')!.summary ?? '', /^1 hot spot\(s\): slowHash at .*hot\.js:4/);
    assert.match(steps.find((s) => s.agentId === 'dba-ai')!.summary ?? '', /^9 finding\(s\): update-without-where at db\/queries\.sql:4; delete-without-where at db\/queries\.sql:6;/);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
  });

  it('dba-ai indexes: suggestions for the planted predicates, none the schema has; the clean twin nothing to add', async () => {
    const planted = await direct('dba-ai', 'indexes', { schema: 'db/schema.sql' }, project({ db: 'dba/planted/db' }));
    ok(planted);
    const out = planted['output'] as { suggestions: Array<{ table: string; columns: string[]; queries: string[] }> };
    assert.deepEqual(out.suggestions.map((s) => `${s.table}(${s.columns.join(',')}) ${s.queries.join(' ')}`), [
      'orders(created_at) db/queries.sql:14', 'orders(status,user_id) db/queries.sql:22', 'users(status) db/queries.sql:14',
    ]);
    const clean = await direct('dba-ai', 'indexes', { schema: 'db/schema.sql' }, project({ db: 'dba/clean/db' }));
    ok(clean);
    assert.deepEqual((clean['output'] as { suggestions: unknown[] }).suggestions, []);
    const outside = await direct('dba-ai', 'indexes', { schema: path.join(FIX, 'dba/clean/db/schema.sql') }, project({ db: 'dba/planted/db' }));
    assert.equal(outside['outcome'], 'needs_input', JSON.stringify(outside).slice(0, 800));
    assert.match(String(outside['reason']), /input\.schema: .*dba\/clean\/db\/schema\.sql is outside the workspace; not read$/);
  });
});
