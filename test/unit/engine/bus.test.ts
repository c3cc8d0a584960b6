import { strict as assert } from 'node:assert';
import { MessageBus, prCreateTopic, qualityTopic } from '../../../server/src/engine/bus';

describe('message bus', () => {
  const quality = { agentId: 'coder-ai', score: 0.8, successRate: 0.9, tasks: 10, consecutiveSuccess: 3, lastReviewPassed: true };

  it('delivers to exact and wildcard subscribers, in subscription order', () => {
    const bus = new MessageBus();
    const seen: string[] = [];
    bus.subscribe(qualityTopic('coder-ai'), (p) => void seen.push(`exact:${p.score}`));
    bus.subscribe('agent.*.quality.score', (p, topic) => void seen.push(`wild:${p.agentId}:${topic}`));
    bus.publish(qualityTopic('coder-ai'), quality);
    bus.publish(qualityTopic('review-ai'), { ...quality, agentId: 'review-ai' });
    assert.deepEqual(seen, ['exact:0.8', 'wild:coder-ai:agent.coder-ai.quality.score', 'wild:review-ai:agent.review-ai.quality.score']);
  });

  it('uses the contract topic names', () => {
    assert.equal(qualityTopic('x-ai'), 'agent.x-ai.quality.score');
    assert.equal(prCreateTopic('github'), 'agent.github.pr.create');
  });

  it('a wildcard stands for exactly one segment', () => {
    const bus = new MessageBus();
    let n = 0;
    bus.subscribe('agent.*.pr.create', () => void n++);
    bus.publish('agent.github.pr.create', { executionId: 'e' });
    bus.publish('agent.a.b.pr.create' as 'agent.x.pr.create', { executionId: 'e' });
    assert.equal(n, 1);
  });

  it('a subscriber that throws or rejects cannot crash the publisher or starve the others', async () => {
    const errors: string[] = [];
    const bus = new MessageBus((err, topic) => errors.push(`${topic}:${(err as Error).message}`));
    const got: string[] = [];
    bus.subscribe('pipeline.fix.request', () => {
      throw new Error('sync boom');
    });
    bus.subscribe('pipeline.fix.request', async () => {
      throw new Error('async boom');
    });
    bus.subscribe('pipeline.fix.request', (p) => void got.push(p.executionId));
    assert.doesNotThrow(() => bus.publish('pipeline.fix.request', { executionId: 'exec_1' }));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, ['exec_1']);
    assert.deepEqual(errors.sort(), ['pipeline.fix.request:async boom', 'pipeline.fix.request:sync boom']);
  });

  it('a throwing error reporter is contained too', () => {
    const bus = new MessageBus(() => {
      throw new Error('reporter broke');
    });
    bus.subscribe('pipeline.review.passed', () => {
      throw new Error('x');
    });
    assert.doesNotThrow(() => bus.publish('pipeline.review.passed', { executionId: 'e' }));
  });

  it('unsubscribe stops delivery', () => {
    const bus = new MessageBus();
    let n = 0;
    const off = bus.subscribe('pipeline.deploy.staging', () => void n++);
    bus.publish('pipeline.deploy.staging', { executionId: 'e' });
    off();
    bus.publish('pipeline.deploy.staging', { executionId: 'e' });
    assert.equal(n, 1);
  });
});
