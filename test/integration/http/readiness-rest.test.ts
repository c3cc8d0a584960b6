import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import { api, startFleetServer } from '../../support/fleet-server';
import { fixtureProject } from '../../support/fixture-project';
import { stop, type ServerProcess } from '../../support/server-process';

interface Check { id: string; status: string; evidence: string }

/**
 * Deployment readiness is the same from every door (issue 18: it was assembled in the LSP door only):
 * deploy-ai readiness asked as a direct action over REST gets the engine's facts (last review, pending
 * approvals) from the execution service, so its review and approvals checks are judged, not "unknown".
 */
describe('readiness over REST gets the engine\'s facts', function () {
  this.timeout(120_000);
  let server: ServerProcess & { url: string; dataDir: string; workspace: string };
  const made: string[] = [];
  before(async () => {
    server = await startFleetServer({ skills: false });
  });
  after(async () => {
    await stop(server);
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('after a review, GET /api/agents/deploy-ai/readiness judges the review and approvals checks with the engine\'s records', async () => {
    const a = api(server.url);
    const ws = fixtureProject({ files: { 'src/util.js': 'export function add(a, b) {\n  return a + b;\n}\n', 'test/util.test.js': 'import { add } from "../src/util.js";\n' } }, made);
    const before = await a.get(`/api/agents/deploy-ai/readiness?source=${encodeURIComponent(ws)}`);
    assert.equal(before.status, 200, before.text);
    const checksBefore = (before.body['output'] as { checks: Check[] }).checks;
    assert.equal(checksBefore.find((c) => c.id === 'approvals')?.status, 'pass', 'pending approvals counted by the engine (0), not "not given"');

    const review = await a.post('/api/agents/review-ai/review', { prompt: 'review src/util.js', source: ws, input: { files: ['src/util.js'] } });
    assert.equal(review.status, 202, review.text);
    const done = await a.until(review.body['statusUrl'] as string, undefined, 60_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));

    const after = await a.get(`/api/agents/deploy-ai/readiness?source=${encodeURIComponent(ws)}`);
    assert.equal(after.status, 200, after.text);
    const reviewCheck = (after.body['output'] as { checks: Check[] }).checks.find((c) => c.id === 'review')!;
    assert.notEqual(reviewCheck.status, 'unknown', reviewCheck.evidence);
    const reviewId = review.body['executionId'] as string;
    assert.match(reviewId, /^act_/);
    assert.ok(reviewCheck.evidence.includes(reviewId), `names the review execution ${reviewId}: ${reviewCheck.evidence}`);
  });
});
