import { strict as assert } from 'node:assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Artifact, SkillContext } from '../../../../server/src/engine/rigor/skill';
import { runSkill, skillContext } from '../../../support/skill-context';
import { fingerprint } from '../../../../server/src/skills/findings/finding';
import { scanDependenciesOnline } from '../../../../server/src/skills/security/dependencies';
import { bulkAdvisoryUrl, ghsaOf, matchNpmAdvisories, npmSeverity, NpmAdvisoryClient, onlineRequest, redactUrl, type NpmAdvisory } from '../../../../server/src/skills/security/npm-advisories';
import { parseNpmRange, satisfiesNpmRange } from '../../../../server/src/skills/security/semver';
import { scanSkill, type ScanCheck, type SecurityReportData } from '../../../../server/src/skills/security/skill';

/** What the fake registry saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, string[]>;
}

type Mode = 'ok' | '500' | 'hang' | 'redirect' | 'not-json';

const LODASH: NpmAdvisory = {
  id: 1106913, url: 'https://github.com/advisories/GHSA-35jh-r3h4-6jhm', title: 'Command Injection in lodash', severity: 'high',
  vulnerable_versions: '<4.17.21', cwe: ['CWE-77', 'CWE-94'], cvss: { score: 7.2, vectorString: 'CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H' },
};
const SEMVER: NpmAdvisory = {
  id: 1101088, url: 'https://github.com/advisories/GHSA-c2qf-rxjj-qqgw', title: 'semver vulnerable to Regular Expression Denial of Service', severity: 'moderate',
  vulnerable_versions: '>=7.0.0 <7.5.2', cwe: ['CWE-1333'], cvss: { score: 5.3, vectorString: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L' },
};
/** Advisories the fake registry knows, by package name (it answers for the names asked about only). */
const DB: Record<string, NpmAdvisory[]> = { lodash: [LODASH], semver: [SEMVER], 'not-asked': [{ ...LODASH, id: 1 }] };

/** A loopback server speaking the bulk endpoint's wire format (gzip JSON in, JSON out). */
class FakeRegistry {
  readonly requests: Seen[] = [];
  mode: Mode = 'ok';
  private server: Server;
  url = '';

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, string[]> = {};
      try {
        body = JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'));
      } catch { /* recorded as empty */ }
      this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/-/npm/v1/security/advisories/bulk') return void res.writeHead(404).end();
      switch (this.mode) {
        case 'hang': return; // never answers
        case '500': return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
        case 'redirect': return void res.writeHead(302, { location: 'http://example.invalid/' }).end();
        case 'not-json': return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
        default: {
          const out: Record<string, NpmAdvisory[]> = {};
          for (const name of Object.keys(body)) if (DB[name]) out[name] = DB[name]!;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
        }
      }
    });
  }
}

/** package-lock v3 with lodash@4.17.20 (vulnerable) and semver@7.5.4 (outside its advisory's range). */
function lockfile(): string {
  return `${JSON.stringify({
    name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true,
    packages: {
      '': { name: 'app', version: '1.0.0', dependencies: { lodash: '^4.17.0', semver: '^7.5.0' } },
      'node_modules/lodash': { version: '4.17.20', resolved: 'https://registry.npmjs.org/lodash/-/lodash-4.17.20.tgz' },
      'node_modules/semver': { version: '7.5.4', resolved: 'https://registry.npmjs.org/semver/-/semver-7.5.4.tgz' },
    },
  }, null, 2)}\n`;
}

const OSV_LODASH = [{
  id: 'GHSA-35jh-r3h4-6jhm', aliases: ['CVE-2021-23337'], summary: 'Command Injection in lodash',
  affected: [{ package: { ecosystem: 'npm', name: 'lodash' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '4.17.21' }] }] }],
  database_specific: { severity: 'HIGH' },
}];

function workspace(osv = false): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'cadre-npm-adv-'));
  writeFileSync(path.join(ws, 'package-lock.json'), lockfile());
  if (osv) {
    mkdirSync(path.join(ws, '.cadre'));
    writeFileSync(path.join(ws, '.cadre/advisories.json'), JSON.stringify(OSV_LODASH));
  }
  return ws;
}

const ctx = (ws: string, tier: string, input: Record<string, unknown>, allowed: (k: string) => boolean = () => true, signal = new AbortController().signal): SkillContext =>
  skillContext({ agentId: 'security-ai', action: 'scan', workspace: ws, tier, input, allowed, signal, prompt: 'security scan' });

