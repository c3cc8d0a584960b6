import { strict as assert } from 'node:assert';
import type { CancellationToken } from 'vscode-languageserver/node';
import type { EngineEvent } from '../../../protocol/events';
import type { LlmCompleteRequest } from '../../../protocol/lsp';
import { weeklySchedule } from '../../../server/src/engine/availability/business-hours';
import { AGENTS } from '../../../server/src/engine/catalog/index';
import { EventForwarder, type ForwarderTimers } from '../../../server/src/lsp/event-forwarder';
import { editorRelay } from '../../../server/src/lsp/llm-relay';
import { auditSummary, catalogView, verification, weekGrid } from '../../../server/src/lsp/views';

/** Timers driven by the test. */
function fakeTimers() {
  let now = 0;
  let next = 1;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: ForwarderTimers = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = next++;
      pending.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...pending].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      now = due[1].at;
      pending.delete(due[0]);
      due[1].fn();
    }
    now = end;
  };
  return { timers, advance, pending };
}

const base = { ts: '2026-01-01T00:00:00Z', agent_id: 'review-ai' };
const progress = (ex: string, seq: number, p: number): EngineEvent => ({ type: 'work_progress', execution_id: ex, seq, phase: 'Research', progress: p, confidence: 0.5, ...base });
const completed = (ex: string, seq: number): EngineEvent => ({ type: 'phase_completed', execution_id: ex, seq, phase: 'Research', duration_ms: 5, ...base });

describe('lsp: engine events to the editor', () => {
  it('coalesces work_progress to one per 100 ms per execution, sending the latest', () => {
    const { timers, advance } = fakeTimers();
    const sent: EngineEvent[] = [];
    const f = new EventForwarder((e) => sent.push(e), 100, timers);
    // 1000 progress events over one second for one execution: at most 10 (+ the first) go out.
    for (let i = 0; i < 1000; i++) {
      f.handle(progress('a', i + 1, i / 10));
      advance(1);
    }
    advance(200);
    assert.ok(sent.length <= 11, `${sent.length} sent`);
    assert.ok(sent.length >= 9, `${sent.length} sent`);
    assert.equal(sent.at(-1)!.seq, 1000, 'the latest is always sent');
    const seqs = sent.map((e) => e.seq);
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'in order');
  });

  it('never drops other events, sends a held progress before them, and keeps executions apart', () => {
    const { timers, advance } = fakeTimers();
    const sent: EngineEvent[] = [];
    const f = new EventForwarder((e) => sent.push(e), 100, timers);
    f.handle(progress('a', 1, 10));
    f.handle(progress('b', 1, 10));
    f.handle(progress('a', 2, 50));
    f.handle(progress('a', 3, 100));
    f.handle(completed('a', 4));
    assert.deepEqual(sent.map((e) => `${e.execution_id}${e.seq}`), ['a1', 'b1', 'a3', 'a4']);
    advance(500);
    assert.equal(sent.length, 4, 'nothing left held');
    f.handle({ type: 'execution_completed', execution_id: 'a', seq: 5, ts: base.ts, status: 'completed' });
    assert.equal(sent.at(-1)!.type, 'execution_completed');
  });

  it('stops on close (no timer left, nothing sent after)', () => {
    const { timers, pending } = fakeTimers();
    const sent: EngineEvent[] = [];
    const f = new EventForwarder((e) => sent.push(e), 100, timers);
    f.handle(progress('a', 1, 10));
    f.handle(progress('a', 2, 20));
    assert.equal(pending.size, 1);
    f.close();
    assert.equal(pending.size, 0);
    f.handle(completed('a', 3));
    assert.equal(sent.length, 1);
  });
});

