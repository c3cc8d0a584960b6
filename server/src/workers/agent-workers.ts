/**
 * Agent skills off the main thread, in worker threads that the agents share: an agent's warm-up places
 * it on a shared worker (one copy of the skill modules for many agents: memory is per worker, not per
 * agent), its cool-down takes it off (the worker stops when no agent is left), so a CPU-heavy skill
 * never blocks the language server or the HTTP server.
 *
 * Crash isolation: a worker reports which agent's call brought it down (the async context of the
 * uncaught error or of process.exit). That agent's calls fail (retryable ERR_SKILL_FAILED) and it gets
 * a worker of its own from then on (quarantine); the other agents' calls that had not started a side
 * effect are run again on a new worker, and their agents are warmed again, so they do not see the
 * crash. A call that keeps its worker busy after its abort (a spinning skill) is handled the same way.
 * With `sharedWorkers: 0` every agent has its own worker (the former model).
 *
 * The engine sees ordinary `Skill` objects (proxies) that forward each phase to the agent's worker and
 * bridge the SkillContext across the thread boundary:
 *  - request: a structured-clone snapshot without the AbortSignal; the worker's skill gets its own signal;
 *  - signal: an abort on the main side sends `abort`; the worker aborts that call's controller, and the
 *    proxy rejects at once with the main signal's reason (a skill spinning on the CPU cannot stall it);
 *  - progress(): a message; the main thread calls the step's ctx.progress in order;
 *  - allowed(): a snapshot taken when the call starts (see `allowedSnapshot`);
 *  - once(): the main ledger decides; the worker performs the effect only when the ledger asks for it;
 *  - model: the worker's ctx.model asks the main thread, which completes on the step's ctx.model (the
 *    one model of the host, metered into the step's tokens) and answers; an abort on either side
 *    cancels the completion (and its HTTP request).
 * Per-agent queuing is not done here (the load module does it); a worker serves concurrent calls.
 */
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { z } from 'zod';
import { EngineError } from '../engine/errors';
import { readSkillManifest } from './skill-manifest';
import type { ProposedAction } from '../engine/acmf/records';
import { KNOWN_ACTION_KINDS } from '../engine/catalog/action-kinds';
import type { Artifact, Evidence, InputSchema, OutputSchema, Skill, SkillContext, SkillNeed, StepRequest } from '../engine/rigor/skill';
import { cloneable, fromWire, postSafely, toWire, type FromWorker, type SchemaVerdict, type SkillListing, type SkillMethod, type ToWorker, type WireRequest, type WorkerInit } from './protocol';

export type { SkillListing } from './protocol';

export type WarmState = 'cold' | 'warming' | 'warm';

export interface AgentWorkerStatus {
  state: WarmState;
  /** Calls running in (or waiting for) the agent's worker. */
  inflight: number;
  /** Thread id of the live worker, null when cold. */
  threadId: number | null;
  /** Warm-up of the live worker (spawn to `ready`), null while cold or warming. */
  warmUpMs: number | null;
  /** A cool-down is waiting for the in-flight calls to finish. */
  draining: boolean;
}

export interface AgentWorkersOptions {
  /** The worker entry: `dist/worker.js` in production (see `defaultWorkerFile`), the .ts entry under tsx in tests. */
  workerFile: string;
  /** Skill modules loaded in every agent's worker (CommonJS files exporting `skills`). */
  modules: string[];
  log?: (line: string) => void;
  /**
   * Node options of the workers. Default: inherited from the process. Under tsx, pass
   * `['--require', require.resolve('tsx/cjs')]` (`--import tsx` does not reach a worker's entry on
   * Node 20: tsx#354).
   */
  execArgv?: string[];
  /**
   * How many workers the agents share (default 2: two agents' CPU-heavy steps can run in parallel).
   * A warm-up places the agent on the shared worker with the fewest agents, starting one while fewer
   * than this run. 0: one worker per agent. Default: CADRE_SHARED_WORKERS, else 2.
   */
  sharedWorkers?: number;
  /** V8 heap limits of the workers (default DEFAULT_WORKER_LIMITS; see docs/decisions.md, "Memory that fits an editor"). */
  resourceLimits?: ResourceLimits;
  /** How long a call may keep its worker busy after its abort before the worker is replaced (default 10 s; 0: never). */
  stuckAfterMs?: number;
}

/**
 * A young generation of 4 MB per worker instead of V8's default (up to 16 MB semi-spaces, which a
 * worker keeps once grown): measured 47 -> 35 MB RSS per worker holding the embedded skills.
 */
export const DEFAULT_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 4 };

