import { strict as assert } from 'node:assert';
import type { EngineEvent, GateResultData } from '../../../protocol/events';
import type { ExecutionRow, StepRow } from '../../../protocol/lsp';
import {
  agentQuality,
  applyEvent,
  choiceLabel,
  dayLabels,
  formatConfidence,
  formatDuration,
  formatGateValue,
  gateTable,
  mergeChoices,
  needsRefresh,
  pickStep,
  runGrid,
  shortHash,
  sparkline,
  statusState,
  weekGrid,
} from '../../../webview/src/model';

const PH = ['Research', 'Inspect', 'Generate', 'Optimize', 'Review'] as const;

function step(n: number, agentId: string, status: StepRow['status'], done: number, opts: Partial<StepRow> = {}): StepRow {
  return {
    step: n,
    agentId,
    action: 'act',
    status,
    confidence: null,
    durationMs: null,
    phases: PH.map((phase, i) => ({ phase, state: i < done ? 'completed' : i === done && status === 'running' ? 'running' : 'pending', durationMs: i < done ? 100 * (i + 1) : null })),
    gates: [],
    ...opts,
  };
}

function gate(number: number, status: GateResultData['status']): GateResultData {
  return { gate: `g${number}`, number, category: 'correctness', status, value: number / 10, threshold: 0.5, reason: `r${number}` };
}

function exec(steps: StepRow[], over: Partial<ExecutionRow> = {}): ExecutionRow {
  return { id: 'wf_1', kind: 'workflow', title: 'full-sdlc', status: 'running', progress: 40, createdAt: '2025-03-10T10:00:00.000Z', finishedAt: null, error: null, steps, ...over };
}

const ev = <T extends EngineEvent['type']>(type: T, rest: Omit<Extract<EngineEvent, { type: T }>, 'type' | 'execution_id' | 'seq' | 'ts'>, id = 'wf_1'): EngineEvent =>
  ({ type, execution_id: id, seq: 1, ts: '2025-03-10T10:05:00.000Z', ...rest }) as unknown as EngineEvent;

describe('webview model: formatting', () => {
  it('formats durations, confidences, gate values and hashes', () => {
    assert.equal(formatDuration(null), '—');
    assert.equal(formatDuration(850), '850 ms');
    assert.equal(formatDuration(4200), '4.2 s');
    assert.equal(formatDuration(184_000), '3m 04s');
    assert.equal(formatDuration(3_720_000), '1h 02m');
    assert.equal(formatConfidence(0.723), '0.72');
    assert.equal(formatConfidence(null), '—');
    assert.equal(formatConfidence(1.4), '1.00');
    assert.equal(formatGateValue(0.8), '0.8');
    assert.equal(formatGateValue(3), '3');
    assert.equal(formatGateValue(true), 'yes');
    assert.equal(formatGateValue(null), '—');
    assert.equal(shortHash('abcdef0123456789'), 'abcdef012345…');
    assert.equal(statusState('waiting_approval'), 'running');
    assert.equal(statusState('cancelled'), 'failed');
    assert.equal(statusState('queued'), 'pending');
  });
});