async function run(c: SkillContext): Promise<{ artifact: Artifact; data: SecurityReportData; deps: ScanCheck; proposed: Array<{ kind: string; external?: boolean; description: string }> }> {
  const { proposed, generated: artifact } = await runSkill(scanSkill, c);
  const data = artifact.data as SecurityReportData;
  return { artifact, data, deps: data.checks!.find((x) => x.id === 'dependencies')!, proposed };
}

const depFindings = (d: SecurityReportData) => d.findings.filter((f) => f.ruleId.startsWith('deps/'));

describe('security-ai scan: npm registry bulk advisories (loopback registry)', () => {
  let reg: FakeRegistry;
  before(async () => { reg = await new FakeRegistry().start(); });
  after(async () => { await reg.stop(); });
  beforeEach(() => { reg.requests.length = 0; reg.mode = 'ok'; });

  it('online + allowed + PRO: one gzip POST in npm\'s wire format; the vulnerable version gives one finding, the safe one none', async () => {
    const ws = workspace();
    const { data, deps, proposed, artifact } = await run(ctx(ws, 'pro', { online: { registry: reg.url } }));
    // proposed to ACMF as an external http_request naming the endpoint
    const act = proposed.find((a) => a.kind === 'http_request');
    assert.ok(act && act.external === true);
    assert.ok(act.description.includes(`${reg.url}-/npm/v1/security/advisories/bulk`));
    assert.deepEqual(artifact.actionsTaken, [act], 'the request sent is recorded as taken, as proposed');
    // the request, as npm sends it
    assert.equal(reg.requests.length, 1);
    const r = reg.requests[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/-/npm/v1/security/advisories/bulk');
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.deepEqual(r.body, { lodash: ['4.17.20'], semver: ['7.5.4'] });
    // the finding
    assert.equal(deps.status, 'ran');
    assert.equal(deps.online!.status, 'ran');
    assert.equal(deps.online!.findings, 1);
    assert.equal(deps.online!.advisories, 2);
    const f = depFindings(data);
    assert.equal(f.length, 1);
    assert.equal(f[0]!.ruleId, 'deps/GHSA-35jh-r3h4-6jhm');
    assert.equal(f[0]!.severity, 'high');
    assert.equal(f[0]!.file, 'package-lock.json');
    assert.equal(f[0]!.snippet, 'lodash@4.17.20');
    assert.equal(f[0]!.range.startLine, 15);
    assert.match(f[0]!.message, /Command Injection in lodash/);
    assert.match(f[0]!.message, /https:\/\/github\.com\/advisories\/GHSA-35jh-r3h4-6jhm/);
    assert.match(f[0]!.message, /npm advisory 1106913/);
    assert.equal(f[0]!.fingerprint, fingerprint('deps/GHSA-35jh-r3h4-6jhm', 'package-lock.json', 'lodash@4.17.20'));
    const rules = (data.sarif as any).runs[0].tool.driver.rules as Array<{ id: string }>;
    assert.ok(rules.some((x) => x.id === 'deps/GHSA-35jh-r3h4-6jhm'));
    assert.match(artifact.text!, /Online npm advisories \(http:\/\/127\.0\.0\.1:\d+\/-\/npm\/v1\/security\/advisories\/bulk\): ran, 1\/1 request\(s\) answered/);
    assert.ok(!data.limitations.some((l) => /not available/.test(l)));
    // a second run gives the same fingerprint
    const again = await run(ctx(ws, 'pro', { online: { registry: reg.url } }));
    assert.deepEqual(depFindings(again.data).map((x) => x.fingerprint), [f[0]!.fingerprint]);
  });

  it('de-duplicates against the local OSV file (same GHSA id): one finding for lodash, counted as a duplicate', async () => {
    const { data, deps } = await run(ctx(workspace(true), 'pro', { online: { registry: reg.url } }));
    assert.equal(reg.requests.length, 1);
    const f = depFindings(data);
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /CVE-2021-23337/, 'the OSV finding is the one kept');
    assert.equal(deps.online!.duplicates, 1);
    assert.equal(deps.online!.findings, 0);
  });

  it('online not set: no request; the check says why the registry was not asked', async () => {
    const { data, deps, proposed, artifact } = await run(ctx(workspace(true), 'pro', {}));
    assert.equal(reg.requests.length, 0);
    assert.ok(!proposed.some((a) => a.kind === 'http_request'));
    assert.equal(deps.status, 'ran');
    assert.equal(artifact.actionsTaken, undefined);
    assert.equal(deps.online!.status, 'skipped');
    assert.match(deps.online!.reason!, /input\.online is not set/);
    assert.ok(data.limitations.some((l) => /local OSV file only.*input\.online is not set/.test(l)));
    assert.match(artifact.text!, /Online npm advisories: skipped \(input\.online is not set/);
  });

  it('ACMF did not allow http_request: no request, skipped with the reason; the local scan still counts', async () => {
    const { data, deps } = await run(ctx(workspace(true), 'pro', { online: { registry: reg.url } }, (k) => k !== 'http_request'));
    assert.equal(reg.requests.length, 0);
    assert.equal(deps.status, 'ran');
    assert.equal(deps.online!.status, 'skipped');
    assert.match(deps.online!.reason!, /ACMF did not allow the http_request action/);
    assert.equal(depFindings(data).length, 1);
  });

  it('without a local file and not allowed: the check is unavailable and says both', async () => {
    const { deps } = await run(ctx(workspace(false), 'pro', { online: { registry: reg.url } }, () => false));
    assert.equal(deps.status, 'unavailable');
    assert.match(deps.reason!, /no advisory file/);
    assert.match(deps.online!.reason!, /ACMF did not allow/);
  });

  it('CORE tier: nothing proposed, no request, the dependency check and the lookup are skipped (PRO)', async () => {
    const { deps, proposed } = await run(ctx(workspace(true), 'core', { online: { registry: reg.url } }));
    assert.equal(reg.requests.length, 0);
    assert.ok(!proposed.some((a) => a.kind === 'http_request'));
    assert.equal(deps.status, 'skipped');
    assert.equal(deps.online!.status, 'skipped');
    assert.match(deps.online!.reason!, /PRO/);
  });

  it('a 500 answer is reported; the local OSV scan still returns its findings', async () => {
    reg.mode = '500';
    const { data, deps } = await run(ctx(workspace(true), 'pro', { online: { registry: reg.url } }));
    assert.equal(reg.requests.length, 1);
    assert.equal(deps.status, 'ran');
    assert.equal(deps.online!.status, 'failed');
    assert.match(deps.online!.errors![0]!, /HTTP 500/);
    assert.ok(data.limitations.some((l) => /npm registry lookup failed: .*HTTP 500/.test(l)));
    assert.equal(depFindings(data).length, 1, 'the OSV finding is kept');
  });

  it('a 500 answer without a local file: the dependency check is unavailable, the step does not crash', async () => {
    reg.mode = '500';
    const { deps, artifact } = await run(ctx(workspace(false), 'pro', { online: { registry: reg.url } }));
    assert.equal(deps.status, 'unavailable');
    assert.match(deps.reason!, /did not answer/);
    assert.ok(!artifact.unable);
  });

  it('a registry that never answers: the timeout is reported, the local scan still returns', async () => {
    reg.mode = 'hang';
    const started = Date.now();
    const { data, deps } = await run(ctx(workspace(true), 'pro', { online: { registry: reg.url, timeoutMs: 300 } }));
    assert.ok(Date.now() - started < 10_000);
    assert.equal(deps.online!.status, 'failed');
    assert.match(deps.online!.errors![0]!, /timed out/);
    assert.equal(depFindings(data).length, 1);
  });

  it('a registry that never answers, and the step is aborted: the abort is reported, the local scan still returns', async () => {
    reg.mode = 'hang';
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error('cancelled')), 200);
    try {
      const { data, deps } = await run(ctx(workspace(true), 'pro', { online: { registry: reg.url } }, () => true, ac.signal));
      assert.equal(deps.online!.status, 'failed');
      assert.match(deps.online!.errors![0]!, /aborted/);
      assert.equal(depFindings(data).length, 1);
    } finally {
      clearTimeout(timer);
    }
  });

  it('a redirect or a non-JSON answer is reported, not followed or thrown', async () => {
    reg.mode = 'redirect';
    const client = new NpmAdvisoryClient(reg.url, 2000);
    const a = await client.lookup(new Map([['lodash', new Set(['4.17.20'])]]));
    assert.equal(a.answered, 0);
    assert.match(a.errors[0]!, /HTTP 302/);
    reg.mode = 'not-json';
    const b = await new NpmAdvisoryClient(reg.url, 2000).lookup(new Map([['lodash', new Set(['4.17.20'])]]));
    assert.match(b.errors[0]!, /not JSON/);
  });

  it('batches large lock files (500 names a request) and asks about each name@version once per client', async () => {
    const client = new NpmAdvisoryClient(reg.url, 5000);
    const wanted = new Map<string, Set<string>>();
    for (let i = 0; i < 1100; i++) wanted.set(`pkg-${String(i).padStart(4, '0')}`, new Set(['1.0.0', '1.1.0']));
    wanted.set('lodash', new Set(['4.17.20']));
    const out = await client.lookup(wanted);
    assert.equal(out.requests, 3);
    assert.equal(out.answered, 3);
    assert.deepEqual(reg.requests.map((r) => Object.keys(r.body).length), [500, 500, 101]);
    assert.deepEqual(reg.requests.flatMap((r) => Object.values(r.body)).filter((v) => v.length !== 2 && v[0] !== '4.17.20'), []);
    assert.deepEqual([...out.advisories.keys()], ['lodash']);
    const again = await client.lookup(new Map([['lodash', new Set(['4.17.20', '4.17.15'])]]));
    assert.equal(reg.requests.length, 4);
    assert.deepEqual(reg.requests[3]!.body, { lodash: ['4.17.15'] });
    assert.equal(again.advisories.get('lodash')!.length, 1);
  });

  it('a refused connection is reported as a network error', async () => {
    const closed = await new FakeRegistry().start();
    const url = closed.url;
    await closed.stop();
    const r = await scanDependenciesOnline(workspace(true), ['package-lock.json', '.cadre/advisories.json'], undefined, new NpmAdvisoryClient(url, 2000));
    assert.equal(r.online!.status, 'failed');
    assert.match(r.online!.errors![0]!, /network error: ECONNREFUSED/);
  });
});

