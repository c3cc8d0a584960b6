import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { EngineError } from '../../../server/src/engine/errors';
import { HttpProblem, PROBLEM_CODES, problemFor, problemType, retryAfterOf, toProblem } from '../../../server/src/http/problem';

describe('problem details', () => {
  it('lists every code with its status in docs/api.md', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../../docs/api.md'), 'utf8');
    for (const [code, [status]] of Object.entries(PROBLEM_CODES)) {
      assert.match(doc, new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'), `${code} (${status}) is documented`);
    }
  });

  it('maps engine errors by code and hides unexpected ones', () => {
    const logs: string[] = [];
    const p = toProblem(new EngineError('ERR_TIER_REQUIRED', 'dba-ai needs PRO', { details: { agentId: 'dba-ai' } }), (l) => logs.push(l));
    assert.deepEqual(p, { type: problemType('ERR_TIER_REQUIRED'), title: 'Tier Required', status: 403, detail: 'dba-ai needs PRO', code: 'ERR_TIER_REQUIRED', details: { agentId: 'dba-ai' } });
    const hidden = toProblem(new TypeError('x is undefined at /secret/path.ts:3'), (l) => logs.push(l));
    assert.equal(hidden.status, 500);
    assert.equal(hidden.code, 'ERR_INTERNAL');
    assert.ok(!JSON.stringify(hidden).includes('secret'));
    assert.ok(logs.some((l) => l.includes('/secret/path.ts')));
    const http = new HttpProblem(problemFor('ERR_RATE_LIMITED', 'slow down'), { 'retry-after': '3' });
    assert.equal(toProblem(http, () => {}).status, 429);
  });

  it('lifts the field list of an engine validation error to `errors`', () => {
    const p = toProblem(new EngineError('ERR_VALIDATION', 'bad source', { details: { errors: [{ field: 'body.source', message: 'not a folder' }, { field: 'scope', message: 'unknown' }] } }), () => {});
    assert.deepEqual(p.errors, [{ field: 'body.source', message: 'not a folder' }, { field: 'body.scope', message: 'unknown' }]);
    assert.equal(p.status, 400);
  });

  it('derives Retry-After from a retryable engine error', () => {
    assert.equal(retryAfterOf(new EngineError('ERR_OVERLOADED', 'busy', { details: { retryAfterMs: 1200 } })), '2');
    assert.equal(retryAfterOf(new EngineError('ERR_OVERLOADED', 'busy')), null);
    assert.equal(retryAfterOf(new Error('x')), null);
  });

  it('names problem types after their code', () => {
    assert.equal(problemType('ERR_PAYLOAD_TOO_LARGE'), 'https://cadre.dev/problems/payload-too-large');
  });
});
