/**
 * Runs one agent action as an ordinary execution (RIGOR, gates, ACMF, audit) and waits for it to
 * end: how projects, predictions and remediations reach the skills (capacity-ai, backup-ai) without
 * calling them directly.
 */
import type { EngineEvent } from '../../../../protocol/events';
import type { MessageBus } from '../bus';
import type { ExecutionService, Principal } from '../executions/execution-service';
import type { ExecutionRecord, StepRecord } from '../executions/records';
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
  let id: string | null = null;
  // Events of the execution go to `onEvent` (those emitted before its id is known are held until then).
  const early: EngineEvent[] = [];
  const off = onEvent ? r.bus.subscribe('engine.event', (e) => {
    if (id === null) early.push(e);
    else if (e.execution_id === id) onEvent(e);
  }) : () => {};
  let execution: ExecutionRecord;
  try {
    const rec = await r.executions.runAction(agentId, action, { input: payload.input, ...(payload.source ? { source: payload.source } : {}), ...(payload.prompt ? { prompt: payload.prompt } : {}) }, who);
    id = rec.id;
    for (const e of early) if (e.execution_id === id) onEvent?.(e);
    // The engine's one wait for an execution to end (settlement.ts).
    execution = await r.executions.whenSettled(id);
  } finally {
    off();
  }
  const step = execution.steps.find((s) => s.agentId === agentId && s.action === action && !s.superseded) ?? execution.steps[0];
  let data = step?.output ?? null;
  const ref = data as { attachment?: unknown } | null;
  if (ref && typeof ref === 'object' && typeof ref.attachment === 'string' && r.attachments) {
    const text = await r.attachments.get(id, ref.attachment.split('/').slice(1).join('/'));
    data = text ? JSON.parse(text) : null;
  }
  return { execution, step, data };
}
