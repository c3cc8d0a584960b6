/**
 * The editor's views (protocol/lsp.ts) computed from the engine: the same engine calls and status
 * views as the REST routes (server/src/http/routes/engine.ts), shaped for the VS Code trees and the
 * dashboard. No business logic: records in, rows out.
 */
import * as path from 'node:path';
import type { GateResultData } from '../../../protocol/events';
import type {
  AcmfModeName, AgentRow, AgentsRequest, ApprovalRow, AuditRow, CatalogRequest, DashboardRequest, DomainName, ExecutionRow, PhaseState, ProposedChange, ProposedFile, RunStatus, StepRow, WorkflowChoice,
} from '../../../protocol/lsp';
import type { ApprovalRecord } from '../engine/acmf/records';
import { zonedTimeToUtc, type WeeklySchedule } from '../engine/availability/business-hours';
import { AGENTS, DOMAINS, isActionEnabled, WORKFLOWS, type AgentDef } from '../engine/catalog/index';
import type { Engine } from '../engine/index';
import type { ExecutionRecord, ExecutionStatus, StepRecord } from '../engine/executions/records';
import { progressOf, workflowStatus, type StepView } from '../engine/executions/views';
import type { AuditRecord, AuditVerification } from '../engine/ports';

// ---------------------------------------------------------------------------------------------
// Agents and catalog

async function agentRow(engine: Engine, a: AgentDef, domain: DomainName): Promise<AgentRow> {
  const st = await engine.acmf.state(a.id);
  const f = engine.fleet.status(a.id);
  const tier = engine.config.defaults.intelligence;
  return {
    id: a.id,
    name: a.displayName,
    role: a.domains.find((d) => d.domain === domain)?.role ?? '',
    warm: f.warm.state === 'draining' ? 'warm' : f.warm.state,
    acmfMode: st.mode,
    tier: a.tierTag,
    load: { running: f.load.running, queued: f.load.queued, capacity: f.load.capacity },
    actions: a.actions.filter((x) => isActionEnabled(tier, x) && engine.rigor.readiness(a.id, x.name).unavailable === null).map((x) => x.name),
    // The engine's own answer (the same as REST's actions[].unavailableReason): listed so the tree can show them greyed with why.
    unavailable: a.actions.flatMap((x) => {
      const why = isActionEnabled(tier, x) ? engine.rigor.readiness(a.id, x.name).unavailable : `[${x.tierTag}] action, above the ${tier} intelligence tier`;
      return why === null ? [] : [{ action: x.name, reason: why }];
    }),
  };
}

/** The Agents tree: every domain with its agents (a shared agent under each of its domains, with that domain's role). */
export async function agentsView(engine: Engine): Promise<AgentsRequest.Result> {
  const domains = await Promise.all(DOMAINS.map(async (domain) => ({
    domain,
    agents: await Promise.all(AGENTS.filter((a) => a.domains.some((d) => d.domain === domain)).map((a) => agentRow(engine, a, domain))),
  })));
  return { domains, intelligence: engine.config.defaults.intelligence };
}

export function catalogView(): CatalogRequest.Result {
  const workflows: WorkflowChoice[] = WORKFLOWS.map((w) => ({
    id: w.id, name: w.displayName, kind: w.kind, agents: [...new Set(w.pipeline.map((s) => s.agent))], description: w.description,
  }));
  return { workflows };
}

// ---------------------------------------------------------------------------------------------
// Executions

export function runStatus(s: ExecutionStatus): RunStatus {
  return s === 'in_progress' ? 'running' : s === 'awaiting_approval' ? 'waiting_approval' : s;
}

function stepStatus(s: StepRecord['status']): StepRow['status'] {
  return s;
}

function phaseState(s: StepView['phases'][number]['status']): PhaseState {
  // A Failed phase shows as pending (the step's own status says it failed).
  return s === 'Completed' ? 'completed' : s === 'Running' ? 'running' : 'pending';
}

