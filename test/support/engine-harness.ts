/**
 * An engine over in-memory repositories and a real JSONL audit trail in a temp directory, with a
 * configurable test skill: enough to prove the pipeline without the real skills.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent } from '../../protocol/events';
import { openAuditTrail, type JsonlAuditTrail } from '../../server/src/audit/jsonl-audit-trail';
import { parseConfig } from '../../server/src/config/load';
import type { ProposedAction } from '../../server/src/engine/acmf/records';
import { createEngine, type Engine } from '../../server/src/engine/index';
import type { CallbackNotifier } from '../../server/src/engine/executions/execution-service';
import type { EffectResourcesPort } from '../../server/src/engine/executions/side-effect-ledger';
import type { CollectionStore, Identified, Repository } from '../../server/src/engine/ports';
import type { Artifact, Evidence, Skill, SkillContext, StepRequest } from '../../server/src/engine/rigor/skill';
import { reviewChecks } from '../../server/src/skills/review-checks';
import { JsonlEventLog } from '../../server/src/store/jsonl-event-log';
import { MemoryRepository } from './fakes';

export class MemoryStore implements CollectionStore {
  private readonly repos = new Map<string, MemoryRepository<Identified>>();
  collection<T extends Identified>(name: string): Repository<T> {
    let r = this.repos.get(name);
    if (!r) this.repos.set(name, (r = new MemoryRepository<Identified>()));
    return r as unknown as Repository<T>;
  }
}

export interface TestSkillOptions {
  agentId?: string;
  action?: string;
  evidence?: Evidence;
  actions?: ProposedAction[];
  artifact?: (ctx: SkillContext) => Partial<Artifact>;
  generate?: (ctx: SkillContext) => Promise<Partial<Artifact>>;
  patterns?: string[];
}

export function testSkill(o: TestSkillOptions = {}): Skill & { calls: string[] } {
  const calls: string[] = [];
  return {
    agentId: o.agentId ?? 'review-ai',
    action: o.action ?? 'review',
    calls,
    async research() {
      calls.push('research');
      return o.evidence ?? { items: [{ source: 'test', detail: 'fixture', weight: 1 }, { source: 'test', detail: 'second', weight: 1 }], constraints: [], pathsRead: [] };
    },
    propose() {
      calls.push('propose');
      return o.actions ?? [];
    },
    async generate(ctx) {
      calls.push('generate');
      ctx.progress(50, 0.8);
      const extra = o.generate ? await o.generate(ctx) : (o.artifact?.(ctx) ?? {});
      return { kind: 'report', summary: `review of ${ctx.request.goal.prompt}`, goalRef: ctx.request.goal.id, confidence: 0.9, data: { ok: true }, ...extra };
    },
    async optimize(_ctx, artifact) {
      calls.push('optimize');
      return { artifact, patterns: o.patterns ?? [] };
    },
  };
}

export interface Harness {
  engine: Engine;
  audit: JsonlAuditTrail;
  events: EngineEvent[];
  dir: string;
  request(over?: Partial<StepRequest>): StepRequest;
  close(): Promise<void>;
}

export interface HarnessOptions {
  yaml?: string;
  skills?: Skill[];
  /** Use this store (e.g. a real lowdb store shared across a simulated restart). */
  store?: CollectionStore;
  dir?: string;
  notifier?: CallbackNotifier;
  /** The key-hash lookup that signs callbacks (as the host passes it). */
  callbackSecret?: (keyId: string) => string | null;
  /** What removes the leftovers of interrupted side effects (as the host passes it). */
  effectResources?: EffectResourcesPort;
  log?: (line: string) => void;
}

export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = opts.dir ?? mkdtempSync(path.join(tmpdir(), 'cadre-rigor-'));
  const audit = await openAuditTrail({ dir: path.join(dir, 'audit'), durable: false });
  const config = parseConfig(opts.yaml ?? '', path.join(dir, '.cadre.yaml'), {});
  // With a directory of its own the harness keeps real event logs, as the server does.
  const eventLog = opts.dir ? await JsonlEventLog.open(path.join(dir, 'events')) : undefined;
  const engine = createEngine({
    ...(eventLog ? { eventLog } : {}),
    store: opts.store ?? new MemoryStore(), audit, config, checks: reviewChecks, skills: opts.skills ?? [], log: opts.log ?? (() => {}),
    retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...(opts.notifier ? { notifier: opts.notifier } : {}), ...(opts.callbackSecret ? { callbackSecret: opts.callbackSecret } : {}),
    ...(opts.effectResources ? { effectResources: opts.effectResources } : {}),
  });
  const events: EngineEvent[] = [];
  engine.bus.subscribe('engine.event', (e) => void events.push(e));
  let n = 0;
  return {
    engine, audit, events, dir,
    request: (over = {}) => ({
      executionId: `exec_test${++n}`, step: 0, agentId: 'review-ai', action: 'review',
      goal: { id: 'goal_1', prompt: 'review the login module' }, input: {}, scope: 'mvp', tier: 'core', previous: [], workspace: dir, ...over,
    }),
    close: async () => {
      await engine.executions.close();
      await eventLog?.flush();
      await audit.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The fleet test skills (test/fixtures/skills/fleet-skills.cjs): one for every agent action. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const fleetSkills: Skill[] = (require('../fixtures/skills/fleet-skills.cjs') as { skills: Skill[] }).skills;

/** Resolves when the execution has ended (the engine's one wait) and its run has returned. */
export async function settled(engine: Engine, id: string, timeoutMs = 20_000): Promise<ReturnType<Engine['executions']['get']>> {
  await engine.executions.whenSettled(id, { timeoutMs });
  await engine.executions.ran(id);
  return engine.executions.get(id);
}

export const anyone = { keyId: null, callbackSecret: null };
