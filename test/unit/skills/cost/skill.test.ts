import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { skills } from '../../../../server/src/skills/builtin';
import { optimizeSkill, reportSkill, smallerSize, type OptimizeData, type ReportData } from '../../../../server/src/skills/cost/index';
import { runSkill, skillContext } from '../../../support/skill-context';

const FIX = path.resolve(__dirname, '../../../fixtures/cost');
const dirs: string[] = [];

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-cost-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"infra","version":"1.0.0"}\n');
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(path.join(FIX, from), path.join(dir, to));
  }
  return dir;
}

const run = (action: 'report' | 'optimize', ws: string, input: Record<string, unknown> = {}) =>
  runSkill(action === 'report' ? reportSkill : optimizeSkill, skillContext({ agentId: 'cost-ai', action, workspace: ws, input, tier: 'pro' }));

describe('cost-ai skills', () => {
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('are the embedded skills of cost-ai report and optimize', () => {
    assert.ok(skills.includes(reportSkill));
    assert.ok(skills.includes(optimizeSkill));
  });

  describe('report', () => {
    it('reads billing/ by convention: totals of the period, by service, by tag with the untagged share, by resource with its lines, by day; proposes only the read', async () => {
      const ws = workspace({ 'billing/2026-03.csv': 'aws-cur.csv', 'notes/people.csv': 'not-billing.csv' });
      const { proposed, artifact } = await run('report', ws);
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => [p.kind, p.paths]), [['read', ['billing/2026-03.csv']]]);
      const d = artifact.data as ReportData;
      assert.deepEqual(d.period, { start: '2026-03-01', end: '2026-03-07', days: 7 });
      // 7 days of: 2 x 4.608 (web) + 0.263014 (gp3) + 9.216 (batch) + 1.08 (NAT) + 0.12 (EIP) + 0.821918 (magnetic) ; + 5 tax
      assert.ok(Math.abs(d.total - (7 * (2 * 4.608 + 0.263014 + 9.216 + 1.08 + 0.12 + 0.821918) + 5)) < 0.001, String(d.total));
      assert.deepEqual(d.byService.map((s) => s.key), ['AmazonEC2']);
      assert.deepEqual(d.byTag['team']!.map((s) => s.key), ['data', 'web', '(untagged)']);
      assert.equal(d.byTag['team']!.find((s) => s.key === '(untagged)')!.cost, 5.84, 'the EIP (0.84) and the tax (5) carry no team');
      assert.deepEqual([d.byResource[0]!.resource, d.byResource[0]!.cost, d.byResource[0]!.file, d.byResource[0]!.lines.slice(0, 2)], ['i-0batch', 64.512, 'billing/2026-03.csv', [5, 14]]);
      assert.equal(d.unattributed, 5);
      assert.deepEqual(d.byPeriod.totals.map((p) => p.period), ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07']);
      assert.deepEqual(d.source.files.map((f) => [f.file, f.format]), [['billing/2026-03.csv', 'aws-cur']]);
      assert.deepEqual(d.source.ignored, ['notes/people.csv: not a billing export: the header is none of the AWS Cost and Usage Report (lineItem/UsageStartDate, lineItem/ProductCode, lineItem/UnblendedCost, ... or CUR 2.0 line_item_* columns), the GCP billing export (service.description, usage_start_time, cost, ...) or the generic header date,service,resource,cost,usage,unit,tags']);
      assert.ok(artifact.confidence >= 0.75);
      assert.match(artifact.summary, /^total \$150\.02 over 2026-03-01 \.\. 2026-03-07 \(7 day\(s\)\): AmazonEC2 \$150\.02; top resource i-0batch \$64\.51;/);
      assert.match(artifact.text ?? '', /## By tag `team`/);
      assert.equal(reportSkill.outputSchema!.safeParse(d).success, true);
    });

    it('a gzipped CUR named by input.export, a GCP export and the generic CSV are read alike; credits give the net', async () => {
      const ws = workspace({ 'exports/gcp.csv': 'gcp-billing.csv' });
      writeFileSync(path.join(ws, 'exports', 'cur.csv.gz'), gzipSync(readFileSync(path.join(FIX, 'aws-cur-clean.csv'))));
      const { artifact } = await run('report', ws, { export: ['exports/cur.csv.gz', 'exports/gcp.csv'] });
      const d = artifact.data as ReportData;
      assert.deepEqual(d.source.files.map((f) => f.format), ['aws-cur', 'gcp-billing']);
      assert.deepEqual(d.byService.map((s) => s.key), ['AmazonEC2', 'Compute Engine', 'Cloud Storage']);
      assert.equal(d.credits, -8.4);
      assert.equal(d.net, Math.round((d.total - 8.4) * 1e4) / 1e4);
    });

    it('no export anywhere is not applicable, naming where it looked', async () => {
      const { artifact } = await run('report', workspace({ 'data/people.csv': 'not-billing.csv' }));
      assert.equal(artifact.notApplicable, 'no billing export found: looked for input.export, billing/, cost/, costs/, cur/, *.csv, *.csv.gz');
    });

    it('bad input needs input naming the field, the file and the line: a broken row, a named file that is no bill, a path outside, a Parquet CUR', async () => {
      const ws = workspace({ 'billing/bad.csv': 'bad-row.csv', 'x/people.csv': 'not-billing.csv' });
      writeFileSync(path.join(ws, 'x', 'cur.parquet'), 'PAR1');
      const bad = (await run('report', ws)).artifact;
      assert.deepEqual([bad.unable, bad.needsInput], ['billing/bad.csv:4: column cost: "12.3x" is not a number', { field: 'export' }]);
      const notBill = (await run('report', ws, { export: 'x/people.csv' })).artifact;
      assert.match(notBill.unable ?? '', /^x\/people\.csv:1: not a billing export/);
      const outside = (await run('report', ws, { export: path.join(FIX, 'aws-cur.csv') })).artifact;
      assert.match(outside.unable ?? '', /^input\.export: .*fixtures\/cost\/aws-cur\.csv is outside the workspace; not read$/);
      assert.deepEqual(outside.needsInput, { field: 'export' });
      const parquet = (await run('report', ws, { export: 'x/cur.parquet' })).artifact;
      assert.equal(parquet.unable, 'x/cur.parquet: Parquet is not read; deliver the report as CSV (or CSV.gz)');
      const mixed = workspace({ 'billing/a.csv': 'generic.csv' });
      writeFileSync(path.join(mixed, 'billing', 'b.csv'), 'date,service,resource,cost,currency\n2026-03-01,compute,x,3,EUR\n2026-03-01,compute,y,4,USD\n');
      const cur = (await run('report', mixed)).artifact;
      assert.deepEqual([cur.unable, cur.needsInput], ["the exports mix currencies: EUR (first at billing/b.csv:2), USD (first at billing/b.csv:3); name one currency's exports in input.export", { field: 'export' }]);
      const stray = workspace({ 'billing/a.csv': 'generic.csv' });
      mkdirSync(path.join(stray, 'old'));
      copyFileSync(path.join(FIX, 'bad-row.csv'), path.join(stray, 'old', 'feb.csv'));
      const strayBill = (await run('report', stray)).artifact;
      assert.equal(strayBill.unable, 'old/feb.csv:4: column cost: "12.3x" is not a number', 'a bill found anywhere with a broken row is not half-read');
      const top = (await run('report', workspace({ 'billing/a.csv': 'generic.csv' }), { top: 0 })).artifact;
      assert.deepEqual(top.needsInput, { field: 'top' });
    });
  });

  describe('optimize', () => {
    it('finds the planted waste with its location and arithmetic: idle NAT gateway, unattached address and volume, oversized batch host rightsized, and the reserved break-even', async () => {
      const ws = workspace({ 'billing/cur.csv': 'aws-cur.csv', 'billing/utilization.json': 'aws-utilization.json', 'offers.json': 'aws-reservations.json' });
      const { artifact, proposed } = await run('optimize', ws, { export: 'billing/cur.csv', utilization: 'billing/utilization.json', reservations: 'offers.json' });
      assert.equal(artifact.unable, undefined, artifact.unable);
      assert.deepEqual(proposed.map((p) => p.paths), [['billing/cur.csv']]);
      const d = artifact.data as OptimizeData;
      assert.deepEqual(d.waste.map((w) => [w.kind, w.resource, w.monthlyCost, w.file, w.lines[0]]), [
        ['oversized', 'i-0batch', 280.32, 'billing/cur.csv', 5],
        ['idle', 'nat-0idle', 32.85, 'billing/cur.csv', 6],
        ['unattached-volume', 'vol-0orphan', 25, 'billing/cur.csv', 9],
        ['unattached-ip', 'eipalloc-0free', 3.65, 'billing/cur.csv', 8],
      ]);
      assert.match(d.waste[1]!.evidence, /NatGateway-Bytes \(GB\) summed to 0 over 7 line\(s\)/);
      assert.deepEqual(d.rightsizing.map((r) => [r.resource, r.suggested, r.estimatedMonthlySaving]), [['i-0batch', 'm5.large', 210.24]]);
      assert.match(d.rightsizing[0]!.arithmetic, /\$280\.32\/month x \(1 - 4\/16\) = \$210\.24\/month/);
      const web = d.reservations.find((r) => r.instanceType === 'm5.xlarge')!;
      assert.deepEqual([web.resources, web.onDemandHourly, web.runningShare, web.monthlySaving, web.breakEvenMonths, web.termSaving, web.worthIt],
        [['i-0web1', 'i-0web2'], 0.192, 1, 96.36, 5.19, 656.32, true]);
      assert.match(web.arithmetic, /break-even = \$500\.00 \/ \$96\.36 = 5\.19 months of a 12-month term/);
      assert.deepEqual(d.notJudged, ['1 volume(s) with no I/O line in the export: whether they are attached is not in it']);
      assert.deepEqual(artifact.findingsAfter, { count: 5, maxSeverity: 2 });
      assert.ok(artifact.confidence >= 0.75);
      assert.match(artifact.summary, /^4 waste finding\(s\): oversized i-0batch \$280\.32\/month \(billing\/cur\.csv:5\)/);
      assert.equal(optimizeSkill.outputSchema!.safeParse(d).success, true);
      assert.equal(optimizeSkill.outputSchema!.safeParse({ ...d, waste: [{ ...d.waste[0]!, lines: [] }] }).success, false, 'a finding without its location does not match');
    });

    it('the clean twin raises nothing and says what it examined and what it could not judge', async () => {
      // By convention: the JSON beside the export in billing/ is not taken for a bill.
      const ws = workspace({ 'billing/cur.csv': 'aws-cur-clean.csv', 'billing/util.json': 'aws-utilization-clean.json' });
      const { artifact } = await run('optimize', ws, { utilization: 'billing/util.json' });
      assert.equal(artifact.unable, undefined, artifact.unable);
      const d = artifact.data as OptimizeData;
      assert.deepEqual([d.waste, d.rightsizing], [[], []]);
      assert.deepEqual(artifact.findingsAfter, { count: 0, maxSeverity: 0 });
      assert.match(artifact.summary, /^nothing found: no idle, unattached or oversized resource; examined 22 line\(s\) in 1 export\(s\) \(billing\/cur\.csv: aws-cur\), 3 resource\(s\); not judged: 1 volume/);
      assert.ok(artifact.confidence >= 0.75);
    });

    it('the generic CSV: an idle balancer (cost, zero requests) and an oversized database from the utilization column; its clean twin raises nothing', async () => {
      const planted = (await run('optimize', workspace({ 'costs/g.csv': 'generic.csv' }))).artifact.data as OptimizeData;
      assert.deepEqual(planted.waste.map((w) => [w.kind, w.resource, w.lines[0]]), [['oversized', 'big-db', 3], ['idle', 'lb-idle', 5]]);
      assert.deepEqual(planted.rightsizing.map((r) => [r.suggested, r.estimatedMonthlySaving]), [['r5.xlarge', 551.88]]);
      const clean = await run('optimize', workspace({ 'costs/g.csv': 'generic-clean.csv' }));
      assert.deepEqual((clean.artifact.data as OptimizeData).waste, []);
      assert.deepEqual(clean.artifact.findingsAfter, { count: 0, maxSeverity: 0 });
    });

    it('a reserved offer that costs more than on demand never breaks even, and says so', async () => {
      const ws = workspace({ 'billing/cur.csv': 'aws-cur-clean.csv' });
      const { artifact } = await run('optimize', ws, { reservations: [{ instanceType: 'm5.xlarge', upfront: 100, hourly: 0.2, termMonths: 12 }] });
      const r = (artifact.data as OptimizeData).reservations[0]!;
      assert.deepEqual([r.worthIt, r.breakEvenMonths], [false, null]);
      assert.match(r.arithmetic, /never breaks even/);
    });

    it('sizes: burstable families go down to nano, others stop at large; GCP machine types by vCPUs', () => {
      assert.deepEqual(smallerSize('t3.xlarge', 5, 50), { type: 't3.small', factor: 1 / 8, from: 8, to: 1 });
      assert.deepEqual(smallerSize('m5.2xlarge', 1, 50)?.type, 'm5.large');
      assert.equal(smallerSize('m5.large', 1, 50), null);
      assert.deepEqual(smallerSize('n2-standard-8', 10, 50)?.type, 'n2-standard-2');
    });

    it('bad options need input naming the field', async () => {
      const ws = workspace({ 'billing/cur.csv': 'aws-cur.csv' });
      for (const [input, field] of [[{ utilizationBelow: 140 }, 'utilizationBelow'], [{ utilization: { 'i-1': 'high' } }, 'utilization'], [{ reservations: [{ instanceType: 'm5.xlarge' }] }, 'reservations'], [{ reservations: 'nope.json' }, 'reservations']] as const) {
        const { artifact } = await run('optimize', ws, input as Record<string, unknown>);
        assert.deepEqual(artifact.needsInput, { field }, JSON.stringify(input));
      }
    });
  });
});
