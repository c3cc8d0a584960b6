/**
 * adapt-ai `feedback`: a person's rating of a result (an execution, one of its steps, or one finding
 * of a step), stored in the `feedback` collection of the store. The write is the engine's, made
 * before the step's skill runs (the skill reports it): the step's input is the person's request and
 * the execution's owner key is who rated. One rating per adapt-ai execution (its id is derived from
 * the execution's), so a step re-run after a crash finds the record instead of writing a second one.
 */
import type { AuditTrail, CollectionStore, Repository } from '../ports';
import type { ExecutionRecord, StepRecord } from '../executions/records';
import { factError, type FactError } from './fact-error';

export const FEEDBACK_COLLECTION = 'feedback';
/** Longest reason kept (characters): a reason is a sentence or two, not a document. */
export const MAX_FEEDBACK_REASON = 1000;

export type Rating = { scale: 'thumbs'; value: 'up' | 'down' } | { scale: 'stars'; value: 1 | 2 | 3 | 4 | 5 };

export interface FeedbackRecord {
  /** `fb_<id of the adapt-ai execution that recorded it>`. */
  id: string;
  tenantId: string;
  /** The execution rated. */
  executionId: string;
  /** The step rated (null: the execution as a whole). */
  step: number | null;
  /** The agent whose result was rated (the step's; the execution's only agent; null when several). */
  agentId: string | null;
  /** Every agent of the execution rated (when no step is named). */
  agents: string[];
  /** The finding rated, as found in the step's output. */
  finding: { fingerprint: string | null; id: string | null; ruleId: string | null; file: string | null; severity: string | null } | null;
  rating: Rating;
  /** up, or 4 and 5 stars. */
  good: boolean;
  reason: string | null;
  /** `key:<owner key id>`, or `local` for a run no key started (the editor, the embedded CLI). */
  by: string;
  /** The adapt-ai execution through which it was recorded. */
  via: string;
  at: string;
  /** The rated step's confidence and outcome at the time (for calibration). */
  confidence: number | null;
  outcome: string | null;
}

export function feedbackRepo(store: CollectionStore): Repository<FeedbackRecord> {
  return store.collection<FeedbackRecord>(FEEDBACK_COLLECTION);
}

/** Feedback records of one tenant, oldest first. */
export function tenantFeedback(store: CollectionStore, tenantId: string): FeedbackRecord[] {
  return feedbackRepo(store).list((r) => r.tenantId === tenantId).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

export function ratingOf(v: unknown): Rating | FactError {
  if (v === 'up' || v === 'down') return { scale: 'thumbs', value: v };
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*[1-5]\s*$/.test(v) ? Number(v) : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= 5) return { scale: 'stars', value: n as 1 | 2 | 3 | 4 | 5 };
  return factError('invalid', 'rating must be up, down or a whole number of stars from 1 to 5', 'rating');
}

export const isGood = (r: Rating): boolean => (r.scale === 'thumbs' ? r.value === 'up' : r.value >= 4);

interface FoundFinding { fingerprint: string | null; id: string | null; ruleId: string | null; file: string | null; severity: string | null }

/** The finding of a step output whose fingerprint or id is `key` (findings are objects with a `fingerprint` or an `id` and a `ruleId`). */
export function findFinding(output: unknown, key: string): FoundFinding | null {
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): FoundFinding | null => {
    if (v === null || typeof v !== 'object' || depth > 12 || seen.has(v)) return null;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) {
        const hit = walk(x, depth + 1);
        if (hit) return hit;
      }
      return null;
    }
    const o = v as Record<string, unknown>;
    const str = (k: string): string | null => (typeof o[k] === 'string' ? (o[k] as string) : null);
    const looksLikeFinding = str('fingerprint') !== null || (str('id') !== null && (str('ruleId') !== null || str('rule') !== null));
    if (looksLikeFinding && (str('fingerprint') === key || str('id') === key)) {
      return { fingerprint: str('fingerprint'), id: str('id'), ruleId: str('ruleId') ?? str('rule'), file: str('file') ?? str('path'), severity: str('severity') };
    }
    for (const x of Object.values(o)) {
      const hit = walk(x, depth + 1);
      if (hit) return hit;
    }
    return null;
  };
  return walk(output, 0);
}

export interface FeedbackFacts {
  action: 'feedback';
  tenantId: string;
  asOf: string;
  recorded: (FeedbackRecord & { replayed: boolean }) | FactError;
  /** The ratings of the same target so far (this one included). */
  sameTarget: { up: number; down: number; total: number };
}

