import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { buildSecurityReport, runTierChecks } from '../../../../server/src/skills/security/skill';
import { listFiles, scanTree } from '../../../../server/src/skills/security/scanner';

const FIXTURES = path.resolve(__dirname, '../../../fixtures');

function sarifValidator() {
  const schema = JSON.parse(readFileSync(path.join(FIXTURES, 'sarif/sarif-2.1.0-rtm.5.json'), 'utf8')) as Record<string, unknown>;
  // Draft-04 spelling of the schema id; ajv 8 reads the rest as draft-07.
  delete schema['$schema'];
  schema['$id'] = schema['id'];
  delete schema['id'];
  // One pattern of the schema (language tags) is not valid with the u flag.
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('SARIF output against the SARIF 2.1.0 schema', () => {
  const validate = sarifValidator();

  it('accepts the report of the secret corpus (fixes, snippets, fingerprints, rules with help links)', async () => {
    const root = path.join(FIXTURES, 'secrets');
    const report = buildSecurityReport(await scanTree(root), undefined, 'file:///workspace');
    assert.ok(report.findings.length > 70);
    assert.ok(validate(report.sarif), JSON.stringify(validate.errors?.slice(0, 5)));
  });

  it('accepts the report of the IaC twins (Dockerfile, Kubernetes, Terraform findings and their rules)', async () => {
    const root = path.join(FIXTURES, 'iac/twins');
    const extra = await runTierChecks(root, listFiles(root), 'core', undefined);
    const report = buildSecurityReport({ findings: extra.findings, suppressed: [], filesConsidered: 1, filesScanned: 1, bytesScanned: 0, skipped: [] }, undefined, undefined, [], { scope: 'scan', rules: extra.rules });
    assert.ok(report.findings.some((f) => f.ruleId.startsWith('tf/')) && report.findings.some((f) => f.ruleId.startsWith('k8s/')));
    assert.ok(validate(report.sarif), JSON.stringify(validate.errors?.slice(0, 5)));
  });

  it('rejects a log that breaks the schema (the check can fail)', () => {
    assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: {} } }] }), false);
  });
});
