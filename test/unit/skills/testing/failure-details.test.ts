import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseIstanbulFinal, parseJUnit, parseMochaJson, parseTap, valuesFromMessage } from '../../../../server/src/skills/testing/parsers';

const FIX = path.resolve(__dirname, '../../../fixtures/testing/reports/failure-details');
const MOCHA = require.resolve('mocha/bin/mocha.js');

/** A project with one failing assertion on line 4 of its test file (and a passing test). */
function project(file: string, body: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cadre-failures-'));
  writeFileSync(path.join(dir, file), body);
  return dir;
}

describe('tester-ai: failing tests with file, line, expected and actual', () => {
  it('node:test TAP (a real run): YAML expected/actual, nested values, the assertion line', () => {
    const dir = project('cart.test.js', [
      "const test = require('node:test');", "const assert = require('node:assert');",
      "test('total', () => {", '  assert.strictEqual(10 + 15, 30);', '});',
      "test('items', () => { assert.deepStrictEqual({ skus: ['a'] }, { skus: ['a', 'b'] }); });", "test('empty', () => {});", '',
    ].join('\n'));
    const out = spawnSync(process.execPath, ['--test', '--test-reporter=tap', 'cart.test.js'], { cwd: dir, encoding: 'utf8' }).stdout;
    const r = parseTap(out)!;
    assert.deepEqual([r.passed, r.failed], [1, 2]);
    const [total, items] = r.failures;
    assert.deepEqual({ name: total!.name, file: path.basename(total!.file!), line: total!.line, expected: total!.expected, actual: total!.actual },
      { name: 'total', file: 'cart.test.js', line: 4, expected: '30', actual: '25' });
    // node's TAP reporter writes arrays as YAML mappings of their indexes: reported as it printed them.
    assert.deepEqual([items!.line, items!.expected, items!.actual], [6, '{"skus":{"0":"a","1":"b"}}', '{"skus":{"0":"a"}}']);
  });

  it('mocha --reporter json (a real run): err.expected / err.actual and the stack\'s line', () => {
    const dir = project('cart.spec.js', [
      "const assert = require('assert');", "describe('cart', () => {",
      "  it('total', () => {", '    assert.strictEqual(10 + 15, 30);', '  });', "  it('empty', () => {});", '});', '',
    ].join('\n'));
    const run = spawnSync(process.execPath, [MOCHA, '--no-config', '--reporter', 'json', 'cart.spec.js'], { cwd: dir, encoding: 'utf8' });
    const r = parseMochaJson(run.stdout)!;
    assert.deepEqual([r.passed, r.failed], [1, 1]);
    const f = r.failures[0]!;
    assert.deepEqual({ name: f.name, file: path.basename(f.file!), line: f.line, expected: f.expected, actual: f.actual },
      { name: 'cart total', file: 'cart.spec.js', line: 4, expected: '30', actual: '25' });
  });

  it('JUnit XML: surefire (JUnit 4 message, the test class frame) and pytest (assert, file:line)', () => {
    const j = parseJUnit(readFileSync(path.join(FIX, 'surefire.xml'), 'utf8'))!;
    assert.deepEqual(j.failures.map((f) => ({ ...f, message: undefined })), [{ name: 'com.example.CartTest totalAddsItems', message: undefined, expected: '30', actual: '25' }]);
    const p = parseJUnit(readFileSync(path.join(FIX, 'pytest.xml'), 'utf8'))!;
    const f = p.failures[0]!;
    assert.deepEqual({ file: f.file, line: f.line, expected: f.expected, actual: f.actual }, { file: 'tests/test_cart.py', line: 8, expected: '30', actual: '25' });
  });

  it('assertion message shapes', () => {
    assert.deepEqual(valuesFromMessage('expected 25 to equal 30'), { actual: '25', expected: '30' });
    assert.deepEqual(valuesFromMessage('expect(received).toBe(expected)\n\nExpected: 30\nReceived: 25'), { expected: '30', actual: '25' });
    assert.deepEqual(valuesFromMessage('\u001b[2mExpected: \u001b[22m\u001b[32m30\u001b[39m\n\u001b[2mReceived: \u001b[22m\u001b[31m25\u001b[39m'), { expected: '30', actual: '25' });
    assert.deepEqual(valuesFromMessage('expected: <30> but was: <25>'), { expected: '30', actual: '25' });
    assert.deepEqual(valuesFromMessage('AssertionError: 25 != 30'), { actual: '25', expected: '30' });
    assert.deepEqual(valuesFromMessage('boom'), {});
  });
});

describe('tester-ai: istanbul coverage-final.json (nyc, c8, jest)', () => {
  it('lines from statementMap/s, functions from f, uncovered lines listed', () => {
    const c = parseIstanbulFinal(readFileSync(path.join(FIX, 'coverage-final.json'), 'utf8'))!;
    assert.equal(c.format, 'istanbul-final');
    assert.deepEqual(c.files.map((f) => [f.file, f.linesFound, f.linesHit, f.pct, f.functionsFound, f.functionsHit, f.uncoveredLines]),
      [['/repo/src/cart.js', 4, 3, 75, 2, 1, [6]]]);
    assert.equal(c.lines, 75);
    assert.equal(parseIstanbulFinal('{"total": {"lines": {"pct": 80}}}'), undefined, 'a summary is not a final report');
  });
});
