import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  ObserveParseError, parseCsvSeries, parseJsonSeries, parseLogs, parseMetrics, parsePrometheus, parseSyslog3164, seriesKey, type Series,
} from '../../../../server/src/skills/observe/index';

const FIX = path.resolve(__dirname, '../../../fixtures/observe');
const read = (f: string) => readFileSync(path.join(FIX, f), 'utf8');
const byKey = (items: Series[]) => new Map(items.map((s) => [seriesKey(s.name, s.labels), s]));

function throwsAt(fn: () => unknown, file: string, line: number, why: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ObserveParseError, String(e));
    assert.equal(e.file, file);
    assert.equal(e.line, line, e.message);
    assert.match(e.message, why);
    assert.ok(e.message.startsWith(`${file}:${line}: `));
    return true;
  });
}

describe('observe-ai parsers', () => {
  describe('Prometheus text exposition', () => {
    const p = parsePrometheus(read('exposition.prom'), 'exposition.prom');
    const s = byKey(p.items);

    it('reads labels, escapes, millisecond timestamps and untimestamped samples', () => {
      assert.equal(p.format, 'prometheus');
      const post = s.get('http_requests_total{code="200",method="post"}')!;
      assert.deepEqual(post.points, [{ t: 1395066363000, v: 1027, line: 3 }]);
      assert.equal(post.kind, 'counter');
      const msdos = [...s.values()].find((x) => x.name === 'msdos_file_access_time_seconds')!;
      assert.equal(msdos.labels['path'], 'C:\\DIR\\FILE.TXT');
      assert.equal(msdos.labels['error'], 'Cannot find file:\n"FILE.TXT"');
      assert.deepEqual(s.get('metric_without_timestamp_and_labels')!.points, [{ t: null, v: 12.47, line: 10 }]);
    });

    it('reads a histogram family: every bucket by its le label, _sum and _count as counters; +Inf values are counted, not kept', () => {
      const buckets = p.items.filter((x) => x.name === 'http_request_duration_seconds_bucket');
      assert.deepEqual(buckets.map((b) => b.labels['le']), ['0.05', '0.1', '0.2', '0.5', '1', '+Inf']);
      assert.equal(s.get('http_request_duration_seconds_count')!.points[0]!.v, 144320);
      assert.equal(s.get('http_request_duration_seconds_count')!.kind, 'counter');
      assert.equal(s.get('rpc_duration_seconds{quantile="0.99"}')!.points[0]!.v, 76656);
      assert.equal(s.get('something_weird{problem="division by zero"}'), undefined);
      assert.ok(p.skipped.some((x) => /1 NaN\/Inf/.test(x.reason)));
    });

    it('skips a malformed sample naming its line, and refuses an unknown # TYPE with file and line', () => {
      const bad = parsePrometheus('up 1\nup{job="a" 1\nup 2\n', 'm.prom');
      assert.deepEqual(bad.skipped, [{ line: 2, reason: '"," or "}" was expected after label job' }]);
      assert.equal(bad.items[0]!.points.length, 2);
      throwsAt(() => parsePrometheus('# TYPE up sometimes\nup 1\n', 'm.prom'), 'm.prom', 1, /unknown metric type/);
    });
  });

  describe('OpenMetrics', () => {
    it('reads seconds timestamps, skips _created and exemplars, and ends at # EOF', () => {
      const p = parsePrometheus(read('openmetrics.txt'), 'openmetrics.txt');
      assert.equal(p.format, 'openmetrics');
      const s = byKey(p.items);
      assert.deepEqual(s.get('go_goroutines')!.points.map((x) => [x.t, x.v]), [[1520879607789, 69], [1520879667789, 71]]);
      assert.deepEqual(s.get('foo_total')!.points.map((x) => [x.t, x.v]), [[1520879382500, 17]]);
      assert.equal(s.get('foo_total')!.kind, 'counter');
      assert.ok(![...s.keys()].some((k) => k.includes('_created')));
      assert.equal(s.get('acme_http_router_request_seconds_count{method="GET",path="/api/v1"}')!.points[0]!.v, 807283);
    });

    it('refuses content after # EOF at its line', () => {
      throwsAt(() => parsePrometheus('up 1 1.5\n# EOF\nup 2 2.5\n', 'x.om'), 'x.om', 3, /content after "# EOF" \(line 2\)/);
    });
  });

  describe('CSV', () => {
    it('wide: one series per column, labels in the column name, an empty cell is a missing value', () => {
      const p = parseCsvSeries(read('latency-wide.csv'), 'latency-wide.csv');
      const s = byKey(p.items);
      assert.deepEqual(s.get('api_latency_ms')!.points.map((x) => [x.t, x.v, x.line]), [[Date.UTC(2026, 2, 10, 10, 0), 101.5, 3], [Date.UTC(2026, 2, 10, 10, 1), 99, 4], [Date.UTC(2026, 2, 10, 10, 2), 102.25, 5]]);
      assert.deepEqual(s.get('queue_depth{queue="emails"}')!.points.map((x) => x.v), [3, 5]);
      assert.deepEqual(p.skipped, []);
    });

    it('long: timestamp,metric,value,labels with epoch seconds and k=v;k=v labels', () => {
      const p = parseCsvSeries(read('requests-long.csv'), 'requests-long.csv');
      const s = byKey(p.items);
      assert.deepEqual(s.get('http_requests_in_flight{service="api",zone="eu-west-1a"}')!.points.map((x) => [x.t, x.v]), [[1773136800000, 12], [1773136860000, 14]]);
      assert.equal(s.get('http_requests_in_flight{service="web",zone="eu-west-1b"}')!.points.length, 1);
    });

    it('a header without a time column, or a row with a bad value, is named by line', () => {
      throwsAt(() => parseCsvSeries('\nwhen,cpu\n1,2\n', 'c.csv'), 'c.csv', 2, /needs a time column/);
      const p = parseCsvSeries('timestamp,cpu\n1773136800,0.5\n1773136860,lots\n', 'c.csv');
      assert.deepEqual(p.skipped, [{ line: 3, reason: 'column cpu is not a number' }]);
    });
  });

  describe('JSON series', () => {
    it('reads {series:[...]} with ISO, seconds and milliseconds timestamps, pairs and {t, v} points', () => {
      const p = parseJsonSeries(read('series.json'), 'series.json');
      const s = byKey(p.items);
      assert.deepEqual(s.get('cpu_usage_ratio{host="web-1"}')!.points.map((x) => [x.t, x.v]), [[1773136800000, 0.42], [1773136860000, 0.47], [1773136920000, 0.51]]);
      assert.equal(s.get('mem_used_bytes')!.points[0]!.v, 1073741824);
    });

    it('reads a bare array and the Prometheus HTTP API matrix', () => {
      const arr = parseJsonSeries('[{"metric":"up","points":[[1773136800,1]]}]', 'a.json');
      assert.equal(arr.items[0]!.name, 'up');
      const api = parseJsonSeries(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: { __name__: 'up', job: 'api' }, values: [[1773136800, '1'], [1773136815, '0']] }] } }), 'q.json');
      assert.deepEqual(api.items.map((x) => [seriesKey(x.name, x.labels), x.points.map((q) => q.v)]), [['up{job="api"}', [1, 0]]]);
    });

    it('a bad point is named by its line; invalid JSON by the line of the error', () => {
      throwsAt(() => parseJsonSeries(read('bad-series.json'), 'bad-series.json'), 'bad-series.json', 7, /timestamp is not ISO 8601/);
      throwsAt(() => parseJsonSeries('{\n  "series": [\n    {"metric": "up",,}\n  ]\n}', 'j.json'), 'j.json', 3, /not valid JSON/);
    });
  });

  it('an unknown metrics format is refused at its first line', () => {
    throwsAt(() => parseMetrics('metrics/notes', '\n\nhello there, this is not a metric\n'), 'metrics/notes', 3, /unknown metrics format/);
  });

  describe('logs', () => {
    it('nginx combined access log: time with its zone, status, request, $request_time in ms', () => {
      const p = parseLogs('access.log', read('access.log'));
      assert.equal(p.format, 'access-log');
      assert.equal(p.items.length, 2700);
      assert.deepEqual(p.skipped, []);
      const r = p.items[0]!;
      assert.equal(r.t, Date.UTC(2026, 2, 10, 10, 0, 0));
      assert.ok([200, 404].includes(r.status!), String(r.status));
      assert.equal(p.items.filter((x) => x.status === 502).length, 150, 'the planted burst: every other request of 10 minutes');
      assert.ok(r.durationMs! >= 50 && r.durationMs! <= 200, String(r.durationMs));
      const z = parseLogs('a.log', '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326\n');
      assert.equal(z.items[0]!.t, Date.UTC(2000, 9, 10, 20, 55, 36), 'the -0700 zone is applied (common log format)');
      const esc = parseLogs('e.log', '10.0.0.1 - - [10/Mar/2026:10:00:00 +0000] "GET /q?x=\\"a\\" HTTP/1.1" 503 12 "-" "curl \\"7\\"" 1.5\n');
      assert.deepEqual([esc.items[0]!.status, esc.items[0]!.durationMs, esc.items[0]!.message], [503, 1500, 'GET /q?x=\\"a\\" HTTP/1.1'], 'escaped quotes inside the quoted fields (nginx escapes " as \\")');
    });

    it('syslog RFC 5424: time, severity from PRI, structured data skipped', () => {
      const p = parseLogs('syslog-5424.log', read('syslog-5424.log'));
      assert.equal(p.format, 'syslog-5424');
      assert.deepEqual(p.items.map((r) => [r.t, r.level]), [
        [Date.UTC(2026, 2, 10, 10, 14, 15, 3), 'error'], [Date.UTC(2026, 2, 10, 17, 14, 16), 'info'], [Date.UTC(2026, 2, 10, 10, 14, 17), 'info'], [Date.UTC(2026, 2, 10, 10, 14, 18), 'error'],
      ]);
      assert.equal(p.items[3]!.message, 'upstream timed out');
      assert.equal(p.items[2]!.message, 'An application event log entry...');
    });

    it('syslog RFC 3164, with and without PRI; the year is the current one unless that is in the future', () => {
      const p = parseLogs('syslog-3164.log', read('syslog-3164.log'));
      assert.equal(p.format, 'syslog-3164');
      assert.equal(p.items.length, 4);
      assert.equal(p.items[0]!.level, 'error', 'PRI 34: severity 2 (critical)');
      assert.equal(p.items[3]!.level, 'error', 'no PRI: an "error:" in the message');
      const now = Date.UTC(2026, 0, 5);
      assert.equal(parseSyslog3164('Dec 31 23:59:00 h app: x', 'f', 1, now)!.t, Date.UTC(2025, 11, 31, 23, 59), 'December seen in January is last year');
      assert.equal(parseSyslog3164('Jan  4 08:00:00 h app: x', 'f', 1, now)!.t, Date.UTC(2026, 0, 4, 8, 0));
    });

    it('logfmt: quoted values, status, durations with units', () => {
      const p = parseLogs('app.logfmt.log', read('app.logfmt.log'));
      assert.equal(p.format, 'logfmt');
      assert.deepEqual(p.items.map((r) => [r.status ?? null, r.durationMs ?? null, r.level, r.message]), [
        [200, 42, 'info', 'request completed'], [503, 1200, 'error', 'upstream failed'], [null, 730, 'warn', 'slow query'],
      ]);
    });

    it('JSON lines: time, status, duration_ms', () => {
      const p = parseLogs('app.jsonl', read('app.jsonl'));
      assert.equal(p.format, 'json-lines');
      assert.equal(p.items.length, 1400);
      assert.deepEqual([p.items[0]!.t, p.items[0]!.status], [Date.UTC(2026, 2, 10, 10, 0), 200]);
      assert.equal(p.items[400]!.durationMs, 900);
    });

    it('a line of another format is skipped and named; a file in no format fails at its first line', () => {
      const p = parseLogs('mixed.log', '{"time":"2026-03-10T10:00:00Z","status":200}\nnot json at all\n');
      assert.deepEqual(p.skipped, [{ line: 2, reason: 'not a json-lines line' }]);
      throwsAt(() => parseLogs('unknown.log', read('unknown.log')), 'unknown.log', 1, /unknown log format/);
    });
  });
});
