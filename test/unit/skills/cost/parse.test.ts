import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CsvError, detectFormat, ExportError, parseCsv, parseExport } from '../../../../server/src/skills/cost/index';

const FIX = path.resolve(__dirname, '../../../fixtures/cost');
const fixture = (f: string) => readFileSync(path.join(FIX, f), 'utf8');

describe('cost-ai parsing', () => {
  describe('the RFC 4180 reader', () => {
    it('reads quoted fields holding commas, doubled quotes and line breaks, CRLF records and a BOM, and numbers records by their first line', () => {
      const rows = parseCsv('\ufeffa,b,c\r\n1,"x, y","say ""hi"""\r\n2,"two\nlines",z\n\n3,,\n');
      assert.deepEqual(rows.map((r) => [r.line, r.fields]), [
        [1, ['a', 'b', 'c']], [2, ['1', 'x, y', 'say "hi"']], [3, ['2', 'two\nlines', 'z']], [6, ['3', '', '']],
      ]);
    });

    it('a last record without its line break is read; an empty field at the end is kept', () => {
      assert.deepEqual(parseCsv('a,b\n1,').map((r) => r.fields), [['a', 'b'], ['1', '']]);
    });

    it('refuses, naming the line: a quote never closed, text after a closing quote, a bare quote in a field', () => {
      assert.throws(() => parseCsv('a,b\n1,"open\n2,3\n'), (e: unknown) => e instanceof CsvError && e.line === 2 && /never closed/.test(e.message));
      assert.throws(() => parseCsv('a,b\n1,"x"y\n'), (e: unknown) => e instanceof CsvError && e.line === 2 && /after a closing quote/.test(e.message));
      assert.throws(() => parseCsv('a,b\n\n1,x"y\n'), (e: unknown) => e instanceof CsvError && e.line === 3 && /inside an unquoted field/.test(e.message));
    });
  });

  describe('export formats', () => {
    it('tells the format by the header', () => {
      assert.equal(detectFormat(['lineItem/UsageStartDate', 'lineItem/UnblendedCost']), 'aws-cur');
      assert.equal(detectFormat(['line_item_usage_start_date', 'line_item_unblended_cost']), 'aws-cur2');
      assert.equal(detectFormat(['service.description', 'usage_start_time', 'cost']), 'gcp-billing');
      assert.equal(detectFormat(['Date', 'Service', 'Resource', 'Cost']), 'generic');
      assert.equal(detectFormat(['name', 'email']), undefined);
    });

    it('AWS CUR: product code, resource, usage type and amount, unit, term, instance type, user tags (the user: prefix dropped), line numbers', () => {
      const p = parseExport('cur.csv', fixture('aws-cur.csv'));
      assert.equal(p.format, 'aws-cur');
      assert.equal(p.records, 7 * 9 + 1);
      assert.deepEqual(p.tagKeys, ['env', 'team']);
      const nat = p.lines.find((l) => l.usageType === 'NatGateway-Bytes')!;
      assert.deepEqual([nat.resource, nat.usage, nat.unit, nat.cost, nat.tags, nat.line, nat.t], ['nat-0idle', 0, 'GB', 0, { team: 'data', env: 'staging' }, 7, Date.UTC(2026, 2, 1)]);
      const batch = p.lines.find((l) => l.resource === 'i-0batch')!;
      assert.deepEqual([batch.instanceType, batch.pricingTerm, batch.cost, batch.service, batch.currency], ['m5.2xlarge', 'OnDemand', 9.216, 'AmazonEC2', 'USD']);
      const tax = p.lines.find((l) => l.chargeType === 'Tax')!;
      assert.deepEqual([tax.resource, tax.cost], [null, 5]);
    });

    it('AWS CUR 2.0: resource_tags as a JSON map, the instance size read from the usage type when product_instance_type is empty', () => {
      const text = 'line_item_usage_start_date,line_item_product_code,line_item_unblended_cost,line_item_resource_id,line_item_usage_type,line_item_usage_amount,pricing_unit,resource_tags\n'
        + '2026-03-01T00:00:00.000Z,AmazonEC2,4.608,i-1,USE2-BoxUsage:c5.large,24,Hrs,"{""user_team"":""web""}"\n';
      const [l] = parseExport('cur2.csv', text).lines;
      assert.deepEqual([l!.instanceType, l!.tags, l!.usage], ['c5.large', { team: 'web' }, 24]);
      assert.throws(() => parseExport('cur2.csv', text.replace('"{""user_team"":""web""}"', 'team=web')), (e: unknown) => e instanceof ExportError && e.line === 2 && /resource_tags/.test(e.message));
    });

    it('GCP billing export: service and SKU, labels from the JSON list, project as a tag, machine type from system labels, credits, UTC times', () => {
      const p = parseExport('gcp.csv', fixture('gcp-billing.csv'));
      assert.equal(p.format, 'gcp-billing');
      const vm = p.lines[0]!;
      assert.deepEqual([vm.service, vm.usageType, vm.tags, vm.instanceType, vm.credits, vm.unit, vm.t, vm.pricingTerm],
        ['Compute Engine', 'N2 Instance Core running in Americas', { project: 'shop-prod', team: 'web', env: 'prod' }, 'n2-standard-8', -1.2, 'seconds', Date.UTC(2026, 2, 1), 'OnDemand']);
    });

    it('generic: the documented header, tags as key=value;key=value, utilisation in percent', () => {
      const p = parseExport('g.csv', fixture('generic.csv'));
      const db = p.lines.find((l) => l.resource === 'big-db')!;
      assert.deepEqual([db.tags, db.utilization, db.instanceType, db.unit], [{ team: 'data', env: 'prod' }, 8, 'r5.4xlarge', 'hours']);
    });

    it('a row that cannot be read names its line and column; a header that is no bill says what was expected', () => {
      assert.throws(() => parseExport('bad-row.csv', fixture('bad-row.csv')), (e: unknown) => e instanceof ExportError && e.line === 4 && e.message === 'column cost: "12.3x" is not a number');
      assert.throws(() => parseExport('n.csv', fixture('not-billing.csv')), (e: unknown) => e instanceof ExportError && e.line === 1 && /^not a billing export: .*date,service,resource,cost,usage,unit,tags/.test(e.message));
      assert.throws(() => parseExport('d.csv', 'date,service,cost\n03/01/2026,x,1\n'), (e: unknown) => e instanceof ExportError && e.line === 2 && /column date: "03\/01\/2026" is not a date/.test(e.message));
      assert.throws(() => parseExport('f.csv', 'date,service,cost\n2026-03-01,x\n'), (e: unknown) => e instanceof ExportError && e.line === 2 && /2 field\(s\) where the header has 3/.test(e.message));
      assert.throws(() => parseExport('u.csv', 'date,service,cost,utilization\n2026-03-01,x,1,140\n'), (e: unknown) => e instanceof ExportError && /not a percent/.test(e.message));
    });
  });
});
