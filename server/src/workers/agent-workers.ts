/**
 * Agent skills off the main thread: one worker thread per agent, started on demand (warm-up) and
 * stopped when the agent goes idle (cool-down), so a CPU-heavy skill never blocks the language server
 * or the HTTP server.
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
import { Worker } from 'node:worker_threads';
import { EngineError } from '../engine/errors';
import { readSkillManifest } from './skill-manifest';
import type { ProposedAction } from '../engine/acmf/records';
import type { Artifact, Evidence, OutputSchema, Skill, SkillContext, StepRequest } from '../engine/rigor/skill';
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
}

/**
 * Action kinds the engine knows (ProposedAction.kind). With the kinds the skill proposed for the same
 * request they are the kinds `allowed()` is asked for when a call starts.
 */
export const KNOWN_ACTION_KINDS: readonly string[] = ['read', 'write_file', 'delete_file', 'git_push', 'open_pr', 'run_command', 'deploy', 'call_webhook'];

/** `dist/worker.js` next to the bundled server (`dist/server.js`). */
export function defaultWorkerFile(): string {
  return path.join(__dirname, 'worker.js');
}

interface CallEntry {
  ctx: SkillContext;
  /** The proxy's promise has settled (result, abort or crash); the worker may still be running the call. */
  settled: boolean;
  settle(ok: boolean, value: unknown): void;
  /** Effects the main ledger asked the worker to run, waiting for `effectResult`. */
  effects: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
  /** Completions the worker asked for, running on the main side's ctx.model. */
  completions: Map<number, AbortController>;
  /** Set on a generate/optimize result of a skill with an output schema. */
  onResult?: (value: unknown, schema: SchemaVerdict | undefined) => void;
}

interface Slot {
  agentId: string;
  worker: Worker;
  state: 'warming' | 'warm';
  ready: Promise<void>;
  warmUpMs: number | null;
  /** Calls that wait for the warm-up (reserved) plus calls posted to the worker. */
  reserved: number;
  calls: Map<number, CallEntry>;
  /** Resolvers of pending coolDown() calls. */
  drain: Array<(stopped: boolean) => void> | null;
  /** We terminated it (an exit is not a crash). */
  closing: boolean;
  /** The thread has exited (its 'exit' event ran). */
  exited: boolean;
  crash: Error | null;
}

const inflightOf = (s: Slot) => s.reserved + s.calls.size;

