/** --watch in words (cli/src/watch.ts): typed events → lines, on a terminal (redrawn) and plain. */
import { strict as assert } from 'node:assert';
import type { EngineEvent, EngineEventInput, Phase } from '../../../protocol/events';
import { nextStep, progressBar, stepPercent, textRenderer } from '../../../cli/src/watch';

let seq = 0;
const ev = (e: EngineEventInput): EngineEvent => ({ ...e, seq: ++seq, ts: '2026-01-01T00:00:00.000Z' }) as EngineEvent;
const X = 'task_0123456789abcdef01234567';

/** One agent step through its five phases, the last one's gates as given. */
function stepEvents(agent: string, gates: Array<{ gate: string; status: 'pass' | 'fail'; reason: string }>, outcome: 'completed' | 'failed'): EngineEvent[] {
  const out: EngineEvent[] = [ev({ type: 'step_started', execution_id: X, step: 1, agent_id: agent, action: 'scan' })];
  for (const phase of ['Research', 'Inspect', 'Generate', 'Optimize', 'Review'] as Phase[]) {
    out.push(ev({ type: 'phase_started', execution_id: X, phase, agent_id: agent }));
    out.push(ev({ type: 'work_progress', execution_id: X, phase, progress: 50, confidence: 0.8, agent_id: agent }));
    out.push(ev({ type: 'phase_completed', execution_id: X, phase, duration_ms: 3, agent_id: agent }));
  }
  out.push(ev({ type: 'gate_results', execution_id: X, agent_id: agent, passed: outcome === 'completed', gates: gates.map((g, i) => ({ ...g, number: i + 1, category: 'correctness', value: null, threshold: null })) }));
  out.push(ev({ type: 'step_completed', execution_id: X, step: 1, agent_id: agent, passed: outcome === 'completed', outcome, reason: outcome === 'failed' ? 'Review failed 1 gate(s)' : null, confidence: 0.8, duration_ms: 15 }));
  return out;
}

function render(events: EngineEvent[], tty: boolean): string {
  let out = '';
  const r = textRenderer((s) => void (out += s), { tty, executionId: X, columns: 200 });
  for (const e of events) r.event(e);
  r.finish();
  return out;
}

describe('--watch renderer', () => {
  it('counts a step\'s progress as fifths of its phases, the running one by its own progress', () => {
    const phases = { Research: 'Completed', Inspect: 'Completed', Generate: 'Running', Optimize: 'Pending', Review: 'Pending' } as const;
    assert.equal(stepPercent({ phases, phaseProgress: 50 }), 50);
    assert.equal(stepPercent({ phases: { ...phases, Generate: 'Pending' }, phaseProgress: 50 }), 40);
    assert.equal(progressBar(40, 10, false), '[####------]');
    assert.equal(progressBar(100, 4, true), '████');
  });

  it('plain: a line per phase with the five phases in words, the bar and the confidence; the gates; the end', () => {
    const out = render([
      ev({ type: 'execution_started', execution_id: X, kind: 'task', agents: ['security-ai'] }),
      ...stepEvents('security-ai', [{ gate: 'secrets', status: 'pass', reason: '' }], 'completed'),
      ev({ type: 'execution_completed', execution_id: X, status: 'completed' }),
    ], false);
    assert.doesNotMatch(out, /\x1b\[/, 'no escape sequences in plain mode');
    assert.match(out, /^ {2}security-ai scan {2}\[####------\] {2}40% {2}Research Completed, Inspect Completed, Generate Pending, Optimize Pending, Review Pending · confidence 0\.80$/m);
    assert.match(out, /^ {2}security-ai · Review: all 1 gates pass$/m);
    assert.match(out, /^✔ security-ai completed \(confidence 0\.80, 15 ms\)$/m);
    assert.match(out, /^completed: 1 completed$/m);
  });

  it('names failed gates with their reasons, and a failure with the command that shows more', () => {
    const out = render([
      ...stepEvents('tester-ai', [{ gate: 'confidence', status: 'fail', reason: '0.55 is below the required 0.6' }], 'failed'),
      ev({ type: 'execution_failed', execution_id: X, status: 'failed', error: { code: 'ERR_GATE_FAILED', message: 'tester-ai failed Review' } }),
    ], false);
    assert.match(out, /^ {2}tester-ai · Review: failed confidence \(0\.55 is below the required 0\.6\)$/m);
    assert.match(out, /^✘ tester-ai failed: confidence \(0\.55 is below the required 0\.6\)$/m);
    assert.match(out, new RegExp(`^failed: tester-ai failed Review\\n {2}next: every gate with its value and threshold: cadre status ${X}$`, 'm'));
    assert.equal(nextStep(X, 'ERR_SKILL_UNAVAILABLE').startsWith('configure a language model'), true);
  });

  it('says what an approval waits for and the exact command that continues', () => {
    const out = render([ev({ type: 'approval_requested', execution_id: X, agent_id: 'deploy-ai', approval_id: 'apr_1', action: 'deploy', risk: 'high' })], false);
    assert.equal(out, '⏸ deploy-ai waits for approval apr_1 to deploy (risk high): cadre approve apr_1 (or cadre deny apr_1)\n');
  });

  it('terminal: redraws the running steps in place (cursor up, clear) with colored phase marks', () => {
    const out = render(stepEvents('security-ai', [{ gate: 'secrets', status: 'pass', reason: '' }], 'completed'), true);
    assert.match(out, /\x1b\[1A\x1b\[0J/, 'moves up over the live line and clears it');
    assert.match(out, /\x1b\[32m✔ Research\x1b\[0m/, 'a completed phase is green with ✔');
    assert.match(out, /\x1b\[33m▶ Inspect\x1b\[0m/, 'the running phase is yellow with ▶');
    assert.match(out, /✔ security-ai completed/);
    // Progress lines are redrawn, never printed as new lines in terminal mode.
    assert.doesNotMatch(out, /security-ai · Research\n/);
  });
});
