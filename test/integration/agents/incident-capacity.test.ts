import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stop } from '../../support/server-process';
import type { Json } from '../../support/fleet-server';
import { startCoreLoopServer, type PooledClient } from '../core-loop/client';

const FIX = path.resolve(__dirname, '../../fixtures');
interface StepView { agentId: string; action: string; outcome: string | null; reason: string | null; summary: string | null; confidence: number | null }

/**
 * Issue 12, items 2 and 4 over HTTP on a real server (real workers, embedded skills, no model; every
 * agent ASSISTED, and these actions only read, so nobody is asked): incident-ai triage / postmortem and
 * capacity-ai forecast / recommend as direct actions (POST, and GET with the input in the query) and
 * through their verbs. The planted facts are found with their location; the clean twins raise nothing.
 */
describe('incident-ai and capacity-ai over HTTP', function () {
  this.timeout(60_000);
  let a: PooledClient;
  let stopServer: () => Promise<void>;
  let planted: string;
  let clean: string;
  let empty: string;

  function project(files: Record<string, string>): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-ops-'));
    writeFileSync(path.join(dir, 'package.json'), '{"name":"api","version":"1.0.0"}\n');
    for (const [to, from] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
      cpSync(path.join(FIX, from), path.join(dir, to));
    }
    return dir;
  }

  before(async () => {
    planted = project({ 'logs/app.jsonl': 'incident/incident.jsonl', 'metrics/disk.csv': 'capacity/linear.csv' });
    clean = project({ 'logs/app.jsonl': 'incident/clean.jsonl', 'metrics/disk.csv': 'capacity/flat.csv' });
    empty = project({});
    const s = await startCoreLoopServer({ keys: 2 });
    a = s.client;
    stopServer = () => stop(s.server);
  });
  after(async () => {
    await stopServer?.();
    for (const d of [planted, clean, empty]) if (d) rmSync(d, { recursive: true, force: true });
  });

  async function noApprovals(executionId: string): Promise<void> {
    const r = await a.get(`/v1/approvals?status=all&execution_id=${executionId}`);
    assert.equal((r.body['approvals'] as unknown[]).length, 0, r.text);
  }

  async function direct(agent: string, action: string, source: string, input: Json): Promise<Json> {
    const r = await a.post(`/api/agents/${agent}/${action}`, { prompt: `${agent} ${action}`, source, input });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    await noApprovals(r.body['executionId'] as string);
    return done;
  }

  async function verb(verbName: string, task: string, source: string, agent: string): Promise<StepView[]> {
    const r = await a.post('/v1/agents/tasks', { capabilities: ['OPERATE'], verb: verbName, task, source });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual(r.body['agentsAssigned'], [agent]);
    const done = await a.until(r.body['statusUrl'] as string, 30_000);
    await noApprovals(r.body['taskId'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    return (done['output'] as { steps: StepView[] }).steps;
  }

  const schemaGate = (done: Json) => (done['gates'] as Array<{ gate: string; status: string }>).find((g) => g.gate === 'artifact-schema')?.status;

  it('incident-ai triage: the planted 503 burst is SEV1 routed to p1, with its file and line; the clean twin is no incident', async () => {
    const routing = { p1: { severity: 'critical', class: 'outage' }, p3: { severity: 'warning' } };
    const done = await direct('incident-ai', 'triage', planted, { logs: 'logs/app.jsonl', routing, events: [{ time: '2026-03-12T09:32:00Z', event: 'deploy api v2.14.0' }] });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as { severity: string; level: string; reasons: Array<{ signal: string; source: string }>; timeline: Array<{ time: string; event: string; source: string }>; escalation: unknown[] };
    assert.deepEqual([out.severity, out.level], ['SEV1', 'p1']);
    assert.equal(out.reasons.find((r) => r.signal.startsWith('error rate'))!.source, 'logs/app.jsonl:806');
    assert.equal(out.timeline[0]!.event, 'deploy api v2.14.0');
    assert.ok(out.escalation.length >= 5);
    assert.equal(schemaGate(done), 'pass');
    const twin = await direct('incident-ai', 'triage', clean, { logs: 'logs/app.jsonl' });
    assert.equal(twin['status'], 'completed');
    assert.deepEqual([(twin['output'] as { severity: unknown }).severity, (twin['output'] as { reasons: unknown[] }).reasons], [null, []]);
  });

  it('incident-ai postmortem: the markdown document from the logs, root cause unknown with the deploy as candidate', async () => {
    const done = await direct('incident-ai', 'postmortem', planted, { logs: 'logs/app.jsonl', events: [{ time: '2026-03-12T09:32:00Z', event: 'deploy api v2.14.0' }] });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const out = done['output'] as { markdown: string; rootCause: { status: string; candidates: string[] } };
    assert.equal(out.rootCause.status, 'unknown');
    assert.match(out.rootCause.candidates[0]!, /^deploy api v2\.14\.0 at 2026-03-12T09:32:00\.000Z \(8 min before the first signal/);
    for (const h of ['## Summary', '## Impact', '## Timeline', '## Root cause', '## What went well', '## What went badly', '## Action items']) assert.ok(out.markdown.includes(h), h);
    assert.match(out.markdown, /logs\/app\.jsonl:806/);
  });

  it('incident-ai triage by GET with the signals in the query; nothing to triage and an outside path are needs_input', async () => {
    const r = await a.get('/api/agents/incident-ai/triage?errorRate=0.3&usersAffected=20000');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body['status'], 'completed', r.text.slice(0, 1200));
    assert.equal((r.body['output'] as { severity: string }).severity, 'SEV1');
    const none = await direct('incident-ai', 'triage', empty, {});
    assert.deepEqual([none['status'], none['outcome']], ['failed', 'needs_input']);
    assert.match(String(none['reason']), /nothing to triage: no signal in the request/);
    const outside = await direct('incident-ai', 'triage', empty, { logs: path.join(planted, 'logs/app.jsonl') });
    assert.equal(outside['outcome'], 'needs_input');
    assert.match(String(outside['reason']), /input\.logs: .*logs\/app\.jsonl is outside the workspace; not read$/);
  });

  it('the incident verb triages the service repository\'s logs/ (SEV1); on the clean twin it finds no incident', async () => {
    const steps = await verb('incident', 'incident: the api is failing', planted, 'incident-ai');
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['incident-ai', 'triage', 'completed']]);
    assert.match(steps[0]!.summary ?? '', /^SEV1: /);
    const twin = await verb('incident', 'incident: anything wrong?', clean, 'incident-ai');
    assert.match(twin[0]!.summary ?? '', /^no incident: /);
  });

  it('capacity-ai forecast: the linear disk series saturates within 3 hours of 2026-01-13T12:00Z; the flat twin does not', async () => {
    const done = await direct('capacity-ai', 'forecast', planted, { metrics: 'metrics/disk.csv', limit: 200 });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const f = (done['output'] as { forecasts: Array<{ series: string; source: string; chosen: string; saturation: { status: string; at: string } }> }).forecasts[0]!;
    assert.deepEqual([f.series, f.source, f.chosen, f.saturation.status], ['disk_used_gb', 'metrics/disk.csv', 'linear', 'reached']);
    assert.ok(Math.abs(Date.parse(f.saturation.at) - Date.parse('2026-01-13T12:00:00Z')) <= 3 * 3_600_000, f.saturation.at);
    assert.equal(schemaGate(done), 'pass');
    const twin = await direct('capacity-ai', 'forecast', clean, { metrics: 'metrics/disk.csv', limit: 200 });
    assert.equal((twin['output'] as { forecasts: Array<{ saturation: { status: string } }> }).forecasts[0]!.saturation.status, 'not within the search');
  });

  it('capacity-ai recommend: scale with the arithmetic shown; the flat twin needs no scaling; GET forecast with the series in the query', async () => {
    const done = await direct('capacity-ai', 'recommend', planted, { metrics: 'metrics/disk.csv', limit: 200, headroom: 0.8, leadTime: '1d' });
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 1500));
    const r = (done['output'] as { recommendations: Array<{ action: string; arithmetic: string[]; neededCapacity: number }> }).recommendations[0]!;
    assert.equal(r.action, 'scale now', 'the upper bound crosses 160 within the day of lead time');
    assert.ok(r.neededCapacity > 200);
    assert.match(r.arithmetic.join('\n'), /capacity needed = peak \/ target utilisation/);
    const twin = await direct('capacity-ai', 'recommend', clean, { metrics: 'metrics/disk.csv', limit: 200 });
    assert.equal((twin['output'] as { recommendations: Array<{ action: string }> }).recommendations[0]!.action, 'no scaling needed');
    const series = encodeURIComponent(JSON.stringify(Array.from({ length: 20 }, (_, i) => [Date.UTC(2026, 0, 1 + i), 10 + 2 * i])));
    const g = await a.get(`/api/agents/capacity-ai/forecast?series=${series}&limit=100`);
    assert.equal(g.status, 200, g.text);
    const gf = (g.body['output'] as { forecasts: Array<{ saturation: { at: string } }> }).forecasts[0]!;
    assert.equal(gf.saturation.at, '2026-02-15T00:00:00.000Z', '10 + 2 i reaches 100 at i = 45');
  });

  it('one execution chains them: observe-ai analyze -> incident-ai triage -> postmortem, capacity-ai forecast -> recommend, each reading the step before', async () => {
    const r = await a.post('/v1/customer/workflow', {
      name: 'ops chain', pattern: 'sequential',
      steps: [
        { id: 'observe', agent: 'observe-ai', action: 'analyze', input: { logs: 'logs/app.jsonl' } },
        { id: 'triage', agent: 'incident-ai', action: 'triage', depends_on: ['observe'], input: { routing: { p1: { severity: 'critical' } } } },
        { id: 'pm', agent: 'incident-ai', action: 'postmortem', depends_on: ['triage'] },
        { id: 'fc', agent: 'capacity-ai', action: 'forecast', depends_on: ['pm'], input: { metrics: 'metrics/disk.csv', limit: 200 } },
        { id: 'rec', agent: 'capacity-ai', action: 'recommend', depends_on: ['fc'], input: { headroom: 0.9, leadTime: '6h' } },
      ],
      input: { prompt: 'the api is failing and the disk fills up', source: planted },
    });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, 45_000);
    await noApprovals(r.body['workflowId'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 2000));
    const details = await a.get(`/v1/customer/workflow/${r.body['workflowId'] as string}`);
    const steps = ((details.body['execution'] as Json)['steps'] ?? (details.body['execution'] as { output: { steps: StepView[] } }).output.steps) as StepView[];
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [
      ['observe-ai', 'analyze', 'completed'], ['incident-ai', 'triage', 'completed'], ['incident-ai', 'postmortem', 'completed'],
      ['capacity-ai', 'forecast', 'completed'], ['capacity-ai', 'recommend', 'completed'],
    ]);
    assert.match(steps[1]!.summary ?? '', /^SEV1 \(routing level p1\): /);
    assert.match(steps[2]!.summary ?? '', /^postmortem "SEV1 on 2026-03-12: /);
    assert.match(steps[4]!.summary ?? '', /^scale /);
  });

  it('the capacity verb forecasts the repository\'s metrics/ (no limit given: said so); a repository without metrics is not applicable', async () => {
    const steps = await verb('capacity', 'capacity: disk usage', planted, 'capacity-ai');
    assert.deepEqual(steps.map((s) => [s.agentId, s.action, s.outcome]), [['capacity-ai', 'forecast', 'completed']]);
    assert.match(steps[0]!.summary ?? '', /disk_used_gb: linear .*no limit given/);
    const none = await verb('capacity', 'capacity: anything', empty, 'capacity-ai');
    assert.equal(none[0]!.outcome, 'not_applicable');
    assert.match(none[0]!.reason ?? '', /no metric series to forecast: looked for input\.series, input\.metrics, metrics\/, \*\.prom/);
  });
});
