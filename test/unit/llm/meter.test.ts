import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent, EngineEventInput } from '../../../protocol/events';
import { startRuntime, type OwnerRuntime } from '../../../server/src/host/runtime';
import { TokenMeter } from '../../../server/src/llm';

const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5 };

describe('llm: TokenMeter totals end with their execution', () => {
  it('forgetFinished clears on execution_completed and execution_failed, and ignores other events', () => {
    const meter = new TokenMeter();
    meter.record('e1', usage);
    meter.record('e2', usage);
    meter.record('e3', usage);
    meter.forgetFinished({ type: 'step_completed', execution_id: 'e1' });
    meter.forgetFinished({ type: 'execution_started', execution_id: 'e1' });
    assert.equal(meter.totals('e1').totalTokens, 5);
    meter.forgetFinished({ type: 'execution_completed', execution_id: 'e1' });
    meter.forgetFinished({ type: 'execution_failed', execution_id: 'e2' });
    assert.equal(meter.totals('e1').calls, 0);
    assert.equal(meter.totals('e2').calls, 0);
    assert.equal(meter.totals('e3').calls, 1, 'a running execution keeps its totals');
    assert.equal(meter.size, 1);
  });

  it('the runtime clears an execution\'s totals when the engine reports it finished', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cadre-meter-'));
    let rt: OwnerRuntime | undefined;
    try {
      const started = await startRuntime({ dataDir, port: 0, workspaceDir: dataDir, env: {}, log: () => {} });
      assert.equal(started.attached, false);
      rt = started as OwnerRuntime;
      const m = rt.tokenMeter;
      for (const id of ['exec_done', 'exec_failed', 'exec_cancelled', 'exec_running']) m.record(id, usage);
      const publish = (e: EngineEventInput) => rt!.engine.bus.publish('engine.event', { seq: 1, ts: new Date().toISOString(), ...e } as EngineEvent);
      publish({ type: 'step_completed', execution_id: 'exec_done', step: 0, agent_id: 'coder-ai', passed: true, outcome: 'completed', reason: null, confidence: 0.9, duration_ms: 1 });
      assert.equal(m.totals('exec_done').calls, 1, 'a finished step is not a finished execution');
      publish({ type: 'execution_completed', execution_id: 'exec_done', status: 'completed' });
      publish({ type: 'execution_failed', execution_id: 'exec_failed', status: 'failed', error: { code: 'ERR_GATE_FAILED', message: 'x' } });
      publish({ type: 'execution_failed', execution_id: 'exec_cancelled', status: 'cancelled', error: { code: 'ERR_CANCELLED', message: 'x' } });
      assert.equal(m.totals('exec_done').calls, 0);
      assert.equal(m.totals('exec_failed').calls, 0);
      assert.equal(m.totals('exec_cancelled').calls, 0);
      assert.equal(m.totals('exec_running').calls, 1);
      assert.equal(m.size, 1);
    } finally {
      await rt?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
