/**
 * In-process message bus with the contract's topic names. Delivery is synchronous and in order;
 * a subscriber that throws or rejects is reported to `onError` and never reaches the publisher.
 */
import type { EngineEvent } from '../../../protocol/events';
import type { ApprovalRecord } from './acmf/records';

export interface LearnedPattern { agentId: string; executionId: string; pattern: string; detail: Record<string, unknown> }
export interface QualityScore { agentId: string; score: number; successRate: number; tasks: number; consecutiveSuccess: number; lastReviewPassed: boolean }
export interface PipelineMessage { executionId: string; agentId?: string; [key: string]: unknown }
/**
 * A business event of the contract's webhook catalog (code.generated, prediction.created, ...), published by
 * the operation that causes it. The outbound webhook dispatcher subscribes here; the engine never knows who listens.
 */
export interface ServiceEvent {
  /** One of the contract's webhook event names (see docs/api.md for the table). */
  event: string;
  data: Record<string, unknown>;
  /** Tenant that owns the subject (absent: the default tenant). */
  tenantId?: string;
  executionId?: string;
  occurredAt?: string;
}

/**
 * An approval filed, decided, expired or closed, published by the ACMF service after the record is stored
 * and audited. Not every approval belongs to a running step (the PR flow files one after its execution
 * ended), so the editor follows this topic rather than the execution's events.
 */
export interface ApprovalChange {
  change: 'requested' | 'decided' | 'expired' | 'closed';
  approval: ApprovalRecord;
}

/** Fixed topics of the contract, with their payloads (the contract leaves payloads open; see docs/decisions.md). */
export interface FixedTopics {
  'learning.pattern.detected': LearnedPattern;
  'incident.resolution.completed': PipelineMessage;
  'pipeline.fix.request': PipelineMessage;
  'pipeline.fix.completed': PipelineMessage;
  'pipeline.review.request': PipelineMessage;
  'pipeline.review.passed': PipelineMessage;
  'pipeline.deploy.staging': PipelineMessage;
  /** Contract webhook events (outbound deliveries subscribe here). */
  'service.event': ServiceEvent;
  /** Every execution event (SSE, LSP progress and the CLI's --watch subscribe here). */
  'engine.event': EngineEvent;
  /** Every change of an approval, in or outside a run (the language server forwards it to the editor). */
  'acmf.approval': ApprovalChange;
}

export type QualityTopic = `agent.${string}.quality.score`;
export type PrCreateTopic = `agent.${string}.pr.create`;
export type Topic = keyof FixedTopics | QualityTopic | PrCreateTopic;

export type PayloadOf<T extends string> = T extends keyof FixedTopics
  ? FixedTopics[T]
  : T extends `agent.${string}.quality.score`
    ? QualityScore
    : T extends `agent.${string}.pr.create`
      ? PipelineMessage
      : never;

/** A subscription pattern: a topic, or one with `*` standing for exactly one dot-separated segment. */
export type TopicPattern = Topic | 'agent.*.quality.score' | 'agent.*.pr.create';

export type Handler<T extends string> = (payload: PayloadOf<T>, topic: string) => void | Promise<void>;

export const qualityTopic = (agentId: string): QualityTopic => `agent.${agentId}.quality.score`;
export const prCreateTopic = (host: string): PrCreateTopic => `agent.${host}.pr.create`;

interface Subscription { segments: string[]; handler: (payload: unknown, topic: string) => void | Promise<void> }

export class MessageBus {
  private readonly exact = new Map<string, Set<Subscription>>();
  private readonly wildcard = new Set<Subscription>();

  constructor(private readonly onError: (err: unknown, topic: string) => void = () => {}) {}

  subscribe<P extends TopicPattern>(pattern: P, handler: Handler<P>): () => void {
    const sub: Subscription = { segments: pattern.split('.'), handler: handler as Subscription['handler'] };
    if (pattern.includes('*')) {
      this.wildcard.add(sub);
      return () => this.wildcard.delete(sub);
    }
    let set = this.exact.get(pattern);
    if (!set) this.exact.set(pattern, (set = new Set()));
    set.add(sub);
    return () => {
      set.delete(sub);
      if (set.size === 0) this.exact.delete(pattern);
    };
  }

  publish<T extends Topic>(topic: T, payload: PayloadOf<T>): void {
    const set = this.exact.get(topic);
    if (set) for (const sub of [...set]) this.deliver(sub, payload, topic);
    if (this.wildcard.size > 0) {
      const segments = topic.split('.');
      for (const sub of [...this.wildcard]) if (matches(sub.segments, segments)) this.deliver(sub, payload, topic);
    }
  }

  private deliver(sub: Subscription, payload: unknown, topic: string): void {
    try {
      const result = sub.handler(payload, topic);
      if (result && typeof (result as Promise<void>).then === 'function') {
        (result as Promise<void>).then(undefined, (err: unknown) => this.report(err, topic));
      }
    } catch (err) {
      this.report(err, topic);
    }
  }

  private report(err: unknown, topic: string): void {
    try {
      this.onError(err, topic);
    } catch {
      // An error reporter that throws must not take the publisher down either.
    }
  }
}

function matches(pattern: string[], topic: string[]): boolean {
  if (pattern.length !== topic.length) return false;
  return pattern.every((seg, i) => seg === '*' || seg === topic[i]);
}