export interface FeedbackDeps {
  store: CollectionStore;
  audit: AuditTrail;
  /** The execution as `tenantId` may see it (undefined: missing or another tenant's). */
  executionFor(tenantId: string, id: string): ExecutionRecord | undefined;
  now(): string;
}

/** Validates the request and records the rating once per adapt-ai execution. */
export async function recordFeedback(deps: FeedbackDeps, ctx: { executionId: string; tenantId: string; ownerKeyId: string | null; input: Readonly<Record<string, unknown>> }): Promise<FeedbackFacts> {
  const base = { action: 'feedback' as const, tenantId: ctx.tenantId, asOf: deps.now() };
  const repo = feedbackRepo(deps.store);
  const id = `fb_${ctx.executionId}`;
  const existing = repo.get(id);
  const counts = (r: FeedbackRecord) => {
    const same = repo.list((x) => x.tenantId === r.tenantId && x.executionId === r.executionId && x.step === r.step && (x.finding?.fingerprint ?? x.finding?.id ?? null) === (r.finding?.fingerprint ?? r.finding?.id ?? null));
    return { up: same.filter((x) => x.good).length, down: same.filter((x) => !x.good).length, total: same.length };
  };
  if (existing) return { ...base, recorded: { ...existing, replayed: true }, sameTarget: counts(existing) };
  const fail = (e: FactError): FeedbackFacts => ({ ...base, recorded: e, sameTarget: { up: 0, down: 0, total: 0 } });
  const input = ctx.input;
  const targetId = typeof input['executionId'] === 'string' ? input['executionId'].trim() : '';
  if (!targetId) return fail(factError('invalid', 'executionId (the execution whose result is rated) is required', 'executionId'));
  if (targetId === ctx.executionId) return fail(factError('invalid', 'an execution cannot rate itself: name the execution whose result is rated', 'executionId'));
  const target = deps.executionFor(ctx.tenantId, targetId);
  if (!target) return fail(factError('not_found', `no execution ${targetId}`, 'executionId'));
  const rating = ratingOf(input['rating']);
  if ('error' in rating) return fail(rating);
  let step: StepRecord | null = null;
  const rawStep = input['step'];
  if (rawStep !== undefined && rawStep !== null && rawStep !== '') {
    const n = Number(rawStep);
    step = Number.isInteger(n) ? target.steps.find((s) => s.step === n) ?? null : null;
    if (!step) return fail(factError('not_found', `execution ${targetId} has no step ${String(rawStep)} (steps 0..${Math.max(0, target.steps.length - 1)})`, 'step'));
  }
  let finding: FoundFinding | null = null;
  const rawFinding = typeof input['finding'] === 'string' ? input['finding'].trim() : '';
  if (rawFinding) {
    const where = step ? [step] : target.steps;
    for (const s of where) {
      finding = findFinding(s.output, rawFinding);
      if (finding) {
        step = s;
        break;
      }
    }
    if (!finding) return fail(factError('not_found', `no finding ${rawFinding} in ${step ? `step ${step.step} of ` : ''}execution ${targetId}`, 'finding'));
  }
  const reasonRaw = typeof input['reason'] === 'string' ? input['reason'].trim() : '';
  if (reasonRaw.length > MAX_FEEDBACK_REASON) return fail(factError('invalid', `reason is ${reasonRaw.length} characters; at most ${MAX_FEEDBACK_REASON}`, 'reason'));
  const agents = target.agents ?? [...new Set(target.steps.map((s) => s.agentId))];
  const record: FeedbackRecord = {
    id, tenantId: ctx.tenantId, executionId: targetId, step: step ? step.step : null,
    agentId: step ? step.agentId : agents.length === 1 ? agents[0]! : null, agents,
    finding, rating, good: isGood(rating), reason: reasonRaw || null,
    by: ctx.ownerKeyId ? `key:${ctx.ownerKeyId}` : 'local', via: ctx.executionId, at: deps.now(),
    confidence: step?.confidence ?? null, outcome: step ? (step.outcome ?? step.status) : target.status,
  };
  await repo.put(record);
  await deps.audit.append({
    kind: 'feedback.recorded', executionId: ctx.executionId, agentId: 'adapt-ai', actor: record.by,
    data: { feedbackId: id, tenantId: ctx.tenantId, target: { executionId: targetId, step: record.step, finding: finding?.fingerprint ?? finding?.id ?? null }, agentId: record.agentId, rating, good: record.good, reason: record.reason },
  });
  return { ...base, recorded: { ...record, replayed: false }, sameTarget: counts(record) };
}