/**
 * Action kinds the engine knows (catalog/action-kinds.ts, the table ACMF and the gates use). With the
 * kinds the skill proposed for the same request they are the kinds `allowed()` is asked for when a call starts.
 */
export { KNOWN_ACTION_KINDS } from '../engine/catalog/action-kinds';

/** `dist/worker.js` next to the bundled server (`dist/server.js`). */
export function defaultWorkerFile(): string {
  return path.join(__dirname, 'worker.js');
}

interface CallEntry {
  agentId: string;
  slot: Slot;
  ctx: SkillContext;
  /** The proxy's promise has settled (result, abort or crash); the worker may still be running the call. */
  settled: boolean;
  settle(ok: boolean, value: unknown): void;
  /** Effects the main ledger asked the worker to run, waiting for `effectResult`. */
  effects: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
  /** ctx.once calls the skill made: a call that made one is never run again on another worker. */
  onces: number;
  /** Completions the worker asked for, running on the main side's ctx.model. */
  completions: Map<number, AbortController>;
  /** Set on a generate/optimize result of a skill with an output schema. */
  onResult?: (value: unknown, schema: SchemaVerdict | undefined) => void;
  /** Runs the call again on the agent's next worker, settling this call's promise with that outcome (at most once). */
  rerun: (() => void) | null;
  /** Started by an abort: replaces the worker if the call is still running there (stuckAfterMs). */
  stuckTimer: NodeJS.Timeout | null;
}

/** A worker thread and the agents placed on it. */
interface Host {
  worker: Worker;
  /** The only agent it serves (sharedWorkers 0, or a quarantined agent), or null for a shared worker. */
  owner: string | null;
  agents: Set<string>;
  /** Settles when the modules are loaded (`ready`) or failed to load. */
  ready: Promise<void>;
  loaded: boolean;
  calls: Map<number, CallEntry>;
  /** We terminated it (an exit is not a crash). */
  closing: boolean;
  exited: boolean;
  crash: Error | null;
  /** The agent whose skill brought the thread down, as the worker reported it. */
  culprit: string | null;
  probes: Map<number, (p: WorkerProbe) => void>;
}

/** An agent's place on a worker. */
interface Slot {
  agentId: string;
  host: Host;
  state: 'warming' | 'warm';
  ready: Promise<void>;
  warmUpMs: number | null;
  /** Calls that wait for the warm-up. */
  reserved: number;
  /** Calls posted to the worker that it has not answered yet (aborted ones included). */
  posted: number;
  /** Resolvers of pending coolDown() calls. */
  drain: Array<(stopped: boolean) => void> | null;
  /** Taken off its worker (cool-down, crash, close). */
  gone: boolean;
}

/** What a worker reports about itself (AgentWorkers.probe). */
export interface WorkerProbe {
  threadId: number;
  heapUsed: number;
  /** The TypeScript compiler has been evaluated in this worker. */
  typescript: boolean;
}

const inflightOf = (s: Slot) => s.reserved + s.posted;

export class AgentWorkers {
  private readonly slots = new Map<string, Slot>();
  private readonly hosts = new Set<Host>();
  /** Agents whose skill crashed a shared worker: each gets a worker of its own. */
  private readonly quarantined = new Set<string>();
  private readonly proxies = new Map<string, Skill>();
  private listing: Promise<SkillListing[]> | null = null;
  private seq = 0;
  private closed = false;
  /** Schema verdicts of artifacts' data that came out of a worker: by identity (objects) or value (primitives). */
  private readonly verdicts = new WeakMap<object, SchemaVerdict>();
  private readonly primitiveVerdicts = new Map<unknown, SchemaVerdict>();
  /** Action kinds each request's propose() returned (the pipeline keeps one request object per step). */
  private readonly proposedKinds = new WeakMap<StepRequest, Set<string>>();
  private readonly modules: string[];
  private readonly log: (line: string) => void;
  /** Warm-up of the most recent agent, ms from its placement to its worker's `ready` (0 on a worker already loaded). */
  lastWarmUpMs: number | null = null;

  constructor(private readonly opts: AgentWorkersOptions) {
    this.modules = opts.modules.map((m) => path.resolve(m));
    this.log = opts.log ?? (() => {});
    // One module with a matching build-time listing: no listing worker needed.
    const only = this.modules.length === 1 ? this.modules[0]! : null;
    const known = only ? readSkillManifest(only) : null;
    if (known) this.listing = Promise.resolve(known);
  }

