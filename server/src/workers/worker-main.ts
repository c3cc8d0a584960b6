/**
 * Entry of an agent's worker thread (bundled to `dist/worker.js`). Loads the skill modules named in
 * workerData, answers `ready` with what they define, then serves calls for its agent: each call runs
 * the skill method with a context whose callbacks are messages to the main thread.
 *
 *   progress(p, c)   -> `progress` message; the main thread calls the step's ctx.progress
 *   allowed(kind)    -> answered locally from the kinds the main thread allowed, sent with the call
 *   once(key, fn)    -> `once` message; the main ledger decides; if it runs the effect it sends
 *                       `runEffect` and this side runs fn and answers `effectResult`
 *   ctx.signal       -> an AbortController per call, aborted by an `abort` message
 *   ctx.model        -> present when the call says the main thread has a model: `complete` message;
 *                       the main thread runs the completion on its model and answers
 *                       `completionResult` (and `completionToken` pieces when streaming); an abort
 *                       of the call or of the completion's own signal sends `completeAbort`
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { CompletionRequest, CompletionResult, OnceOptions, Skill, SkillContext, SkillModel, StepRequest } from '../engine/rigor/skill';
import { checkSkillInput } from '../engine/rigor/skill';
import { loadSkillModules } from '../host/skill-modules';
import { listSkills, manifestPathOf, moduleSha256, type SkillManifest } from './skill-manifest';
import { fromWire, postSafely, toWire, type FromWorker, type SchemaVerdict, type SkillListing, type ToWorker, type WorkerInit } from './protocol';

interface LiveCall {
  controller: AbortController;
  /** Effects handed to ctx.once, waiting for the main ledger to ask for them. */
  effects: Map<number, { effect: () => Promise<unknown>; reconcile?: () => Promise<unknown> }>;
  /** ctx.once promises waiting for the ledger's answer. */
  waiting: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
  /** ctx.model completions waiting for the main thread. */
  completions: Map<number, { resolve(v: CompletionResult): void; reject(e: unknown): void; onToken?: (t: string) => void }>;
}

function cancelledError(): Error {
  return Object.assign(new Error('language model request cancelled'), { name: 'EngineError', code: 'ERR_CANCELLED', retryable: false });
}

/** Research results kept for their later propose/generate calls (one per step in flight is enough). */
const EVIDENCE_KEPT = 256;

/** The agent of the call whose async context runs (a shared worker serves several agents). */
const callerOf = new AsyncLocalStorage<string>();

/**
 * Tells the main thread which agent's skill brings the thread down, so that only that agent is
 * blamed: an uncaught error or unhandled rejection keeps the async context of the call that started
 * it, and so does a skill's process.exit(). The thread still dies as Node would make it die.
 */
function reportCrashes(send: (msg: FromWorker) => void): void {
  process.on('uncaughtExceptionMonitor', (err) => {
    const agentId = callerOf.getStore();
    if (agentId !== undefined) send({ t: 'crash', agentId, error: toWire(err) });
  });
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => {
    const agentId = callerOf.getStore();
    if (agentId !== undefined) send({ t: 'crash', agentId });
    return exit(code as number | undefined);
  }) as typeof process.exit;
}

/** True once the TypeScript compiler has been evaluated in this thread (bundled: dist/typescript.js; from source: node_modules). */
function typescriptLoaded(): boolean {
  return Object.keys(require.cache).some((k) => /[\\/]typescript(?:[\\/]lib[\\/]typescript)?\.js$/.test(k));
}

