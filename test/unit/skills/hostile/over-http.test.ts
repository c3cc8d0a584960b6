/**
 * The audit's reproductions, over real HTTP against the bundled server: review-ai and security-ai on
 * a repository with every git execution vector create no marker; debug-ai given a trace naming the
 * server's own store.json (with the data directory as the source) returns none of it.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { api, freshKey, startFleetServer } from '../../../support/fleet-server';
import { ensureBuilt, stop } from '../../../support/server-process';
import { hostileRepo, touchAll } from '../../../fixtures/hostile/build';

describe('hostile repositories over HTTP', function () {
  this.timeout(120_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let a: ReturnType<typeof api>;
  const roots: string[] = [];
  // The server's data directory lies inside a project folder given as a source.
  const project = mkdtempSync(path.join(tmpdir(), 'cadre-hostile-project-'));
  roots.push(project);
  before(async () => {
    ensureBuilt();
    server = await startFleetServer({ skills: false, dataDir: path.join(project, 'cadre-data') });
    a = api(server.url, await freshKey(server.url));
  });
  after(async () => {
    await stop(server);
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('POST /api/agents/review-ai/review and security-ai secrets (input.since) on a repository with every vector run nothing of it', async () => {
    const repo = hostileRepo();
    roots.push(path.dirname(repo.dir));
    touchAll(repo.dir);
    const review = await a.post('/api/agents/review-ai/review', { prompt: 'review', source: repo.dir });
    assert.equal(review.status, 202, review.text);
    const done = await a.until(review.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const secrets = await a.post('/api/agents/security-ai/secrets', { prompt: 'secrets', source: repo.dir, input: { since: 'HEAD' } });
    assert.equal(secrets.status, 202, secrets.text);
    const done2 = await a.until(secrets.body['statusUrl'] as string);
    assert.equal(done2['status'], 'completed', JSON.stringify(done2['error']));
    assert.deepEqual(repo.fired(), []);
  });

  it("debug-ai returns no line of the server's data directory (store, audit), even inside the source", async () => {
    // A source file of the project so that the trace maps something.
    writeFileSync(path.join(project, 'app.js'), 'function f(o) {\n  return o.name;\n}\n');
    // Every file of the data directory (store journal or store.json, audit files, events), line 1 and 2.
    const stored = readdirSync(server.dataDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'app.js');
    assert.ok(stored.some((e) => /^store/.test(e.name)), 'the data directory holds the store');
    const trace = [
      "TypeError: Cannot read properties of undefined (reading 'name')",
      `    at f (${path.join(project, 'app.js')}:2:10)`,
      ...stored.flatMap((e) => [1, 2].map((l) => `    at g (${path.join(e.parentPath ?? e.path, e.name)}:${l}:1)`)),
      '    at h (/etc/passwd:1:1)',
    ].join('\n');
    const r = await a.post('/v1/admin/rigor/invoke/debug-ai', { prompt: trace, source: project });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const s = JSON.stringify(done);
    assert.ok(s.includes('return o.name;'), `the project's own frame is still read: ${s.slice(0, 300)}`);
    assert.ok(!/apiKeys|\\"hash\\"|"hash"|schemaVersion|prevHash/.test(s), `data directory content returned: ${s.slice(0, 400)}`);
    assert.ok(!/root:x:0:0/.test(s));
  });
});