const short = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function titleOf(rec: ExecutionRecord): string {
  if (rec.kind === 'workflow') return rec.request.workflow ?? short(rec.request.prompt);
  if (rec.kind === 'rigor' || rec.kind === 'action') return `${rec.request.agentId ?? rec.steps[0]?.agentId ?? '?'} ${rec.request.action ?? rec.steps[0]?.action ?? ''}`.trim();
  return short(rec.request.prompt);
}

type Range = NonNullable<ExecutionRow['target']>['range'];

function isRange(v: unknown): v is Range {
  const pos = (p: unknown) => !!p && typeof (p as { line?: unknown }).line === 'number' && typeof (p as { character?: unknown }).character === 'number';
  return !!v && typeof v === 'object' && pos((v as Range).start) && pos((v as Range).end);
}

/**
 * One execution as a row. A step lists the 21 results of its Review from its record (steps stored
 * before the table was kept list their failed gates).
 */
export function executionRow(engine: Engine, rec: ExecutionRecord): ExecutionRow {
  const live = engine.executions.live(rec.id);
  const view = workflowStatus(rec, live);
  const steps: StepRow[] = view.phases.map((s) => {
    const record = rec.steps[s.step];
    const started = record?.startedAt ? Date.parse(record.startedAt) : NaN;
    const ended = record?.completedAt ? Date.parse(record.completedAt) : NaN;
    return {
      step: s.step, agentId: s.agentId, action: s.action, status: stepStatus(s.status), confidence: s.confidence,
      durationMs: Number.isFinite(started) && Number.isFinite(ended) ? ended - started : null,
      phases: s.phases.map((p) => ({ phase: p.phase, state: phaseState(p.status), durationMs: p.durationMs })),
      gates: record?.gates.results ?? record?.gates.failures ?? [],
      outcome: record?.outcome ?? null,
      reason: record?.reason ?? null,
    };
  });
  const input = rec.request.input;
  const target = typeof input['file'] === 'string' && isRange(input['range']) ? { uri: input['file'], range: input['range'] } : undefined;
  return {
    id: rec.id, kind: rec.kind === 'action' ? 'rigor' : rec.kind, title: titleOf(rec), status: runStatus(rec.status), progress: progressOf(rec, live),
    createdAt: rec.createdAt, finishedAt: rec.completedAt, error: rec.error ? { code: rec.error.code, message: rec.error.message } : null, steps,
    ...(target ? { target } : {}),
    // A URL source (a repository to clone) is not a folder of the editor's.
    ...(rec.request.source && !/^[a-z][a-z0-9+.-]*:\/\//i.test(rec.request.source) ? { folder: { name: path.basename(rec.request.source), path: rec.request.source } } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Approvals

export function approvalRow(a: ApprovalRecord): ApprovalRow {
  return {
    id: a.id, executionId: a.executionId ?? null, agentId: a.agentId, action: a.action.description || a.action.kind, risk: a.risk,
    reason: a.riskReasons.join('; '), requestedAt: a.requestedAt, expiresAt: a.expiresAt ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Dashboard

/** One line saying what an audit record is about. */
export function auditSummary(r: AuditRecord): string {
  const d = r.data;
  const step = typeof d['step'] === 'number' ? `step ${d['step']}` : '';
  const action = typeof d['action'] === 'string' ? d['action'] : '';
  switch (r.kind) {
    case 'phase.completed': {
      if (d['phase'] === 'Review') {
        const gates = (d['gates'] as GateResultData[] | undefined) ?? [];
        const failed = gates.filter((g) => g.status === 'fail').map((g) => g.gate);
        return `${action} ${step}: Review ${d['passed'] ? 'passed' : 'failed'} (${gates.length - failed.length}/${gates.length} gates${failed.length ? `; failed ${failed.join(', ')}` : ''})`.trim();
      }
      return `${action} ${step}: ${String(d['phase'])} in ${String(d['duration_ms'] ?? '?')} ms`.trim();
    }
    case 'approval.requested':
      return `approval requested: ${String((d['action'] as { description?: string } | undefined)?.description ?? d['kind'] ?? '')} (risk ${String(d['risk'] ?? '?')})`;
    case 'approval.decided':
      return `approval ${d['approved'] ? 'granted' : 'denied'} by ${r.actor}${typeof d['reason'] === 'string' && d['reason'] ? `: ${d['reason']}` : ''}`;
    case 'approval.expired':
      return 'approval expired';
    case 'acmf.mode_changed':
      return `ACMF ${String(d['from'] ?? '?')} → ${String(d['to'] ?? '?')} by ${r.actor}${typeof d['reason'] === 'string' ? `: ${d['reason']}` : ''}`;
    default:
      return `${r.kind}${step ? ` ${step}` : ''}`;
  }
}

export function auditRow(r: AuditRecord): AuditRow {
  return { seq: r.seq, ts: r.ts, type: r.kind, agentId: r.agentId ?? null, summary: auditSummary(r), hash: r.hash };
}

export function verification(v: AuditVerification): { ok: boolean; detail: string } {
  if (v.ok) return { ok: true, detail: `${v.checked} record(s) checked, chain intact` };
  const b = v.firstBroken;
  return { ok: false, detail: b ? `${b.reason} at ${b.file}:${b.line}${b.seq !== null ? ` (seq ${b.seq})` : ''}` : `broken after ${v.checked} record(s)` };
}

/** A week schedule as 7 × 24 warm cells per agent (local hours of the schedule's zone). */
export function weekGrid(s: WeeklySchedule): DashboardRequest.Result['schedule'] {
  const hourStarts = s.days.map((d) => {
    const [year, month, day] = d.date.split('-').map(Number) as [number, number, number];
    return Array.from({ length: 24 }, (_, h) => zonedTimeToUtc({ year, month, day }, h, 0, s.timeZone));
  });
  return {
    timezone: s.timeZone,
    agents: s.agents.map((a) => {
      const windows = a.windows.map((w) => ({ start: Date.parse(w.start), end: Date.parse(w.end) }));
      return {
        id: a.agentId,
        mode: a.policy,
        // A cell is warm when the agent is kept warm at the start of that local hour.
        week: hourStarts.map((hours) => hours.map((t) => windows.some((w) => t >= w.start && t < w.end))),
      };
    }),
  };
}

const QUALITY_POINTS = 20;

export async function agentQuality(engine: Engine): Promise<DashboardRequest.Result['agents']> {
  return Promise.all(AGENTS.map(async (a) => {
    const st = await engine.acmf.state(a.id);
    return { id: a.id, domain: a.domains[0]!.domain, mode: st.mode as AcmfModeName, quality: st.qualityHistory.slice(-QUALITY_POINTS).map((q) => q.score) };
  }));
}

/**
 * The file edits a step proposed or committed, from its output (coder-ai: `{ mode, branch, diff,
 * files: [{ path, beforeSha256, after }] }`); null for steps that changed no file.
 */
export function proposedChange(s: StepRecord): ProposedChange | null {
  const out = s.output as { mode?: unknown; branch?: unknown; diff?: unknown; files?: unknown } | null;
  if (!out || typeof out !== 'object' || typeof out.diff !== 'string' || out.diff === '') return null;
  const files: ProposedFile[] = Array.isArray(out.files)
    ? out.files.flatMap((f: unknown) => {
      const x = f as Partial<ProposedFile> | null;
      return x && typeof x.path === 'string' && typeof x.beforeSha256 === 'string'
        ? [{ path: x.path, beforeSha256: x.beforeSha256, after: typeof x.after === 'string' ? x.after : null }]
        : [];
    })
    : [];
  return {
    step: s.step, agentId: s.agentId, action: s.action,
    mode: out.mode === 'branch' ? 'branch' : 'proposal',
    branch: typeof out.branch === 'string' ? out.branch : null,
    diff: out.diff, files,
  };
}
