/**
 * A task's completion callback sent by a server that was restarted (issue 18, item 3: "callbacks after
 * a restart signed with the subscription's secret"). The subscriber of a task's callback is the API key
 * that submitted it; its secret is the key's SHA-256 hex, which the receiver can compute and nobody else
 * knows. The first server is killed while its delivery is unconfirmed (the receiver answered 503), so the
 * delivery is certain to be made by the second server, which holds no secret in memory: it must look
 * the key up, not sign with the key id or the execution id.
 */
import { strict as assert } from 'node:assert';
import { createHash, createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { ensureBuilt, startStandalone, stop, tempDir, type ServerProcess } from '../../support/server-process';

interface Delivery { id: string; event: string; signature: string; body: string; server: 1 | 2 }

const hmac = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('task callbacks across a real server restart', function () {
  this.timeout(300_000);
  const running: ServerProcess[] = [];
  before(() => ensureBuilt());
  afterEach(async () => { for (const p of running.splice(0)) await stop(p); });

  it('the callback the restarted server delivers is signed with the submitting key\'s hash, not its id or the execution id', async () => {
    const data = tempDir('cadre-cb-restart-');
    const ws = tempDir('cadre-cb-ws-');
    // The receiver is on loopback over http: development settings of the SSRF guard.
    writeFileSync(path.join(data, 'config.yaml'), 'defaults:\n  intelligence: ultra\n  acmf_mode: AUTONOMOUS\nwebhooks:\n  allow_loopback: true\n  allow_http: true\n');
    const p1 = await startStandalone(data, {}, ['--workspace', ws]);
    running.push(p1);
    const key = (await p1.line(/^New API key \(shown once; only its hash is stored\): (\S+)$/))[1]!;

    const deliveries: Delivery[] = [];
    let server: 1 | 2 = 1;
    let arrived: () => void = () => {};
    const secondServerDelivered = new Promise<void>((r) => (arrived = r));
    const rx = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
        deliveries.push({ id: String(req.headers['x-cadre-delivery']), event: String(req.headers['x-cadre-event']), signature: String(req.headers['x-cadre-signature']), body, server });
        if (server === 1) {
          // Not confirmed: the delivery stays an intent; the server dies before it can try again.
          res.writeHead(503).end('busy', () => p1.child.kill('SIGKILL'));
          return;
        }
        res.writeHead(200).end('ok');
        arrived();
      });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;
      const res = await fetch(`${p1.url}/v1/agents/tasks`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'check the secrets', capabilities: ['SECURE'], source: ws, callbackUrl: url }),
      });
      const accepted = (await res.json()) as { task_id?: string; id?: string; executionId?: string };
      assert.equal(res.status, 202, JSON.stringify(accepted));
      const guard = setTimeout(() => p1.child.kill('SIGKILL'), 120_000);
      assert.equal((await p1.exited).signal, 'SIGKILL');
      clearTimeout(guard);
      assert.ok(deliveries.length >= 1, `the first server tried the callback before it was killed; log: ${p1.stderr.slice(-10).join(' | ')}`);

      server = 2;
      const p2 = await startStandalone(data, { CADRE_API_KEY: '' }, ['--workspace', ws]);
      running.push(p2);
      const bound = setTimeout(() => arrived(), 60_000);
      await secondServerDelivered;
      clearTimeout(bound);
      const after = deliveries.filter((d) => d.server === 2);
      assert.equal(after.length, 1, `the restarted server delivered the callback once; log: ${p2.stderr.slice(-10).join(' | ')}`);
      const d = after[0]!;
      const first = deliveries[0]!;
      assert.equal(d.id, first.id, 'the same delivery id as the unconfirmed attempt');
      assert.equal(d.body, first.body, 'the same body');
      const executionId = (JSON.parse(d.body) as { data: { id: string } }).data.id;
      const keyHash = createHash('sha256').update(key).digest('hex');
      assert.equal(d.signature, hmac(keyHash, d.body), 'signed with the SHA-256 hex of the API key that submitted the task');
      assert.equal(d.signature, first.signature, 'the same signature as before the restart');
      // What a receiver could know without the key must not verify: the execution id, the key's id.
      const listed = await fetch(`${p2.url}/v1/admin/keys`, { headers: { authorization: `Bearer ${key}` } });
      const keyIds = ((await listed.json()) as { keys: Array<{ id: string }> }).keys.map((k) => k.id);
      assert.ok(keyIds.length > 0, 'the key store lists the submitting key');
      for (const guessable of [executionId, ...keyIds]) assert.notEqual(d.signature, hmac(guessable, d.body), `not signed with ${guessable}`);
    } finally {
      rx.close();
    }
  });
});
