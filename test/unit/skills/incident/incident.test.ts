import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import { postmortemSkill, triageSkill, routeOf, type PostmortemData, type TriageData } from '../../../../server/src/skills/incident/index';
import { analyzeSkill } from '../../../../server/src/skills/observe/index';
import type { StepSummary } from '../../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures');
const dirs: string[] = [];
const ROUTING = { p1: { severity: 'critical', class: 'outage' }, p3: { severity: 'warning', class: 'degradation' } };
const DEPLOY = { time: '2026-03-12T09:32:00Z', event: 'deploy api v2.14.0', source: 'ci' };

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-incident-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"api","version":"1.0.0"}\n');
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(path.join(FIX, from), path.join(dir, to));
  }
  return dir;
}

const run = (action: 'triage' | 'postmortem', ws: string | undefined, input: Record<string, unknown> = {}, previous: StepSummary[] = []) => {
  const c = skillContext({ agentId: 'incident-ai', action, workspace: ws, input });
  c.request.previous = previous;
  return runSkill(action === 'triage' ? triageSkill : postmortemSkill, c);
};
const summaryOf = (step: number, agentId: string, action: string, a: { confidence: number; summary: string; data: unknown }): StepSummary => ({ step, agentId, action, passed: true, confidence: a.confidence, summary: a.summary, data: a.data });

