/**
 * The GitHub integration in the bundled server (dist/server.js) against the loopback GitHub stand-in:
 * a credential secret stored over HTTP (snake_case and bad PEM refused), a registration (a non-PR-capable
 * agent refused), coder-ai's refactor on a real repository becoming one PR through the ACMF flow,
 * review-ai on its diff, signed webhooks (bad signature 401, redelivery deduped) closing the loop
 * with the review and CI results and the merge (`code.merged`), the planted PEM nowhere in the data
 * directory or the logs, and a SIGKILL between "branch created" and "PR opened" ending in one PR.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';
import { openSse } from '../../support/sse-client';
import { pdEvent } from '../../fixtures/projects/payloads';
import { answer, byAgent, FakeProvider } from '../../unit/llm/fake-provider';
import { GithubStandin, rsaKeyPair } from '../../unit/github/github-standin';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const EXAMPLES = require('@octokit/webhooks-examples') as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
const example = (name: string, action: string) => structuredClone(EXAMPLES.find((e) => e.name === name)!.examples.find((x) => x['action'] === action)!);

const sh = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const APP = 31337;
const INST = 4711;
const WEBHOOK = randomBytes(32).toString('hex');
const SECRET = 'cadre/integrations/local/github';

type Json = Record<string, unknown>;
async function call(url: string, key: string | null, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; text: string }> {
  const res = await fetch(url + route, {
    method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as Json, text };
}

function repoWithSecret(): string {
  const repo = realpathSync(tempDir('cadre-gh-repo-'));
  sh(repo, 'init', '-q', '-b', 'main');
  sh(repo, 'config', 'user.name', 'Test');
  sh(repo, 'config', 'user.email', 'test@example.com');
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src/config.ts'), `export const awsKey = "${'AKIA' + 'Z7QRSTUVWXY2345A'}";\n`);
  sh(repo, 'add', '.');
  sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');
  return repo;
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

describe('github integration in the bundled server', function () {
  this.timeout(300_000);
  const running: ServerProcess[] = [];
  before(() => ensureBuilt());
  afterEach(async () => { for (const p of running.splice(0)) await stop(p); });

  async function server(data: string, keyDir: string, ws: string): Promise<ServerProcess & { url: string }> {
    const p = await startStandalone(data, { CADRE_SECRET_KEY_FILE: path.join(keyDir, 'secret.key'), CADRE_GITHUB_WRITE_SPACING: 'off' }, ['--workspace', ws]);
    running.push(p);
    return p;
  }

  function setup() {
    const data = tempDir('cadre-gh-data-');
    writeFileSync(path.join(data, 'config.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\n');
    return { data, keyDir: tempDir('cadre-gh-key-'), ws: tempDir('cadre-gh-ws-') };
  }

  it('secret, registration, coder-ai → one PR → review-ai → signed webhooks close the loop; the PEM is nowhere else', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey }).start();
    try {
      const { data, keyDir, ws } = setup();
      const p = await server(data, keyDir, ws);
      const key = (await p.line(/^New API key \(shown once; only its hash is stored\): (\S+)$/))[1]!;
      const enc = encodeURIComponent(SECRET);

      const snake = await call(p.url, key, 'PUT', `/api/v1/secrets/${enc}`, { app_id: APP, installation_id: INST, private_key_pem: keys.privateKeyPem, webhook_secret: WEBHOOK });
      assert.equal(snake.status, 422, snake.text);
      assert.equal(snake.json['reason'], 'snake_case_fields');
      assert.match(String(snake.json['detail']), /PascalCase.*AppID=0/);
      const badPem = await call(p.url, key, 'PUT', `/api/v1/secrets/${enc}`, { AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem.slice(0, 300), WebhookSecret: WEBHOOK });
      assert.equal(badPem.status, 422);
      assert.equal(badPem.json['reason'], 'malformed_pem');
      const stored = await call(p.url, key, 'PUT', `/api/v1/secrets/${enc}`, { AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK });
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(stored.json, { name: SECRET, backend: 'local', checked: 'github' });

      const reg = { integration_name: 'service', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai', 'observe-ai'], require_review: true } };
      const refused = await call(p.url, key, 'POST', '/api/v1/integrations/github', reg);
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(refused.json['errors'], [{ field: 'body.config.agents[1]', message: 'observe-ai is not a PR-capable agent' }]);
      const created = await call(p.url, key, 'POST', '/api/v1/integrations/github', { ...reg, config: { agents: ['coder-ai'], require_review: true } });
      assert.equal(created.status, 201, created.text);
      const id = String(created.json['integration_id']);
      assert.match(id, /^int_[0-9a-f]{24}$/);
      assert.deepEqual(created.json['permissions'], { contents: 'write', pull_requests: 'write', metadata: 'read' });
      assert.equal((await call(p.url, key, 'GET', '/api/v1/integrations/github')).json['integrations'] instanceof Array, true);
      assert.equal((await call(p.url, key, 'GET', `/api/v1/integrations/github/${id}`)).json['secrets_manager_arn'], SECRET);

      const repo = repoWithSecret();
      const run = await call(p.url, key, 'POST', '/api/agents/coder-ai/refactor', { prompt: 'read secrets from the environment', source: repo });
      assert.equal(run.status, 202, run.text);
      const pr = await until('the PR on GitHub', () => gh.pulls[0]);
      assert.match(pr.head, /^cadre\/coder-ai\/act_/);
      assert.match(gh.fileAt(pr.head, 'src/config.ts')!, /process\.env/);
      await until('the labels', () => (pr.labels.length > 0 ? true : undefined), 30_000);
      assert.deepEqual(pr.labels, ['cadre', 'cadre:acmf-autonomous']);
      assert.match(pr.body, /### RIGOR Review/);
      const reviewed = await until('review-ai on the PR', async () => {
        const r = await call(p.url, key, 'GET', `/api/v1/integrations/github/${id}/pulls`);
        const row = ((r.json['pulls'] as Json[] | undefined) ?? [])[0];
        return row && row['review'] ? row : undefined;
      });
      assert.match(String(reviewed['status']), /^(review_passed|review_failed|deploying|deployed)$/);
      await until('review-ai\'s comment on the PR', () => (pr.comments.some((c) => /review-ai (passed|found problems)/.test(c)) ? true : undefined), 30_000);
      assert.match(String((reviewed['review'] as Json)['executionId']), /^act_/, 'review-ai ran as an execution of its own');

      // Webhooks: a bad signature is refused; a signed review and CI result are recorded once.
      const send = async (event: string, payload: Json, delivery = randomBytes(8).toString('hex'), secret = WEBHOOK) => {
        const body = JSON.stringify(payload);
        return call(p.url, null, 'POST', '/api/webhooks/github', body, {
          'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        });
      };
      const review = example('pull_request_review', 'submitted');
      (review['repository'] as Json)['full_name'] = gh.full;
      ((review['pull_request'] as Json)['head'] as Json)['ref'] = pr.head;
      (review['review'] as Json)['state'] = 'approved';
      ((review['review'] as Json)['user'] as Json)['type'] = 'User';
      assert.equal((await send('pull_request_review', review, 'd1', 'f'.repeat(64))).status, 401);
      const ok = await send('pull_request_review', review, 'd1');
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await send('pull_request_review', review, 'd1')).json['duplicate'], true);
      const suite = example('check_suite', 'completed');
      (suite['repository'] as Json)['full_name'] = gh.full;
      Object.assign(suite['check_suite'] as Json, { head_sha: pr.headSha, status: 'completed', conclusion: 'success' });
      assert.equal((await send('check_suite', suite)).status, 200);
      const merge = await until('CI and the approval recorded', async () => {
        const row = (((await call(p.url, key, 'GET', `/api/v1/integrations/github/${id}/pulls`)).json['pulls'] as Json[] | undefined) ?? [])[0];
        if (!row) return undefined; // 429: these polls outrun the key's plan; ask again
        const m = row['merge'] as { ci: string; missing: string[] };
        return m.ci === 'success' ? m : undefined;
      });
      assert.ok(!merge.missing.some((x) => /CI/.test(x)), merge.missing.join('; '));
      const closed = example('pull_request', 'closed');
      (closed['repository'] as Json)['full_name'] = gh.full;
      Object.assign(closed['pull_request'] as Json, { merged: true, head: { ...((closed['pull_request'] as Json)['head'] as Json), ref: pr.head, sha: pr.headSha } });
      assert.equal((await send('pull_request', closed)).status, 200);
      await until('merged', async () => ((((await call(p.url, key, 'GET', `/api/v1/integrations/github/${id}/pulls`)).json['pulls'] as Json[] | undefined) ?? [])[0]?.['status'] === 'merged' ? true : undefined));
      const audit = await call(p.url, key, 'GET', '/api/admin/audit?kind=pr.merged');
      if (audit.status === 200) assert.ok(audit.text.includes('pr.merged'));

      // The planted PEM: not in the store, the audit trail, the event logs, any answer or the server's output.
      await stop(p);
      const pemLine = keys.privateKeyPem.split('\n')[3]!;
      for (const f of files(data)) assert.ok(!readFileSync(f, 'utf8').includes(pemLine), `the PEM reached ${f}`);
      assert.ok(![...p.stdout, ...p.stderr].some((l) => l.includes(pemLine)), 'the PEM reached the log');
      assert.ok(!snake.text.includes(pemLine) && !badPem.text.includes(pemLine), 'the PEM reached an error body');
    } finally {
      await gh.close();
    }
  });

  it('SIGKILL between "branch created" and "PR opened": the restarted server opens exactly one PR', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey, hangAfterPullCreate: true }).start();
    try {
      const { data, keyDir, ws } = setup();
      const p1 = await server(data, keyDir, ws);
      const key = (await p1.line(/^New API key \(shown once; only its hash is stored\): (\S+)$/))[1]!;
      assert.equal((await call(p1.url, key, 'PUT', `/api/v1/secrets/${encodeURIComponent(SECRET)}`, { AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK })).status, 200);
      const created = await call(p1.url, key, 'POST', '/api/v1/integrations/github', { integration_name: 'svc', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai'], require_review: false } });
      assert.equal(created.status, 201, created.text);
      const repo = repoWithSecret();
      assert.equal((await call(p1.url, key, 'POST', '/api/agents/coder-ai/refactor', { prompt: 'read secrets from the environment', source: repo })).status, 202);
      // The deadline is cleared once the PR create arrived: a pending 120 s timer kept mocha from exiting.
      let deadline: NodeJS.Timeout | undefined;
      await Promise.race([gh.pullCreateArrived, new Promise((_, rej) => (deadline = setTimeout(() => rej(new Error(`no PR create; log: ${p1.stderr.slice(-10).join(' | ')}`)), 120_000)))])
        .finally(() => clearTimeout(deadline));
      assert.equal(gh.branches().length, 1);
      p1.child.kill('SIGKILL');
      await p1.exited;
      gh.opts.hangAfterPullCreate = false;
      const p2 = await server(data, keyDir, ws);
      const row = await until('the PR record open after the restart', async () => {
        const r = await call(p2.url, key, 'GET', `/api/v1/integrations/github/${String(created.json['integration_id'])}/pulls`);
        const x = ((r.json['pulls'] as Json[] | undefined) ?? [])[0];
        return x && x['status'] !== 'opening' ? x : undefined;
      });
      assert.notEqual(row['status'], 'failed', JSON.stringify(row['error']));
      assert.equal(gh.pulls.length, 1, 'exactly one PR');
      assert.equal(gh.branches().length, 1, 'exactly one branch');
      assert.equal(row['number'], 1);
    } finally {
      await gh.close();
    }
  });
  it('the incident chain on the SSE stream: a resolved PagerDuty incident gives the seven topics once each, in order, on the tenant stream; Last-Event-ID resumes', async () => {
    const keys = rsaKeyPair();
    const gh = await new GithubStandin({ appId: APP, installationId: INST, publicKey: keys.publicKey }).start();
    const streams: Array<{ close(): void }> = [];
    // coder-ai fixes an incident from its summary with a language model (a loopback OpenAI-compatible stand-in):
    // its answer raises the exhausted pool's size.
    const model = new FakeProvider();
    await model.start();
    model.fallback = byAgent({ 'coder-ai': answer(JSON.stringify({ files: [{ path: 'src/pool.ts', content: 'export const poolSize = 16;\n' }], explanation: 'the pool was exhausted under load' })) });
    try {
      const PD_SECRET = 'pd-secret-5e1f';
      const data = tempDir('cadre-gh-data-');
      writeFileSync(path.join(data, 'config.yaml'), [
        'defaults:', '  intelligence: ultra', '  acmf_mode: AUTONOMOUS',
        'integrations:', '  incident_management:', '    enabled: true', '    routing_key: ${PD_ROUTING_KEY}', '    webhooks:', '      enabled: true',
        '      endpoint: https://cadre.example.com/webhooks/pagerduty', '      secret: ${PD_WEBHOOK_SECRET}',
        'llm:', '  provider: openai-compatible', `  base_url: ${model.baseUrl}`, '  model: test-model', '  max_retries: 0', '',
      ].join('\n'));
      // PagerDuty names no repository: the chain's coder-ai works on the server's workspace.
      const repo = realpathSync(tempDir('cadre-gh-repo-'));
      sh(repo, 'init', '-q', '-b', 'main');
      sh(repo, 'config', 'user.name', 'Test');
      sh(repo, 'config', 'user.email', 'test@example.com');
      mkdirSync(path.join(repo, 'src'));
      writeFileSync(path.join(repo, 'src/pool.ts'), 'export const poolSize = 1;\n');
      sh(repo, 'add', '.');
      sh(repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');
      const env = { CADRE_SECRET_KEY_FILE: path.join(tempDir('cadre-gh-key-'), 'secret.key'), CADRE_GITHUB_WRITE_SPACING: 'off', PD_WEBHOOK_SECRET: PD_SECRET, PD_ROUTING_KEY: 'R0UT1NGKEY' };
      const p = await startStandalone(data, env, ['--workspace', repo]);
      running.push(p);
      const key = (await p.line(/^New API key \(shown once; only its hash is stored\): (\S+)$/))[1]!;
      assert.equal((await call(p.url, key, 'PUT', `/api/v1/secrets/${encodeURIComponent(SECRET)}`, { AppID: APP, InstallationID: INST, PrivateKeyPEM: keys.privateKeyPem, WebhookSecret: WEBHOOK })).status, 200);
      const created = await call(p.url, key, 'POST', '/api/v1/integrations/github', { integration_name: 'svc', github_repo: gh.full, github_installation_id: INST, api_url: gh.url, config: { agents: ['coder-ai'], require_review: true } });
      assert.equal(created.status, 201, created.text);

      // The tenant's service stream, open before anything happens (no execution_id).
      const live = await openSse(`${p.url}/api/admin/events/stream`, key);
      streams.push(live);
      assert.equal(live.status, 200);
      assert.match(live.contentType, /^text\/event-stream/);

      const raw = JSON.stringify(pdEvent('incident.resolved', 'PCHAIN1'));
      const pd = await call(p.url, null, 'POST', '/webhooks/pagerduty', raw, { 'x-pagerduty-signature': `v1=${createHmac('sha256', PD_SECRET).update(raw).digest('hex')}`, 'x-webhook-id': 'wh-chain-1' });
      assert.equal(pd.status, 200, pd.text);

      // Incident PRs are LEARNING: the chain waits at agent.github.pr.create for a person's approval.
      const firstFour = await live.waitFor(4, 120_000).catch(async (err: Error) => {
        throw new Error(`${err.message}; coder-ai: ${(await call(p.url, key, 'GET', '/v1/agents/coder-ai/status')).text.slice(0, 3000)}; log: ${p.stderr.slice(-15).join(' | ')}`);
      });
      assert.deepEqual(firstFour.map((e) => e.data['topic']), ['incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.github.pr.create']);
      const approval = await until('the incident PR approval', async () => {
        await new Promise((r) => setTimeout(r, 500));
        const r = await call(p.url, key, 'GET', '/v1/approvals');
        return ((r.json['approvals'] as Json[]) ?? []).find((x) => x['agentId'] === 'coder-ai');
      }, 30_000);
      const decided = await call(p.url, key, 'POST', `/v1/approvals/${String(approval['id'])}/decision`, { approved: true, reason: 'on-call reviewed the fix' });
      assert.equal(decided.status, 200, decided.text);

      const all = await live.waitFor(7, 120_000);
      const CHAIN = ['incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.github.pr.create', 'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging'];
      assert.deepEqual(all.map((e) => e.data['topic']), CHAIN, 'in order');
      assert.deepEqual(all.map((e) => e.id), [1, 2, 3, 4, 5, 6, 7], 'numbered without gaps, the SSE id is the seq');
      assert.ok(all.every((e) => e.event === 'pipeline_event' && e.data['incident_id'] === 'pagerduty:PCHAIN1' && e.data['seq'] === e.id), JSON.stringify(all));
      const fixExecution = all[2]!.data['execution_id'];
      assert.match(String(fixExecution), /^exec_/, 'fix.completed names the fix execution');
      assert.deepEqual(all.slice(2).map((e) => e.data['execution_id']), Array(5).fill(fixExecution));
      assert.equal(all[4]!.data['pr_number'], gh.pulls[0]!.number);
      assert.equal(gh.pulls.length, 1);

      // The same delivery again and a second resolution of the incident: nothing more on the stream.
      assert.equal((await call(p.url, null, 'POST', '/webhooks/pagerduty', raw, { 'x-pagerduty-signature': `v1=${createHmac('sha256', PD_SECRET).update(raw).digest('hex')}`, 'x-webhook-id': 'wh-chain-2' })).status, 200);
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(live.events.length, 7, 'once each');

      // Reconnecting with Last-Event-ID: exactly what came after, nothing twice; the stream stays open.
      const resumed = await openSse(`${p.url}/api/admin/events/stream`, key, { lastEventId: 4 });
      streams.push(resumed);
      const rest = await resumed.waitFor(3);
      assert.deepEqual(rest.map((e) => [e.id, e.data['topic']]), [[5, 'pipeline.review.request'], [6, 'pipeline.review.passed'], [7, 'pipeline.deploy.staging']]);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(resumed.events.length, 3);

      // The audit trail has the same chain, in the same order (its JSON Lines files under the data directory).
      const audited = readdirSync(path.join(data, 'audit')).filter((f) => f.endsWith('.jsonl')).sort()
        .flatMap((f) => readFileSync(path.join(data, 'audit', f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; data: Json }))
        .filter((r) => r.data['incidentId'] === 'pagerduty:PCHAIN1' && (r.kind === 'incident.resolution.completed' || r.kind === 'incident.chain'))
        .map((r) => (r.kind === 'incident.chain' ? r.data['topic'] : r.kind));
      assert.deepEqual(audited, CHAIN);

      // After a restart the stored stream replays with the same ids.
      for (const s of streams.splice(0)) s.close();
      await stop(p);
      running.splice(running.indexOf(p), 1);
      const p2 = await startStandalone(data, env, ['--workspace', repo]);
      running.push(p2);
      const after = await openSse(`${p2.url}/api/admin/events/stream`, key, { lastEventId: 5 });
      streams.push(after);
      assert.deepEqual((await after.waitFor(2)).map((e) => [e.id, e.data['topic']]), [[6, 'pipeline.review.passed'], [7, 'pipeline.deploy.staging']]);
    } finally {
      for (const s of streams) s.close();
      await model.stop();
      await gh.close();
    }
  });
});
