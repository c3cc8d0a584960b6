import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { cadreSignature, deliveryHeaders, envelopeBody, standardKey } from '../../../server/src/webhooks/signing';

const envelope = { id: 'evt_1', event: 'code.reviewed', created_at: '2026-01-02T03:04:05.000Z', data: { prediction: { id: 'pred_1' }, note: 'ünïcode ✓' } };

describe('webhook signing', () => {
  it('serialises the envelope with event, type, created_at and data (no in-body signature)', () => {
    const body = JSON.parse(envelopeBody(envelope)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['id', 'event', 'type', 'created_at', 'data']);
    assert.equal(body['type'], 'code.reviewed');
    assert.equal('signature' in body, false);
  });

  it('X-Cadre-Signature is sha256= lower-case hex HMAC of the exact bytes sent, keyed with the secret', () => {
    const body = envelopeBody(envelope);
    const secret = 'a-subscription-secret-0123456789';
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    assert.equal(cadreSignature(body, secret), `sha256=${expected}`);
    assert.match(cadreSignature(body, secret), /^sha256=[0-9a-f]{64}$/);
    // One byte more (a re-serialisation with a space) does not verify.
    assert.notEqual(cadreSignature(`${body} `, secret), cadreSignature(body, secret));
  });

  it('Standard Webhooks headers verify with the standardwebhooks library (raw secret and whsec_ secret)', () => {
    const body = envelopeBody(envelope);
    const now = Date.now();
    const raw = 'plain-secret-of-the-subscription';
    const h1 = deliveryHeaders({ eventId: 'evt_1', event: 'code.reviewed', deliveryId: 'whd_1', body, secret: raw, nowMs: now });
    assert.deepEqual(new Webhook(raw, { format: 'raw' }).verify(body, h1), JSON.parse(body));
    assert.deepEqual(new Webhook(`whsec_${Buffer.from(raw).toString('base64')}`).verify(body, h1), JSON.parse(body));
    const whsec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const h2 = deliveryHeaders({ eventId: 'evt_1', event: 'code.reviewed', deliveryId: 'whd_1', body, secret: whsec, nowMs: now });
    assert.deepEqual(new Webhook(whsec).verify(body, h2), JSON.parse(body));
    assert.equal(h2['webhook-id'], 'evt_1');
    assert.match(h2['webhook-signature']!, /^v1,[A-Za-z0-9+/]+=*$/);
    // A tampered body fails.
    assert.throws(() => new Webhook(whsec).verify(body.replace('pred_1', 'pred_2'), h2));
  });

  it('maps a whsec_ secret to its base64 bytes and anything else to its UTF-8 bytes', () => {
    assert.deepEqual(standardKey(`whsec_${Buffer.from([1, 2, 3]).toString('base64')}`), Buffer.from([1, 2, 3]));
    assert.deepEqual(standardKey('hunter2hunter2hunter2'), Buffer.from('hunter2hunter2hunter2'));
  });
});
