/**
 * The messages between the main thread (AgentWorkers) and an agent's worker (worker-main), and the
 * helpers both sides use to move errors and values across the structured-clone boundary.
 *
 * One call = one `call` message with an id; everything a skill does through its context during that
 * call (progress, once) travels as messages carrying the same id, so a worker serves many calls at once.
 */
import type { ChatMessage, CompletionResult, EffectResource, StepRequest } from '../engine/rigor/skill';

export type SkillMethod = 'research' | 'propose' | 'generate' | 'optimize';

/** What a skill module defines, listed without running any skill method. */
export interface SkillListing {
  agentId: string;
  action: string;
  /** The skill has an Optimize phase. */
  optimize: boolean;
  /** The skill declares an output schema (validated in the worker, see AgentWorkers). */
  outputSchema: boolean;
  /** The skill only works with a language model (Skill.requiresModel). */
  requiresModel?: boolean;
  /** What the request must give (Skill.needs), checked when work is submitted. */
  needs?: string[];
  /** JSON Schemas of the action's `input` and of its result's data (from Skill.inputSchema / outputSchema), for the OpenAPI document. */
  inputJsonSchema?: Record<string, unknown>;
  outputJsonSchema?: Record<string, unknown>;
}

/** A completion asked by a skill in a worker, without its signal and callback (they stay in the worker). */
export interface WireCompletionRequest {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  stream?: boolean;
  /** The skill gave `onToken`: the main thread relays streamed pieces as `completionToken` messages. */
  tokens: boolean;
}

/** An error as it crosses threads: enough to rebuild one that `isEngineError` and callers treat alike. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  retryable?: boolean;
  details?: unknown;
  stack?: string;
}

/** The request without its AbortSignal (the worker gives the skill a signal of its own). */
export type WireRequest = Omit<StepRequest, 'signal'>;

export interface WorkerInit {
  /** The agent the worker serves; null for a listing-only worker (discovery) or a shared one. */
  agentId: string | null;
  /** A worker shared by several agents: each call names its agent (see AgentWorkersOptions.sharedWorkers). */
  shared?: boolean;
  /** Absolute paths of the skill modules to load. */
  modules: string[];
}

// main -> worker
export type ToWorker =
  /**
   * `evidenceRef`: the worker-side identity of the evidence in `args[0]` (from research's result), so
   * the skill gets back the very object it returned, with whatever it keeps about it (WeakMaps).
   */
  | { t: 'call'; id: number; agentId?: string; action: string; method: SkillMethod; request: WireRequest; allowed: string[]; args: unknown[]; model?: { id: string } | null; evidenceRef?: number }
  /** What the worker holds (tests, diagnostics): its heap and whether it has evaluated the TypeScript compiler. */
  | { t: 'probe'; id: number }
  | { t: 'abort'; id: number; reason: WireError }
  /** `fn: 'reconcile'`: run the once's reconcile (the ledger found an intent without outcome), else its effect. */
  | { t: 'runEffect'; id: number; onceId: number; fn?: 'reconcile' }
  | { t: 'onceResult'; id: number; onceId: number; ok: true; value: unknown }
  | { t: 'onceResult'; id: number; onceId: number; ok: false; error: WireError }
  | { t: 'completionToken'; id: number; reqId: number; text: string }
  | { t: 'completionResult'; id: number; reqId: number; ok: true; value: CompletionResult }
  | { t: 'completionResult'; id: number; reqId: number; ok: false; error: WireError };

/** Verdict of the skill's output schema on the artifact's data, computed in the worker. */
export type SchemaVerdict = { success: true } | { success: false; error: { message: string } };

// worker -> main
export type FromWorker =
  | { t: 'ready'; skills: SkillListing[]; loadMs: number }
  | { t: 'loadError'; error: WireError }
  /**
   * Sent as the thread goes down (uncaught error, unhandled rejection or process.exit in a skill):
   * the agent whose call's async context it came from, so only that agent is blamed (and moved to a
   * worker of its own). `error` is absent for an exit (the exit code tells).
   */
  | { t: 'crash'; agentId: string; error?: WireError }
  | { t: 'probe'; id: number; heapUsed: number; typescript: boolean }
  | { t: 'result'; id: number; ok: true; value: unknown; schema?: SchemaVerdict; evidenceRef?: number }
  | { t: 'result'; id: number; ok: false; error: WireError }
  | { t: 'progress'; id: number; percent: number; confidence?: number }
  | { t: 'once'; id: number; onceId: number; key: string; reconcile?: boolean; resources?: EffectResource[] }
  | { t: 'effectResult'; id: number; onceId: number; ok: true; value: unknown }
  | { t: 'effectResult'; id: number; onceId: number; ok: false; error: WireError }
  | { t: 'complete'; id: number; reqId: number; request: WireCompletionRequest }
  | { t: 'completeAbort'; id: number; reqId: number };

export function toWire(err: unknown): WireError {
  if (err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)) {
    const e = err as Error & { code?: unknown; retryable?: unknown; details?: unknown };
    const out: WireError = { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message) };
    if (typeof e.code === 'string') out.code = e.code;
    if (typeof e.retryable === 'boolean') out.retryable = e.retryable;
    if (e.details !== undefined) out.details = cloneable(e.details);
    if (typeof e.stack === 'string') out.stack = e.stack;
    return out;
  }
  return { name: 'Error', message: String(err) };
}

/** Rebuilds an error with the same name, message, code, retryable and details (no class identity: the engine branches on `code`). */
export function fromWire(w: WireError): Error {
  const err = new Error(w.message) as Error & { code?: string; retryable?: boolean; details?: unknown };
  err.name = w.name;
  if (w.code !== undefined) err.code = w.code;
  if (w.retryable !== undefined) err.retryable = w.retryable;
  if (w.details !== undefined) err.details = w.details;
  if (w.stack !== undefined) err.stack = w.stack;
  return err;
}

/** The value itself when structured clone takes it, else its JSON image (functions, class instances with handles dropped). */
export function cloneable(value: unknown): unknown {
  try {
    structuredClone(value);
    return value;
  } catch {
    try {
      return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
    } catch {
      return String(value);
    }
  }
}

/** True for the error postMessage throws on a value structured clone refuses. */
export function isDataCloneError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'DataCloneError';
}

/**
 * Posts a message; when structured clone refuses it (a function or a handle somewhere in the value),
 * posts its JSON image instead, as a skill returning such a value in process would still have worked
 * for every JSON consumer after it (store, events, audit).
 */
export function postSafely(port: { postMessage(value: unknown): void }, msg: ToWorker | FromWorker): void {
  try {
    port.postMessage(msg);
  } catch (err) {
    if (!isDataCloneError(err)) throw err;
    port.postMessage(JSON.parse(JSON.stringify(msg)) as unknown);
  }
}
