/**
 * InboundService on a real engine: PagerDuty incidents (dedupe, one incident.resolution.completed per
 * incident), Jira issues and sprints (prefixed and bare names), the tracker mapping starting a task.
 */
import { strict as assert } from 'node:assert';
import type { PipelineMessage } from '../../../server/src/engine/bus';
import { MAX_DELIVERIES, parseMapping } from '../../../server/src/engine/incidents/inbound-service';
import type { InboundDeliveryRecord } from '../../../server/src/engine/incidents/records';
import { MemoryStore } from '../../support/engine-harness';
import { createHarness, fleetSkills, type Harness } from '../../support/engine-harness';
import { jiraIssue, jiraSprint, pdEvent } from '../../fixtures/projects/payloads';

const YAML = [
  'defaults:', '  intelligence: ultra', '  acmf_mode: AUTONOMOUS',
  'integrations:', '  tracker:', '    enabled: false', '    projects:', '      mapping:', '        OPS: OPERATE incident', '        WEB: BUILD', '        BAD: NOPE',
].join('\n');

describe('InboundService (engine)', function () {
  this.timeout(30_000);
  let h: Harness;
  const resolutions: PipelineMessage[] = [];

  beforeEach(async () => {
    h = await createHarness({ yaml: YAML, skills: fleetSkills, store: new MemoryStore() });
    resolutions.length = 0;
    h.engine.bus.subscribe('incident.resolution.completed', (m) => void resolutions.push(m));
  });
  afterEach(async () => {
    await h.engine.inbound.settled();
    await h.close();
  });

  it('triggered, acknowledged, resolved update one incident; resolution is published once, even if resolved again', async () => {
    const inb = h.engine.inbound;
    assert.equal(await inb.receive('pagerduty', 'd1', 'incident.triggered', pdEvent('incident.triggered')), 'accepted');
    assert.equal(await inb.receive('pagerduty', 'd2', 'incident.acknowledged', pdEvent('incident.acknowledged')), 'accepted');
    await inb.settled();
    assert.equal(inb.incident('pagerduty:PT4KHLK')!.status, 'acknowledged');
    assert.equal(resolutions.length, 0);
    await inb.receive('pagerduty', 'd3', 'incident.resolved', pdEvent('incident.resolved'));
    await inb.receive('pagerduty', 'd4', 'incident.resolved', pdEvent('incident.resolved'));
    await inb.settled();
    const inc = inb.incident('pagerduty:PT4KHLK')!;
    assert.equal(inc.status, 'resolved');
    assert.equal(inc.title, 'The server is on fire.');
    assert.equal(inc.service, 'My Mail Service');
    assert.deepEqual(inc.history.map((e) => e.event), ['incident.triggered', 'incident.acknowledged', 'incident.resolved', 'incident.resolved']);
    assert.equal(resolutions.length, 1);
    assert.equal(resolutions[0]!['incidentId'], 'pagerduty:PT4KHLK');
    const audit = await h.audit.query({ kind: 'incident.resolution.completed' });
    assert.equal(audit.length, 1);
  });

  it('a replayed delivery id is processed once', async () => {
    const inb = h.engine.inbound;
    assert.equal(await inb.receive('pagerduty', 'same', 'incident.resolved', pdEvent('incident.resolved', 'PX')), 'accepted');
    assert.equal(await inb.receive('pagerduty', 'same', 'incident.resolved', pdEvent('incident.resolved', 'PX')), 'duplicate');
    await inb.settled();
    assert.equal(inb.incident('pagerduty:PX')!.history.length, 1);
    assert.equal(inb.delivery('pagerduty', 'same')!.status, 'processed');
    assert.equal(inb.delivery('pagerduty', 'same')!.payload, undefined, 'the payload leaves once applied');
  });

  it('events Cadre does not follow are recorded as ignored', async () => {
    await h.engine.inbound.receive('pagerduty', 'x1', 'incident.annotated', pdEvent('incident.annotated'));
    await h.engine.inbound.settled();
    assert.equal(h.engine.inbound.delivery('pagerduty', 'x1')!.status, 'ignored');
  });

  it('a created issue of a mapped project starts a task once; an unmapped or badly mapped one does not', async () => {
    const inb = h.engine.inbound;
    await inb.receive('jira', 'j1', 'jira:issue_created', jiraIssue('jira:issue_created', 'OPS-12'));
    await inb.receive('jira', 'j2', 'jira:issue_updated', jiraIssue('jira:issue_updated', 'OPS-12', 'Checkout returns 500 (cart)'));
    await inb.receive('jira', 'j3', 'jira:issue_created', jiraIssue('jira:issue_created', 'HR-1'));
    await inb.receive('jira', 'j4', 'jira:issue_created', jiraIssue('jira:issue_created', 'BAD-1'));
    await inb.settled();
    const ops = inb.trackerItem('jira:issue:OPS-12') as { taskId: string | null; summary: string };
    assert.match(ops.taskId ?? '', /^task_/);
    assert.equal(ops.summary, 'Checkout returns 500 (cart)');
    const task = h.engine.executions.get(ops.taskId!);
    assert.deepEqual(task.request.capabilities, ['OPERATE']);
    assert.equal(task.request.verb, 'incident');
    assert.match(task.request.prompt, /Checkout returns 500 on empty cart/);
    assert.equal(h.engine.executions.list({ kind: 'task' }).length, 1);
    assert.match((inb.trackerItem('jira:issue:HR-1') as { taskNote: string }).taskNote, /not mapped/);
    assert.match((inb.trackerItem('jira:issue:BAD-1') as { taskNote: string }).taskNote, /not a capability/);
  });

  it('sprint events arrive bare (as Jira sends them) or prefixed', async () => {
    const inb = h.engine.inbound;
    await inb.receive('jira', 's1', 'sprint_started', jiraSprint('sprint_started', 7, 'active'));
    await inb.settled();
    assert.equal((inb.trackerItem('jira:sprint:7') as { state: string }).state, 'active');
    await inb.receive('jira', 's2', 'jira:sprint_closed', jiraSprint('jira:sprint_closed', 7, 'closed'));
    await inb.settled();
    const s = inb.trackerItem('jira:sprint:7') as { state: string; history: Array<{ event: string }> };
    assert.equal(s.state, 'closed');
    assert.deepEqual(s.history.map((e) => e.event), ['sprint_started', 'jira:sprint_closed']);
  });

  it('the mapping value is CAPABILITY or CAPABILITY verb', () => {
    assert.deepEqual(parseMapping('OPERATE incident'), { capability: 'OPERATE', verb: 'incident' });
    assert.deepEqual(parseMapping('build'), { capability: 'BUILD' });
    assert.ok('error' in parseMapping('BUILD fly'));
    assert.ok('error' in parseMapping('BUILD code now'));
  });

  it('delivery ids are bounded: the oldest processed ones leave', async function () {
    this.timeout(60_000);
    const inb = h.engine.inbound;
    for (let i = 0; i < MAX_DELIVERIES + 150; i++) await inb.receive('jira', `b${i}`, 'jira:unknown', { webhookEvent: 'jira:unknown' });
    await inb.settled();
    await inb.receive('jira', 'last', 'jira:unknown', { webhookEvent: 'jira:unknown' });
    const left = (h.engine.inbound as unknown as { deliveries: { count(): number } }).deliveries.count();
    assert.ok(left <= MAX_DELIVERIES + 100, `${left}`);
    assert.equal(inb.delivery('jira', 'b0'), undefined);
    assert.ok(inb.delivery('jira', `b${MAX_DELIVERIES + 149}`));
  });
});

