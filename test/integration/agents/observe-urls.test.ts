import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stop } from '../../support/server-process';
import { startCoreLoopServer, type PooledClient } from '../core-loop/client';

const PROM = readFileSync(path.resolve(__dirname, '../../fixtures/observe/anomalies.prom'), 'utf8');

/**
 * Issue 12 item 1 (network ingestion and configured alert rules) over HTTP on a real server: observe-ai
 * fetches a metrics endpoint only when the install's own config ($CADRE_HOME/config.yaml) lists its
 * prefix and ACMF allows http_request; a URL outside the list is refused at once, and a redirect out
 * of the list is not followed. `alerts` evaluates observe.alert_rules when the request gives none.
 */
describe('observe-ai: metrics from an allowed URL, alert rules from the config', function () {
  this.timeout(60_000);
  let a: PooledClient;
  let stopServer: () => Promise<void>;
  let exporter: Server;
  let base = '';
  let ws = '';
  const hits: string[] = [];
  const dirs: string[] = [];

  before(async () => {
    exporter = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/metrics/api') { res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }); res.end(PROM); return; }
      if (req.url === '/metrics/moved') { res.writeHead(302, { location: `${base}/private/api` }); res.end(); return; }
      res.writeHead(404); res.end();
    });
    await new Promise<void>((r) => exporter.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(exporter.address() as AddressInfo).port}`;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-observe-home-'));
    ws = mkdtempSync(path.join(tmpdir(), 'cadre-observe-ws-'));
    dirs.push(dataDir, ws);
    // No .cadre.yaml in the workspace: the install's own config applies (only it may allow URLs).
    writeFileSync(path.join(dataDir, 'config.yaml'), [
      'observe:',
      `  urls: ["${base}/metrics/"]`,
      '  alert_rules:',
      '    - name: LatencyHigh',
      '      expr: {metric: api_latency_ms, op: ">", threshold: 130}',
      '      severity: page',
      'agents:',
      '  observe-ai:',
      '    acmf_mode: AUTONOMOUS',
      '',
    ].join('\n'));
    const s = await startCoreLoopServer({ keys: 1, dataDir, workspace: ws });
    a = s.client;
    stopServer = () => stop(s.server);
  });
  after(async () => {
    await stopServer?.();
    await new Promise<void>((r) => exporter.close(() => r()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('fetches an allowed endpoint and finds the planted anomalies in it, saying what it fetched', async () => {
    const r = await a.get(`/api/agents/observe-ai/analyze?source=${encodeURIComponent(ws)}&metrics=${encodeURIComponent(`${base}/metrics/api`)}`);
    assert.equal(r.status, 200, r.text);
    const out = r.body['output'] as { anomalies: Array<{ series: string }>; networkIngestion: string; files: Array<{ file: string; format: string }> };
    assert.ok(out.anomalies.length >= 2, JSON.stringify(out.anomalies).slice(0, 400));
    assert.ok(out.anomalies.every((x) => x.series.startsWith('api_latency_ms')));
    assert.match(out.networkIngestion, new RegExp(`^fetched ${base}/metrics/api \\(\\d+ bytes\\)`));
    assert.deepEqual(out.files.map((f) => f.file), [`${base}/metrics/api`]);
    assert.ok(hits.includes('/metrics/api'));
  });

  it('answers 422 for a URL the install does not list, naming the setting, and fetches nothing', async () => {
    const before = hits.length;
    const r = await a.get(`/api/agents/observe-ai/analyze?source=${encodeURIComponent(ws)}&metrics=${encodeURIComponent(`${base}/private/api`)}`);
    assert.equal(r.status, 422, r.text);
    assert.match(String(r.body['detail']), /is a URL this install does not allow: list its prefix in observe\.urls/);
    assert.equal(hits.length, before, 'nothing fetched');
  });

  it('does not follow a redirect that leaves the allowed prefix', async () => {
    const r = await a.get(`/api/agents/observe-ai/analyze?source=${encodeURIComponent(ws)}&metrics=${encodeURIComponent(`${base}/metrics/moved`)}`);
    assert.equal(r.status, 422, r.text);
    assert.ok(!hits.includes('/private/api'), 'the redirect target was never requested');
  });

  it('alerts evaluates the configured rules when the request gives none', async () => {
    const r = await a.get(`/api/agents/observe-ai/alerts?source=${encodeURIComponent(ws)}&metrics=${encodeURIComponent(`${base}/metrics/api`)}`);
    assert.equal(r.status, 200, r.text);
    const out = r.body['output'] as { rulesFrom: string; firing: number; resolved: number; rules: Array<{ rule: string; seriesMatched: number }> };
    assert.equal(out.rulesFrom, 'observe.alert_rules (config)');
    assert.deepEqual(out.rules.map((x) => x.rule), ['LatencyHigh']);
    assert.ok(out.rules[0]!.seriesMatched > 0);
    assert.ok(out.firing + out.resolved > 0, 'the planted latency spike crosses 130');
  });
});
