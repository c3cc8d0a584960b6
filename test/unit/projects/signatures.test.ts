import { strict as assert } from 'node:assert';
import { createHmac } from 'node:crypto';
import { jiraDeliveryId, verifyJira } from '../../../server/src/integrations/jira';
import { pagerDutyDeliveryId, pagerDutySignatures, verifyPagerDuty } from '../../../server/src/integrations/pagerduty';

const body = Buffer.from('{"event":{"id":"01","event_type":"incident.triggered","data":{"id":"PT4KHLK"}}}');
const sig = (secret: string, b = body) => createHmac('sha256', secret).update(b).digest('hex');

describe('inbound webhook signatures', () => {
  it('PagerDuty: one v1 value that matches verifies', () => {
    assert.equal(verifyPagerDuty('s1', body, `v1=${sig('s1')}`), true);
  });

  it('PagerDuty: during a rotation any of several v1 values may match', () => {
    assert.equal(verifyPagerDuty('new', body, `v1=${sig('old')},v1=${sig('new')}`), true);
    assert.equal(verifyPagerDuty('new', body, `v1=${sig('old')}, v1=${sig('other')}`), false);
  });

  it('PagerDuty: a changed body, another scheme or a malformed value does not verify', () => {
    assert.equal(verifyPagerDuty('s1', Buffer.from(body.toString() + ' '), `v1=${sig('s1')}`), false);
    assert.equal(verifyPagerDuty('s1', body, `v0=${sig('s1')}`), false);
    assert.equal(verifyPagerDuty('s1', body, 'v1=zz'), false);
    assert.equal(verifyPagerDuty('s1', body, undefined), false);
    assert.deepEqual(pagerDutySignatures(`v0=abc,v1=${sig('a')},junk`), [sig('a')]);
  });

  it('PagerDuty: the delivery id is X-Webhook-Id, else event.id', () => {
    assert.equal(pagerDutyDeliveryId('wh-1', JSON.parse(body.toString())), 'wh-1');
    assert.equal(pagerDutyDeliveryId(undefined, JSON.parse(body.toString())), '01');
    assert.equal(pagerDutyDeliveryId(undefined, {}), null);
  });

  it('Jira: sha256=<hex> over the raw body, case of the hex ignored', () => {
    assert.equal(verifyJira('j', body, `sha256=${sig('j')}`), true);
    assert.equal(verifyJira('j', body, `sha256=${sig('j').toUpperCase()}`), true);
    assert.equal(verifyJira('j', body, `sha256=${sig('k')}`), false);
    assert.equal(verifyJira('j', body, sig('j')), false);
  });

  it('Jira: the delivery id is the Atlassian identifier, else a hash of the bytes', () => {
    assert.equal(jiraDeliveryId('abc', body), 'abc');
    assert.equal(jiraDeliveryId(undefined, body), jiraDeliveryId(undefined, Buffer.from(body)));
    assert.notEqual(jiraDeliveryId(undefined, body), jiraDeliveryId(undefined, Buffer.from('{}')));
  });
});