  /**
   * What the modules define, listed by a short-lived worker: the modules' code never runs on the main
   * thread, and listing runs no skill method. Cached.
   */
  discover(): Promise<SkillListing[]> {
    if (!this.listing) {
      if (this.closed) return Promise.reject(new EngineError('ERR_SKILL_UNAVAILABLE', 'agent workers are closed'));
      const t0 = performance.now();
      const worker = this.spawn(null);
      this.listing = new Promise<SkillListing[]>((resolve, reject) => {
        worker.once('message', (m: FromWorker) => {
          if (m.t === 'ready') resolve(m.skills);
          else if (m.t === 'loadError') reject(loadError(m.error));
        });
        worker.once('error', (err) => reject(new EngineError('ERR_SKILL_UNAVAILABLE', `listing skill modules failed: ${err.message}`)));
        worker.once('exit', (code) => reject(new EngineError('ERR_SKILL_UNAVAILABLE', `listing skill modules failed: the worker exited (${code})`)));
      }).finally(() => void worker.terminate());
      this.listing.then((l) => this.log(`agent workers: ${l.length} skill(s) in ${this.modules.length} module(s), listed in ${Math.round(performance.now() - t0)} ms`), () => {});
      this.listing.catch(() => (this.listing = null)); // a later call may try again
    }
    return this.listing;
  }

  /** Proxy skills for every action the modules define for this agent. */
  async skillsFor(agentId: string): Promise<Skill[]> {
    return (await this.discover()).filter((l) => l.agentId === agentId).map((l) => this.proxy(l));
  }

  /** Proxy skills for every agent action the modules define (to register with engine.skills.add). */
  async allSkills(): Promise<Skill[]> {
    return (await this.discover()).map((l) => this.proxy(l));
  }

  /** Starts the agent's worker if it is not alive; resolves when it has loaded the modules. Concurrent callers share one warm-up. */
  async ensureWarm(agentId: string): Promise<void> {
    const slot = this.slotFor(agentId);
    this.cancelDrain(slot);
    await slot.ready;
  }

