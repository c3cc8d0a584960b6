/**
 * success-ai `health` and `engagement`: the tenant's activity as the store holds it, handed to the
 * skill (which scores and trends it): execution summaries (from memory, a cold execution is not read),
 * the approvals its executions asked for with their waits, and its feedback. Bounded by a window.
 */
import type { ApprovalRecord } from '../acmf/records';
import { summarizeExecution, type ExecutionRecord } from '../executions/records';
import { COLLECTIONS, type CollectionStore } from '../ports';
import { tenantOf } from '../tenants/tenant-id';
import { tenantFeedback } from './feedback';

export const HEALTH_DEFAULT_DAYS = 30;
export const ENGAGEMENT_DEFAULT_WEEKS = 8;
export const MAX_DAYS = 366;
export const MAX_WEEKS = 52;

export interface SuccessFacts {
  action: 'health' | 'engagement';
  tenantId: string;
  asOf: string;
  /** Start of the window the facts cover (ISO). */
  since: string;
  /** The window asked for: days (health) or weeks (engagement). */
  window: { days: number } | { weeks: number };
  /** The tenant's first execution ever (how much history there is), null when none. */
  firstActivity: string | null;
  executions: Array<{ id: string; kind: string; status: string; createdAt: string; completedAt: string | null; agents: string[] }>;
  approvals: Array<{ id: string; executionId: string; agentId: string; status: string; risk: string; requestedAt: string; decidedAt: string | null; decidedBy: string | null }>;
  feedback: Array<{ id: string; executionId: string; agentId: string | null; good: boolean; rating: unknown; at: string }>;
}

export function successFacts(store: CollectionStore, tenantId: string, action: 'health' | 'engagement', input: Readonly<Record<string, unknown>>, now: number, self: string): SuccessFacts | { error: { code: 'invalid'; message: string; field: string } } {
  let since: number;
  let window: SuccessFacts['window'];
  if (action === 'health') {
    const days = input['days'] === undefined || input['days'] === '' ? HEALTH_DEFAULT_DAYS : Number(input['days']);
    if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) return { error: { code: 'invalid', message: `days must be a whole number from 1 to ${MAX_DAYS}`, field: 'days' } };
    since = now - days * 86_400_000;
    window = { days };
  } else {
    const weeks = input['weeks'] === undefined || input['weeks'] === '' ? ENGAGEMENT_DEFAULT_WEEKS : Number(input['weeks']);
    if (!Number.isInteger(weeks) || weeks < 1 || weeks > MAX_WEEKS) return { error: { code: 'invalid', message: `weeks must be a whole number from 1 to ${MAX_WEEKS}`, field: 'weeks' } };
    since = now - weeks * 7 * 86_400_000;
    window = { weeks };
  }
  const sinceIso = new Date(since).toISOString();
  const repo = store.collection<ExecutionRecord>(COLLECTIONS.executions);
  const summaries = (repo.summaries?.(summarizeExecution) ?? repo.list().map(summarizeExecution)).filter((s) => tenantOf(s) === tenantId && s.id !== self);
  const tenantOfExecution = new Map(summaries.map((s) => [s.id, true]));
  const firstActivity = summaries.reduce<string | null>((m, s) => (m === null || s.createdAt < m ? s.createdAt : m), null);
  const executions = summaries.filter((s) => s.createdAt >= sinceIso)
    .map((s) => ({ id: s.id, kind: s.kind, status: s.status, createdAt: s.createdAt, completedAt: s.completedAt, agents: s.agents ?? [] }))
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  const approvals = store.collection<ApprovalRecord>(COLLECTIONS.approvals).list((a) => tenantOfExecution.has(a.executionId) && (a.requestedAt >= sinceIso || a.status === 'pending'))
    .map((a) => ({ id: a.id, executionId: a.executionId, agentId: a.agentId, status: a.status, risk: a.risk, requestedAt: a.requestedAt, decidedAt: a.decidedAt ?? null, decidedBy: a.decidedBy ?? null }))
    .sort((a, b) => (a.requestedAt < b.requestedAt ? -1 : 1));
  const feedback = tenantFeedback(store, tenantId).filter((f) => f.at >= sinceIso).map((f) => ({ id: f.id, executionId: f.executionId, agentId: f.agentId, good: f.good, rating: f.rating, at: f.at }));
  return { action, tenantId, asOf: new Date(now).toISOString(), since: sinceIso, window, firstActivity, executions, approvals, feedback };
}
