import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  applySuppressions, createBaseline, filterNew, fingerprint, parseBaseline, parseSuppressions, readBaseline, sarifLevel,
  SUPPRESSION_WITHOUT_REASON, toSarif, writeBaseline, type Finding,
} from '../../../../server/src/skills/findings/index';

function finding(over: Partial<Finding> = {}): Finding {
  return {
    ruleId: 'r1', severity: 'high', message: 'm', file: 'src/a.ts',
    range: { startLine: 3, startColumn: 5, endLine: 3, endColumn: 10 }, fingerprint: fingerprint('r1', 'src/a.ts', 'x'), ...over,
  };
}

describe('findings model', () => {
  it('fingerprints are stable, order-sensitive and short', () => {
    assert.equal(fingerprint('a', 'b'), fingerprint('a', 'b'));
    assert.notEqual(fingerprint('a', 'b'), fingerprint('b', 'a'));
    assert.notEqual(fingerprint('ab', ''), fingerprint('a', 'b'));
    assert.match(fingerprint('x'), /^[0-9a-f]{32}$/);
  });

  it('a baseline keeps only new findings and round-trips through a file', () => {
    const old = finding();
    const fresh = finding({ fingerprint: fingerprint('r1', 'src/a.ts', 'y') });
    const b = createBaseline([old, old]);
    assert.deepEqual(b.fingerprints, [old.fingerprint]);
    assert.deepEqual(filterNew([old, fresh], b), [fresh]);
    assert.deepEqual(filterNew([old, fresh], [fresh.fingerprint]), [old]);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'cadre-baseline-')), 'b.json');
    writeBaseline(file, b);
    assert.deepEqual(readBaseline(file).fingerprints, b.fingerprints);
    assert.throws(() => parseBaseline('{"version":2,"fingerprints":[]}'), /version/);
    assert.throws(() => parseBaseline('{"version":1,"fingerprints":[1]}'), /strings/);
  });

  it('exports a valid SARIF 2.1.0 log', () => {
    const f = finding({
      severity: 'critical', snippet: 'const k = "AKIA********"',
      fix: { description: 'use env', edits: [{ file: 'src/a.ts', range: { startLine: 3, startColumn: 4, endLine: 3, endColumn: 11 }, newText: 'process.env.K' }] },
    });
    const low = finding({ ruleId: 'r2', severity: 'low', file: 'dir with space/b.py', fingerprint: 'ff' });
    const log = toSarif([f, low], [{ id: 'r1', description: 'Rule one', severity: 'critical', helpUri: 'https://x/r1' }], { workspaceUri: 'file:///ws' }) as any;
    assert.equal(log.version, '2.1.0');
    assert.match(log.$schema, /sarif-schema-2\.1\.0\.json$/);
    const run = log.runs[0];
    assert.deepEqual(run.tool.driver.rules.map((r: any) => r.id), ['r1', 'r2']);
    for (const r of run.tool.driver.rules) assert.equal(typeof r.shortDescription.text, 'string');
    assert.equal(run.tool.driver.rules[0].helpUri, 'https://x/r1');
    assert.equal(run.tool.driver.rules[1].helpUri, undefined, 'an undocumented rule gets no (dead) help link');
    assert.equal(run.results.length, 2);
    const [a, b] = run.results;
    assert.equal(a.ruleId, 'r1');
    assert.equal(a.ruleIndex, 0);
    assert.equal(a.level, 'error');
    assert.equal(b.level, 'note');
    assert.equal(b.ruleIndex, 1);
    assert.equal(a.locations[0].physicalLocation.artifactLocation.uri, 'src/a.ts');
    assert.equal(a.locations[0].physicalLocation.artifactLocation.uriBaseId, 'WORKSPACE');
    assert.equal(b.locations[0].physicalLocation.artifactLocation.uri, 'dir%20with%20space/b.py');
    assert.deepEqual(a.locations[0].physicalLocation.region, { startLine: 3, startColumn: 5, endLine: 3, endColumn: 10 });
    assert.equal(a.partialFingerprints['cadreFingerprint/v1'], f.fingerprint);
    assert.equal(a.fixes[0].artifactChanges[0].replacements[0].insertedContent.text, 'process.env.K');
    assert.equal(b.fixes, undefined);
    assert.equal(run.originalUriBaseIds.WORKSPACE.uri, 'file:///ws/');
    assert.deepEqual(['critical', 'high', 'medium', 'low', 'info'].map((s) => sarifLevel(s as any)), ['error', 'error', 'warning', 'note', 'note']);
  });

  describe('suppressions', () => {
    const text = [
      'line1',
      '// cadre-ignore r1: test fixture, revoked',
      'secret here',
      'x = 1 # cadre-ignore fam: sandbox value',
      '/* cadre-ignore r1 */',
      'another secret',
      'z // cadre-ignore *: generated file',
    ].join('\n');

    it('parses directives with and without reasons', () => {
      const d = parseSuppressions(text);
      assert.deepEqual(d.map((s) => [s.line, s.rule, s.reason]), [
        [2, 'r1', 'test fixture, revoked'], [4, 'fam', 'sandbox value'], [5, 'r1', ''], [7, '*', 'generated file'],
      ]);
      assert.deepEqual(parseSuppressions('no directive'), []);
    });

    it('suppresses on the same or previous line only with a reason, by rule id, family or *', () => {
      const at = (line: number, ruleId = 'r1') => finding({ ruleId, range: { startLine: line, startColumn: 1, endLine: line, endColumn: 2 } });
      const fs = [at(3), at(4, 'rx'), at(6), at(7, 'anything'), at(1)];
      const res = applySuppressions(fs, new Map([['src/a.ts', parseSuppressions(text)]]), new Map([['rx', 'fam']]));
      assert.deepEqual(res.suppressed.map((s) => [s.finding.range.startLine, s.reason]), [[3, 'test fixture, revoked'], [4, 'sandbox value'], [7, 'generated file']]);
      assert.deepEqual(res.kept.map((f) => f.range.startLine), [6, 1], 'a directive without a reason suppresses nothing');
      assert.equal(res.invalid.length, 1);
      assert.equal(res.invalid[0]!.ruleId, SUPPRESSION_WITHOUT_REASON);
      assert.equal(res.invalid[0]!.severity, 'info');
      assert.equal(res.invalid[0]!.range.startLine, 5);
      assert.match(res.invalid[0]!.message, /suppression without a reason/);
    });
  });
});
