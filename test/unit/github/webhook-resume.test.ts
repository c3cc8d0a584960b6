import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GithubIntegrations } from '../../../server/src/integrations/github/github-integrations';
import { INTEGRATIONS_COLLECTION, type GithubIntegrationRecord } from '../../../server/src/integrations/github/registrations';
import { GithubWebhookReceiver } from '../../../server/src/integrations/github/webhooks';
import { LocalSecretStore } from '../../../server/src/secrets/local-secret-store';
import { MemoryAuditTrail } from '../../support/fakes';
import { MemoryStore } from '../../support/engine-harness';

/**
 * A GitHub delivery is answered 200 before it is processed. A stop in between must not lose it: it
 * stays pending (with its payload) in the store, the next start processes it once, and only then is
 * it done (payload dropped); a redelivery of its id is still a duplicate.
 */
describe('github webhooks: a delivery answered before a stop is processed at the next start', () => {
  it('keeps it pending until processed, processes it on resume, then drops the payload', async () => {
    const store = new MemoryStore();
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-gh-resume-'));
    const secrets = new LocalSecretStore({ dataDir: path.join(dir, 'data'), keyFile: path.join(dir, 'key', 'secret.key') });
    const github = new GithubIntegrations({ store, secrets, namespace: 'cadre', customerId: 'local', defaultWorkspace: () => undefined, log: () => {} });
    const rec = { id: `int_${'a'.repeat(24)}`, host: 'github', integrationName: 'svc', repo: 'octo-org/service', installationId: 2, secretName: 'x', apiUrl: 'http://127.0.0.1:9', agents: ['coder-ai'], requireReview: true, appId: 1, permissions: null, verifiedAt: null } as unknown as GithubIntegrationRecord;
    await store.collection<GithubIntegrationRecord>(INTEGRATIONS_COLLECTION).put(rec);
    const payload = { action: 'closed', pull_request: { merged: true, head: { ref: 'cadre/coder-ai/exec_1', sha: 'f'.repeat(40) } } };
    // The first process recorded the delivery, answered 200 and stopped before processing it.
    assert.equal(await github.firstDelivery('d-1', 'pull_request', rec.id, payload), true);
    assert.deepEqual(github.pendingDeliveries().map((d) => d.id), ['d-1']);

    const seen: Array<{ branch: string; action: string; merged?: boolean }> = [];
    const receiver = new GithubWebhookReceiver({ integrations: github, audit: new MemoryAuditTrail({ now: () => Date.now() }), pulls: { onPullEvent: async (ev) => { seen.push(ev); } }, log: () => {} });
    assert.equal(receiver.resumePending(), 1);
    await receiver.idle();
    assert.deepEqual(seen.map((e) => [e.branch, e.action, e.merged]), [['cadre/coder-ai/exec_1', 'closed', true]]);
    assert.deepEqual(github.pendingDeliveries(), [], 'done after processing');
    const kept = store.collection<{ id: string; status?: string; payload?: unknown }>('githubDeliveries').get('d-1');
    assert.equal(kept?.status, 'done');
    assert.equal(kept?.payload, undefined, 'the payload is not kept once processed');
    assert.equal(await github.firstDelivery('d-1', 'pull_request', rec.id, payload), false, 'a redelivery is still a duplicate');
    assert.equal(receiver.resumePending(), 0, 'nothing processed twice');
  });
});