describe('lsp: the editor language-model relay', () => {
  it('maps a completion to cadre/llm.complete and back', async () => {
    const calls: Array<{ method: string; params: LlmCompleteRequest.Params }> = [];
    const relay = editorRelay(async (type, params) => {
      calls.push({ method: type.method, params });
      return { text: 'hello', model: 'copilot-gpt', usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 } };
    });
    const tokens: string[] = [];
    const r = await relay({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 10, temperature: 0.2, onToken: (t) => tokens.push(t) });
    assert.deepEqual(calls, [{ method: 'cadre/llm.complete', params: { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10, temperature: 0.2 } }]);
    assert.equal(r.text, 'hello');
    assert.equal(r.model, 'copilot-gpt');
    assert.deepEqual(r.usage, { promptTokens: 3, completionTokens: 1, totalTokens: 4 });
    assert.deepEqual(tokens, ['hello']);
  });

  it('cancels the request when the completion is aborted, and rejects a malformed answer', async () => {
    let token: CancellationToken | undefined;
    const ctrl = new AbortController();
    const relay = editorRelay((_m, _p, t) => {
      token = t;
      return new Promise((resolve) => t.onCancellationRequested(() => resolve({ text: '', model: 'm' })));
    });
    const p = relay({ messages: [{ role: 'user', content: 'x' }], signal: ctrl.signal });
    ctrl.abort();
    await p;
    assert.equal(token?.isCancellationRequested, true);
    await assert.rejects(editorRelay(async () => ({ nope: true }))({ messages: [] }), /invalid result: text/);
  });
});

describe('lsp: views', () => {
  it('the catalog lists 6 domain workflows and 9 templates', () => {
    const w = catalogView().workflows;
    assert.equal(w.filter((x) => x.kind === 'domain').length, 6);
    assert.equal(w.filter((x) => x.kind === 'template').length, 9);
    assert.ok(w.find((x) => x.id === 'full-sdlc')!.agents.includes('deploy-ai'));
  });

  it('the fleet schedule becomes a 7 x 24 grid in New York hours', () => {
    // Monday 2026-03-02 00:00 EST (05:00Z).
    const grid = weekGrid(weeklySchedule(Date.parse('2026-03-02T05:00:00Z'), AGENTS, { tier: 'ultra' }));
    assert.equal(grid.timezone, 'America/New_York');
    assert.equal(grid.agents.length, 25);
    const coder = grid.agents.find((a) => a.id === 'coder-ai')!;
    assert.equal(coder.mode, 'business_hours');
    assert.equal(coder.week.length, 7);
    assert.ok(coder.week.every((d) => d.length === 24));
    // Monday 07:00-19:00 warm, Saturday and Sunday cold.
    assert.deepEqual(coder.week[0]!.map((w, h) => (w ? h : -1)).filter((h) => h >= 0), [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
    assert.ok(coder.week[5]!.every((w) => !w) && coder.week[6]!.every((w) => !w));
    const observe = grid.agents.find((a) => a.id === 'observe-ai')!;
    assert.ok(observe.week.every((d) => d.every(Boolean)));
    assert.ok(grid.agents.find((a) => a.id === 'billing-ai')!.week.every((d) => d.every((w) => !w)));
  });

  it('summarises audit records and verification', () => {
    const rec = { seq: 3, ts: 't', kind: 'phase.completed', executionId: 'e', agentId: 'review-ai', actor: 'review-ai', prevHash: '', hash: 'h', data: { step: 0, action: 'review', phase: 'Review', passed: false, gates: [{ gate: 'a', status: 'pass' }, { gate: 'coverage', status: 'fail' }] } };
    assert.equal(auditSummary(rec), 'review step 0: Review failed (1/2 gates; failed coverage)');
    assert.equal(auditSummary({ ...rec, kind: 'approval.decided', actor: 'user:dana', data: { approved: true } }), 'approval granted by user:dana');
    assert.deepEqual(verification({ ok: true, checked: 4 }), { ok: true, detail: '4 record(s) checked, chain intact' });
    assert.deepEqual(verification({ ok: false, checked: 2, firstBroken: { file: 'audit-x.jsonl', line: 3, seq: 3, reason: 'tampered' } }), { ok: false, detail: 'tampered at audit-x.jsonl:3 (seq 3)' });
  });
});
