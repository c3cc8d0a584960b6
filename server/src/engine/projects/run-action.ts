/**
 * Runs one agent action as an ordinary execution (RIGOR, gates, ACMF, audit) and waits for it to
 * end: how projects, predictions and remediations reach the skills (capacity-ai, backup-ai) without
 * calling them directly.
 */
import type { EngineEvent } from '../../../../protocol/events';
import type { MessageBus } from '../bus';
import type { ExecutionService, Principal } from '../executions/execution-service';
import { TERMINAL_STATUSES, type ExecutionRecord, type StepRecord } from '../executions/records';
import type { AttachmentStore } from '../ports';

export interface ActionRunner {
  executions: ExecutionService;
  bus: MessageBus;
  attachments?: AttachmentStore;
}

export interface ActionResult {
  execution: ExecutionRecord;
  step: StepRecord | undefined;
  /** The step's artifact data (read back from its attachment when it was too large for the record). */
  data: unknown;
}

export async function runAction(
  r: ActionRunner, agentId: string, action: string, payload: { input: Record<string, unknown>; source?: string; prompt?: string }, who: Principal,
  onEvent?: (e: EngineEvent) => void,
): Promise<ActionResult> {
  let resolveEnd!: () => void;
  const ended = new Promise<void>((res) => (resolveEnd = res));
  let id: string | null = null;
  const early: EngineEvent[] = [];
  const off = r.bus.subscribe('engine.event', (e) => {
    if (id === null) { early.push(e); return; }
    if (e.execution_id !== id) return;
    onEvent?.(e);
    if (e.type === 'execution_completed' || e.type === 'execution_failed') resolveEnd();
  });
  try {
    const rec = await r.executions.runAction(agentId, action, { input: payload.input, ...(payload.source ? { source: payload.source } : {}), ...(payload.prompt ? { prompt: payload.prompt } : {}) }, who);
    id = rec.id;
    for (const e of early) if (e.execution_id === id) { onEvent?.(e); if (e.type === 'execution_completed' || e.type === 'execution_failed') resolveEnd(); }
    if (TERMINAL_STATUSES.has(r.executions.get(id).status)) resolveEnd();
    await ended;
  } finally {
    off();
  }
  const execution = r.executions.get(id);
  const step = execution.steps.find((s) => s.agentId === agentId && s.action === action && !s.superseded) ?? execution.steps[0];
  let data = step?.output ?? null;
  const ref = data as { attachment?: unknown } | null;
  if (ref && typeof ref === 'object' && typeof ref.attachment === 'string' && r.attachments) {
    const text = await r.attachments.get(id, ref.attachment.split('/').slice(1).join('/'));
    data = text ? JSON.parse(text) : null;
  }
  return { execution, step, data };
}