export class AgentWorkers {
  private readonly slots = new Map<string, Slot>();
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
  /** Warm-up of the most recent worker, ms from spawn to `ready` (thread start + module load). */
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
    return { state: s.state, inflight: inflightOf(s), threadId: s.worker.threadId, warmUpMs: s.warmUpMs, draining: s.drain !== null };
  }

  /** Agents whose worker is warming or warm. */
  liveAgents(): string[] {
    return [...this.slots.keys()];
  }

  /** Terminates every worker; in-flight calls reject (retryable). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots.values()].map((s) => this.stop(s, 'closed')));
  }

  // ---- proxies ----

  /** Research results → their identity in the worker that produced them (see ToWorker `evidenceRef`). */
  private readonly evidenceRefs = new WeakMap<object, { worker: Worker; ref: number }>();

  private evidenceRefOf(slot: Slot, evidence: unknown): number | undefined {
    const known = evidence && typeof evidence === 'object' ? this.evidenceRefs.get(evidence) : undefined;
    // Only the same worker has the object; after a restart the skill gets the copy.
    return known && known.worker === slot.worker ? known.ref : undefined;
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
      ...(l.requiresModel ? { requiresModel: true } : {}),
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

  private async call<T>(agentId: string, action: string, method: SkillMethod, ctx: SkillContext, args: unknown[], withSchema: boolean): Promise<T> {
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
      // Stopped between its `ready` and this continuation (close or crash): take the next worker.
      if (this.slots.get(agentId) !== slot || slot.closing) continue;
      return this.post<T>(slot, action, method, ctx, args, withSchema);
    }
  }

  private post<T>(slot: Slot, action: string, method: SkillMethod, ctx: SkillContext, args: unknown[], withSchema: boolean): Promise<T> {
    const id = ++this.seq;
    const { signal: _signal, ...request } = ctx.request;
    const ref = method === 'propose' || method === 'generate' ? this.evidenceRefOf(slot, args[0]) : undefined;
    const msg: ToWorker = {
      t: 'call', id, action, method, request: request as WireRequest, allowed: this.allowedSnapshot(ctx), args, model: ctx.model ? { id: ctx.model.id } : null,
      ...(ref !== undefined ? { evidenceRef: ref } : {}),
    };
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        entry.settle(false, ctx.signal.reason);
        try {
          postSafely(slot.worker, { t: 'abort', id, reason: toWire(ctx.signal.reason) });
        } catch { /* the worker is gone */ }
      };
      const entry: CallEntry = {
        ctx,
        settled: false,
        effects: new Map(),
        completions: new Map(),
        settle: (ok, value) => {
          if (entry.settled) return;
          entry.settled = true;
          for (const c of entry.completions.values()) c.abort(new EngineError('ERR_CANCELLED', 'the call ended'));
          entry.completions.clear();
          ctx.signal.removeEventListener('abort', onAbort);
          if (ok) resolve(value as T);
          else reject(value);
        },
      };
      if (withSchema) {
        entry.onResult = (value, schema) => {
          if (!schema) return;
          const artifact = method === 'generate' ? (value as Artifact | undefined) : (value as { artifact?: Artifact } | undefined)?.artifact;
          if (artifact) this.recordVerdict(artifact.data, schema);
        };
      }
      slot.calls.set(id, entry);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        postSafely(slot.worker, msg);
      } catch (err) {
        slot.calls.delete(id);
        entry.settle(false, new EngineError('ERR_SKILL_FAILED', `${slot.agentId} ${action}: the step's input cannot be sent to the agent's worker: ${(err as Error).message}`));
        this.maybeStop(slot);
      }
    });
  }

  // ---- workers ----

  private spawn(agentId: string | null): Worker {
    const init: WorkerInit = { agentId, modules: this.modules };
    const worker = new Worker(this.opts.workerFile, {
      workerData: init,
      name: agentId ? `cadre-agent:${agentId}` : 'cadre-skill-listing',
      // Never the process's stdout: in the language server over stdio that is the LSP channel.
      stdout: true,
      stderr: true,
      ...(this.opts.execArgv ? { execArgv: this.opts.execArgv } : {}),
    });
    const who = agentId ?? 'listing';
    createInterface({ input: worker.stdout }).on('line', (line) => this.log(`[${who}] ${line}`));
    createInterface({ input: worker.stderr }).on('line', (line) => this.log(`[${who}] ${line}`));
    return worker;
  }

  private slotFor(agentId: string): Slot {
    const existing = this.slots.get(agentId);
    if (existing) return existing;
    if (this.closed) throw new EngineError('ERR_SKILL_UNAVAILABLE', 'agent workers are closed');
    const t0 = performance.now();
    const worker = this.spawn(agentId);
    let markReady!: () => void;
    let failWarmUp!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failWarmUp = reject;
    });
    ready.catch(() => {}); // observed by every caller; never an unhandled rejection
    const slot: Slot = { agentId, worker, state: 'warming', ready, warmUpMs: null, reserved: 0, calls: new Map(), drain: null, closing: false, exited: false, crash: null };
    this.slots.set(agentId, slot);
    this.log(`agent worker ${agentId}: warming (thread ${worker.threadId})`);

    worker.on('message', (m: FromWorker) => {
      if (m.t === 'ready') {
        slot.state = 'warm';
        slot.warmUpMs = performance.now() - t0;
        this.lastWarmUpMs = slot.warmUpMs;
        this.log(`agent worker ${agentId}: warm in ${slot.warmUpMs.toFixed(1)} ms (modules ${m.loadMs.toFixed(1)} ms)`);
        markReady();
        // Settle the listing too if discovery has not run yet.
        this.listing ??= Promise.resolve(m.skills);
        queueMicrotask(() => this.maybeStop(slot));
        return;
      }
      if (m.t === 'loadError') {
        const err = loadError(m.error);
        slot.crash = err;
        failWarmUp(err);
        void this.stop(slot, 'failed');
        return;
      }
      this.onMessage(slot, m);
    });
    worker.on('error', (err) => {
      slot.crash ??= err;
    });
    worker.on('exit', (code) => {
      slot.exited = true;
      if (this.slots.get(agentId) === slot) this.slots.delete(agentId);
      const cause = slot.crash;
      const err = slot.closing
        ? new EngineError('ERR_SKILL_FAILED', `${agentId}'s worker was stopped during the call`, { retryable: true })
        : new EngineError('ERR_SKILL_FAILED', `${agentId}'s worker crashed (${cause ? cause.message : `exit code ${code}`}); the call can be retried on a new worker`, {
            retryable: true,
            details: { agentId, exitCode: code, threadId: worker.threadId },
            ...(cause ? { cause } : {}),
          });
      if (!slot.closing) this.log(`agent worker ${agentId}: crashed (${cause ? cause.message : `exit code ${code}`}), ${slot.calls.size} call(s) failed`);
      if (slot.state === 'warming') failWarmUp(slot.crash && !slot.closing ? slot.crash : err);
      for (const entry of slot.calls.values()) {
        for (const e of entry.effects.values()) e.reject(err);
        entry.settle(false, err);
      }
      slot.calls.clear();
      for (const r of slot.drain ?? []) r(true);
      slot.drain = null;
    });
    return slot;
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    if (m.t === 'ready' || m.t === 'loadError') return;
    const entry = slot.calls.get(m.id);
    if (!entry) return;
    switch (m.t) {
      case 'result': {
        slot.calls.delete(m.id);
        if (m.ok && m.evidenceRef !== undefined && m.value && typeof m.value === 'object') this.evidenceRefs.set(m.value, { worker: slot.worker, ref: m.evidenceRef });
        if (m.ok) {
          entry.onResult?.(m.value, m.schema);
          entry.settle(true, m.value);
        } else entry.settle(false, fromWire(m.error));
        this.maybeStop(slot);
        return;
      }
      case 'progress': {
        if (!entry.settled) entry.ctx.progress(m.percent, m.confidence);
        return;
      }
      case 'once': {
        const answer = (msg: ToWorker) => {
          try {
            postSafely(slot.worker, msg);
          } catch (err) {
            postSafely(slot.worker, { t: 'onceResult', id: m.id, onceId: m.onceId, ok: false, error: toWire(err) });
          }
        };
        if (entry.settled) {
          // The call was aborted on this side: its effects must not start now.
          answer({ t: 'onceResult', id: m.id, onceId: m.onceId, ok: false, error: toWire(entry.ctx.signal.reason ?? new Error('the call has ended')) });
          return;
        }
        // The main ledger decides; the worker runs the effect only if the ledger asks for it.
        const runInWorker = () =>
          new Promise<unknown>((resolve, reject) => {
            // The thread died while the ledger was deciding: nothing can run the effect any more.
            if (slot.exited) return reject(new EngineError('ERR_SKILL_FAILED', `${slot.agentId}'s worker ended before its side effect "${m.key}" could run`, { retryable: true }));
            entry.effects.set(m.onceId, { resolve, reject });
            postSafely(slot.worker, { t: 'runEffect', id: m.id, onceId: m.onceId });
          });
        Promise.resolve()
          .then(() => entry.ctx.once(m.key, runInWorker))
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
            postSafely(slot.worker, msg);
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

  /** Finishes a pending cool-down once the worker is warm and idle. */
  private maybeStop(slot: Slot): void {
    if (slot.drain && slot.state === 'warm' && inflightOf(slot) === 0 && !slot.closing) void this.stop(slot, 'cooled down');
  }

  private async stop(slot: Slot, why: string): Promise<void> {
    if (slot.closing) return;
    slot.closing = true;
    if (this.slots.get(slot.agentId) === slot) this.slots.delete(slot.agentId);
    this.log(`agent worker ${slot.agentId}: ${why}`);
    await slot.worker.terminate(); // 'exit' resolves the cool-down and fails what was still running
  }
}

function loadError(w: { message: string }): EngineError {
  return new EngineError('ERR_SKILL_UNAVAILABLE', `skill modules could not be loaded in the agent worker: ${w.message}`);
}