describe('InboundService after a restart', function () {
  this.timeout(30_000);

  it('a delivery recorded but not applied before a stop is applied by resumePending, once', async () => {
    const store = new MemoryStore();
    // What a stopped server leaves: the delivery id and payload stored, the incident never written.
    await store.collection<InboundDeliveryRecord>('inboundDeliveries').put({
      id: 'pagerduty:left', provider: 'pagerduty', deliveryId: 'left', receivedAt: new Date().toISOString(), status: 'pending',
      event: 'incident.resolved', note: null, payload: pdEvent('incident.resolved', 'PLEFT'),
    });
    const h = await createHarness({ yaml: 'defaults:\n  acmf_mode: AUTONOMOUS\n', skills: fleetSkills, store });
    const published: PipelineMessage[] = [];
    h.engine.bus.subscribe('incident.resolution.completed', (m) => void published.push(m));
    try {
      assert.equal(h.engine.inbound.resumePending(), 1);
      await h.engine.inbound.settled();
      assert.equal(h.engine.inbound.incident('pagerduty:PLEFT')!.status, 'resolved');
      assert.equal(published.length, 1);
      assert.equal(h.engine.inbound.resumePending(), 0);
      assert.equal(await h.engine.inbound.receive('pagerduty', 'left', 'incident.resolved', pdEvent('incident.resolved', 'PLEFT')), 'duplicate');
    } finally {
      await h.engine.inbound.settled();
      await h.close();
    }
  });
});