  /**
   * Stops the agent's worker: at once when idle, else when its in-flight calls have finished.
   * Resolves true when the worker is gone, false when a new call or ensureWarm() kept it warm.
   */
  coolDown(agentId: string): Promise<boolean> {
    const slot = this.slots.get(agentId);
    if (!slot) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      (slot.drain ??= []).push(resolve);
      this.maybeStop(slot);
    });
  }

  status(agentId: string): AgentWorkerStatus {
    const s = this.slots.get(agentId);
    if (!s) return { state: 'cold', inflight: 0, threadId: null, warmUpMs: null, draining: false };
    return { state: s.state, inflight: inflightOf(s), threadId: s.host.worker.threadId, warmUpMs: s.warmUpMs, draining: s.drain !== null };
  }

  /** Live worker threads (warming or warm), for /v1/health. */
  workerCount(): number {
    return this.hosts.size;
  }

  /** Agents that got a worker of their own after crashing a shared one. */
  quarantinedAgents(): string[] {
    return [...this.quarantined];
  }

  /** Asks the agent's worker (warming it if needed) for its heap and whether it evaluated TypeScript. */
  async probe(agentId: string): Promise<WorkerProbe> {
    await this.ensureWarm(agentId);
    const host = this.slots.get(agentId)?.host;
    if (!host || host.exited) throw new EngineError('ERR_SKILL_UNAVAILABLE', `${agentId} has no live worker`);
    const id = ++this.seq;
    return new Promise<WorkerProbe>((resolve) => {
      host.probes.set(id, resolve);
      postSafely(host.worker, { t: 'probe', id });
    });
  }

  /** Agents whose worker is warming or warm. */
  liveAgents(): string[] {
    return [...this.slots.keys()];
  }

  /** Terminates every worker; in-flight calls reject (retryable). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.hosts].map((h) => this.stopHost(h, 'closed')));
  }

  // ---- proxies ----

  /** Research results → their identity in the worker that produced them (see ToWorker `evidenceRef`). */
  private readonly evidenceRefs = new WeakMap<object, { worker: Worker; ref: number }>();

  private evidenceRefOf(slot: Slot, evidence: unknown): number | undefined {
    const known = evidence && typeof evidence === 'object' ? this.evidenceRefs.get(evidence) : undefined;
    // Only the same worker has the object; after a restart the skill gets the copy.
    return known && known.worker === slot.host.worker ? known.ref : undefined;
  }

  private proxy(l: SkillListing): Skill {
    const key = `${l.agentId}/${l.action}`;
    const known = this.proxies.get(key);
    if (known) return known;
    const call = <T>(method: SkillMethod, ctx: SkillContext, args: unknown[], withSchema = false) => this.call<T>(l.agentId, l.action, method, ctx, args, withSchema);
    const skill: Skill = {
      agentId: l.agentId,
      action: l.action,
      research: (ctx) => call<Evidence>('research', ctx, []),
      propose: async (ctx, evidence) => {
        const actions = await call<ProposedAction[]>('propose', ctx, [evidence]);
        const kinds = this.proposedKinds.get(ctx.request) ?? new Set<string>();
        for (const a of Array.isArray(actions) ? actions : []) if (typeof a?.kind === 'string') kinds.add(a.kind);
        this.proposedKinds.set(ctx.request, kinds);
        return actions;
      },
      generate: (ctx, evidence) => call<Artifact>('generate', ctx, [evidence], l.outputSchema),
      ...(l.optimize ? { optimize: (ctx: SkillContext, artifact: Artifact, learned: readonly string[]) => call<{ artifact: Artifact; patterns: string[] }>('optimize', ctx, [artifact, [...learned]], l.outputSchema) } : {}),
      ...(l.outputSchema ? { outputSchema: this.schemaProxy(l) } : {}),
      ...inputSchemaOf(l),
      ...(l.requiresModel ? { requiresModel: true } : {}),
      ...(l.needs?.length ? { needs: l.needs.filter((n): n is SkillNeed => n === 'workspace') } : {}),
    };
    this.proxies.set(key, skill);
    return skill;
  }

  /**
   * The skill's schema is code in the worker; it runs there on every artifact a generate/optimize
   * returns, and this stand-in answers the Review gate with that verdict for the same data.
   */
  private schemaProxy(l: SkillListing): OutputSchema {
    return {
      safeParse: (value: unknown) => {
        const v = typeof value === 'object' && value !== null ? this.verdicts.get(value) : this.primitiveVerdicts.get(value);
        return v ?? { success: false, error: { message: `${l.agentId} ${l.action}: this data did not come from the agent's worker, so its schema (which runs there) has not checked it` } };
      },
    };
  }

  private recordVerdict(data: unknown, v: SchemaVerdict): void {
    if (typeof data === 'object' && data !== null) this.verdicts.set(data, v);
    else {
      this.primitiveVerdicts.set(data, v); // a primitive's verdict depends on its value only
      if (this.primitiveVerdicts.size > 1000) this.primitiveVerdicts.delete(this.primitiveVerdicts.keys().next().value);
    }
  }

  /**
   * allowed() in the worker is synchronous, so the kinds are decided when the call starts: the main
   * ctx.allowed is asked for every known kind and every kind the skill proposed for this request. In
   * the pipeline ACMF decides (and approvals are awaited) in Inspect, before Generate and Optimize,
   * and only proposed kinds can be allowed, so the snapshot is exact for the phases that act.
   */
  private allowedSnapshot(ctx: SkillContext): string[] {
    const kinds = new Set([...KNOWN_ACTION_KINDS, ...(this.proposedKinds.get(ctx.request) ?? [])]);
    return [...kinds].filter((k) => ctx.allowed(k));
  }

  private async call<T>(agentId: string, action: string, method: SkillMethod, ctx: SkillContext, args: unknown[], withSchema: boolean, rerun = true): Promise<T> {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    for (;;) {
      const slot = this.slotFor(agentId);
      this.cancelDrain(slot);
      slot.reserved++;
      try {
        await slot.ready;
      } finally {
        slot.reserved--;
      }
      if (ctx.signal.aborted) {
        this.maybeStop(slot);
        throw ctx.signal.reason;
      }
      // Taken off its worker between its `ready` and this continuation (close or crash): take the next one.
      if (this.slots.get(agentId) !== slot || slot.gone || slot.host.closing || slot.host.exited) continue;
      return this.post<T>(slot, action, method, ctx, args, withSchema, rerun);
    }
  }

  private post<T>(slot: Slot, action: string, method: SkillMethod, ctx: SkillContext, args: unknown[], withSchema: boolean, rerun: boolean): Promise<T> {
    const id = ++this.seq;
    const host = slot.host;
    const { signal: _signal, ...request } = ctx.request;
    const ref = method === 'propose' || method === 'generate' ? this.evidenceRefOf(slot, args[0]) : undefined;
    const msg: ToWorker = {
      t: 'call', id, agentId: slot.agentId, action, method, request: request as WireRequest, allowed: this.allowedSnapshot(ctx), args, model: ctx.model ? { id: ctx.model.id } : null,
      ...(ref !== undefined ? { evidenceRef: ref } : {}),
    };
    return new Promise<T>((resolve, reject) => {
      const stuckAfterMs = this.opts.stuckAfterMs ?? 10_000;
      const onAbort = () => {
        entry.settle(false, ctx.signal.reason);
        try {
          postSafely(host.worker, { t: 'abort', id, reason: toWire(ctx.signal.reason) });
        } catch { /* the worker is gone */ }
        if (stuckAfterMs > 0 && host.calls.has(id)) {
          entry.stuckTimer = setTimeout(() => {
            if (!host.calls.has(id) || host.closing || host.exited) return;
            // The skill ignores its signal and keeps the thread: the agents sharing it would wait behind it.
            host.culprit ??= slot.agentId;
            host.crash ??= new Error(`${slot.agentId} ${action}.${method} kept its worker busy ${stuckAfterMs} ms after its abort`);
            this.log(`agent worker thread ${host.worker.threadId}: ${host.crash.message}; replacing the worker`);
            void host.worker.terminate();
          }, stuckAfterMs);
          entry.stuckTimer.unref?.();
        }
      };
      const detachFromSignal = () => {
        for (const c of entry.completions.values()) c.abort(new EngineError('ERR_CANCELLED', 'the call ended'));
        entry.completions.clear();
        ctx.signal.removeEventListener('abort', onAbort);
      };
      const entry: CallEntry = {
        agentId: slot.agentId,
        slot,
        ctx,
        settled: false,
        effects: new Map(),
        onces: 0,
        completions: new Map(),
        stuckTimer: null,
        settle: (ok, value) => {
          if (entry.settled) return;
          entry.settled = true;
          detachFromSignal();
          if (ok) resolve(value as T);
          else reject(value);
        },
        rerun: rerun
          ? () => {
              if (entry.settled) return;
              entry.settled = true;
              detachFromSignal();
              this.call<T>(slot.agentId, action, method, ctx, args, withSchema, false).then(resolve, reject);
            }
          : null,
      };
      if (withSchema) {
        entry.onResult = (value, schema) => {
          if (!schema) return;
          const artifact = method === 'generate' ? (value as Artifact | undefined) : (value as { artifact?: Artifact } | undefined)?.artifact;
          if (artifact) this.recordVerdict(artifact.data, schema);
        };
      }
      host.calls.set(id, entry);
      slot.posted++;
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        postSafely(host.worker, msg);
      } catch (err) {
        this.forget(host, id, entry);
        entry.settle(false, new EngineError('ERR_SKILL_FAILED', `${slot.agentId} ${action}: the step's input cannot be sent to the agent's worker: ${(err as Error).message}`));
        this.maybeStop(slot);
      }
    });
  }

  /** The worker has answered the call (or will never): it no longer counts as in flight. */
  private forget(host: Host, id: number, entry: CallEntry): void {
    if (!host.calls.delete(id)) return;
    if (entry.stuckTimer) clearTimeout(entry.stuckTimer);
    if (!entry.slot.gone) entry.slot.posted--;
    // The last call of an agent that already left (an aborted call that ran on): the worker can go.
    if (host.agents.size === 0 && host.calls.size === 0) void this.stopHost(host, 'no agent left');
  }

  // ---- workers ----

  private spawn(agentId: string | null, shared = false): Worker {
    const init: WorkerInit = { agentId, modules: this.modules, ...(shared ? { shared: true } : {}) };
    const worker = new Worker(this.opts.workerFile, {
      workerData: init,
      name: agentId ? `cadre-agent:${agentId}` : shared ? 'cadre-agents' : 'cadre-skill-listing',
      // Never the process's stdout: in the language server over stdio that is the LSP channel.
      stdout: true,
      stderr: true,
      resourceLimits: this.opts.resourceLimits ?? DEFAULT_WORKER_LIMITS,
      ...(this.opts.execArgv ? { execArgv: this.opts.execArgv } : {}),
    });
    const who = agentId ?? (shared ? `shared ${worker.threadId}` : 'listing');
    createInterface({ input: worker.stdout }).on('line', (line) => this.log(`[${who}] ${line}`));
    createInterface({ input: worker.stderr }).on('line', (line) => this.log(`[${who}] ${line}`));
    return worker;
  }

  /** The worker an agent warms up on: its own (no sharing, or quarantined), else the shared one with the fewest agents. */
  private hostFor(agentId: string): Host {
    const shared = this.opts.sharedWorkers ?? sharedWorkersFromEnv(process.env);
    if (shared <= 0 || this.quarantined.has(agentId)) return this.spawnHost(agentId);
    const live = [...this.hosts].filter((h) => h.owner === null && !h.closing && !h.exited);
    if (live.length < shared && live.every((h) => h.agents.size > 0)) return this.spawnHost(null);
    return live.reduce((a, b) => (b.agents.size < a.agents.size ? b : a));
  }

  private spawnHost(owner: string | null): Host {
    const t0 = performance.now();
    const worker = this.spawn(owner, owner === null);
    let markReady!: () => void;
    let failReady!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    ready.catch(() => {}); // observed by every caller; never an unhandled rejection
    const host: Host = { worker, owner, agents: new Set(), ready, loaded: false, calls: new Map(), closing: false, exited: false, crash: null, culprit: null, probes: new Map() };
    this.hosts.add(host);
    worker.on('message', (m: FromWorker) => {
      switch (m.t) {
        case 'ready':
          host.loaded = true;
          this.log(`agent worker thread ${worker.threadId}${owner ? ` (${owner})` : ' (shared)'}: modules loaded in ${m.loadMs.toFixed(1)} ms, up in ${(performance.now() - t0).toFixed(1)} ms`);
          // Settle the listing too if discovery has not run yet.
          this.listing ??= Promise.resolve(m.skills);
          markReady();
          return;
        case 'loadError': {
          const err = loadError(m.error);
          host.crash = err;
          // Its agents are cold at once (the thread's exit comes later).
          for (const agentId of host.agents) if (this.slots.get(agentId)?.host === host) this.slots.delete(agentId);
          failReady(err);
          void this.stopHost(host, 'failed');
          return;
        }
        case 'crash':
          host.culprit ??= m.agentId || null;
          if (m.error) host.crash ??= fromWire(m.error);
          return;
        case 'probe':
          host.probes.get(m.id)?.({ threadId: worker.threadId, heapUsed: m.heapUsed, typescript: m.typescript });
          host.probes.delete(m.id);
          return;
        default:
          this.onMessage(host, m);
      }
    });
    worker.on('error', (err) => {
      host.crash ??= err;
    });
    worker.on('exit', (code) => {
      if (!host.loaded) failReady(host.crash && !host.closing ? host.crash : new EngineError('ERR_SKILL_FAILED', `the agents' worker ${host.closing ? 'was stopped' : `crashed (exit code ${code})`} while warming up`, { retryable: true }));
      this.onHostExit(host, code);
    });
    return host;
  }

  private slotFor(agentId: string): Slot {
    const existing = this.slots.get(agentId);
    if (existing) return existing;
    if (this.closed) throw new EngineError('ERR_SKILL_UNAVAILABLE', 'agent workers are closed');
    const t0 = performance.now();
    const host = this.hostFor(agentId);
    host.agents.add(agentId);
    const slot: Slot = { agentId, host, state: host.loaded ? 'warm' : 'warming', ready: host.ready, warmUpMs: null, reserved: 0, posted: 0, drain: null, gone: false };
    slot.ready = host.ready.then(() => {
      slot.state = 'warm';
      slot.warmUpMs = performance.now() - t0;
      this.lastWarmUpMs = slot.warmUpMs;
      this.log(`agent worker ${agentId}: warm in ${slot.warmUpMs.toFixed(1)} ms (thread ${host.worker.threadId}, ${host.owner ? 'its own' : `shared by ${host.agents.size}`})`);
      queueMicrotask(() => this.maybeStop(slot));
    });
    slot.ready.catch(() => {});
    this.slots.set(agentId, slot);
    this.log(`agent worker ${agentId}: ${slot.state === 'warm' ? 'placed' : 'warming'} (thread ${host.worker.threadId})`);
    return slot;
  }

  /**
   * A worker ended. Stopped by us: its calls fail as stopped. Crashed: the agent that brought it down
   * (reported by the worker, or the only one with calls in it) takes the blame; the other agents'
   * calls that started no side effect run again on a new worker and their agents warm again.
   */
  private onHostExit(host: Host, code: number): void {
    host.exited = true;
    this.hosts.delete(host);
    const crashed = !host.closing;
    let culprit = host.owner ?? host.culprit;
    if (crashed && culprit === null) {
      const busy = new Set([...host.calls.values()].filter((e) => !e.settled).map((e) => e.agentId));
      if (busy.size === 1) culprit = [...busy][0]!;
    }
    const cause = host.crash;
    const why = cause ? cause.message : `exit code ${code}`;
    const errFor = (agentId: string) =>
      !crashed
        ? new EngineError('ERR_SKILL_FAILED', `${agentId}'s worker was stopped during the call`, { retryable: true })
        : new EngineError('ERR_SKILL_FAILED', `${agentId}'s worker crashed (${why}); the call can be retried on a new worker`, {
            retryable: true,
            details: { agentId, exitCode: code, threadId: host.worker.threadId, ...(culprit && culprit !== agentId ? { crashedBy: culprit } : {}) },
            ...(cause ? { cause } : {}),
          });
    const rerun: CallEntry[] = [];
    let failed = 0;
    for (const entry of host.calls.values()) {
      if (entry.stuckTimer) clearTimeout(entry.stuckTimer);
      for (const e of entry.effects.values()) e.reject(errFor(entry.agentId));
      if (entry.settled) continue;
      const innocent = crashed && culprit !== null && entry.agentId !== culprit && !this.closed;
      if (innocent && entry.rerun && entry.onces === 0) rerun.push(entry);
      else {
        failed++;
        entry.settle(false, errFor(entry.agentId));
      }
    }
    host.calls.clear();
    const rewarm: string[] = [];
    for (const agentId of host.agents) {
      const slot = this.slots.get(agentId);
      if (!slot || slot.host !== host) continue;
      this.slots.delete(agentId);
      slot.gone = true;
      slot.posted = 0;
      if (crashed && agentId !== culprit && slot.state === 'warm' && !slot.drain) rewarm.push(agentId);
      for (const r of slot.drain ?? []) r(true);
      slot.drain = null;
    }
    if (crashed) {
      const who = host.owner ?? `shared by ${[...host.agents].join(', ') || 'no agent'}`;
      this.log(`agent worker thread ${host.worker.threadId} (${who}): crashed (${why})${culprit ? `, caused by ${culprit}` : ''}; ${failed} call(s) failed${rerun.length ? `, ${rerun.length} call(s) of other agents run again on a new worker` : ''}`);
      if (culprit !== null && host.owner === null && !this.quarantined.has(culprit)) {
        this.quarantined.add(culprit);
        this.log(`agent worker ${culprit}: gets a worker of its own from now on (its skill crashed a shared worker)`);
      }
    }
    for (const entry of rerun) entry.rerun!();
    if (!this.closed) for (const agentId of rewarm) this.ensureWarm(agentId).catch((err: unknown) => this.log(`agent worker ${agentId}: warming again failed: ${(err as Error).message}`));
  }

  private onMessage(host: Host, m: FromWorker): void {
    if (m.t === 'ready' || m.t === 'loadError' || m.t === 'crash' || m.t === 'probe') return;
    const entry = host.calls.get(m.id);
    if (!entry) return;
    switch (m.t) {
      case 'result': {
        this.forget(host, m.id, entry);
        if (m.ok && m.evidenceRef !== undefined && m.value && typeof m.value === 'object') this.evidenceRefs.set(m.value, { worker: host.worker, ref: m.evidenceRef });
        if (m.ok) {
          entry.onResult?.(m.value, m.schema);
          entry.settle(true, m.value);
        } else entry.settle(false, fromWire(m.error));
        this.maybeStop(entry.slot);
        return;
      }
      case 'progress': {
        if (!entry.settled) entry.ctx.progress(m.percent, m.confidence);
        return;
      }
      case 'once': {
        const answer = (msg: ToWorker) => {
          try {
            postSafely(host.worker, msg);
          } catch (err) {
            postSafely(host.worker, { t: 'onceResult', id: m.id, onceId: m.onceId, ok: false, error: toWire(err) });
          }
        };
        entry.onces++; // from here on the call is not run again elsewhere (see onHostExit)
        if (entry.settled) {
          // The call was aborted on this side: its effects must not start now.
          answer({ t: 'onceResult', id: m.id, onceId: m.onceId, ok: false, error: toWire(entry.ctx.signal.reason ?? new Error('the call has ended')) });
          return;
        }
        // The main ledger decides; the worker runs the effect (or its reconcile) only if the ledger asks for it.
        const inWorker = (fn?: 'reconcile') => () =>
          new Promise<unknown>((resolve, reject) => {
            // The thread died while the ledger was deciding: nothing can run the effect any more.
            if (host.exited) return reject(new EngineError('ERR_SKILL_FAILED', `${entry.agentId}'s worker ended before its side effect "${m.key}" could run`, { retryable: true }));
            entry.effects.set(m.onceId, { resolve, reject });
            postSafely(host.worker, { t: 'runEffect', id: m.id, onceId: m.onceId, ...(fn ? { fn } : {}) });
          });
        Promise.resolve()
          .then(() => entry.ctx.once(m.key, inWorker(), { ...(m.reconcile ? { reconcile: inWorker('reconcile') } : {}), ...(m.resources ? { resources: m.resources } : {}) }))
          .then(
            (value) => answer({ t: 'onceResult', id: m.id, onceId: m.onceId, ok: true, value: cloneable(value) }),
            (err: unknown) => answer({ t: 'onceResult', id: m.id, onceId: m.onceId, ok: false, error: toWire(err) }),
          )
          .catch(() => {}); // the worker is gone: its exit already failed the call
        return;
      }
      case 'complete': {
        const reply = (msg: ToWorker) => {
          try {
            postSafely(host.worker, msg);
          } catch { /* the worker is gone */ }
        };
        const model = entry.ctx.model;
        if (entry.settled || !model) {
          const why = entry.settled ? new EngineError('ERR_CANCELLED', 'the call has ended') : new EngineError('ERR_SKILL_UNAVAILABLE', 'no language model is configured');
          reply({ t: 'completionResult', id: m.id, reqId: m.reqId, ok: false, error: toWire(why) });
          return;
        }
        const controller = new AbortController();
        entry.completions.set(m.reqId, controller);
        const r = m.request;
        Promise.resolve()
          .then(() => model.complete({
            messages: r.messages,
            ...(r.maxTokens !== undefined ? { maxTokens: r.maxTokens } : {}),
            ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
            ...(r.stream !== undefined ? { stream: r.stream } : {}),
            ...(r.tokens ? { onToken: (text: string) => reply({ t: 'completionToken', id: m.id, reqId: m.reqId, text }) } : {}),
            signal: controller.signal,
          }))
          .then(
            (value) => reply({ t: 'completionResult', id: m.id, reqId: m.reqId, ok: true, value: cloneable(value) as typeof value }),
            (err: unknown) => reply({ t: 'completionResult', id: m.id, reqId: m.reqId, ok: false, error: toWire(err) }),
          )
          .finally(() => entry.completions.delete(m.reqId));
        return;
      }
      case 'completeAbort': {
        entry.completions.get(m.reqId)?.abort(new EngineError('ERR_CANCELLED', 'language model request cancelled'));
        entry.completions.delete(m.reqId);
        return;
      }
      case 'effectResult': {
        const waiter = entry.effects.get(m.onceId);
        if (!waiter) return;
        entry.effects.delete(m.onceId);
        if (m.ok) waiter.resolve(m.value);
        else waiter.reject(fromWire(m.error));
        return;
      }
    }
  }

  private cancelDrain(slot: Slot): void {
    if (!slot.drain) return;
    for (const r of slot.drain) r(false);
    slot.drain = null;
  }

  /** Finishes a pending cool-down once the agent is warm and idle: it leaves its worker, which stops when no agent is left. */
  private maybeStop(slot: Slot): void {
    if (slot.drain && slot.state === 'warm' && inflightOf(slot) === 0 && !slot.gone) void this.leave(slot, 'cooled down');
  }

  private async leave(slot: Slot, why: string): Promise<void> {
    slot.gone = true;
    if (this.slots.get(slot.agentId) === slot) this.slots.delete(slot.agentId);
    const host = slot.host;
    host.agents.delete(slot.agentId);
    this.log(`agent worker ${slot.agentId}: ${why}`);
    if (host.agents.size === 0 && host.calls.size === 0) await this.stopHost(host, 'no agent left');
    for (const r of slot.drain ?? []) r(true);
    slot.drain = null;
  }

  private async stopHost(host: Host, why: string): Promise<void> {
    if (host.closing || host.exited) return;
    host.closing = true;
    this.log(`agent worker thread ${host.worker.threadId}${host.owner ? ` (${host.owner})` : ' (shared)'}: ${why}`);
    await host.worker.terminate(); // 'exit' fails what was still running
  }
}

/** CADRE_SHARED_WORKERS: how many workers the agents share (0: one per agent); default 2. */
export function sharedWorkersFromEnv(env: NodeJS.ProcessEnv): number {
  const n = Number(env['CADRE_SHARED_WORKERS']);
  return env['CADRE_SHARED_WORKERS'] !== undefined && env['CADRE_SHARED_WORKERS'] !== '' && Number.isInteger(n) && n >= 0 ? n : 2;
}

function loadError(w: { message: string }): EngineError {
  return new EngineError('ERR_SKILL_UNAVAILABLE', `skill modules could not be loaded in the agent worker: ${w.message}`);
}

/**
 * The skill's input schema rebuilt from the JSON Schema of its listing, so the engine can refuse a
 * request that does not fit before an execution exists (a 422 at the door rather than a step that
 * ends needs_input). The worker checks the original zod schema again before Research.
 */
function inputSchemaOf(l: SkillListing): { inputSchema?: InputSchema } {
  if (!l.inputJsonSchema) return {};
  try {
    return { inputSchema: z.fromJSONSchema(l.inputJsonSchema as Parameters<typeof z.fromJSONSchema>[0]) };
  } catch {
    return {}; // a schema zod cannot rebuild is still checked in the worker
  }
}