describe('npm advisories: request options, severity, matching', () => {
  it('registry: input, then npm_config_registry, then registry.npmjs.org; a path prefix is kept; credentials are redacted', () => {
    assert.deepEqual(onlineRequest(undefined, {}), { requested: false });
    assert.deepEqual(onlineRequest(true, {}), { requested: true, registry: 'https://registry.npmjs.org/', timeoutMs: 30000 });
    assert.deepEqual(onlineRequest(true, { npm_config_registry: 'https://npm.example.com/api/npm/remote' }), { requested: true, registry: 'https://npm.example.com/api/npm/remote/', timeoutMs: 30000 });
    assert.deepEqual(onlineRequest({ registry: 'http://127.0.0.1:4873', timeoutMs: 500 }, { npm_config_registry: 'https://other/' }), { requested: true, registry: 'http://127.0.0.1:4873/', timeoutMs: 500 });
    assert.ok('error' in (onlineRequest({ registry: 'ftp://x/' }, {}) as object));
    assert.ok('error' in (onlineRequest('yes', {}) as object));
    assert.ok('error' in (onlineRequest({ timeoutMs: -1 }, {}) as object));
    assert.equal(bulkAdvisoryUrl('https://npm.example.com/api/npm/remote/'), 'https://npm.example.com/api/npm/remote/-/npm/v1/security/advisories/bulk');
    assert.equal(bulkAdvisoryUrl('https://registry.npmjs.org'), 'https://registry.npmjs.org/-/npm/v1/security/advisories/bulk');
    assert.equal(redactUrl('https://user:s3cret@npm.example.com/'), 'https://npm.example.com/');
  });

  it('severity: moderate → medium, unknown → CVSS score, else medium; GHSA id from the URL', () => {
    assert.equal(npmSeverity(SEMVER), 'medium');
    assert.equal(npmSeverity({ ...LODASH, severity: 'critical' }), 'critical');
    assert.equal(npmSeverity({ id: 1, vulnerable_versions: '*', cvss: { score: 9.8, vectorString: null } }), 'critical');
    assert.equal(npmSeverity({ id: 1, vulnerable_versions: '*' }), 'medium');
    assert.equal(ghsaOf('https://github.com/advisories/GHSA-35JH-R3H4-6JHM'), 'GHSA-35jh-r3h4-6jhm');
    assert.equal(ghsaOf('https://www.npmjs.com/advisories/1179'), undefined);
  });

  it('matching: one finding per name@version and advisory; without a GHSA id the rule is deps/npm-<id>; unreadable ranges counted', () => {
    const pkgs = [
      { name: 'minimist', version: '1.2.5', path: 'node_modules/minimist', line: 3 },
      { name: 'minimist', version: '1.2.5', path: 'node_modules/a/node_modules/minimist', line: 9 },
      { name: 'minimist', version: '1.2.6', path: 'node_modules/b/node_modules/minimist', line: 12 },
    ];
    const advs = new Map<string, NpmAdvisory[]>([['minimist', [
      { id: 1179, url: 'https://www.npmjs.com/advisories/1179', title: 'Prototype Pollution', severity: 'low', vulnerable_versions: '<0.2.1 || >=1.0.0 <1.2.3' },
      { id: 2000, title: 'Something', severity: 'critical', vulnerable_versions: '>=1.2.0 <1.2.6' },
      { id: 3000, title: 'Unreadable', severity: 'high', vulnerable_versions: 'not a range!' },
    ]]]);
    const m = matchNpmAdvisories(pkgs, advs, './yarn.lock');
    assert.deepEqual(m.findings.map((f) => `${f.file}:${f.range.startLine} ${f.snippet} ${f.ruleId} ${f.severity}`), ['yarn.lock:3 minimist@1.2.5 deps/npm-2000 critical']);
    assert.match(m.findings[0]!.message, /2 entries/);
    assert.equal(m.unreadableRanges, 2, 'once per name@version group');
    assert.deepEqual(m.rules.map((r) => r.id), ['deps/npm-2000']);
  });

  it('npm range syntax: comparators, sets, ||, ^, ~, x-ranges, hyphens, *, prereleases included', () => {
    const t = (v: string, r: string) => satisfiesNpmRange(v, r);
    assert.equal(t('1.2.2', '<1.2.3'), true);
    assert.equal(t('1.2.3', '<1.2.3'), false);
    assert.equal(t('1.2.3-rc.1', '<1.2.3'), true, 'a prerelease of the fix is below it');
    assert.equal(t('2.0.5', '>=2.0.0 <2.1.0'), true);
    assert.equal(t('2.1.0', '>=2.0.0 <2.1.0'), false);
    assert.equal(t('1.9.0', '>=2.0.0 <2.1.0'), false);
    assert.equal(t('2.0.5', '>= 2.0.0 < 2.1.0'), true, 'spaces after operators');
    assert.equal(t('0.2.0', '<0.2.1 || >=1.0.0 <1.2.3'), true);
    assert.equal(t('0.5.0', '<0.2.1 || >=1.0.0 <1.2.3'), false);
    assert.equal(t('1.2.2', '<0.2.1 || >=1.0.0 <1.2.3'), true);
    assert.equal(t('1.9.9', '^1.2.3'), true);
    assert.equal(t('2.0.0', '^1.2.3'), false);
    assert.equal(t('2.0.0-rc.1', '^1.2.3'), false);
    assert.equal(t('1.2.2', '^1.2.3'), false);
    assert.equal(t('0.2.9', '^0.2.3'), true);
    assert.equal(t('0.3.0', '^0.2.3'), false);
    assert.equal(t('0.0.3', '^0.0.3'), true);
    assert.equal(t('0.0.4', '^0.0.3'), false);
    assert.equal(t('1.2.9', '~1.2.3'), true);
    assert.equal(t('1.3.0', '~1.2.3'), false);
    assert.equal(t('1.9.0', '~1'), true);
    assert.equal(t('1.4.0', '1.x'), true);
    assert.equal(t('2.0.0', '1.x'), false);
    assert.equal(t('1.2.7', '1.2.*'), true);
    assert.equal(t('1.3.0', '1.2.*'), false);
    assert.equal(t('1.3.0', '1.2.3 - 1.4'), true);
    assert.equal(t('1.4.9', '1.2.3 - 1.4'), true);
    assert.equal(t('1.5.0', '1.2.3 - 1.4'), false);
    assert.equal(t('1.2.2', '1.2.3 - 1.4'), false);
    assert.equal(t('2.3.4', '1.2.3 - 2.3.4'), true);
    assert.equal(t('9.9.9', '*'), true);
    assert.equal(t('0.0.1-alpha', '*'), true);
    assert.equal(t('9.9.9', ''), true);
    assert.equal(t('1.3.0', '>1.2'), true);
    assert.equal(t('1.2.9', '>1.2'), false);
    assert.equal(t('1.2.9', '<=1.2'), true);
    assert.equal(t('1.3.0', '<=1.2'), false);
    assert.equal(t('1.1.9', '<1.2'), true);
    assert.equal(t('1.2.0', '<1.2'), false);
    assert.equal(t('1.2.3', '=1.2.3'), true);
    assert.equal(t('1.2.3', 'v1.2.3'), true);
    assert.equal(t('1.2.4', '1.2.3'), false);
    assert.equal(t('8.0.0-alpha.2', '<7.23.2 || >=8.0.0-alpha <8.0.0-alpha.4'), true);
    assert.equal(t('8.0.0-alpha.4', '<7.23.2 || >=8.0.0-alpha <8.0.0-alpha.4'), false);
    assert.equal(parseNpmRange('>=1.0.0 <abc'), undefined);
    assert.equal(t('1.0.0', 'garbage'), undefined);
    assert.equal(t('not-a-version', '<2.0.0'), undefined);
  });
});