describe('incident-ai', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('triage and postmortem are embedded skills', () => {
    assert.ok(skills.includes(triageSkill));
    assert.ok(skills.includes(postmortemSkill));
  });

  describe('triage', () => {
    it('logs with an incident: SEV1 routed to p1, the reasons with file and line, the escalation path and an ordered timeline', async () => {
      const ws = workspace({ 'logs/app.jsonl': 'incident/incident.jsonl' });
      const { proposed, artifact } = await run('triage', ws, { logs: 'logs/app.jsonl', events: [DEPLOY], routing: ROUTING, owner: 'team-api' });
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => [p.kind, p.paths]), [['read', ['logs/app.jsonl']], ['analyze', undefined]]);
      const d = artifact.data as TriageData;
      assert.equal(d.severity, 'SEV1');
      assert.equal(d.level, 'p1');
      assert.deepEqual(d.routing, { level: 'p1', severity: 'critical', class: 'outage', matched: 'exact', from: 'input.routing' });
      const er = d.reasons.find((r) => r.signal.startsWith('error rate'))!;
      assert.deepEqual([er.level, er.source, er.threshold], ['SEV1', 'logs/app.jsonl:806', '>= 25%']);
      assert.match(er.measured, /^40% \(40\/100, 2026-03-12T09:40:00\.000Z \.\. 2026-03-12T09:45:00\.000Z\)$/);
      assert.ok(d.reasons.some((r) => r.signal === 'slo-burn-availability of logs/app.jsonl' && r.level === 'SEV1'), 'observe-ai\'s SLO burn over the same logs');
      assert.deepEqual(d.escalation.slice(0, 2).map((e) => e.who), ['primary on-call of team-api', 'incident commander']);
      assert.match(d.escalation[0]!.action, /routing level p1 \(critical, outage\)/);
      const times = d.timeline.map((e) => e.time);
      assert.deepEqual(times, [...times].sort(), 'ordered by time');
      assert.deepEqual([d.timeline[0]!.event, d.timeline[0]!.source], ['deploy api v2.14.0', 'ci']);
      assert.ok(d.timeline.some((e) => e.source === 'logs/app.jsonl:806' && e.event.includes('upstream timeout: db-primary 10.0.3.7:5432')));
      const last = d.timeline.find((e) => e.event === 'last failed request or error record')!;
      assert.equal(last.time, '2026-03-12T09:54:48.000Z');
      assert.equal(last.source, 'logs/app.jsonl:1103');
      assert.deepEqual([d.impact.start, d.impact.end, d.impact.durationMinutes, d.impact.failedRequests, d.impact.requests], ['2026-03-12T09:40:00.000Z', '2026-03-12T09:55:00.000Z', 15, 120, 1800]);
      assert.ok(artifact.confidence >= 0.75, String(artifact.confidence));
      assert.deepEqual(artifact.findingsAfter, { count: 1, maxSeverity: 4 });
      assert.match(artifact.summary, /^SEV1 \(routing level p1\): error rate \(worst 5 minutes of the logs\) 40%/);
      assert.equal(triageSkill.outputSchema!.safeParse(d).success, true);
    });

    it('the clean twin: one stray 500 is no incident; completed, nothing raised, says what was examined', async () => {
      const ws = workspace({ 'logs/app.jsonl': 'incident/clean.jsonl' });
      const { artifact } = await run('triage', ws, { logs: 'logs/app.jsonl' });
      const d = artifact.data as TriageData;
      assert.equal(artifact.unable, undefined);
      assert.equal(d.severity, null);
      assert.deepEqual(d.reasons, []);
      assert.deepEqual(d.escalation, []);
      assert.equal(d.logs!.errors, 1);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
      assert.equal(artifact.summary, 'no incident: nothing meets a severity criterion; examined input.logs: logs/app.jsonl (json-lines, 1809 lines); 1800 requests, 1 5xx, 1 error-level records');
      assert.ok(artifact.confidence >= 0.75);
    });

    it('from a previous observe-ai analyze step: its anomalies with series, window and line make the severity and the timeline', async () => {
      const ws = workspace({ 'metrics/api.prom': 'observe/anomalies.prom' });
      const observed = await runSkill(analyzeSkill, skillContext({ agentId: 'observe-ai', action: 'analyze', workspace: ws }));
      const { artifact } = await run('triage', ws, {}, [summaryOf(0, 'observe-ai', 'analyze', observed.artifact)]);
      const d = artifact.data as TriageData;
      assert.equal(d.severity, 'SEV2', 'the spike is a high anomaly');
      assert.deepEqual(d.sources, ['step 0 observe-ai analyze']);
      const spike = d.timeline.find((e) => e.kind === 'signal-start' && e.event.includes('spike'))!;
      assert.equal(spike.time, '2026-03-10T11:10:00.000Z');
      assert.match(spike.source, /^step 0 observe-ai analyze \(metrics\/api\.prom:\d+\)$/);
      assert.equal(d.level, 'SEV2', 'no routing given: the level is the SEV');
    });

    it('the incident window is that of the signals that set the severity: a milder anomaly days before stays in the timeline, not in the impact', async () => {
      const ws = workspace({ 'logs/app.jsonl': 'incident/incident.jsonl' });
      const mild = { kind: 'level-shift', series: 'disk_used_gb', name: 'disk_used_gb', labels: {}, file: 'metrics/disk.csv', start: '2026-03-01T00:00:00.000Z', end: '2026-03-01T06:00:00.000Z', value: 60, baseline: 50, magnitude: { shiftSigma: 4 }, method: 'two-window median shift', severity: 'low', lines: [12] };
      const prev: StepSummary = { step: 0, agentId: 'observe-ai', action: 'analyze', passed: true, confidence: 0.9, summary: '1 anomaly', data: { anomalies: [mild], examined: { series: 1, points: 200, logLines: 0 } } };
      const { artifact } = await run('triage', ws, { logs: 'logs/app.jsonl' }, [prev]);
      const d = artifact.data as TriageData;
      assert.equal(d.severity, 'SEV1');
      assert.deepEqual([d.impact.start, d.impact.end], ['2026-03-12T09:40:00.000Z', '2026-03-12T09:55:00.000Z']);
      assert.deepEqual([d.timeline[0]!.time, d.timeline[0]!.source], ['2026-03-01T00:00:00.000Z', 'step 0 observe-ai analyze (metrics/disk.csv:12)']);
      assert.ok(d.reasons.some((r) => r.level === 'SEV4' && r.signal === 'level-shift of disk_used_gb'));
    });

    it('numbers stated in the request: error rate, users affected of a total, SLO burn; routing to the nearest more severe level', async () => {
      const { artifact } = await run('triage', undefined, { errorRate: '6%', usersAffected: 1500, totalUsers: 10000, sloBurn: 3, routing: ROUTING });
      const d = artifact.data as TriageData;
      assert.equal(d.severity, 'SEV2');
      assert.deepEqual(d.reasons.map((r) => [r.level, r.signal, r.measured]), [['SEV2', 'error rate', '6%'], ['SEV2', 'users affected', '1500 (15%)'], ['SEV3', 'SLO burn', '3x']]);
      assert.deepEqual(d.routing && [d.routing.level, d.routing.matched], ['p1', 'more severe'], 'over-page rather than under-page');
      assert.equal(artifact.confidence, 0.8, 'stated, not measured');
      assert.deepEqual(routeOf('SEV4', ROUTING), { level: 'p3', severity: 'warning', class: 'degradation', matched: 'more severe', from: 'input.routing' });
    });

    it('the GET form\'s strings: numbers, and events and routing as JSON text, are read like their JSON', async () => {
      const { artifact } = await run('triage', undefined, { errorRate: '0.02', sloBurn: '7', events: JSON.stringify([DEPLOY]), routing: JSON.stringify(ROUTING) });
      const d = artifact.data as TriageData;
      assert.deepEqual([d.severity, d.level, d.timeline[0]!.event], ['SEV2', 'p1', 'deploy api v2.14.0']);
    });

    it('with no input and no previous step it analyses the workspace\'s logs/ like observe-ai', async () => {
      const ws = workspace({ 'logs/app.jsonl': 'incident/incident.jsonl' });
      const { artifact } = await run('triage', ws);
      const d = artifact.data as TriageData;
      assert.equal(d.severity, 'SEV1');
      assert.deepEqual(d.sources, ['observe-ai analysis of the workspace']);
    });

    it('after an observe-ai step that found no data (the OPERATE workflow on a fresh project) triage is not applicable, not needs_input', async () => {
      const ws = workspace();
      const observed = await runSkill(analyzeSkill, skillContext({ agentId: 'observe-ai', action: 'analyze', workspace: ws }));
      assert.ok(observed.artifact.notApplicable);
      const { artifact } = await run('triage', ws, {}, [{ ...summaryOf(0, 'observe-ai', 'analyze', observed.artifact), data: null }]);
      assert.equal(artifact.unable, undefined);
      assert.equal(artifact.notApplicable, 'nothing to triage: observe-ai (step 0) found no data (no metrics or logs to analyze: looked for input.metrics, input.logs, metrics/, logs/, *.prom, *.log) and the request gives no signal');
    });

    it('nothing to triage is needs_input naming signals; bad input names the field, the file and the line', async () => {
      const none = await run('triage', workspace());
      assert.equal(none.artifact.needsInput?.field, 'signals');
      assert.match(none.artifact.unable ?? '', /^nothing to triage: no signal in the request/);
      const ws = workspace({ 'logs/odd.log': 'observe/unknown.log' });
      const odd = await run('triage', ws, { logs: 'logs/odd.log' });
      assert.equal(odd.artifact.needsInput?.field, 'logs');
      assert.match(odd.artifact.unable ?? '', /^logs\/odd\.log:1: /);
      const out = await run('triage', ws, { logs: '/etc/passwd' });
      assert.equal(out.artifact.unable, 'input.logs: /etc/passwd is outside the workspace; not read');
      assert.equal((await run('triage', ws, { errorRate: 'lots' })).artifact.needsInput?.field, 'errorRate');
      const route = await run('triage', ws, { errorRate: 0.5, routing: { p1: { severity: 'urgent' } } });
      assert.deepEqual([route.artifact.needsInput?.field, route.artifact.unable], ['routing', 'input.routing.p1.severity must be one of critical, error, warning, info']);
    });
  });

  describe('postmortem', () => {
    it('from the previous triage: a markdown document with every section, the root cause honestly unknown and the preceding deploy as a candidate', async () => {
      const ws = workspace({ 'logs/app.jsonl': 'incident/incident.jsonl' });
      const tri = await run('triage', ws, { logs: 'logs/app.jsonl', events: [DEPLOY], routing: ROUTING });
      const { proposed, artifact } = await run('postmortem', ws, {}, [summaryOf(0, 'incident-ai', 'triage', tri.artifact)]);
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => p.kind), ['analyze']);
      const d = artifact.data as PostmortemData;
      const md = artifact.text ?? '';
      for (const h of ['# Postmortem: ', '## Summary', '## Impact', '## Timeline', '## Root cause', '## What went well', '## What went badly', '## Action items']) assert.ok(md.includes(h), h);
      assert.equal(d.rootCause.status, 'unknown');
      assert.match(md, /## Root cause\n\nUnknown\. /);
      assert.deepEqual(d.rootCause.candidates, ['deploy api v2.14.0 at 2026-03-12T09:32:00.000Z (8 min before the first signal; ci)']);
      assert.match(md, /\| 2026-03-12T09:40:00\.000Z \| first "upstream timeout: db-primary 10\.0\.3\.7:5432 after 5000 ms" \(120 like it in all\) \| logs\/app\.jsonl:806 \|/);
      assert.match(md, /\| failed requests \| 120 of 1800 \|/);
      assert.ok(d.actionItems.some((i) => i.item.startsWith('Review the change "deploy api v2.14.0"')));
      assert.equal(d.from, 'step 0 (incident-ai triage)');
      assert.equal(postmortemSkill.outputSchema!.safeParse(d).success, true);
      assert.ok(artifact.confidence >= 0.75);
    });

    it('a stated root cause is quoted as stated; a debug-ai step is a suggestion; input.triage works alone', async () => {
      const tri = await run('triage', undefined, { errorRate: 0.3 });
      const stated = await run('postmortem', undefined, { triage: tri.artifact.data, rootCause: 'connection pool exhausted' });
      assert.equal((stated.artifact.data as PostmortemData).rootCause.text, 'connection pool exhausted (as stated in the request)');
      assert.equal((stated.artifact.data as PostmortemData).from, 'input.triage');
      const debug: StepSummary = { step: 1, agentId: 'debug-ai', action: 'diagnose', passed: true, confidence: 0.8, summary: 'pool size 10 reached at 09:40', data: null };
      const sug = await run('postmortem', undefined, {}, [summaryOf(0, 'incident-ai', 'triage', tri.artifact), debug]);
      assert.equal((sug.artifact.data as PostmortemData).rootCause.status, 'suggested');
      assert.match((sug.artifact.data as PostmortemData).rootCause.text, /^suggested by debug-ai \(step 1, confidence 0\.8\): pool size 10/);
    });

    it('no triage anywhere is needs_input naming triage; a triage without an incident is not applicable; a malformed triage is refused', async () => {
      assert.equal((await run('postmortem', workspace())).artifact.needsInput?.field, 'triage');
      const clean = await run('triage', undefined, { errorRate: 0.001 });
      const na = await run('postmortem', undefined, {}, [summaryOf(0, 'incident-ai', 'triage', clean.artifact)]);
      assert.match(na.artifact.notApplicable ?? '', /^no incident to write a postmortem of/);
      const bad = await run('postmortem', undefined, { triage: { severity: 'SEV9' } });
      assert.equal(bad.artifact.needsInput?.field, 'triage');
    });
  });
});
