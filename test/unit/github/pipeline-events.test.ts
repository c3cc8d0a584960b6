/**
 * The incident chain's topics on the tenant service stream (engine/pr-flow/pipeline-events.ts): once per
 * incident and topic, numbered per tenant in publication order, each tenant seeing only its own, and
 * the numbering and the once-memory surviving a restart (a new instance on the same records).
 */
import { strict as assert } from 'node:assert';
import type { PipelineEvent } from '../../../protocol/events';
import { MessageBus } from '../../../server/src/engine/bus';
import { PIPELINE_EVENTS_COLLECTION, PipelineEvents, type PipelineEventRecord } from '../../../server/src/engine/pr-flow/pipeline-events';
import { DEFAULT_TENANT_ID } from '../../../server/src/engine/tenants/tenant-id';
import { MemoryStore } from '../../support/engine-harness';
import { ManualClock } from '../../support/fakes';

const CHAIN = ['incident.resolution.completed', 'pipeline.fix.request', 'pipeline.fix.completed', 'agent.github.pr.create', 'pipeline.review.request', 'pipeline.review.passed', 'pipeline.deploy.staging'] as const;

function setup(store = new MemoryStore(), bus = new MessageBus((err) => { throw err; })) {
  const executions = new Map<string, { tenantId?: string }>([['act_fixA', { tenantId: 'tnt_a' }], ['act_fixB', { tenantId: 'tnt_b' }], ['act_plain', {}]]);
  const events = new PipelineEvents({ bus, records: store.collection<PipelineEventRecord>(PIPELINE_EVENTS_COLLECTION), executions: { find: (id) => executions.get(id) }, clock: new ManualClock(0), log: () => {} });
  events.start();
  return { store, bus, events };
}

/** Publishes the seven topics of one incident as the inbound service, the triggers and the PR flow do. */
function publishChain(bus: MessageBus, incidentId: string, fixExecution: string): void {
  bus.publish('incident.resolution.completed', { executionId: incidentId, incidentId, summary: 'pool exhausted' });
  bus.publish('pipeline.fix.request', { executionId: incidentId, agentId: 'coder-ai', incidentId });
  bus.publish('pipeline.fix.completed', { executionId: fixExecution, agentId: 'coder-ai', incidentId, prRequests: 1 });
  bus.publish('agent.github.pr.create', { executionId: fixExecution, agentId: 'coder-ai', incidentId });
  bus.publish('pipeline.review.request', { executionId: fixExecution, agentId: 'review-ai', prId: 'pr_1', number: 7, incidentId });
  bus.publish('pipeline.review.passed', { executionId: fixExecution, agentId: 'review-ai', prId: 'pr_1', number: 7, incidentId });
  bus.publish('pipeline.deploy.staging', { executionId: fixExecution, agentId: 'deploy-ai', prId: 'pr_1', number: 7, incidentId });
}

describe('pipeline events: the incident chain on the tenant service stream', () => {
  it('puts the seven topics on the stream in order, numbered 1..7, once each even when the bus carries one twice', () => {
    const { bus, events } = setup();
    const live: PipelineEvent[] = [];
    events.source(DEFAULT_TENANT_ID).subscribe((e) => live.push(e));
    publishChain(bus, 'INC-1', 'act_plain');
    publishChain(bus, 'INC-1', 'act_plain');
    const stored = events.list(DEFAULT_TENANT_ID);
    assert.deepEqual(stored.map((e) => e.topic), [...CHAIN]);
    assert.deepEqual(stored.map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(live, stored, 'live listeners got the same events, once');
    assert.deepEqual(stored.map((e) => e.execution_id), [null, null, 'act_plain', 'act_plain', 'act_plain', 'act_plain', 'act_plain'], 'the incident id is not taken for an execution');
    assert.deepEqual([stored[4]!.pr_id, stored[4]!.pr_number, stored[6]!.agent_id], ['pr_1', 7, 'deploy-ai']);
  });

  it('a message without an incident (a PR outside any incident) is not on the stream', () => {
    const { bus, events } = setup();
    bus.publish('agent.github.pr.create', { executionId: 'act_plain', agentId: 'coder-ai' });
    bus.publish('pipeline.review.request', { executionId: 'act_plain', agentId: 'review-ai', prId: 'pr_2' });
    assert.deepEqual(events.list(DEFAULT_TENANT_ID), []);
  });

  it("each tenant's stream holds only its incidents (the tenant of the fix execution, kept for the incident's later topics)", () => {
    const { bus, events } = setup();
    publishChain(bus, 'INC-A', 'act_fixA');
    publishChain(bus, 'INC-B', 'act_fixB');
    // The resolution names no execution: it goes where the message says.
    bus.publish('incident.resolution.completed', { executionId: 'INC-C', incidentId: 'INC-C', tenantId: 'tnt_b' });
    bus.publish('pipeline.fix.request', { executionId: 'INC-C', incidentId: 'INC-C' });
    const a = events.list('tnt_a');
    const b = events.list('tnt_b');
    assert.ok(a.every((e) => e.incident_id === 'INC-A'), JSON.stringify(a));
    assert.ok(b.every((e) => e.incident_id !== 'INC-A'), JSON.stringify(b));
    assert.deepEqual(b.filter((e) => e.incident_id === 'INC-C').map((e) => e.topic), ['incident.resolution.completed', 'pipeline.fix.request']);
    // Numbered per tenant: tnt_b's own 1..n.
    assert.deepEqual(b.map((e) => e.seq), b.map((_, i) => i + 1));
    // The resolutions of INC-A and INC-B named no tenant nor execution: the default tenant has them, nothing else.
    assert.deepEqual(events.list(DEFAULT_TENANT_ID).map((e) => `${e.incident_id} ${e.topic}`), ['INC-A incident.resolution.completed', 'INC-A pipeline.fix.request', 'INC-B incident.resolution.completed', 'INC-B pipeline.fix.request']);
  });

  it('after a restart: replay after a seq, numbering goes on, and a topic already streamed is not streamed again', async () => {
    const first = setup();
    publishChain(first.bus, 'INC-9', 'act_plain');
    await first.events.flush();
    first.events.stop();
    const again = setup(first.store);
    assert.deepEqual(again.events.source(DEFAULT_TENANT_ID).replay(4).map((e) => e.seq), [5, 6, 7]);
    publishChain(again.bus, 'INC-9', 'act_plain');
    again.bus.publish('incident.resolution.completed', { executionId: 'INC-10', incidentId: 'INC-10' });
    assert.deepEqual(again.events.list(DEFAULT_TENANT_ID, 6).map((e) => [e.seq, e.incident_id, e.topic]), [[7, 'INC-9', 'pipeline.deploy.staging'], [8, 'INC-10', 'incident.resolution.completed']]);
  });

  it('keeps the newest events of a tenant when over the retained count', async () => {
    const store = new MemoryStore();
    const bus = new MessageBus();
    const events = new PipelineEvents({ bus, records: store.collection<PipelineEventRecord>(PIPELINE_EVENTS_COLLECTION), executions: { find: () => undefined }, clock: new ManualClock(0), log: () => {}, retain: 3 });
    events.start();
    for (const id of ['I1', 'I2', 'I3', 'I4']) bus.publish('incident.resolution.completed', { executionId: id, incidentId: id });
    await events.flush();
    assert.deepEqual(events.list(DEFAULT_TENANT_ID).map((e) => e.seq), [2, 3, 4]);
    assert.deepEqual(store.collection<PipelineEventRecord>(PIPELINE_EVENTS_COLLECTION).list().map((r) => r.event.seq).sort(), [2, 3, 4]);
  });
});
