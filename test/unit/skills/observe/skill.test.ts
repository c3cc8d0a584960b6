import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import { alertsSkill, analyzeSkill, ingest, readLines, type AlertsData, type AnalyzeData } from '../../../../server/src/skills/observe/index';
import { urlAllowed } from '../../../../server/src/skills/observe/ingest';
import { WorkspaceFiles } from '../../../../server/src/skills/workspace/files';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/observe');
const dirs: string[] = [];
const T0 = Date.UTC(2026, 2, 10, 10, 0, 0);
const at = (min: number) => new Date(T0 + min * 60_000).toISOString();

/** A fresh workspace holding the named fixtures at the given paths. */
function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-observe-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"svc","version":"1.0.0"}\n');
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(path.join(FIX, from), path.join(dir, to));
  }
  return dir;
}

const run = (action: 'analyze' | 'alerts', ws: string, input: Record<string, unknown> = {}) =>
  runSkill(action === 'analyze' ? analyzeSkill : alertsSkill, skillContext({ agentId: 'observe-ai', action, workspace: ws, input }));

describe('observe-ai skills', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('are the embedded skills of observe-ai analyze and alerts', () => {
    assert.ok(skills.includes(analyzeSkill));
    assert.ok(skills.includes(alertsSkill));
  });

  describe('analyze', () => {
    it('reads metrics/ and logs/ by convention, reports the planted anomalies and the SLO burn, proposes only reads, and is confident', async () => {
      const ws = workspace({ 'metrics/api.prom': 'anomalies.prom', 'logs/access.log': 'access.log' });
      const { proposed, artifact } = await run('analyze', ws);
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.equal(artifact.notApplicable, undefined);
      assert.deepEqual(proposed.map((p) => [p.kind, p.paths]), [['read_metrics', ['metrics/api.prom']], ['read', ['logs/access.log']]]);
      const d = artifact.data as AnalyzeData;
      assert.deepEqual(d.anomalies.map((a) => [a.kind, a.start]), [['slo-burn-availability', at(40)], ['spike', at(70)], ['dip', at(140)]]);
      assert.equal(d.examined.series, 2);
      assert.equal(d.examined.points, 360);
      assert.equal(d.examined.logLines, 2700);
      assert.equal(d.examined.requests, 2700);
      assert.deepEqual(d.examined.timeRange, { start: at(0), end: at(179) });
      assert.ok(artifact.confidence >= 0.75, String(artifact.confidence));
      assert.deepEqual(artifact.findingsAfter, { count: 3, maxSeverity: 4 });
      assert.match(artifact.summary, /^3 anomalies: critical slo-burn-availability of logs\/access\.log at 2026-03-10T10:40:00\.000Z/);
      assert.match(artifact.text ?? '', /\| critical \| slo-burn-availability \|/);
      assert.match(d.networkIngestion, /no URL was named/);
      assert.equal(analyzeSkill.outputSchema!.safeParse(d).success, true, 'the data matches the declared schema (artifact-schema gate)');
      const broken = { ...d, anomalies: [{ ...d.anomalies[0]!, method: '' }] };
      assert.equal(analyzeSkill.outputSchema!.safeParse(broken).success, false, 'an anomaly without its method does not');
    });

    it('the clean twin: nothing found is completed and says what was examined', async () => {
      const ws = workspace({ 'metrics/api.prom': 'clean.prom' });
      const { artifact } = await run('analyze', ws);
      assert.equal(artifact.unable, undefined);
      assert.deepEqual((artifact.data as AnalyzeData).anomalies, []);
      assert.equal(artifact.summary, `nothing found: examined 2 series (360 points, 2 judged) in 1 file(s), ${at(0)} .. ${at(179)}`);
      assert.ok(artifact.confidence >= 0.75);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    });

    it('input.metrics and input.logs name files or folders; input.slo changes the objective', async () => {
      const ws = workspace({ 'data/m/a.csv': 'latency-wide.csv', 'data/app.jsonl': 'app.jsonl', 'metrics/ignored.prom': 'anomalies.prom' });
      const { artifact } = await run('analyze', ws, { metrics: 'data/m', logs: ['data/app.jsonl'], slo: { latencyMs: 1000 } });
      const d = artifact.data as AnalyzeData;
      assert.deepEqual(d.files.map((f) => [f.file, f.format]), [['data/m/a.csv', 'csv'], ['data/app.jsonl', 'json-lines']]);
      assert.deepEqual(d.origin, { metrics: 'input.metrics', logs: 'input.logs' });
      assert.deepEqual(d.anomalies, [], 'under a 1 s objective the 900 ms hour does not burn');
      const strict = await run('analyze', ws, { metrics: 'data/m', logs: 'data/app.jsonl' });
      assert.deepEqual((strict.artifact.data as AnalyzeData).anomalies.map((a) => a.kind), ['slo-burn-latency']);
    });

    it('a syslog in logs/ is judged for error bursts: the burst is reported and the examined line counts error lines', async () => {
      const { artifact } = await run('analyze', workspace({ 'logs/syslog': 'syslog-burst.log' }));
      const d = artifact.data as AnalyzeData;
      assert.deepEqual(d.anomalies.map((a) => [a.kind, a.start, a.file]), [['error-burst', at(60), 'logs/syslog']]);
      assert.equal(d.examined.errorLines, 96, '90 in the burst and 6 every 20 minutes');
      assert.match(artifact.summary, /^1 anomaly: high error-burst of error-level lines of logs\/syslog at 2026-03-10T11:00:00\.000Z \.\. 2026-03-10T11:05:00\.000Z: 18 error lines in a minute/);
      assert.ok(artifact.confidence >= 0.75);
      assert.equal(analyzeSkill.outputSchema!.safeParse(d).success, true);
    });

    it('partial parses lower the confidence and name the skipped lines', async () => {
      const ws = workspace({ 'metrics/api.prom': 'clean.prom' });
      const full = (await run('analyze', ws)).artifact.confidence;
      writeFileSync(path.join(ws, 'metrics', 'api.prom'), `${readFileSync(path.join(FIX, 'clean.prom'), 'utf8')}${'garbage here\n'.repeat(90)}`);
      const { artifact } = await run('analyze', ws);
      assert.ok(artifact.confidence < full, `${artifact.confidence} < ${full}`);
      assert.equal((artifact.data as AnalyzeData).files[0]!.skippedCount, 90);
      assert.match(artifact.summary, /90 line\(s\) skipped/);
    });

    it('no data at all is not applicable, naming where it looked', async () => {
      const { artifact, proposed } = await run('analyze', workspace());
      assert.equal(artifact.notApplicable, 'no metrics or logs to analyze: looked for input.metrics, input.logs, metrics/, logs/, *.prom, *.log');
      assert.deepEqual(proposed, []);
    });

    it('a path outside the workspace is refused by name, never read: needs input', async () => {
      const outside = mkdtempSync(path.join(tmpdir(), 'cadre-observe-outside-'));
      dirs.push(outside);
      copyFileSync(path.join(FIX, 'anomalies.prom'), path.join(outside, 'secret.prom'));
      const ws = workspace();
      const { artifact, evidence } = await run('analyze', ws, { metrics: path.join(outside, 'secret.prom') });
      assert.equal(artifact.unable, `input.metrics: ${path.join(outside, 'secret.prom')} is outside the workspace; not read`);
      assert.deepEqual(artifact.needsInput, { field: 'metrics' });
      assert.deepEqual(evidence.pathsRead, []);
      const traversal = await run('analyze', ws, { logs: '../../etc/passwd' });
      assert.match(traversal.artifact.unable ?? '', /^input\.logs: \.\.\/\.\.\/etc\/passwd is outside the workspace; not read$/);
      // A symlink inside metrics/ that leads outside is not followed either.
      mkdirSync(path.join(ws, 'metrics'));
      symlinkSync(path.join(outside, 'secret.prom'), path.join(ws, 'metrics', 'link.prom'));
      const linked = await run('analyze', ws);
      assert.equal(linked.artifact.notApplicable?.startsWith('no metrics or logs to analyze'), true, JSON.stringify(linked.artifact.summary));
      assert.ok(linked.evidence.constraints.some((c) => /metrics\/link\.prom: outside the workspace, not read/.test(c)), JSON.stringify(linked.evidence.constraints));
    });

    it('an unparseable file is needs input naming the file and the line', async () => {
      const ws = workspace({ 'metrics/series.json': 'bad-series.json' });
      const { artifact } = await run('analyze', ws);
      assert.equal(artifact.unable, 'metrics/series.json:7: the point\'s timestamp is not ISO 8601 or epoch seconds/milliseconds');
      assert.deepEqual(artifact.needsInput, { field: 'metrics' });
      const logs = await run('analyze', workspace({ 'logs/npm.log': 'unknown.log' }));
      assert.match(logs.artifact.unable ?? '', /^logs\/npm\.log:1: unknown log format/);
      assert.deepEqual(logs.artifact.needsInput, { field: 'logs' });
    });

    it('a stray *.log or *.prom in an unknown format outside logs/ and metrics/ is noted, not blocking', async () => {
      const ws = workspace({ 'npm-debug.log': 'unknown.log', 'test/fixtures/broken.prom': 'unknown.log', 'metrics/api.prom': 'clean.prom' });
      const { artifact } = await run('analyze', ws);
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual((artifact.data as AnalyzeData).ignored, [
        'test/fixtures/broken.prom:1: no sample could be read (prometheus): not a sample: a metric name was expected (not read as metrics)',
        'npm-debug.log:1: unknown log format (JSON lines, logfmt, nginx/Apache access log or syslog RFC 5424/3164 were expected) (not read as logs)',
      ]);
    });

    it('a URL the install does not list is not fetched: needs input naming observe.urls', async () => {
      const { artifact } = await run('analyze', workspace(), { metrics: 'http://127.0.0.1:9090/metrics' });
      assert.match(artifact.unable ?? '', /is a URL this install does not allow: list its prefix in observe\.urls/);
      assert.deepEqual(artifact.needsInput, { field: 'metrics' });
      const own = await run('analyze', workspace(), { metrics: 'http://127.0.0.1:9090/metrics', settings: undefined, urls: ['http://127.0.0.1:9090/'] });
      assert.match(own.artifact.unable ?? '', /does not allow/, 'a request cannot allow its own URL (only input.settings, which the engine sets)');
    });

    it('an allowed URL is proposed as http_request and not fetched when ACMF did not allow it', async () => {
      const ws = workspace();
      const ctx = skillContext({ agentId: 'observe-ai', action: 'analyze', workspace: ws, input: { metrics: 'http://127.0.0.1:1/metrics/x', settings: { urls: ['http://127.0.0.1:1/metrics'] } }, allowed: (k) => k !== 'http_request' });
      const evidence = await analyzeSkill.research(ctx);
      assert.deepEqual((await analyzeSkill.propose!(ctx, evidence)).map((x) => x.kind), ['http_request']);
      const artifact = await analyzeSkill.generate(ctx, evidence);
      assert.match(artifact.unable ?? '', /needs http_request, which ACMF did not allow/);
    });

    it('matches allowed URL prefixes as parsed URLs: same origin, path under the prefix, no credentials', () => {
      const allow = ['http://prom.local:9090/api/v1/', 'https://metrics.example.com'];
      const table: Array<[string, boolean]> = [
        ['http://prom.local:9090/api/v1/query?x=1', true], ['http://prom.local:9090/api/v1', false], ['http://prom.local:9090/api/v10', false],
        ['http://prom.local:9091/api/v1/query', false], ['https://prom.local:9090/api/v1/query', false], ['http://prom.local:9090/api/v1/../../admin', false],
        ['https://metrics.example.com/anything', true], ['https://metrics.example.com.evil.net/', false], ['https://user:pw@metrics.example.com/', false], ['not a url', false],
      ];
      for (const [url, ok] of table) assert.equal(urlAllowed(url, allow), ok, url);
    });
  });

  describe('reading logs in chunks', () => {
    it('gives every line once, with its number, across chunk boundaries and multi-byte characters; a runaway line is cut', () => {
      const ws = workspace();
      const lines = Array.from({ length: 500 }, (_, i) => `line ${i + 1} ${'é€'.repeat(i % 7)} ${'x'.repeat(i % 13)}`);
      writeFileSync(path.join(ws, 'a.log'), `${lines.join('\r\n')}\n${'y'.repeat(300)}\nlast`);
      const got: Array<[string, number]> = [];
      const files = new WorkspaceFiles(ws);
      const r = readLines(files, 'a.log', (l, n) => got.push([l, n]), { chunkBytes: 7, maxLineBytes: 100 });
      assert.equal(r.ok, true);
      assert.deepEqual(got.slice(0, 500).map(([l, n]) => [l.replace(/\r$/, ''), n]), lines.map((l, i) => [l, i + 1]));
      assert.deepEqual(got.slice(500).map(([l, n]) => [l.length, n]), [[100, 501], [4, 502]], 'the 300-byte line is cut at 100 and counted once');
      assert.equal(files.read.size, 1, 'recorded as read');
      assert.equal((readLines(files, '../outside.log', () => assert.fail('nothing is read outside')) as { reason: string }).reason, 'outside the workspace');
    });

    it('a cancelled step stops reading (the signal\'s reason is thrown)', () => {
      const ws = workspace({ 'logs/access.log': 'access.log' });
      const ac = new AbortController();
      ac.abort(new Error('cancelled by the user'));
      let lines = 0;
      assert.throws(() => readLines(new WorkspaceFiles(ws), 'logs/access.log', () => lines++, { signal: ac.signal }), /cancelled by the user/);
      assert.equal(lines, 0);
      assert.throws(() => ingest(ws, {}, ac.signal), /cancelled by the user/);
    });

    it('logs are streamed into a per-minute aggregate: the burst is found with its window, file and first line', async () => {
      const ws = workspace({ 'logs/access.log': 'access.log' });
      const { artifact } = await run('analyze', ws);
      const d = artifact.data as AnalyzeData;
      assert.equal(d.examined.logRecords, 2700);
      assert.deepEqual(d.anomalies.map((a) => [a.kind, a.start, a.end, a.file]), [['slo-burn-availability', at(40), at(50), 'logs/access.log']]);
      assert.equal(d.anomalies[0]!.lines[0], 1201, 'the first line of 10:40 (40 minutes of 30 requests before it)');
    });
  });

  describe('alerts', () => {
    const rules = [
      { name: 'LatencyHigh', expr: { metric: 'api_latency_ms', labels: { job: 'api' }, op: '>', threshold: 130 }, severity: 'page' },
      { name: 'LatencyLow', expr: { metric: 'api_latency_ms', op: '<', threshold: 70, for: '5m' }, severity: 'ticket' },
      { name: 'NoSuchMetric', expr: { metric: 'nope', op: '>', threshold: 0 }, severity: 'info' },
    ];

    it('evaluates input.rules over the series: firing with the points that fired it, not firing otherwise', async () => {
      const ws = workspace({ 'metrics/api.prom': 'anomalies.prom' });
      const { artifact, proposed } = await run('alerts', ws, { rules });
      assert.deepEqual(proposed.map((p) => p.kind), ['read_metrics']);
      const d = artifact.data as AlertsData;
      assert.deepEqual(d.rules.map((r) => [r.rule, r.seriesMatched, r.episodes.length]), [['LatencyHigh', 1, 1], ['LatencyLow', 1, 0], ['NoSuchMetric', 0, 0]]);
      const e = d.rules[0]!.episodes[0]!;
      assert.deepEqual([e.state, e.since, e.points[0]!.file, e.points[0]!.line], ['resolved', at(70), 'metrics/api.prom', 73]);
      assert.match(artifact.summary, /^0 alert\(s\) firing, 1 resolved, of 3 rule\(s\): LatencyHigh \(1 on api_latency_ms\{instance="10\.0\.0\.1:9100",job="api"\}\); 2\/3 rule\(s\) matched a series/);
      assert.ok(artifact.confidence >= 0.75);
      assert.deepEqual(artifact.findingsAfter, { count: 1, maxSeverity: 4 }, 'a "page" rule fired: a finding at the top of the scale');
      assert.equal(alertsSkill.outputSchema!.safeParse(d).success, true);
      const clean = await run('alerts', workspace({ 'metrics/api.prom': 'clean.prom' }), { rules });
      assert.deepEqual((clean.artifact.data as AlertsData).rules.map((r) => r.episodes.length), [0, 0, 0]);
    });

    it('reads rules from a workspace YAML file; no rules or a bad rule is needs input naming it', async () => {
      const ws = workspace({ 'metrics/api.prom': 'anomalies.prom' });
      writeFileSync(path.join(ws, 'alerts.yaml'), 'rules:\n  - name: LatencyHigh\n    expr: {metric: api_latency_ms, op: ">", threshold: 130}\n    severity: page\n');
      const fromFile = await run('alerts', ws, { rules: 'alerts.yaml' });
      assert.equal((fromFile.artifact.data as AlertsData).rulesFrom, 'alerts.yaml');
      assert.equal((fromFile.artifact.data as AlertsData).resolved, 1);
      const none = await run('alerts', ws);
      assert.deepEqual(none.artifact.needsInput, { field: 'rules' });
      const bad = await run('alerts', ws, { rules: [{ name: 'x', expr: { metric: 'up', op: '>' } }] });
      assert.equal(bad.artifact.unable, 'input.rules[0].expr.threshold must be a number');
      assert.deepEqual(bad.artifact.needsInput, { field: 'rules' });
    });

    it('no data is not applicable, even with rules', async () => {
      const { artifact } = await run('alerts', workspace(), { rules });
      assert.match(artifact.notApplicable ?? '', /^no metrics or logs to analyze: looked for/);
    });
  });
});