describe('webview model: the run picture', () => {
  it('has one row per step and one cell per RIGOR phase', () => {
    const g = runGrid(exec([step(2, 'tester-ai', 'pending', 0), step(1, 'coder-ai', 'running', 2, { confidence: 0.72, durationMs: 1500 })]));
    assert.deepEqual(g.phases, PH);
    assert.deepEqual(g.rows.map((r) => r.step), [1, 2]);
    const r = g.rows[0]!;
    assert.deepEqual(r.cells.map((c) => c.state), ['completed', 'completed', 'running', 'pending', 'pending']);
    assert.equal(r.cells[0]!.duration, '100 ms');
    assert.equal(r.confidence, '0.72');
    assert.equal(r.confidenceValue, 0.72);
    assert.equal(r.duration, '1.5 s');
    assert.equal(r.state, 'running');
    assert.deepEqual(g.counts, { completed: 0, running: 1, pending: 1, failed: 0, skipped: 0 });
  });

  it('colours the phase a failed step stopped in, or its Review when the gates failed it', () => {
    const stoppedInGenerate = step(1, 'coder-ai', 'failed', 2);
    const gatesFailed = step(2, 'review-ai', 'failed', 5, { gates: [gate(1, 'fail')] });
    const skipped = step(3, 'deploy-ai', 'skipped', 0);
    const g = runGrid(exec([stoppedInGenerate, gatesFailed, skipped], { status: 'failed' }));
    assert.deepEqual(g.rows[0]!.cells.map((c) => c.state), ['completed', 'completed', 'failed', 'pending', 'pending']);
    assert.deepEqual(g.rows[1]!.cells.map((c) => c.state), ['completed', 'completed', 'completed', 'completed', 'failed']);
    assert.deepEqual(g.rows[2]!.cells.map((c) => c.state), ['skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
  });

  it('reads missing phases as pending and copes with no execution', () => {
    const s = step(1, 'a', 'pending', 0, { phases: [] });
    assert.deepEqual(runGrid(exec([s])).rows[0]!.cells.map((c) => c.state), ['pending', 'pending', 'pending', 'pending', 'pending']);
    assert.deepEqual(runGrid(null).rows, []);
  });
});

describe('webview model: gates', () => {
  it('lists a step\'s 21 gates in order with counts', () => {
    const gates = Array.from({ length: 21 }, (_, i) => gate(21 - i, i === 0 ? 'fail' : i < 4 ? 'not_applicable' : 'pass'));
    const t = gateTable(step(1, 'review-ai', 'completed', 5, { gates }));
    assert.equal(t.rows.length, 21);
    assert.deepEqual(t.rows.map((r) => r.number), Array.from({ length: 21 }, (_, i) => i + 1));
    assert.deepEqual(t.counts, { pass: 17, fail: 1, not_applicable: 3, total: 21 });
    assert.deepEqual(t.rows[20], { number: 21, gate: 'g21', category: 'correctness', status: 'fail', value: '2.1', threshold: '0.5', reason: 'r21' });
    assert.deepEqual(gateTable(undefined).rows, []);
  });

  it('picks the requested step, else the latest with gates, else the last', () => {
    const e = exec([step(1, 'a', 'completed', 5, { gates: [gate(1, 'pass')] }), step(2, 'b', 'running', 1)]);
    assert.equal(pickStep(e, 2)?.step, 2);
    assert.equal(pickStep(e, 9)?.step, 1);
    assert.equal(pickStep(e)?.step, 1);
    assert.equal(pickStep(exec([step(1, 'a', 'running', 0), step(2, 'b', 'pending', 0)]))?.step, 2);
    assert.equal(pickStep(exec([])), undefined);
  });
});

describe('webview model: live events', () => {
  it('moves the picture with step, phase, progress, gate and completion events', () => {
    let e = exec([], { status: 'queued' });
    e = applyEvent(e, ev('step_started', { step: 1, agent_id: 'coder-ai', action: 'implement' }));
    assert.equal(e.status, 'running');
    assert.equal(e.steps[0]!.action, 'implement');
    e = applyEvent(e, ev('phase_started', { phase: 'Research', agent_id: 'coder-ai' }));
    assert.equal(e.steps[0]!.phases[0]!.state, 'running');
    e = applyEvent(e, ev('work_progress', { phase: 'Research', progress: 50, confidence: 0.6, agent_id: 'coder-ai' }));
    assert.equal(e.steps[0]!.confidence, 0.6);
    e = applyEvent(e, ev('phase_completed', { phase: 'Research', duration_ms: 1200, agent_id: 'coder-ai' }));
    assert.deepEqual(e.steps[0]!.phases[0], { phase: 'Research', state: 'completed', durationMs: 1200 });
    e = applyEvent(e, ev('gate_results', { agent_id: 'coder-ai', passed: true, gates: [gate(1, 'pass')] }));
    assert.equal(e.steps[0]!.gates.length, 1);
    e = applyEvent(e, ev('step_completed', { step: 1, agent_id: 'coder-ai', passed: true, outcome: 'completed', reason: null, confidence: 0.9, duration_ms: 5000 }));
    assert.equal(e.steps[0]!.status, 'completed');
    assert.equal(e.steps[0]!.durationMs, 5000);
    e = applyEvent(e, ev('execution_completed', { status: 'completed' }));
    assert.equal(e.status, 'completed');
    assert.equal(e.progress, 100);
    assert.equal(e.finishedAt, '2025-03-10T10:05:00.000Z');
  });

  it('marks running steps failed when the execution fails, and ignores other executions', () => {
    const e = exec([step(1, 'a', 'running', 1)]);
    const failed = applyEvent(e, ev('execution_failed', { status: 'cancelled', error: { code: 'ERR_CANCELLED', message: 'cancelled' } }));
    assert.equal(failed.status, 'cancelled');
    assert.equal(failed.steps[0]!.status, 'cancelled');
    assert.equal(runGrid(failed).rows[0]!.cells[1]!.state, 'failed');
    assert.equal(applyEvent(e, ev('execution_completed', { status: 'completed' }, 'wf_other')), e);
    // The input is never mutated.
    assert.equal(e.status, 'running');
    assert.equal(e.steps[0]!.status, 'running');
  });

  it('asks for fresh data only after events that change more than the picture', () => {
    assert.equal(needsRefresh(ev('work_progress', { phase: 'Research', progress: 5, confidence: 0.1, agent_id: 'a' })), false);
    assert.equal(needsRefresh(ev('step_completed', { step: 1, agent_id: 'a', passed: true, outcome: 'completed', reason: null, confidence: 1, duration_ms: 1 })), true);
    assert.equal(needsRefresh(ev('execution_completed', { status: 'completed' })), true);
  });
});

describe('webview model: execution picker', () => {
  it('merges by id, newest first', () => {
    const a = { id: 'a', kind: 'task' as const, title: 'A', status: 'running' as const, createdAt: '2025-01-01T00:00:00Z' };
    const b = { id: 'b', kind: 'workflow' as const, title: 'B', status: 'completed' as const, createdAt: '2025-01-02T00:00:00Z' };
    const merged = mergeChoices([a, b], [{ ...a, status: 'failed' }]);
    assert.deepEqual(merged.map((c) => `${c.id}:${c.status}`), ['b:completed', 'a:failed']);
    assert.equal(choiceLabel({ ...a, status: 'waiting_approval' }), '[task] A · waiting approval');
    assert.equal(mergeChoices([a, b], [], 1).length, 1);
  });
});

describe('webview model: the week grid', () => {
  it('labels 7 days from today in the schedule\'s time zone', () => {
    // 2025-03-10T03:00Z is still Sunday 3/9 in New York.
    const now = Date.parse('2025-03-10T03:00:00Z');
    assert.deepEqual(dayLabels(now, 'America/New_York'), ['Sun 3/9', 'Mon 3/10', 'Tue 3/11', 'Wed 3/12', 'Thu 3/13', 'Fri 3/14', 'Sat 3/15']);
    assert.equal(dayLabels(now, 'UTC')[0], 'Mon 3/10');
    assert.equal(dayLabels(now, 'Not/AZone')[0], 'Mon 3/10');
  });

  it('normalises each agent to 7 × 24 and sums warm hours and fleet coverage', () => {
    const always = Array.from({ length: 7 }, () => new Array<boolean>(24).fill(true));
    const business = Array.from({ length: 7 }, (_, d) => Array.from({ length: 24 }, (_, h) => d < 5 && h >= 9 && h < 17));
    const g = weekGrid(
      { timezone: 'America/New_York', agents: [
        { id: 'monitor-ai', mode: 'always_on', week: always },
        { id: 'coder-ai', mode: 'business_hours', week: business },
        { id: 'quantum-ai', mode: 'commercial', week: [[true]].slice(1) },
      ] },
      Date.parse('2025-03-10T15:00:00Z'),
    );
    assert.equal(g.days.length, 7);
    assert.deepEqual(g.agents.map((a) => a.warmHours), [168, 40, 0]);
    assert.deepEqual(g.agents[1]!.perDay, [8, 8, 8, 8, 8, 0, 0]);
    assert.equal(g.agents[2]!.cells.length, 7);
    assert.ok(g.agents[2]!.cells.every((d) => d.length === 24 && d.every((w) => !w)));
    assert.equal(g.coverage[0]![10], 2);
    assert.equal(g.coverage[6]![10], 1);
    assert.equal(g.maxCoverage, 2);
    assert.equal(g.alwaysWarm, 1);
    assert.equal(g.onDemand, 1);
    assert.equal(weekGrid(undefined, 0).agents.length, 0);
  });
});

describe('webview model: quality sparklines', () => {
  it('draws 0–1 scores in the box on a fixed scale', () => {
    const s = sparkline([0, 0.5, 1], 100, 24, 2);
    assert.equal(s.d, 'M2 22 L50 12 L98 2');
    assert.deepEqual(s.last, { x: 98, y: 2 });
    assert.equal(s.trend, 'up');
    assert.equal(s.delta, 1);
    assert.equal(s.min, 0);
    assert.equal(s.max, 1);
  });

  it('handles one value, none, out-of-range and non-finite values', () => {
    assert.equal(sparkline([0.5], 100, 24, 2).d, 'M2 12 L98 12');
    assert.equal(sparkline([0.5]).trend, 'flat');
    const empty = sparkline([]);
    assert.equal(empty.d, '');
    assert.equal(empty.last, null);
    const clamped = sparkline([2, Number.NaN, -1], 10, 10, 0);
    assert.equal(clamped.d, 'M0 0 L10 10');
    assert.equal(clamped.trend, 'down');
  });

  it('groups agents by domain in the six domains\' order', () => {
    const groups = agentQuality([
      { id: 'security-ai', domain: 'SECURE', mode: 'ASSISTED', quality: [0.5, 0.7] },
      { id: 'coder-ai', domain: 'BUILD', mode: 'AUTONOMOUS', quality: [0.9] },
      { id: 'tester-ai', domain: 'BUILD', mode: 'LEARNING', quality: [] },
    ]);
    assert.deepEqual(groups.map((g) => g.domain), ['BUILD', 'SECURE']);
    assert.deepEqual(groups[0]!.agents.map((a) => [a.id, a.mode, a.latest, a.samples]), [['coder-ai', 'AUTONOMOUS', '0.90', 1], ['tester-ai', 'LEARNING', '—', 0]]);
    assert.equal(groups[1]!.agents[0]!.spark.trend, 'up');
  });
});
