import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent } from '../../../protocol/events';
import { JsonlEventLog } from '../../../server/src/store/jsonl-event-log';

const ev = (seq: number): EngineEvent => ({ type: 'phase_started', execution_id: 'wf_0123456789abcdef', seq, ts: new Date().toISOString(), phase: 'Research', agent_id: 'req-ai' });

describe('event log (JSON Lines per execution)', () => {
  it('a reader sees every event, also those in a write under way (no gap for a resuming SSE client)', async () => {
    const log = await JsonlEventLog.open(mkdtempSync(path.join(tmpdir(), 'cadre-events-')));
    for (let i = 1; i <= 3; i++) log.append(ev(i));
    await new Promise((r) => setImmediate(r)); // the write of 1-3 has started, not finished
    log.append(ev(4));
    const seen = await log.read('wf_0123456789abcdef', 0);
    assert.deepEqual(seen.map((e) => e.seq), [1, 2, 3, 4]);
    await log.flush();
    assert.deepEqual((await log.read('wf_0123456789abcdef', 2)).map((e) => e.seq), [3, 4]);
    assert.equal(await log.lastSeq('wf_0123456789abcdef'), 4);
  });

  it('refuses a name that is not an execution id', async () => {
    const log = await JsonlEventLog.open(mkdtempSync(path.join(tmpdir(), 'cadre-events-')));
    await assert.rejects(log.read('../../etc/passwd', 0), /not an execution id/);
  });
});
