import { strict as assert } from 'node:assert';
import { STEP_OUTCOMES } from '../../../protocol/events';
import { adjustedThreshold, GATES, MAX_ADJUSTMENT_STEPS } from '../../../server/src/engine/catalog/gates';
import { SCOPES } from '../../../server/src/engine/catalog/enums';
import { stop } from '../../support/server-process';
import { startCoreLoopServer, type PooledClient } from './client';
import { buildProjects, type Projects } from './projects';
import { runMix, type MixReport } from './soak-mix';

const MODE_RANK: Record<string, number> = { OBSERVE: 0, LEARNING: 1, ASSISTED: 2, AUTONOMOUS: 3 };
const TASKS = Number(process.env['CADRE_SOAK_TASKS'] ?? 200);

async function modes(a: PooledClient): Promise<Record<string, string>> {
  const r = await a.get('/v1/agents/list');
  return Object.fromEntries((r.body['agents'] as Array<{ id: string; acmf: { mode: string } }>).map((x) => [x.id, x.acmf.mode]));
}

/** Every value a quality gate's threshold may take: its scope's, tightened by 0..MAX_ADJUSTMENT_STEPS failures. */
function allowedThresholds(gateId: string): Set<number> | null {
  const g = GATES.find((x) => x.id === gateId);
  if (!g || g.scaling !== 'quality') return null;
  const out = new Set<number>();
  for (const scope of SCOPES) for (let n = 0; n <= MAX_ADJUSTMENT_STEPS; n++) {
    const t = adjustedThreshold(g, scope, n);
    if (t !== null) out.add(t);
  }
  return out;
}

/**
 * Issue 10, "Tests": a soak of CADRE_SOAK_TASKS (default 200) mixed tasks over HTTP on the fixture
 * projects, four at a time (the CI box has two cores). Afterwards the fleet must be as healthy as
 * it started: no agent's mode lower unless one of its own artifacts failed a gate (named here), every
 * threshold within its documented bound, nothing left running or waiting without a reason.
 */
