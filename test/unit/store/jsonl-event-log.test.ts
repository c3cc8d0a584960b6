import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { EngineEvent } from '../../../protocol/events';
import { JsonlEventLog, MEMORY_EXECUTIONS } from '../../../server/src/store/jsonl-event-log';

const ev = (seq: number, id = 'wf_0123456789abcdef'): EngineEvent => ({ type: 'phase_started', execution_id: id, seq, ts: new Date().toISOString(), phase: 'Research', agent_id: 'req-ai' });

describe('event log (JSON Lines per execution)', () => {
  it('a reader sees every event, also those in a write under way (no gap for a resuming SSE client)', async () => {
    // An execution resumed in this process (its first events were written by an earlier one): read from the file.
    const log = await JsonlEventLog.open(mkdtempSync(path.join(tmpdir(), 'cadre-events-')));
    for (let i = 5; i <= 7; i++) log.append(ev(i));
    await new Promise((r) => setImmediate(r)); // the write of 5-7 has started, not finished
    log.append(ev(8));
    const seen = await log.read('wf_0123456789abcdef', 0);
    assert.deepEqual(seen.map((e) => e.seq), [5, 6, 7, 8]);
    await log.flush();
    assert.deepEqual((await log.read('wf_0123456789abcdef', 6)).map((e) => e.seq), [7, 8]);
    assert.equal(await log.lastSeq('wf_0123456789abcdef'), 8);
  });

  it('pages a replay from the file 64 KB at a time, in order, after the given seq, torn line skipped, unwritten events last', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-events-'));
    const writer = await JsonlEventLog.open(dir);
    const big = (seq: number): EngineEvent => ({ ...ev(seq), note: 'z'.repeat(2000) } as unknown as EngineEvent);
    for (let i = 1; i <= 300; i++) writer.append(big(i));
    await writer.flush();
    appendFileSync(path.join(dir, 'wf_0123456789abcdef.jsonl'), '{"type":"phase_star'); // a torn last line
    // Another process (no memory of the execution) reads it from the file.
    const reader = await JsonlEventLog.open(dir);
    reader.append(big(301)); // not written yet
    const pages: number[][] = [];
    for await (const page of reader.pages('wf_0123456789abcdef', 10)) pages.push(page.map((e) => e.seq));
    assert.ok(pages.length >= 8, `about 600 KB in 64 KB pages (${pages.length} pages)`);
    assert.ok(pages.every((p) => p.length <= 40), 'a page holds what one 64 KB read holds');
    assert.deepEqual(pages.flat(), Array.from({ length: 291 }, (_, i) => i + 11));
    await reader.flush(); // writes event 301 and closes its file (left open, it was closed by the garbage collector)
  });

  it('lastSeq of a log written by another process reads its end: a long log, a torn last line skipped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-events-'));
    const writer = await JsonlEventLog.open(dir);
    for (let i = 1; i <= 500; i++) writer.append({ ...ev(i), note: 'w'.repeat(1000) } as unknown as EngineEvent);
    await writer.flush();
    appendFileSync(path.join(dir, 'wf_0123456789abcdef.jsonl'), '{"type":"phase_started","seq":501,"no'); // torn
    const reader = await JsonlEventLog.open(dir);
    assert.equal(await reader.lastSeq('wf_0123456789abcdef'), 500);
    assert.equal(await reader.lastSeq('wf_00000000000000aa'), 0, 'no log');
  });

  it('replays an execution that started in this process from memory; bounded, else from the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-events-'));
    const log = await JsonlEventLog.open(dir);
    for (let i = 1; i <= 4; i++) log.append(ev(i));
    await log.flush();
    // The file is gone, the memory still answers (proof that it is not read).
    rmSync(path.join(dir, 'wf_0123456789abcdef.jsonl'));
    assert.deepEqual((await log.read('wf_0123456789abcdef', 1)).map((e) => e.seq), [2, 3, 4]);
    // A gap in the sequence drops the memory copy: the file decides from then on.
    log.append(ev(6));
    await log.flush();
    assert.deepEqual((await log.read('wf_0123456789abcdef', 0)).map((e) => e.seq), [6]);
    // Only the most recently started executions stay in memory.
    const ids = Array.from({ length: MEMORY_EXECUTIONS + 1 }, (_, i) => `wf_${i.toString(16).padStart(16, '0')}`);
    for (const id of ids) log.append(ev(1, id));
    await log.flush();
    rmSync(path.join(dir, `${ids[0]}.jsonl`));
    rmSync(path.join(dir, `${ids[ids.length - 1]}.jsonl`));
    assert.deepEqual(await log.read(ids[0]!, 0), [], 'the oldest fell back to the (deleted) file');
    assert.equal((await log.read(ids[ids.length - 1]!, 0)).length, 1, 'the newest is in memory');
  });

  it('refuses a name that is not an execution id', async () => {
    const log = await JsonlEventLog.open(mkdtempSync(path.join(tmpdir(), 'cadre-events-')));
    await assert.rejects(log.read('../../etc/passwd', 0), /not an execution id/);
  });

  it('keeps files open across turns, bounded, and closes them at flush: every event lands, in order, in its own file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cadre-events-'));
    const log = await JsonlEventLog.open(dir);
    const id = (n: number): string => `wf_${n.toString(16).padStart(16, '0')}`;
    // More executions than the files kept open, written over several turns each.
    for (let turn = 1; turn <= 4; turn++) {
      for (let n = 0; n < 100; n++) log.append(ev(turn, id(n)));
      await new Promise((r) => setImmediate(r));
    }
    await log.flush();
    assert.equal(readdirSync(dir).length, 100);
    for (let n = 0; n < 100; n += 33) {
      const seqs = readFileSync(path.join(dir, `${id(n)}.jsonl`), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as EngineEvent).seq);
      assert.deepEqual(seqs, [1, 2, 3, 4], id(n));
    }
    // After flush no handle is held: a file removed meanwhile is created again by the next write
    // (a handle kept open would write into the removed file, and the event would be lost).
    unlinkSync(path.join(dir, `${id(7)}.jsonl`));
    log.append(ev(5, id(7)));
    await log.flush();
    assert.deepEqual(readFileSync(path.join(dir, `${id(7)}.jsonl`), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as EngineEvent).seq), [5]);
    rmSync(dir, { recursive: true, force: true });
  });
});
