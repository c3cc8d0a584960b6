/**
 * security-ai `scan` through the real server (ULTRA, the built bundle): the code analysis finds every
 * sink class on the vulnerable app, nothing on its fixed twin, and skips the vendored files it names.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { api, freshKey, startFleetServer, type Json } from '../../support/fleet-server';
import { fixtureProject } from '../../support/fixture-project';
import { ensureBuilt, stop } from '../../support/server-process';
import type { Finding } from '../../../server/src/skills/findings/finding';

const TAINT_RULES = ['code/sql-injection', 'code/nosql-injection', 'code/command-injection', 'code/code-injection', 'code/path-traversal', 'code/ssrf',
  'code/open-redirect', 'code/xss', 'code/prototype-pollution', 'code/regex-injection'];

describe('security-ai scan over HTTP: code analysis of a vulnerable app and its fixed twin', function () {
  this.timeout(120_000);
  let server: Awaited<ReturnType<typeof startFleetServer>>;
  const made: string[] = [];

  before(async () => {
    ensureBuilt();
    server = await startFleetServer({ skills: false });
  });
  after(async () => {
    await stop(server);
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  async function scan(fixture: string): Promise<{ findings: Finding[]; limitations: string[]; checks: Array<{ id: string; status: string; files?: string[] }> }> {
    const workspace = fixtureProject({ copy: { '.': `code-analysis/${fixture}` }, git: false, prefix: `cadre-${fixture}-` }, made);
    const a = api(server.url, await freshKey(server.url));
    const r = await a.post('/api/agents/security-ai/scan', { prompt: 'security scan', source: workspace, intelligence: 'ultra' });
    assert.equal(r.status, 202, r.text);
    const done = await a.until(r.body['statusUrl'] as string, undefined, 90_000);
    assert.equal(done['status'], 'completed', JSON.stringify(done).slice(0, 2000));
    const out = done['output'] as { attachment?: string; data?: Json } & Json;
    const full = (out.attachment ? JSON.parse(readFileSync(path.join(server.dataDir, 'attachments', out.attachment), 'utf8')) : out) as { data?: Json } & Json;
    const data = (full.data ?? full) as unknown as { findings: Finding[]; limitations: string[]; checks: Array<{ id: string; status: string; files?: string[] }> };
    return data;
  }

  it('vulnerable app: every taint sink class found with its source → sink path and CWE; vendored files skipped and named', async () => {
    const d = await scan('vulnerable-express');
    assert.equal(d.checks.find((c) => c.id === 'code')?.status, 'ran');
    const code = d.findings.filter((f) => f.ruleId.startsWith('code/') || f.ruleId.startsWith('review/'));
    for (const rule of TAINT_RULES) assert.ok(code.some((f) => f.ruleId === rule), `${rule} found`);
    const sql = code.find((f) => f.ruleId === 'code/sql-injection' && f.file === 'routes/search.ts' && f.range.startLine === 18)!;
    assert.match(sql.message, /req\.body\.email → email → sql → db\.query\(\).*\(CWE-89\)/);
    for (const v of ['public/vendor/jquery.min.js', 'public/js/raphael-min.js', 'third/legacy.js']) {
      assert.ok(!code.some((f) => f.file === v), `${v} not analyzed`);
    }
    assert.ok(d.limitations.some((l) => /5 vendored, minified or generated JS\/TS file\(s\) were not analyzed/.test(l)), d.limitations.join('\n'));
  });

  it('fixed twin: no code finding', async () => {
    const d = await scan('fixed-express');
    assert.equal(d.checks.find((c) => c.id === 'code')?.status, 'ran');
    assert.deepEqual(d.findings.filter((f) => f.ruleId.startsWith('code/') || f.ruleId.startsWith('review/')).map((f) => `${f.ruleId} ${f.file}:${f.range.startLine}`), []);
  });
});
