import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openAuditTrail, verifyAuditDir, type AuditOpenWarning, type JsonlAuditTrail } from '../../../server/src/audit/jsonl-audit-trail';
import { GENESIS_HASH, hashRecord } from '../../../server/src/engine/audit/chain';
import { isEngineError } from '../../../server/src/engine/errors';
import type { AuditRecord, Clock } from '../../../server/src/engine/ports';

/** A clock that tests move by hand. */
function manualClock(iso: string): Clock & { set(iso: string): void; advance(ms: number): void } {
  let t = Date.parse(iso);
  return {
    now: () => t,
    set: (s: string) => {
      t = Date.parse(s);
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

async function readLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1));
}

async function writeLines(file: string, lines: string[]): Promise<void> {
  await writeFile(file, lines.map((l) => `${l}\n`).join(''));
}

describe('audit: JsonlAuditTrail', () => {
  let dir: string;
  let trail: JsonlAuditTrail | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cadre-audit-'));
  });
  afterEach(async () => {
    await trail?.close();
    trail = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** 30 records, one per 20 s from 23:55 UTC: they span two day files. */
  async function fillTwoDays(n = 30): Promise<{ clock: ReturnType<typeof manualClock>; records: AuditRecord[] }> {
    const clock = manualClock('2025-03-01T23:55:00.000Z');
    trail = await openAuditTrail({ dir, clock });
    const records: AuditRecord[] = [];
    for (let i = 0; i < n; i++) {
      records.push(await trail.append({
        kind: i % 5 === 0 ? 'phase.completed' : 'gate.result',
        actor: 'engine',
        executionId: `task_${i % 3}`,
        agentId: i % 2 === 0 ? 'coder-ai' : 'review-ai',
        data: { i, nested: { ok: true } },
      }));
      clock.advance(20_000);
    }
    return { clock, records };
  }

  it('chains many records over two UTC days, and the chain verifies', async () => {
    const { records } = await fillTwoDays();
    assert.deepEqual(await readdir(dir), ['audit-2025-03-01.jsonl', 'audit-2025-03-02.jsonl']);
    assert.equal(records[0]!.prevHash, GENESIS_HASH);
    records.forEach((r, i) => {
      assert.equal(r.seq, i + 1);
      assert.equal(r.hash, hashRecord(r));
      if (i > 0) assert.equal(r.prevHash, records[i - 1]!.hash);
    });
    const day1 = await readLines(path.join(dir, 'audit-2025-03-01.jsonl'));
    const day2 = await readLines(path.join(dir, 'audit-2025-03-02.jsonl'));
    assert.equal(day1.length, 15); // 23:55:00 .. 23:59:40
    assert.equal(day2.length, 15);
    assert.deepEqual(JSON.parse(day2[0]!), records[15]);
    assert.equal(JSON.parse(day2[0]!).prevHash, JSON.parse(day1[14]!).hash, 'the chain runs across day files');
    assert.deepEqual(await trail!.verify(), { ok: true, checked: 30 });

    // Reopen: the chain continues from the last record.
    await trail!.close();
    trail = await openAuditTrail({ dir, clock: manualClock('2025-03-02T10:00:00.000Z') });
    assert.equal(trail.lastSeq, 30);
    const next = await trail.append({ kind: 'x', actor: 'engine', data: {} });
    assert.equal(next.seq, 31);
    assert.equal(next.prevHash, records[29]!.hash);
    assert.deepEqual(await trail.verify(), { ok: true, checked: 31 });
  });

  it('tampering with a record\'s data in the file is caught at that record', async () => {
    await fillTwoDays();
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-02.jsonl');
    const lines = await readLines(file);
    const rec = JSON.parse(lines[3]!) as AuditRecord;
    rec.data['i'] = 999;
    lines[3] = JSON.stringify(rec);
    await writeLines(file, lines);
    trail = await openAuditTrail({ dir });
    const r = await trail.verify();
    assert.equal(r.ok, false);
    assert.equal(r.checked, 18);
    assert.deepEqual({ ...r.firstBroken!, reason: '' }, { file: 'audit-2025-03-02.jsonl', line: 4, seq: 19, reason: '' });
    assert.match(r.firstBroken!.reason, /^tampered: /);
  });

  it('swapping two lines is caught', async () => {
    await fillTwoDays();
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-01.jsonl');
    const lines = await readLines(file);
    [lines[5], lines[6]] = [lines[6]!, lines[5]!];
    await writeLines(file, lines);
    trail = await openAuditTrail({ dir });
    const r = await trail.verify();
    assert.deepEqual([r.ok, r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.seq], [false, 'audit-2025-03-01.jsonl', 6, 7]);
    assert.match(r.firstBroken!.reason, /^broken link: /);
  });

  it('deleting a line is caught (also the last line of a day file)', async () => {
    await fillTwoDays();
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-01.jsonl');
    const lines = await readLines(file);
    await writeLines(file, lines.slice(0, 14)); // seq 15 gone
    trail = await openAuditTrail({ dir });
    const r = await trail.verify();
    assert.deepEqual([r.ok, r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.seq], [false, 'audit-2025-03-02.jsonl', 1, 16]);
    assert.match(r.firstBroken!.reason, /^broken link: /);
  });

  it('a torn last line is truncated on reopen, with a warning, and the chain continues', async () => {
    const { records } = await fillTwoDays(20);
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-02.jsonl');
    const before = await readFile(file, 'utf8');
    const torn = JSON.stringify({ seq: 21, ts: '2025-03-02T00:01:40.000Z', kind: 'gate.result', actor: 'engine', data: { half: 'wri' } }).slice(0, 60);
    await appendFile(file, torn);
    const seen: AuditOpenWarning[] = [];
    trail = await openAuditTrail({ dir, clock: manualClock('2025-03-02T00:02:00.000Z'), onWarning: (w) => seen.push(w) });
    assert.equal(trail.warnings.length, 1);
    assert.deepEqual(seen, trail.warnings);
    assert.deepEqual({ ...trail.warnings[0]!, message: '' }, { code: 'torn_tail_truncated', file: 'audit-2025-03-02.jsonl', bytes: Buffer.byteLength(torn), message: '' });
    assert.equal(await readFile(file, 'utf8'), before, 'the file is back to its last acknowledged record');
    assert.equal(trail.lastSeq, 20);
    const next = await trail.append({ kind: 'after.crash', actor: 'engine', data: {} });
    assert.equal(next.seq, 21);
    assert.equal(next.prevHash, records[19]!.hash);
    assert.deepEqual(await trail.verify(), { ok: true, checked: 21 });
  });

  it('a torn line that was the only content of the newest file: recovery reads the previous day', async () => {
    const { records } = await fillTwoDays(15); // all on 2025-03-01
    await trail!.close();
    await writeFile(path.join(dir, 'audit-2025-03-02.jsonl'), '{"seq":16,"ts":"2025-03-02T0');
    trail = await openAuditTrail({ dir, clock: manualClock('2025-03-02T08:00:00.000Z') });
    assert.equal(trail.warnings[0]?.code, 'torn_tail_truncated');
    assert.equal(trail.lastSeq, 15);
    const next = await trail.append({ kind: 'k', actor: 'engine', data: {} });
    assert.deepEqual([next.seq, next.prevHash], [16, records[14]!.hash]);
    assert.equal((await readLines(path.join(dir, 'audit-2025-03-02.jsonl'))).length, 1);
    assert.deepEqual(await trail.verify(), { ok: true, checked: 16 });
  });

  it('a complete last record without its newline is kept and the newline added', async () => {
    await fillTwoDays(3);
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-01.jsonl');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, -1));
    trail = await openAuditTrail({ dir });
    assert.equal(trail.warnings[0]?.code, 'missing_newline_repaired');
    assert.equal(await readFile(file, 'utf8'), text);
    assert.equal(trail.lastSeq, 3);
  });

  it('refuses to open when the last complete line is not a record', async () => {
    await fillTwoDays(3);
    await trail!.close();
    trail = undefined;
    await appendFile(path.join(dir, 'audit-2025-03-01.jsonl'), 'garbage\n');
    await assert.rejects(openAuditTrail({ dir }), (err: unknown) => isEngineError(err) && err.code === 'ERR_AUDIT_BROKEN');
  });

  it('property order in data does not change the hash', async () => {
    const clock = manualClock('2025-05-05T05:05:05.000Z');
    trail = await openAuditTrail({ dir: path.join(dir, 'a'), clock });
    const a = await trail.append({ kind: 'k', actor: 'engine', data: { x: 1, y: { p: 1, q: [1, 2] } } });
    await trail.close();
    trail = await openAuditTrail({ dir: path.join(dir, 'b'), clock });
    const b = await trail.append({ actor: 'engine', data: { y: { q: [1, 2], p: 1 }, x: 1 }, kind: 'k' });
    assert.equal(a.hash, b.hash);
  });

  it('concurrent appends get consecutive seqs in call order, in one write + one fsync', async () => {
    trail = await openAuditTrail({ dir, clock: manualClock('2025-06-01T12:00:00.000Z') });
    const recs = await Promise.all(Array.from({ length: 50 }, (_, i) => trail!.append({ kind: 'k', actor: 'engine', data: { i } })));
    assert.deepEqual(recs.map((r) => r.seq), Array.from({ length: 50 }, (_, i) => i + 1));
    assert.deepEqual(recs.map((r) => r.data['i']), Array.from({ length: 50 }, (_, i) => i));
    const s = trail.stats();
    assert.equal(s.appends, 50);
    assert.equal(s.writes, 1, 'group commit');
    assert.equal(s.fsyncs, 2, 'one for the data, one for the new file\'s directory entry');
    assert.deepEqual(await trail.verify(), { ok: true, checked: 50 });
  });

  it('appends made while a write is in flight go together in the next write', async () => {
    trail = await openAuditTrail({ dir, clock: manualClock('2025-06-01T12:00:00.000Z') });
    const first = trail.append({ kind: 'k', actor: 'engine', data: { i: 0 } });
    await new Promise((r) => setImmediate(r)); // the first write has started
    const rest = Array.from({ length: 10 }, (_, i) => trail!.append({ kind: 'k', actor: 'engine', data: { i: i + 1 } }));
    const all = await Promise.all([first, ...rest]);
    assert.deepEqual(all.map((r) => r.seq), Array.from({ length: 11 }, (_, i) => i + 1));
    assert.equal(trail.stats().writes, 2);
  });

  it('a record whose day is older than the newest file stays in the newest file', async () => {
    const clock = manualClock('2025-07-02T00:00:05.000Z');
    trail = await openAuditTrail({ dir, clock });
    await trail.append({ kind: 'k', actor: 'engine', data: {} });
    clock.set('2025-07-01T23:59:59.000Z'); // the clock stepped back over midnight
    const r = await trail.append({ kind: 'k', actor: 'engine', data: {} });
    assert.equal(r.ts, '2025-07-01T23:59:59.000Z');
    assert.deepEqual(await readdir(dir), ['audit-2025-07-02.jsonl']);
    assert.deepEqual(await trail.verify(), { ok: true, checked: 2 });
  });

  it('query filters by execution, agent and kind; limit keeps the newest, oldest first', async () => {
    const { records } = await fillTwoDays();
    const byExec = await trail!.query({ executionId: 'task_1' });
    assert.deepEqual(byExec.map((r) => r.seq), records.filter((r) => r.executionId === 'task_1').map((r) => r.seq));
    const both = await trail!.query({ agentId: 'coder-ai', kind: 'phase.completed' });
    assert.deepEqual(both.map((r) => r.seq), [1, 11, 21]);
    const last3 = await trail!.query({ kind: 'gate.result', limit: 3 });
    assert.deepEqual(last3.map((r) => r.seq), [28, 29, 30]);
    assert.deepEqual(await trail!.query({ limit: 0 }), []);
    assert.equal((await trail!.query()).length, 30);
    assert.deepEqual((await trail!.query({ executionId: 'task_0', limit: 1 }))[0], records[27]);
  });

  it('verify({ fromSeq }) checks the link to the record before', async () => {
    await fillTwoDays();
    await trail!.close();
    const file = path.join(dir, 'audit-2025-03-01.jsonl');
    const lines = await readLines(file);
    const rec = JSON.parse(lines[9]!) as AuditRecord; // seq 10
    rec.actor = 'user:mallory';
    lines[9] = JSON.stringify(rec);
    await writeLines(file, lines);
    trail = await openAuditTrail({ dir });
    assert.deepEqual(await trail.verify({ fromSeq: 12 }), { ok: true, checked: 19 });
    const r = await trail.verify({ fromSeq: 11 });
    assert.deepEqual([r.ok, r.firstBroken?.seq, r.firstBroken?.line], [false, 10, 10]);
    assert.equal((await trail.verify()).firstBroken?.seq, 10);
  });

  it('stores the JSON form of data; the returned record equals what is read back', async () => {
    trail = await openAuditTrail({ dir, clock: manualClock('2025-06-01T12:00:00.000Z') });
    const r = await trail.append({ kind: 'k', actor: 'user:ann', data: { at: new Date(0), gone: undefined, n: 1 } });
    assert.deepEqual(r.data, { at: '1970-01-01T00:00:00.000Z', n: 1 });
    assert.equal('executionId' in r, false);
    assert.deepEqual((await trail.query())[0], r);
  });

  it('rejects invalid entries with ERR_VALIDATION and appends after close', async () => {
    trail = await openAuditTrail({ dir });
    const isCode = (code: string) => (err: unknown) => isEngineError(err) && err.code === code;
    await assert.rejects(trail.append({ kind: '', actor: 'engine', data: {} }), isCode('ERR_VALIDATION'));
    await assert.rejects(trail.append({ kind: 'k', actor: 'engine', data: [] as unknown as Record<string, unknown> }), isCode('ERR_VALIDATION'));
    await assert.rejects(trail.append({ kind: 'k', actor: 'engine', data: { n: 1n } }), isCode('ERR_VALIDATION'));
    assert.equal(trail.lastSeq, 0);
    await trail.close();
    await assert.rejects(trail.append({ kind: 'k', actor: 'engine', data: {} }), isCode('ERR_INTERNAL'));
  });

  it('verifyAuditDir verifies read-only: a torn tail is reported, not repaired', async () => {
    await fillTwoDays(20);
    await trail!.close();
    trail = undefined;
    assert.deepEqual(await verifyAuditDir(dir), { ok: true, checked: 20 });
    const file = path.join(dir, 'audit-2025-03-02.jsonl');
    await appendFile(file, '{"seq":21,');
    const before = await readFile(file, 'utf8');
    const r = await verifyAuditDir(dir);
    assert.deepEqual([r.ok, r.checked, r.firstBroken?.file, r.firstBroken?.line], [false, 20, 'audit-2025-03-02.jsonl', 6]);
    assert.match(r.firstBroken!.reason, /^unparsable: /);
    assert.equal(await readFile(file, 'utf8'), before);
    assert.deepEqual(await verifyAuditDir(path.join(dir, 'nope')), { ok: true, checked: 0 });
  });

  it('a failed write rejects its appends with ERR_STORE and consumes no seq', async () => {
    const clock = manualClock('2025-08-01T23:59:59.000Z');
    trail = await openAuditTrail({ dir, clock });
    const first = await trail.append({ kind: 'k', actor: 'engine', data: {} });
    clock.set('2025-08-02T00:00:01.000Z');
    const blocker = path.join(dir, 'audit-2025-08-02.jsonl');
    await mkdir(blocker); // the next day's file cannot be opened
    await assert.rejects(trail.append({ kind: 'k', actor: 'engine', data: {} }), (err: unknown) =>
      isEngineError(err) && err.code === 'ERR_STORE' && err.retryable);
    assert.equal(trail.lastSeq, 1);
    await rmdir(blocker);
    const next = await trail.append({ kind: 'k', actor: 'engine', data: {} });
    assert.deepEqual([next.seq, next.prevHash], [2, first.hash]);
    assert.deepEqual(await trail.verify(), { ok: true, checked: 2 });
  });

  it('an empty directory verifies and queries as empty', async () => {
    trail = await openAuditTrail({ dir: path.join(dir, 'fresh') });
    assert.deepEqual(await trail.verify(), { ok: true, checked: 0 });
    assert.deepEqual(await trail.query(), []);
  });
});
