import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { api, freshKey, startFleetServer } from '../../support/fleet-server';
import { ensureBuilt, ROOT, stop } from '../../support/server-process';

/** The embedded skills (dist/skills.js) run in the real server's agent workers. */
describe('embedded skills through the API', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  let a: ReturnType<typeof api>;
  before(async () => {
    ensureBuilt();
    server = await startFleetServer({ skills: false });
    a = api(server.url, await freshKey(server.url));
  });
  after(async () => stop(server));

  it('security-ai finds the planted secrets of a workspace, redacted, with SARIF', async () => {
    const source = path.join(ROOT, 'test/fixtures/secrets');
    const r = await a.post('/api/agents/security-ai/secrets', { prompt: 'find secrets', source });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    // A large output is stored as an attachment (the answer carries a preview): read the stored file.
    const out = done['output'] as { attachment?: string };
    const data = (out.attachment ? JSON.parse(readFileSync(path.join(server.dataDir, 'attachments', out.attachment), 'utf8')) : out) as { findings: Array<{ ruleId: string; file: string; snippet?: string }>; sarif: { version: string } };
    assert.ok(data.findings.length >= 10, `${data.findings.length} findings`);
    assert.equal(data.sarif.version, '2.1.0');
    // No planted secret value leaves the step, neither in the answer nor in the stored attachment: each
    // planted line's secret-looking tokens (letters and digits, 16+ characters) are looked for verbatim.
    const manifest = JSON.parse(readFileSync(path.join(source, 'manifest.json'), 'utf8')) as { secrets: Array<{ file: string; line: number }> };
    const leftIn = JSON.stringify(done) + JSON.stringify(data);
    const values = manifest.secrets.flatMap((p) => {
      const line = readFileSync(path.join(source, p.file), 'utf8').split('\n')[p.line - 1] ?? '';
      // (A host name next to a URL's password is not the secret: `cluster0.ab1cd.mongodb.net` stays visible.)
      return (line.match(/[A-Za-z0-9_\-/+=.]{16,}/g) ?? []).filter((t) => /\d/.test(t) && /[A-Za-z]/.test(t) && !/^[a-z0-9.-]+\.[a-z]{2,}\/?$/i.test(t));
    });
    assert.ok(values.length >= 10, `${values.length} planted values found in the corpus`);
    const leaked = values.filter((v) => leftIn.includes(v));
    assert.deepEqual(leaked, [], 'planted secret values in the answer or its attachment');
  });

  it('debug-ai explains a Node stack trace and points at the workspace line', async () => {
    const trace = readFileSync(path.join(ROOT, 'test/fixtures/traces/node-null-deref.txt'), 'utf8');
    const r = await a.post('/v1/admin/rigor/invoke/debug-ai', { prompt: trace, source: path.join(ROOT, 'test/fixtures/traces/workspace') });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const out = done['output'] as { classification?: { category: string }; origin?: { path: string; line: number } };
    assert.ok(out.classification, JSON.stringify(out).slice(0, 400));
    assert.match(out.origin?.path ?? '', /user-service\.js$/);
  });

  it('req-ai writes user stories, and planner-ai plans from them in one workflow', async () => {
    const r = await a.post('/v1/customer/workflow', {
      name: 'stories then plan', pattern: 'sequential',
      steps: [{ id: 'stories', agent: 'req-ai', action: 'analyze' }, { id: 'plan', agent: 'planner-ai', action: 'plan', depends_on: ['stories'] }],
      input: { prompt: 'Admins can export the audit log as CSV so that auditors can review it. Users can reset their password when they forget it.' },
    });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string);
    assert.equal(done['status'], 'completed', JSON.stringify(done['error']));
    const plan = (done['output'] as { result: { criticalPath: string[]; tasks: unknown[] } }).result;
    assert.ok(plan.tasks.length >= 2);
    assert.ok(plan.criticalPath.length >= 1);
  });

  it('an agent that cannot run says so at once, and no execution is left behind', async () => {
    // coder-ai generate needs a language model and none is configured (issue 14 gave govern-ai compliance,
    // the last default action without one, its embedded skill).
    for (const [agent, why] of [['coder-ai', /needs a language model/]] as const) {
      const r = await a.post(`/v1/admin/rigor/invoke/${agent}`, { prompt: 'write a parser' });
      assert.equal(r.status, 501, r.text);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      assert.equal(r.body['code'], 'ERR_SKILL_UNAVAILABLE');
      assert.match(String(r.body['detail']), why);
    }
  });
});
