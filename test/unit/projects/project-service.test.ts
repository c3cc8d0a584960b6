/**
 * ProjectService on a real engine with the embedded capacity-ai and backup-ai skills (in process):
 * ingested series → capacity-ai forecast executions → predictions and their events; remediations.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ServiceEvent } from '../../../server/src/engine/bus';
import { capacitySkills } from '../../../server/src/skills/capacity/index';
import { backupSkills } from '../../../server/src/skills/backup/index';
import { observeSkills } from '../../../server/src/skills/observe/index';
import { optimizeSkills } from '../../../server/src/skills/optimize/index';
import { anyone, createHarness, settled, type Harness } from '../../support/engine-harness';

const MIN = 60_000;
const YAML = 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n';

/** 60 samples a minute apart ending now: value 10 + 2 i (+/- 0.5), reaching 250 at i = 120. */
function rising(end: number): Array<[number, number]> {
  return Array.from({ length: 60 }, (_, i) => [end - (59 - i) * MIN, 10 + 2 * i + (i % 2 ? 0.5 : -0.5)] as [number, number]);
}
function flat(end: number): Array<[number, number]> {
  return Array.from({ length: 60 }, (_, i) => [end - (59 - i) * MIN, 100 + (i % 3) - 1] as [number, number]);
}

describe('ProjectService (engine, real capacity-ai)', function () {
  this.timeout(60_000);
  let h: Harness;
  let ws: string;
  const events: ServiceEvent[] = [];

  beforeEach(async () => {
    h = await createHarness({ yaml: YAML, skills: [...capacitySkills, ...backupSkills, ...observeSkills, ...optimizeSkills] });
    h.engine.bus.subscribe('service.event', (e) => void events.push(e));
    events.length = 0;
    ws = mkdtempSync(path.join(tmpdir(), 'cadre-proj-ws-'));
    writeFileSync(path.join(ws, 'capacity.yaml'), 'replicas: 2\n');
  });
  afterEach(async () => {
    await h.engine.projects.settled();
    await h.close();
    rmSync(ws, { recursive: true, force: true });
  });

  it('a series rising to its limit is predicted near the known saturation time; its flat twin is not', async () => {
    const p = await h.engine.projects.create({ name: 'shop', workspace: ws }, anyone);
    const now = Date.now();
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(now) }, { key: 'queue_depth', rate: false, points: flat(now) }], { disk_used_gb: 250, queue_depth: 250 });
    const preds = await h.engine.projects.detect(p.id, anyone);
    assert.equal(preds.length, 1, JSON.stringify(preds));
    const pred = preds[0]!;
    assert.match(pred.id, /^pred_/);
    assert.equal(pred.seriesKey, 'disk_used_gb');
    // The line reaches 250 at i = 120, i.e. 61 minutes after the last sample.
    const expected = now + 61 * MIN;
    assert.ok(Math.abs(Date.parse(pred.will_occur_at) - expected) <= 2 * MIN, `${pred.will_occur_at} vs ${new Date(expected).toISOString()}`);
    assert.equal(pred.severity, 'high');
    assert.ok(pred.confidence > 0.5 && pred.confidence <= 1);
    assert.equal(h.engine.executions.get(pred.executionId).request.agentId, 'capacity-ai');
    assert.deepEqual(events.map((e) => e.event), ['prediction.created']);
    const data = events[0]!.data['prediction'] as Record<string, unknown>;
    assert.deepEqual([data['id'], data['type'], data['severity'], data['project_id']], [pred.id, 'capacity_exhaustion', 'high', p.id]);
  });

  it('re-detection of the same series updates the prediction; a series that flattens resolves it', async () => {
    const p = await h.engine.projects.create({ name: 'svc', workspace: null }, anyone);
    const now = Date.now() - 60 * MIN;
    await h.engine.projects.ingest(p.id, [{ key: 'mem_used', rate: false, points: rising(now) }], { mem_used: 250 });
    const [first] = await h.engine.projects.detect(p.id, anyone);
    // The same rise one hour later, faster: saturation moves.
    const later = rising(now + 60 * MIN).map(([t, v], i) => [t, v + i] as [number, number]);
    await h.engine.projects.ingest(p.id, [{ key: 'mem_used', rate: false, points: later }], {});
    const [second] = await h.engine.projects.detect(p.id, anyone);
    assert.equal(second!.id, first!.id);
    assert.notEqual(second!.will_occur_at, first!.will_occur_at);
    // The limit raised far above: the forecast no longer reaches it.
    await h.engine.projects.ingest(p.id, [], { mem_used: 1e9 });
    const third = await h.engine.projects.detect(p.id, anyone);
    assert.equal(third.length, 0, JSON.stringify(third));
    assert.equal(h.engine.projects.getPrediction(first!.id).status, 'resolved');
    assert.deepEqual(events.map((e) => e.event), ['prediction.created', 'prediction.updated', 'prediction.resolved']);
  });

  it('remediate: a backup-ai snapshot, apply says what it cannot change, verify re-runs the detection, events go out', async () => {
    const p = await h.engine.projects.create({ name: 'shop', workspace: ws }, anyone);
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
    const [pred] = await h.engine.projects.detect(p.id, anyone);
    const rem = await h.engine.projects.remediate(pred!.id, { create_backup: true, notify_team: true, rollback_on_failure: true }, anyone);
    assert.match(rem.id, /^rem_/);
    assert.equal(rem.status, 'in_progress');
    await h.engine.projects.settled();
    const done = h.engine.projects.getRemediation(rem.id);
    const step = (n: string) => done.steps.find((s) => s.name === n)!;
    assert.equal(step('create_backup').status, 'completed', JSON.stringify(step('create_backup')));
    const archive = step('create_backup').detail!['archive'] as string;
    assert.ok(existsSync(path.resolve(ws, archive)), archive);
    assert.equal(step('apply').status, 'not_applicable');
    assert.match(step('apply').reason!, /capacity-ai recommends/);
    assert.equal(step('verify').status, 'completed');
    assert.notEqual(step('verify').executionId, pred!.executionId, 'verify ran a new forecast');
    assert.equal(step('notify').status, 'completed');
    assert.equal(step('rollback_on_failure').status, 'not_applicable');
    assert.equal(done.status, 'not_applicable');
    assert.deepEqual(events.map((e) => e.event).filter((e) => e.startsWith('remediation.')), ['remediation.started', 'remediation.completed']);
  });

  it('without a workspace the backup is not applicable; a resolved prediction cannot be remediated', async () => {
    const p = await h.engine.projects.create({ name: 'remote', workspace: null }, anyone);
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
    const [pred] = await h.engine.projects.detect(p.id, anyone);
    const rem = await h.engine.projects.remediate(pred!.id, { create_backup: true, notify_team: false, rollback_on_failure: false }, anyone);
    await h.engine.projects.settled();
    const done = h.engine.projects.getRemediation(rem.id);
    assert.equal(done.steps[0]!.status, 'not_applicable');
    assert.equal(done.steps.find((s) => s.name === 'notify')!.status, 'skipped');
    await h.engine.projects.ingest(p.id, [], { disk_used_gb: 1e9 });
    await h.engine.projects.detect(p.id, anyone);
    await assert.rejects(h.engine.projects.remediate(pred!.id, { create_backup: false, notify_team: false, rollback_on_failure: false }, anyone), (e: { code: string }) => e.code === 'ERR_CONFLICT');
  });

  it('a backup ACMF refuses (OBSERVE) fails the remediation and nothing else runs', async () => {
    await h.close();
    h = await createHarness({ yaml: 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\nagents:\n  backup-ai:\n    acmf_mode: OBSERVE\n', skills: [...capacitySkills, ...backupSkills] });
    h.engine.bus.subscribe('service.event', (e) => void events.push(e));
    const p = await h.engine.projects.create({ name: 'refused', workspace: ws }, anyone);
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
    const [pred] = await h.engine.projects.detect(p.id, anyone);
    const rem = await h.engine.projects.remediate(pred!.id, { create_backup: true, notify_team: false, rollback_on_failure: true }, anyone);
    await h.engine.projects.settled();
    const done = h.engine.projects.getRemediation(rem.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.steps[0]!.status, 'failed');
    assert.match(done.steps[0]!.reason!, /acmf-permission/);
    assert.deepEqual(done.steps.slice(1).map((x) => x.status), ['skipped', 'skipped', 'skipped', 'skipped']);
    assert.ok(events.some((e) => e.event === 'remediation.failed'));
  });

  it('a backup step waiting for an ACMF approval shows needs_approval, then goes on once approved', async () => {
    await h.close();
    h = await createHarness({ yaml: 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\nagents:\n  backup-ai:\n    acmf_mode: LEARNING\n', skills: [...capacitySkills, ...backupSkills] });
    const p = await h.engine.projects.create({ name: 'gated', workspace: ws }, anyone);
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
    const [pred] = await h.engine.projects.detect(p.id, anyone);
    const rem = await h.engine.projects.remediate(pred!.id, { create_backup: true, notify_team: false, rollback_on_failure: false }, anyone);
    const deadline = Date.now() + 20_000;
    while (h.engine.projects.getRemediation(rem.id).status !== 'needs_approval') {
      assert.ok(Date.now() < deadline, JSON.stringify(h.engine.projects.getRemediation(rem.id)));
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(h.engine.projects.getRemediation(rem.id).steps[0]!.status, 'needs_approval');
    const pending = h.engine.acmf.listApprovals({}).filter((a) => a.status === 'pending');
    assert.equal(pending.length, 1);
    await h.engine.acmf.decideApproval(pending[0]!.id, { approved: true, by: 'user:test' });
    await h.engine.projects.settled();
    const done = h.engine.projects.getRemediation(rem.id);
    assert.equal(done.steps[0]!.status, 'completed', JSON.stringify(done.steps[0]));
    assert.equal(done.status, 'not_applicable');
  });

  it('closeInterrupted ends a remediation a stop left in progress as failed', async () => {
    const p = await h.engine.projects.create({ name: 'x', workspace: null }, anyone);
    await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
    const [pred] = await h.engine.projects.detect(p.id, anyone);
    const rem = await h.engine.projects.remediate(pred!.id, { create_backup: false, notify_team: false, rollback_on_failure: false }, anyone);
    await h.engine.projects.settled();
    // Simulate a record a stopped server left behind.
    const repo = (h.engine.projects as unknown as { remediations: { update(id: string, p: object): Promise<unknown> } }).remediations;
    await repo.update(rem.id, { status: 'in_progress', completed_at: null });
    assert.deepEqual(await h.engine.projects.closeInterrupted(), [rem.id]);
    assert.equal(h.engine.projects.getRemediation(rem.id).status, 'failed');
  });

  it('observe-ai on the workspace metrics_path: a latency spike is an observed anomaly prediction, resolved once the data is clean', async () => {
    const p = await h.engine.projects.create({ name: 'api', workspace: ws }, anyone);
    await h.engine.projects.update(p.id, { metricsPath: 'metrics' });
    mkdirSync(path.join(ws, 'metrics'));
    const end = Date.now();
    // A steady latency with a little deterministic jitter, and one spike at sample 45.
    const values = Array.from({ length: 60 }, (_, i) => (i === 45 ? 900 : 100 + ((i * 7) % 5) - 2));
    const prom = (vs: number[]) => ['# TYPE api_latency_ms gauge', ...vs.map((v, i) => `api_latency_ms ${v} ${end - (59 - i) * MIN}`)].join('\n') + '\n';
    writeFileSync(path.join(ws, 'metrics', 'api.prom'), prom(values));
    const preds = await h.engine.projects.detect(p.id, anyone);
    const spike = preds.find((x) => x.detector === 'observe-ai:spike');
    assert.ok(spike, JSON.stringify(preds.map((x) => [x.detector, x.seriesKey])));
    assert.equal(spike.type, 'anomaly');
    assert.equal(spike.seriesKey, 'api_latency_ms');
    assert.equal(spike.detail.observed, true);
    assert.equal(spike.will_occur_at, new Date(end - 14 * MIN).toISOString());
    assert.equal(h.engine.executions.get(spike.executionId).request.agentId, 'observe-ai');
    writeFileSync(path.join(ws, 'metrics', 'api.prom'), prom(values.map((v) => (v === 900 ? 100 : v))));
    await h.engine.projects.detect(p.id, anyone);
    assert.equal(h.engine.projects.getPrediction(spike.id).status, 'resolved');
    assert.deepEqual(events.map((e) => e.event).filter((e) => e.startsWith('prediction.')), ['prediction.created', 'prediction.resolved']);
  });

  it('performance_gain comes from an optimize-ai benchmark with a baseline run on the workspace', async () => {
    const p = await h.engine.projects.create({ name: 'perf', workspace: ws }, anyone);
    assert.equal(h.engine.projects.metricsOf(p).metrics.performance_gain, null);
    const rec = await h.engine.executions.runAction('optimize-ai', 'benchmark', { source: ws, input: { command: 'sleep 0.02', baseline: 'sleep 0.3', runs: 6, warmup: 0 } }, anyone);
    await settled(h.engine, rec.id);
    await h.engine.projects.settled();
    const m = h.engine.projects.metricsOf(p);
    assert.ok(m.metrics.performance_gain !== null && m.metrics.performance_gain > 50, JSON.stringify(m));
    assert.match(m.basis.performance_gain, new RegExp(rec.id));
    // (The baseline sleeps 15x longer: process start-up noise on a loaded machine cannot hide the difference.)
    // Another workspace's project does not see it.
    const other = await h.engine.projects.create({ name: 'other', workspace: null }, anyone);
    assert.equal(h.engine.projects.metricsOf(other).metrics.performance_gain, null);
  });

  it('issues_prevented counts security findings a later scan of the workspace no longer found', async () => {
    const p = await h.engine.projects.create({ name: 'sec', workspace: ws }, anyone);
    const other = await h.engine.projects.create({ name: 'elsewhere', workspace: null }, anyone);
    assert.equal(h.engine.projects.metricsOf(p).metrics.issues_prevented, null);
    // An execution on the workspace (any agent), then the event service-events.ts publishes for a fixed finding.
    const rec = await h.engine.executions.runAction('capacity-ai', 'forecast', { source: ws, input: { series: [1, 2, 3, 4, 5, 6, 7, 8, 9] } }, anyone);
    await settled(h.engine, rec.id);
    for (const fp of ['fp-a', 'fp-b']) {
      h.engine.bus.publish('service.event', { event: 'security.vulnerability_fixed', executionId: rec.id, data: { execution_id: rec.id, finding: { fingerprint: fp } } });
    }
    await h.engine.projects.settled();
    const m = h.engine.projects.metricsOf(p);
    assert.equal(m.metrics.issues_prevented, 2, m.basis.issues_prevented);
    assert.match(m.basis.issues_prevented, /2 security finding/);
    assert.equal(h.engine.projects.metricsOf(other).metrics.issues_prevented, null);
  });

  it('limits must name a series; paging of the project list is stable', async () => {
    const p = await h.engine.projects.create({ name: 'a', workspace: null }, anyone);
    await assert.rejects(h.engine.projects.ingest(p.id, [], { nope: 1 }), (e: { code: string }) => e.code === 'ERR_VALIDATION');
    for (let i = 0; i < 4; i++) await h.engine.projects.create({ name: `p${i}`, workspace: null, ...(i % 2 ? { status: 'paused' as const } : {}) }, anyone);
    const all = h.engine.projects.list({ page: 1, limit: 100 }).items.map((x) => x.id);
    const page2 = h.engine.projects.list({ page: 2, limit: 2 });
    assert.equal(page2.total, 5);
    assert.deepEqual(page2.items.map((x) => x.id), all.slice(2, 4));
    assert.deepEqual(h.engine.projects.list({ page: 3, limit: 2 }).items.map((x) => x.id), all.slice(4));
    assert.equal(h.engine.projects.list({ page: 1, limit: 10, status: 'paused' }).total, 2);
  });
});

describe('ProjectService detection queue', function () {
  this.timeout(60_000);

  it('requests while a detection waits join it: one runs, one waits, the rest coalesce', async () => {
    const h = await createHarness({ yaml: YAML, skills: [...capacitySkills] });
    try {
      const p = await h.engine.projects.create({ name: 'busy', workspace: null }, anyone);
      await h.engine.projects.ingest(p.id, [{ key: 'disk_used_gb', rate: false, points: rising(Date.now()) }], { disk_used_gb: 250 });
      const first = h.engine.projects.detect(p.id, anyone);
      await new Promise((r) => setImmediate(r)); // the first has started
      const more = Array.from({ length: 5 }, () => h.engine.projects.detect(p.id, anyone));
      await Promise.all([first, ...more]);
      const forecasts = h.engine.executions.list({ kind: 'action' }).filter((e) => e.request.agentId === 'capacity-ai');
      assert.equal(forecasts.length, 2, 'the first ran, the second waited and the other four joined it');
    } finally {
      await h.engine.projects.settled();
      await h.close();
    }
  });
});