function start(port: NonNullable<typeof parentPort>, init: WorkerInit): void {
  const send = (msg: FromWorker) => postSafely(port, msg);
  const t0 = performance.now();
  reportCrashes(send);
  let skills: Skill[];
  try {
    skills = loadSkillModules(init.modules);
  } catch (err) {
    send({ t: 'loadError', error: toWire(err) });
    return;
  }
  const byKey = new Map<string, Skill>();
  for (const s of skills) byKey.set(`${s.agentId}/${s.action}`, s); // a later module replaces an earlier skill, as in the registry
  const listing: SkillListing[] = listSkills(skills);

  const calls = new Map<number, LiveCall>();
  let onceSeq = 0;
  const evidenceByRef = new Map<number, unknown>();
  let evidenceSeq = 0;
  let completionSeq = 0;

  /** ctx.model in the worker: each completion is a request to the main thread, which holds the model. */
  function modelFor(callId: number, live: LiveCall, id: string): SkillModel {
    return {
      id,
      complete: (req: CompletionRequest) => {
        const signals = [live.controller.signal, ...(req.signal ? [req.signal] : [])];
        if (signals.some((s) => s.aborted)) return Promise.reject(cancelledError());
        const reqId = ++completionSeq;
        return new Promise<CompletionResult>((resolve, reject) => {
          const onAbort = () => {
            const w = live.completions.get(reqId);
            if (!w) return;
            live.completions.delete(reqId);
            send({ t: 'completeAbort', id: callId, reqId });
            reject(cancelledError());
          };
          const cleanup = () => { for (const s of signals) s.removeEventListener('abort', onAbort); };
          live.completions.set(reqId, {
            resolve: (v) => { cleanup(); resolve(v); },
            reject: (e) => { cleanup(); reject(e); },
            ...(req.onToken ? { onToken: req.onToken } : {}),
          });
          for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
          send({
            t: 'complete', id: callId, reqId,
            request: {
              messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
              ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
              ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
              ...(req.stream !== undefined ? { stream: req.stream } : {}),
              tokens: req.onToken !== undefined,
            },
          });
        });
      },
    };
  }

  async function run(msg: Extract<ToWorker, { t: 'call' }>, live: LiveCall): Promise<{ value: unknown; schema?: SchemaVerdict; evidenceRef?: number }> {
    // A shared worker serves the agent the call names; an agent's own worker serves that agent only.
    const agentId = init.shared ? msg.agentId : init.agentId;
    const skill = agentId === null || agentId === undefined ? undefined : byKey.get(`${agentId}/${msg.action}`);
    if (!skill) throw Object.assign(new Error(`${agentId ?? '(listing worker)'} has no skill "${msg.action}" in its worker`), { name: 'EngineError', code: 'ERR_SKILL_UNAVAILABLE', retryable: false });
    const allowed = new Set(msg.allowed);
    const request: StepRequest = { ...msg.request, signal: live.controller.signal };
    const ctx: SkillContext = {
      request,
      signal: live.controller.signal,
      progress: (percent, confidence) => send({ t: 'progress', id: msg.id, percent, ...(confidence === undefined ? {} : { confidence }) }),
      allowed: (kind) => allowed.has(kind),
      once: <T>(key: string, effect: () => Promise<T>, opts?: OnceOptions<T>) => {
        const onceId = ++onceSeq;
        return new Promise<T>((resolve, reject) => {
          live.effects.set(onceId, { effect, ...(opts?.reconcile ? { reconcile: opts.reconcile } : {}) });
          live.waiting.set(onceId, { resolve: resolve as (v: unknown) => void, reject });
          send({ t: 'once', id: msg.id, onceId, key, ...(opts?.reconcile ? { reconcile: true } : {}), ...(opts?.resources?.length ? { resources: opts.resources.map((r) => ({ ...r })) } : {}) });
        }).finally(() => {
          live.effects.delete(onceId);
          live.waiting.delete(onceId);
        });
      },
      ...(msg.model ? { model: modelFor(msg.id, live, msg.model.id) } : {}),
    };
    const args = msg.args as [never, never];
    // The evidence object research returned here, not its copy from the main thread.
    if (msg.evidenceRef !== undefined && evidenceByRef.has(msg.evidenceRef)) args[0] = evidenceByRef.get(msg.evidenceRef) as never;
    let value: unknown;
    switch (msg.method) {
      case 'research': {
        checkSkillInput(skill, ctx.request.input);
        value = await skill.research(ctx);
        if (value && typeof value === 'object') {
          const ref = ++evidenceSeq;
          evidenceByRef.set(ref, value);
          // A bounded memory: the oldest evidence goes first (its skill then gets the copy).
          if (evidenceByRef.size > EVIDENCE_KEPT) evidenceByRef.delete(evidenceByRef.keys().next().value!);
          return { value, evidenceRef: ref };
        }
        break;
      }
      case 'propose': value = await skill.propose(ctx, args[0]); break;
      case 'generate': value = await skill.generate(ctx, args[0]); break;
      case 'optimize': {
        if (!skill.optimize) throw new Error(`${skill.agentId} ${skill.action} has no optimize`);
        value = await skill.optimize(ctx, args[0], args[1]);
        break;
      }
    }
    // The output schema is code: it runs here, and its verdict travels with the artifact.
    if (skill.outputSchema && (msg.method === 'generate' || msg.method === 'optimize')) {
      const artifact = msg.method === 'generate' ? (value as { data?: unknown }) : (value as { artifact?: { data?: unknown } }).artifact;
      const r = skill.outputSchema.safeParse(artifact?.data);
      return { value, schema: r.success ? { success: true } : { success: false, error: { message: r.error.message } } };
    }
    return { value };
  }

  port.on('message', (msg: ToWorker) => {
    switch (msg.t) {
      case 'call': {
        const live: LiveCall = { controller: new AbortController(), effects: new Map(), waiting: new Map(), completions: new Map() };
        calls.set(msg.id, live);
        callerOf.run(msg.agentId ?? init.agentId ?? '', () => run(msg, live)).then(
          (out) => {
            calls.delete(msg.id);
            try {
              send({ t: 'result', id: msg.id, ok: true, value: out.value, ...(out.schema ? { schema: out.schema } : {}), ...(out.evidenceRef !== undefined ? { evidenceRef: out.evidenceRef } : {}) });
            } catch (err) {
              send({ t: 'result', id: msg.id, ok: false, error: toWire(new Error(`the result of ${msg.action}.${msg.method} cannot leave the worker: ${(err as Error).message}`)) });
            }
          },
          (err: unknown) => {
            calls.delete(msg.id);
            send({ t: 'result', id: msg.id, ok: false, error: toWire(err) });
          },
        );
        return;
      }
      case 'abort': {
        calls.get(msg.id)?.controller.abort(fromWire(msg.reason));
        return;
      }
      case 'probe': {
        send({ t: 'probe', id: msg.id, heapUsed: process.memoryUsage().heapUsed, typescript: typescriptLoaded() });
        return;
      }
      case 'runEffect': {
        const fns = calls.get(msg.id)?.effects.get(msg.onceId);
        const effect = msg.fn === 'reconcile' ? fns?.reconcile : fns?.effect;
        if (!effect) {
          send({ t: 'effectResult', id: msg.id, onceId: msg.onceId, ok: false, error: toWire(new Error('the effect is no longer waiting (its call ended)')) });
          return;
        }
        Promise.resolve()
          .then(effect)
          .then(
            (value) => send({ t: 'effectResult', id: msg.id, onceId: msg.onceId, ok: true, value }),
            (err: unknown) => send({ t: 'effectResult', id: msg.id, onceId: msg.onceId, ok: false, error: toWire(err) }),
          );
        return;
      }
      case 'completionToken': {
        const w = calls.get(msg.id)?.completions.get(msg.reqId);
        try {
          w?.onToken?.(msg.text);
        } catch { /* a throwing callback must not break the relay */ }
        return;
      }
      case 'completionResult': {
        const live = calls.get(msg.id);
        const w = live?.completions.get(msg.reqId);
        if (!live || !w) return;
        live.completions.delete(msg.reqId);
        if (msg.ok) w.resolve(msg.value);
        else w.reject(fromWire(msg.error));
        return;
      }
      case 'onceResult': {
        const w = calls.get(msg.id)?.waiting.get(msg.onceId);
        if (!w) return;
        if (msg.ok) w.resolve(msg.value);
        else w.reject(fromWire(msg.error));
        return;
      }
    }
  });

  send({ t: 'ready', skills: listing, loadMs: performance.now() - t0 });
}

if (parentPort) start(parentPort, workerData as WorkerInit);
else if (process.argv[2] === '--write-manifest' && process.argv[3]) {
  // Build step (esbuild.mjs): `node dist/worker.js --write-manifest dist/skills.js` lists the module once.
  const modulePath = path.resolve(process.argv[3]);
  const manifest: SkillManifest = { module: path.basename(modulePath), sha256: moduleSha256(modulePath), skills: listSkills(loadSkillModules([modulePath])) };
  writeFileSync(manifestPathOf(modulePath), `${JSON.stringify(manifest, null, 1)}\n`);
}
