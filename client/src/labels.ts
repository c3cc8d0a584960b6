/**
 * Texts the editor shows (status bar, trees, decorations), kept free of the vscode API so that they
 * are unit-tested in Node.
 */
import { PHASES } from '../../protocol/events';
import type { AgentRow, ReadinessRequest, StepRow } from '../../protocol/lsp';

/** The after-line text of inline progress, e.g. `review-ai · Inspect 40% · 0.72`. */
export function progressLabel(t: { agent: string; phase: string; progress: number; confidence: number | null }): string {
  const bits = [t.agent, `${t.phase} ${Math.round(t.progress)}%`];
  if (t.confidence !== null) bits.push(t.confidence.toFixed(2));
  return bits.join(' · ');
}

/** 0–100 across the five RIGOR phases: each phase is a fifth, its progress fills it. */
export function overallPercent(phase: string, progress: number): number {
  const i = Math.max(0, PHASES.indexOf(phase as (typeof PHASES)[number]));
  return Math.min(100, Math.round(((i + Math.min(100, Math.max(0, progress)) / 100) / PHASES.length) * 100));
}

/** The status bar's readiness text: "Ready to deploy" or the count of checks not passing. */
export function readinessSummary(r: Pick<ReadinessRequest.Result, 'ready' | 'checks'>): string {
  const failing = r.checks.filter((c) => c.status !== 'pass').length;
  return r.ready && failing === 0 ? 'Ready to deploy' : `${failing} readiness check${failing === 1 ? '' : 's'} failing`;
}

/** An agent row's description: role · warm state · ACMF mode · tier · load. */
export function agentDescription(a: AgentRow): string {
  const parts = [a.role, a.warm, a.acmfMode];
  if (a.tier) parts.push(a.tier);
  parts.push(`${a.load.running}/${a.load.capacity}${a.load.queued ? ` +${a.load.queued} queued` : ''}`);
  return parts.join(' · ');
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * How the Executions tree shows a step: by its outcome (protocol/events.ts STEP_OUTCOMES) when it
 * has one, else by its status. A not-applicable step is skipped, not a red cross; the reason of any
 * step that did not complete is part of its text.
 */
export function stepPresentation(s: Pick<StepRow, 'status' | 'outcome' | 'reason'>): { icon: 'completed' | 'skipped' | 'needs_input' | 'failed' | 'error' | StepRow['status']; label: string; reason: string | null } {
  const reason = s.reason ?? null;
  switch (s.outcome ?? null) {
    case 'completed': return { icon: 'completed', label: 'completed', reason: null };
    case 'not_applicable': return { icon: 'skipped', label: 'skipped (not applicable)', reason };
    case 'needs_input': return { icon: 'needs_input', label: 'needs input', reason };
    case 'failed': return { icon: 'failed', label: 'failed', reason };
    case 'error': return { icon: 'error', label: 'error', reason };
    default: return { icon: s.status, label: s.status.replace('_', ' '), reason };
  }
}
