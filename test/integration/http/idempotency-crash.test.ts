/**
 * Idempotency-Key across a SIGKILL: the client never saw the 202 (the server died right after
 * sending it); the retry goes to the restarted server and gets the first answer, and one task exists.
 */
import { strict as assert } from 'node:assert';
import { request } from 'undici';
import { generateKey } from '../../../server/src/auth/api-keys';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

describe('Idempotency-Key across a killed server (real processes)', function () {
  this.timeout(60_000);
  const running: ServerProcess[] = [];
  before(() => ensureBuilt());
  afterEach(async () => {
    for (const p of running.splice(0)) await stop(p);
  });

  it('a retry after SIGKILL answers the first task again and creates no duplicate; another key is not confused with it', async () => {
    const dir = tempDir();
    const KEY = generateKey();
    const post = async (url: string, body: unknown, idem: string) => {
      const res = await request(`${url}/v1/agents/tasks`, {
        method: 'POST', body: JSON.stringify(body),
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': idem },
      });
      return { status: res.statusCode, replayed: res.headers['idempotent-replayed'], body: (await res.body.json()) as Record<string, unknown> };
    };
    const body = { task: 'add a health endpoint', capabilities: ['BUILD'], source: tempDir('cadre-ws-') };

    const first = await startStandalone(dir, { CADRE_API_KEY: KEY });
    running.push(first);
    const a = await post(first.url, body, 'lost-202');
    assert.equal(a.status, 202);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startStandalone(dir, { CADRE_API_KEY: KEY });
    running.push(second);
    const b = await post(second.url, body, 'lost-202');
    assert.equal(b.status, 202);
    assert.equal(b.replayed, 'true');
    assert.deepEqual(b.body, a.body);
    const c = await post(second.url, body, 'another-request');
    assert.equal(c.status, 202);
    assert.notEqual(c.body['taskId'], a.body['taskId']);
    assert.equal(c.replayed, undefined);
    // The first task is known to the restarted server exactly once.
    const status = await request(`${second.url}/v1/agents/tasks/${a.body['taskId'] as string}`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(status.statusCode, 200);
    await status.body.dump();
  });
});
