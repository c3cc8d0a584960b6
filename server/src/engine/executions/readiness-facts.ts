/**
 * What deploy-ai `readiness` cannot see in the repository: the engine's last tester-ai run, last
 * review-ai review and the pending ACMF approvals. One assembly for every door: the editor's Readiness
 * view and the MCP tool pass it explicitly (host/readiness.ts), and a direct action of deploy-ai
 * readiness over REST or the CLI gets it from the execution service when its input names none.
 */
import type { ExecutionRecord } from './records';

export interface ReadinessFacts {
  tests: { executionId: string; status: string; passed: number | null; failed: number | null; skipped: number | null; finishedAt: string | null } | null;
  review: { executionId: string; status: string; passed: boolean; finishedAt: string | null; findings: number | null } | null;
  pendingApprovals: number;
}

/** The newest started step of `agentId` doing one of `actions`, with its execution (`recent`: newest first). */
function lastStep(recent: readonly ExecutionRecord[], agentId: string, actions: readonly string[]): { rec: ExecutionRecord; step: ExecutionRecord['steps'][number] } | null {
  for (const rec of recent) {
    const steps = rec.steps.filter((s) => s.agentId === agentId && actions.includes(s.action) && s.status !== 'pending' && s.status !== 'skipped' && !s.superseded);
    const step = steps.at(-1);
    if (step) return { rec, step };
  }
  return null;
}

const stepRunStatus = (s: string) => (s === 'running' ? 'in_progress' : s);
const numOrNull = (v: unknown) => (typeof v === 'number' ? v : null);

export function readinessFacts(recent: readonly ExecutionRecord[], pendingApprovals: number): ReadinessFacts {
  const t = lastStep(recent, 'tester-ai', ['test']);
  const r = lastStep(recent, 'review-ai', ['review', 'verify']);
  const results = (t?.step.output as { results?: { passed?: unknown; failed?: unknown; skipped?: unknown } | null } | null)?.results ?? null;
  const counts = (r?.step.output as { counts?: { total?: unknown } } | null)?.counts;
  return {
    tests: t ? { executionId: t.rec.id, status: stepRunStatus(t.step.status), passed: numOrNull(results?.passed), failed: numOrNull(results?.failed), skipped: numOrNull(results?.skipped), finishedAt: t.step.completedAt } : null,
    review: r ? { executionId: r.rec.id, status: stepRunStatus(r.step.status), passed: r.step.status === 'completed' && r.step.passed === true, finishedAt: r.step.completedAt, findings: numOrNull(counts?.total) } : null,
    pendingApprovals,
  };
}

/** How many recent executions the facts look through (the newest test run and review are among them in practice). */
export const READINESS_LOOKBACK = 500;