describe(`core loop soak: ${TASKS} mixed tasks over HTTP`, function () {
  this.timeout(300_000);
  let p: Projects;
  let a: PooledClient;
  let stopServer: () => Promise<void>;
  let before0: Record<string, string>;
  let report: MixReport;

  let install: { dataDir: string; workspace: string };

  before(async () => {
    p = buildProjects();
    const s = await startCoreLoopServer({ keys: 8 });
    a = s.client;
    install = { dataDir: s.dataDir, workspace: s.workspace };
    stopServer = () => stop(s.server);
    before0 = await modes(a);
    report = await runMix(a, p, { tasks: TASKS, concurrency: 4, routing: 'verbs' });
    const byKind = new Map<string, Record<string, number>>();
    for (const r of report.results) {
      const k = byKind.get(r.kind) ?? {};
      const key = r.submitted === 202 ? r.status ?? 'unknown' : `refused ${r.submitted}`;
      k[key] = (k[key] ?? 0) + 1;
      byKind.set(r.kind, k);
    }
    console.log(`      soak: ${TASKS} tasks in ${(report.elapsedMs / 1000).toFixed(1)} s; completed ${report.completed}, failed ${report.failed}, refused at submission ${report.refused}, asked a person ${report.askedPerson}, left hanging ${report.hanging}; ${a.requests} requests, ${a.rateLimited} rate-limited`);
    for (const [k, v] of byKind) console.log(`        ${k}: ${JSON.stringify(v)}`);
  });
  after(async () => stopServer?.());

  it('every accepted execution ended (or waits on an approval its agent\'s mode requires)', async () => {
    const now = await modes(a);
    for (const r of report.results.filter((x) => x.submitted === 202)) {
      if (r.status && ['completed', 'failed', 'cancelled'].includes(r.status)) continue;
      assert.equal(r.status, 'awaiting_approval', `${r.kind} ${r.id}: ${r.detail}`);
      const pend = await a.get(`/v1/approvals?execution_id=${r.id}`);
      for (const ap of pend.body['approvals'] as Array<{ agentId: string; risk: string }>) {
        assert.ok(ap.risk === 'critical' || MODE_RANK[now[ap.agentId]!]! <= MODE_RANK['LEARNING']!, `${r.id} waits on a ${ap.risk} approval of ${ap.agentId} in ${now[ap.agentId]}: no documented reason`);
      }
    }
    const health = await a.get('/v1/admin/rigor/health');
    assert.equal((health.body['executions'] as { running: number }).running, 0, health.text);
  });

  it('only work that cannot run is refused at the door (code and coder-ai without a model: 501)', () => {
    const refused = report.results.filter((r) => r.submitted !== 202);
    for (const r of refused) {
      assert.ok(['code', 'invoke coder-ai'].includes(r.kind), `${r.kind} refused: ${r.detail}`);
      assert.equal(r.submitted, 501, r.detail);
    }
    assert.ok(refused.length >= Math.floor(TASKS / 20), `${refused.length} refusals counted`);
  });

  it('every review, test, security, deploy, monitor, maintain, capacity and backup verb on a healthy fixture completed', () => {
    const flagship = report.results.filter((r) => r.flagship);
    assert.ok(flagship.length >= Math.floor(TASKS / 4), `${flagship.length} flagship runs`);
    const bad = flagship.filter((r) => r.status !== 'completed');
    assert.deepEqual(bad.map((r) => `${r.kind} ${r.id} ${r.status}: ${r.detail} ${JSON.stringify(r.steps)}`), []);
  });

  it('every step ends in one of the documented outcomes', () => {
    for (const r of report.results) for (const s of r.steps) {
      assert.ok((STEP_OUTCOMES as readonly string[]).includes(s.outcome ?? ''), `${r.kind} ${r.id}: ${s.agentId} outcome ${s.outcome}`);
    }
  });

  it('no agent\'s mode is lower than at the start unless one of its own artifacts failed a gate', async () => {
    const now = await modes(a);
    const failedGate = new Map<string, string[]>();
    for (const r of report.results) for (const s of r.steps) {
      if (s.outcome === 'failed') failedGate.set(s.agentId, [...(failedGate.get(s.agentId) ?? []), `${r.id}: ${s.reason ?? ''}`]);
    }
    const demoted = Object.keys(before0).filter((id) => MODE_RANK[now[id]!]! < MODE_RANK[before0[id]!]!);
    for (const id of demoted) assert.ok(failedGate.has(id), `${id} went from ${before0[id]} to ${now[id]} with no failed gate of its own`);
    console.log(`      demoted: ${demoted.length ? demoted.map((id) => `${id} (${before0[id]} -> ${now[id]}; ${failedGate.get(id)![0]})`).join(', ') : 'none'}; agents with a failed gate: ${[...failedGate.keys()].join(', ') || 'none'}`);
    // Each demotion is in the agent's audited history with its reason.
    for (const id of demoted) {
      const st = await a.get(`/v1/agents/${id}/status`);
      const hist = st.body['acmfHistory'] as Array<{ to?: string; mode?: string; reason?: string }>;
      assert.ok(hist.some((h) => (h.to ?? h.mode) === now[id] && typeof h.reason === 'string' && h.reason.length > 0), `${id}: ${JSON.stringify(hist).slice(0, 600)}`);
    }
  });

  it('every quality threshold a Review applied is within its documented bound (MAX_ADJUSTMENT_STEPS)', async () => {
    const rigor = report.results.filter((r) => r.submitted === 202 && r.kind.startsWith('invoke ') && (r.status === 'completed' || r.status === 'failed'));
    let checked = 0;
    for (const r of rigor) {
      const st = await a.get(`/api/v1/rigor/status/${r.id}`);
      for (const g of (st.body['gates'] as Array<{ gate: string; threshold: number | null }>) ?? []) {
        const allowed = allowedThresholds(g.gate);
        if (!allowed || g.threshold === null) continue;
        assert.ok(allowed.has(g.threshold), `${r.kind} ${r.id}: ${g.gate} threshold ${g.threshold} not in ${[...allowed].join(', ')}`);
        checked++;
      }
    }
    assert.ok(checked > 0, 'some thresholds were checked');
  });
  it('after a restart of the same install: the earlier executions still read, no mode moved, and the verbs go on completing', async () => {
    const modesBefore = await modes(a);
    const earlier = report.results.filter((r) => r.flagship && r.id).slice(0, 20);
    await stopServer();
    const s = await startCoreLoopServer({ keys: 4, ...install });
    a = s.client;
    stopServer = () => stop(s.server);
    for (const r of earlier) {
      const got = await a.get(`/v1/agents/tasks/${r.id!}`);
      assert.equal(got.status, 200, `${r.kind} ${r.id}: ${got.text.slice(0, 200)}`);
      assert.equal(got.body['status'], 'completed', `${r.kind} ${r.id} as it ended before the restart`);
    }
    assert.deepEqual(await modes(a), modesBefore, 'ACMF modes survive the restart');
    const again = await runMix(a, p, { tasks: 30, concurrency: 4, routing: 'verbs' });
    const bad = again.results.filter((r) => r.flagship && r.status !== 'completed');
    assert.deepEqual(bad.map((r) => `${r.kind} ${r.id} ${r.status}: ${r.detail}`), []);
    assert.equal(again.askedPerson, 0);
    assert.equal(again.hanging, 0);
  });
});
