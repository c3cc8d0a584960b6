/** The integration routes in the HTTP door: roles, 422s naming the field or the reason, 404s, OpenAPI. */
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { GithubIntegrations } from '../../../server/src/integrations/github/github-integrations';
import { integrationRoutes } from '../../../server/src/http/routes/integrations';
import { githubWebhookRoutes } from '../../../server/src/http/routes/github-webhooks';
import { GithubWebhookReceiver } from '../../../server/src/integrations/github/webhooks';
import { LocalSecretStore } from '../../../server/src/secrets/local-secret-store';
import { MemoryAuditTrail } from '../../support/fakes';
import { MemoryStore } from '../../support/engine-harness';
import { bearer, startTestApi, type TestApi } from '../http/harness';
import { rsaKeyPair } from './github-standin';

const tmp = (p: string) => mkdtempSync(path.join(tmpdir(), p));

describe('github: integration routes', () => {
  let api: TestApi;
  let secrets: LocalSecretStore;
  const { privateKeyPem } = rsaKeyPair();
  before(async () => {
    secrets = new LocalSecretStore({ dataDir: tmp('cadre-rt-data-'), keyFile: path.join(tmp('cadre-rt-key-'), 'k') });
    const github = new GithubIntegrations({ store: new MemoryStore(), secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => undefined, log: () => {} });
    const receiver = new GithubWebhookReceiver({ integrations: github, audit: new MemoryAuditTrail({ now: () => Date.now() }), log: () => {} });
    api = await startTestApi({ routes: [...integrationRoutes({ github, secrets }), ...githubWebhookRoutes({ receiver })] });
  });
  after(() => api.close());

  const send = async (method: string, p: string, body: unknown, key = api.key) => {
    const res = await request(`${api.url}${p}`, { method: method as 'PUT', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };

  it('PUT /api/v1/secrets/{name} needs the admin role, checks a GitHub credential and never answers the value', async () => {
    const operator = await api.newKey('enterprise', 'op', 'operator');
    const body = { AppID: 1, InstallationID: 2, PrivateKeyPEM: privateKeyPem, WebhookSecret: 'd'.repeat(64) };
    assert.equal((await send('PUT', '/api/v1/secrets/a%2Fb', body, operator)).status, 403);
    const ok = await send('PUT', '/api/v1/secrets/cadre%2Fintegrations%2Flocal%2Fgithub', body);
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { name: 'cadre/integrations/local/github', backend: 'local', checked: 'github' });
    assert.equal(await secrets.get('cadre/integrations/local/github'), JSON.stringify(body));
    const bad = await send('PUT', '/api/v1/secrets/x', { ...body, WebhookSecret: 'short' });
    assert.equal(bad.status, 422);
    assert.equal(bad.json['reason'], 'bad_webhook_secret');
    assert.equal((await send('PUT', '/api/v1/secrets/a%2F%2Fb', { x: 1 })).status, 422, 'an empty path segment is not a name');
  });

  it('POST /api/v1/integrations/github: 422 naming an agent that cannot open PRs, 400 for a malformed repo, 422 for a missing secret; 404 for an unknown id', async () => {
    const reg = { integration_name: 'svc', github_repo: 'octo-org/service', github_installation_id: 2, api_url: 'http://127.0.0.1:9', config: { agents: ['coder-ai', 'deploy-ai'] } };
    const agents = await send('POST', '/api/v1/integrations/github', reg);
    assert.equal(agents.status, 422);
    assert.deepEqual(agents.json['errors'], [{ field: 'body.config.agents[1]', message: 'deploy-ai is not a PR-capable agent' }]);
    assert.equal((await send('POST', '/api/v1/integrations/github', { ...reg, github_repo: 'no-slash' })).status, 400);
    assert.equal((await send('POST', '/api/v1/integrations/github', { ...reg, api_url: 'http://github.example.com/api/v3', config: { agents: ['coder-ai'] } })).status, 400, 'plain http only on loopback');
    const missing = await send('POST', '/api/v1/integrations/github', { ...reg, secrets_manager_arn: 'nothing/here', config: { agents: ['coder-ai'] } });
    assert.equal(missing.status, 422);
    assert.equal(missing.json['reason'], 'secret_not_found');
    const res = await request(`${api.url}/api/v1/integrations/github/int_${'0'.repeat(24)}`, { headers: bearer(api.key) });
    assert.equal(res.statusCode, 404);
    await res.body.dump();
  });

  it('POST /api/webhooks/github answers 401 to an unsigned or unverifiable delivery, without an API key', async () => {
    const res = await request(`${api.url}/api/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': '1', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body: '{"zen":"x"}' });
    assert.equal(res.statusCode, 401);
    assert.equal(((await res.body.json()) as { ok: boolean }).ok, false);
  });

  it('the routes are in the OpenAPI document', async () => {
    const res = await request(`${api.url}/v1/openapi.json`, { headers: bearer(api.key) });
    const doc = (await res.body.json()) as { paths: Record<string, unknown> };
    for (const p of ['/api/v1/integrations/github', '/api/v1/integrations/github/{integration_id}', '/api/v1/integrations/github/{integration_id}/pulls', '/api/v1/secrets/{name}', '/api/webhooks/github']) assert.ok(doc.paths[p], p);
  });
});
